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

/**
 * Real models the picker offers in its "Real models" group: public GGUF files on Hugging Face
 * that saccade loads. `bytes` is the file's size as Hugging Face publishes it (checked before any
 * download against this device's memory; see model-picker.mjs), `architecture` the file's
 * general.architecture, `quant` its llama.cpp file type (a mix: "Q4_K_M" files hold Q4_K and Q6_K
 * with Q5_0/Q8_0 where a row is not a whole number of 256-value blocks).
 */
export const REAL_MODELS = {
  'smollm2-135m': {
    label: 'SmolLM2 135M Instruct',
    url: 'https://huggingface.co/bartowski/SmolLM2-135M-Instruct-GGUF/resolve/main/SmolLM2-135M-Instruct-Q8_0.gguf',
    bytes: 144_811_360, architecture: 'llama', quant: 'Q8_0',
    prompt: 'The three primary colors are',
  },
  'qwen2.5-0.5b': {
    label: 'Qwen2.5 0.5B Instruct',
    url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf',
    bytes: 491_400_032, architecture: 'qwen2', quant: 'Q4_K_M',
    prompt: 'The three primary colors are',
  },
  'tinyllama-1.1b': {
    label: 'TinyLlama 1.1B Chat v1.0',
    url: 'https://huggingface.co/TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF/resolve/main/tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf',
    bytes: 668_788_096, architecture: 'llama', quant: 'Q4_K_M',
    prompt: 'The three primary colors are',
  },
};
