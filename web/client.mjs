// The page side of web/worker.mjs: one worker per client, requests as promises, streamed
// messages as callbacks. Used by the demo page (app.mjs) and the embed (embed.mjs).

/**
 * A module worker for worker.mjs; from another origin (an embed on a docs site) via a same-origin
 * blob. Under the service worker shim (coi-serviceworker.js), the worker is told to import the
 * library through the shim's mount.
 */
function startWorker() {
  const url = new URL('./worker.mjs', import.meta.url);
  const shim = new URL('./coi-serviceworker.js', import.meta.url).href;
  if (globalThis.navigator?.serviceWorker?.controller?.scriptURL === shim) url.searchParams.set('shim', '');
  if (typeof location == 'object' && url.origin !== location.origin) {
    const blob = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }));
    return { worker: new Worker(blob, { type: 'module' }), crossOrigin: true };
  }
  return { worker: new Worker(url, { type: 'module' }), crossOrigin: false };
}

export class ModelClient {
  #worker;
  #crossOrigin;
  #next = 1;
  #pending = new Map(); // request id → { resolve, reject, handlers }

  constructor() {
    ({ worker: this.#worker, crossOrigin: this.#crossOrigin } = startWorker());
    this.#worker.onmessage = ({ data }) => this.#receive(data);
    this.#worker.onerror = (e) => {
      e.preventDefault();
      const error = new Error(`the model worker failed: ${e.message || 'it could not be started (see the console)'}`);
      for (const p of this.#pending.values()) p.reject(error);
      this.#pending.clear();
    };
  }

  #request(message, handlers) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, handlers });
      this.#worker.postMessage({ ...message, id });
    });
  }

  #receive(msg) {
    const p = this.#pending.get(msg.id);
    if (!p) return; // a request that was superseded
    const settle = (fn, value) => {
      this.#pending.delete(msg.id);
      fn(value);
    };
    switch (msg.type) {
      case 'progress': return p.handlers.onProgress?.(msg);
      case 'cache': return p.handlers.onCache?.(msg.note);
      case 'start': return p.handlers.onStart?.(msg);
      case 'token': return p.handlers.onToken?.(msg);
      case 'loaded':
        // the cache note may come after 'loaded': keep listening for it
        this.#pending.delete(msg.id);
        this.#pending.set(msg.id, { resolve() {}, reject() {}, handlers: { onCache: p.handlers.onCache } });
        return p.resolve(msg);
      case 'done': return settle(p.resolve, msg);
      case 'error': {
        const error = new Error(msg.message);
        error.name = msg.name;
        error.code = msg.code;
        return settle(p.reject, error);
      }
    }
  }

  /**
   * Loads a model: `source` is a URL string or a File/Blob. Resolves to the worker's 'loaded'
   * message: { info, name, runtime, from: 'network' | 'cache' | 'file', bytes, ms }.
   * A newer load supersedes this one (its promise then never settles).
   */
  load(source, { threads, onProgress, onCache } = {}) {
    for (const [id, p] of this.#pending) if (!p.handlers.onToken) this.#pending.delete(id);
    const message = typeof source == 'string' ? { type: 'load', url: new URL(source, document.baseURI).href }
      : { type: 'load', file: source };
    if (threads) message.threads = threads;
    // the library's thread workers cannot start from another origin's files
    else if (this.#crossOrigin) message.threads = 1;
    return this.#request(message, { onProgress, onCache });
  }

  /**
   * Generates: `onStart({ tokens, self, cross, source, encoder })` once the prompt is evaluated,
   * then `onToken({ token, query, self, cross, ms })` per token. Resolves to
   * { reason, count, ms } when the generation ends (also when stopped).
   */
  generate(prompt, options, { onStart, onToken } = {}) {
    return this.#request({ type: 'generate', prompt, options }, { onStart, onToken: onToken ?? (() => {}) });
  }

  stop() {
    this.#worker.postMessage({ type: 'stop' });
  }

  terminate() {
    this.#worker.terminate();
    this.#pending.clear();
  }
}
