// The demo's models. Paths are relative to this file (the repository's web/ folder), so the page
// works from any static host that serves the repository or the npm package as it is.
//
// DEFAULT_MODEL is the one constant to switch when the shipped models land:
//   '../models/shakespeare-char-q8_0.gguf' (Model A) and '../models/dates-q8_0.gguf' (Model B).
// Model B has landed; until Model A does, DEFAULT_MODEL points at a random-weight development
// model with a character vocabulary, which `make demo` writes into build/web-models/
// (tests/web/dev-models.mjs).

export const DEFAULT_MODEL = '../build/web-models/gpt2-char-q8_0.gguf';
export const MODEL_B = '../models/dates-q8_0.gguf';

/** What the model switch offers: key → { label, url, prompt (an example input) }. */
export const MODELS = {
  a: { label: 'Model A — Shakespeare, characters (gpt2)', url: DEFAULT_MODEL, prompt: 'ROMEO:\nWhat light' },
  b: { label: 'Model B — dates (encoder–decoder)', url: MODEL_B, prompt: 'sat 21 nov 2026' },
};
