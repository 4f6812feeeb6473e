// The demo's models: the two that saccade trains and ships in models/ (see models/README.md).
// Paths are relative to this file (the repository's web/ folder), so the page works from any
// static host that serves the repository or the npm package as it is.

export const DEFAULT_MODEL = '../models/shakespeare-char-q8_0.gguf';
export const MODEL_B = '../models/dates-q8_0.gguf';

/** What the model switch offers: key → { label, url, prompt (an example input) }. */
export const MODELS = {
  a: { label: 'Model A — Shakespeare, characters (gpt2)', url: DEFAULT_MODEL, prompt: 'ROMEO:\nWhat light' },
  b: { label: 'Model B — dates (encoder–decoder)', url: MODEL_B, prompt: 'sat 21 nov 2026', lesson: 'alignment' },
};

/**
 * Model B as a lesson in translation alignment. `layer`: the decoder layer whose cross-attention
 * (mean over heads) aligns best, measured over the model card's 2 000 held-out inputs (the card's
 * `train_dates --align` with layer 0 in place of the last layer: 95.8–100% of output digits peak in
 * their own field, against 24.9–100% for layer 1; tests/web/inside.test.mjs re-checks the order on
 * the presets). `fields`: the measured per-field alignment of `layer`, as the page shows it. Each
 * preset's `fields` marks its source characters: y/m/d a field of the date, w the weekday, . other.
 */
export const ALIGNMENT_LESSON = {
  layer: 0,
  measured: 'layer 0 cross-attention, mean over the 4 heads; 2 000 held-out inputs; the share of outputs whose strongest source character lies in its own field',
  /** The output's digits: [row that wrote it (= ISO position), the field it comes from]. */
  digits: [[0, 'y'], [1, 'y'], [2, 'y'], [3, 'y'], [5, 'm'], [6, 'm'], [8, 'd'], [9, 'd']],
  fields: [
    ['year 1', 100.0], ['year 2', 100.0], ['year 3', 100.0], ['year 4', 100.0],
    ['month 1', 95.8], ['month 2', 99.4], ['day 1', 97.8], ['day 2', 99.5],
  ],
  presets: [
    { text: 'sat 21 nov 2026', fields: 'www.dd.mmm.yyyy', shows: 're-ordering: day, month, year become year, month, day — the lines cross' },
    { text: 'Nov 21, 2026', fields: 'mmm.dd..yyyy', shows: 'one-to-many: three letters "Nov" write two digits "11"' },
    { text: '21/11/26', fields: 'dd.mm.yy', shows: 'one-to-many: the two digits "26" write a four-digit year' },
    { text: '11/21/2026', fields: 'mm.dd.yyyy', shows: 'month first: read so because 21 cannot be a month' },
    { text: 'Fri, Oct. 5, 2012', fields: 'www..mmm..d..yyyy', shows: 'a weekday that nothing reads, and one day digit that writes two ("05")' },
  ],
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

/** The library's version, as package.json gives it (for exports; tests/web/inside.test.mjs checks they agree). */
export const LIBRARY_VERSION = '0.1.0';
