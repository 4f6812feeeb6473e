// The messages between the page side (client.mjs) and the model worker (worker.mjs), defined
// once: each message's type name, and a function that builds it, so that its fields are spelled
// here and nowhere else. Every message but 'stop' carries the id of the request it belongs to.
//
// Attention travels in the library's layout (one block per kind, query rows in order; row q holds
// layers × heads × keys(q) floats, layer-major, then head, then key; keys(q) = q + 1 for 'self',
// the source length for 'cross' and 'encoder'), as Float32Arrays the worker transfers.

/** Page → worker. */
export const TO_WORKER = Object.freeze({ LOAD: 'load', GENERATE: 'generate', STOP: 'stop', PROBE: 'probe', PREPARE: 'prepare',
  PREOPEN: 'preopen' });

/** Worker → page. */
export const TO_PAGE = Object.freeze({
  PROGRESS: 'progress',
  CACHE: 'cache',
  LOADED: 'loaded',
  START: 'start',
  TOKEN: 'token',
  DONE: 'done',
  ERROR: 'error',
  RESULT: 'result',
  PHASES: 'phases',
  THREADS: 'threads',
});

/** Why a generation ended, beside the library's own reasons (generate's finishReason): the page stopped it. */
export const STOPPED = 'stopped';

/** Each reason a generation ends for, as the page and the widget say it. */
export const REASONS = Object.freeze({
  eos: 'end of sequence',
  stop: 'stop sequence',
  contextFull: 'context full',
  maxTokens: 'max tokens',
  [STOPPED]: 'stopped',
});

export const toWorker = {
  /**
   * Start what every load needs before one is asked for: the library, the wasm and its thread pool for
   * `threads` (undefined: the library's choice). No reply; a load reports any failure.
   */
  prepare: ({ threads }) => ({ type: TO_WORKER.PREPARE, threads }),
  /**
   * Start opening the model at `url` (its download, or its read from the browser cache) for the load
   * of it that will follow; one that none follows within seconds is cancelled. No reply.
   */
  preopen: (url) => ({ type: TO_WORKER.PREOPEN, url }),
  /** A model from `url` (through the browser cache) or `file` (a File or Blob); `threads` undefined: the library's choice. */
  load: (id, { url, file, threads }) => ({ type: TO_WORKER.LOAD, id, url, file, threads }),
  /**
   * `prompt`: text or token ids (the source, for encoder–decoder models); `options`: the library's
   * generate options; `held`: the ids of the decoder tokens whose self rows the page still holds
   * from the last generation (row q: token q's), so that the 'start' can leave out the rows of a
   * prompt that begins with them (a chat's next turn). Rows depend only on the tokens up to theirs.
   */
  generate: (id, prompt, options, held = []) => ({ type: TO_WORKER.GENERATE, id, prompt, options, held }),
  /** Ends the running generation (its 'done' says STOPPED). */
  stop: () => ({ type: TO_WORKER.STOP }),
  /** A look inside (worker-probe.mjs): `what` is 'row', 'softmax' or 'compare', `args` its arguments. */
  probe: (id, what, args) => ({ type: TO_WORKER.PROBE, id, what, args }),
};

export const toPage = {
  /** Bytes of the model read so far: `phase` is 'network' | 'cache' | 'file'; `total` null when unknown. */
  progress: (id, { phase, loaded, total }) => ({ type: TO_PAGE.PROGRESS, id, phase, loaded, total }),
  /**
   * The runtime once the thread pool has started, when it differs from the one 'loaded' gave (the
   * worker loads without waiting for the pool; it comes after 'loaded'): fewer threads, and why.
   */
  threads: (id, runtime) => ({ type: TO_PAGE.THREADS, id, runtime }),
  /** What happened to the downloaded weights in the browser cache (may come after 'loaded'). */
  cache: (id, note) => ({ type: TO_PAGE.CACHE, id, note }),
  /**
   * The model is ready: `info` (the library's model.info without tensors and metadata), `name`,
   * `runtime`, `defaults` (the library's samplingDefaults), `from` ('network' | 'cache' | 'file'), `bytes`, `ms`.
   */
  loaded: (id, { info, name, runtime, defaults, from, bytes, ms }) =>
    ({ type: TO_PAGE.LOADED, id, info, name, runtime, defaults, from, bytes, ms }),
  /**
   * The prompt is evaluated: `tokens` [{ id, text, label }] (the decoder's), `source` (the encoder's,
   * or null), and the attention rows before the first generated token's: `self` and `cross` rows
   * 0 … tokens.length − 2, `encoder` every source row (each null when empty or not captured);
   * but `self` from row `keep` on: the rows before it are those the page holds (the request's
   * `held` tokens begin with the prompt's first `keep`). A chat turn's `dropped`: how many of its
   * oldest messages (after the system ones) the model no longer read (model.chat's prompt.dropped).
   */
  start: (id, { tokens, source, self, cross, encoder, keep = 0, dropped = 0 }) =>
    ({ type: TO_PAGE.START, id, tokens, source, self, cross, encoder, keep, dropped }),
  /** A generated `token` { id, text, label } and the query row `query` that produced it (`self`, `cross`). */
  token: (id, { token, query, self, cross, ms }) => ({ type: TO_PAGE.TOKEN, id, token, query, self, cross, ms }),
  /** The generation ended: `reason` is a key of REASONS (the last step's finishReason, or STOPPED). */
  done: (id, { reason, count, ms }) => ({ type: TO_PAGE.DONE, id, reason, count, ms }),
  /** A request failed; `name` and `code` are the library's (SaccadeError, SAC_ERR_…) when it threw. */
  /**
   * Where a request's time went, before its 'loaded' or first 'token': `phases` [{ name, start, end }],
   * times in ms since the epoch (performance.timeOrigin + now()), so that the page can place them on its own timeline.
   */
  phases: (id, phases) => ({ type: TO_PAGE.PHASES, id, phases }),
  /** The answer of a probe request. */
  result: (id, value) => ({ type: TO_PAGE.RESULT, id, value }),
  error: (id, e) => ({ type: TO_PAGE.ERROR, id, name: e?.name ?? 'Error', code: e?.code ?? null, message: e?.message ?? String(e) }),
};

/** The buffers of a message's attention blocks, for postMessage's transfer list. */
export const transfers = (msg) => [msg.self, msg.cross, msg.encoder].filter(Boolean).map((a) => a.buffer);
