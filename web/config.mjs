// The demo's models: the two that saccade trains and ships in models/ (see models/README.md).
// Paths are relative to this file (the repository's web/ folder), so the page works from any
// static host that serves the repository or the npm package as it is.

export const DEFAULT_MODEL = '../models/shakespeare-char-q8_0.gguf';
export const MODEL_B = '../models/dates-q8_0.gguf';

/** What the model switch offers: key → { label, url, prompt (an example input) }. */
export const MODELS = {
  a: { label: 'Model A — Shakespeare, characters (gpt2)', url: DEFAULT_MODEL, prompt: 'ROMEO:\nWhat light' },
  b: { label: 'Model B — dates (encoder–decoder)', url: MODEL_B, prompt: 'sat 21 nov 2026' },
};
