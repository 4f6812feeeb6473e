// The page side of web/worker.mjs: one worker per client, requests as promises, streamed
// messages as callbacks. Used by the demo page (app.mjs) and the embed (embed.mjs). The messages
// are defined in protocol.mjs.
import { TO_PAGE, toWorker } from './protocol.mjs';

/**
 * A module worker on `script` (worker.mjs, or the page's bundle of it); from another origin (an
 * embed on a docs site) via a same-origin blob. Under the service worker shim
 * (coi-serviceworker.js) it starts through the shim's mount of the folder above web/, so that
 * everything it imports by relative URL, down to the library's thread workers in dist/, lies
 * inside the shim's scope.
 */
export function startWorker(script = new URL('./worker.mjs', import.meta.url)) {
  let url = new URL(script);
  const shim = new URL('./coi-serviceworker.js', import.meta.url);
  const above = new URL('../', shim).href;
  if (globalThis.navigator?.serviceWorker?.controller?.scriptURL === shim.href && url.href.startsWith(above))
    url = new URL(`__root__/${url.href.slice(above.length)}`, shim);
  if (typeof location == 'object' && url.origin !== location.origin) {
    const blob = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }));
    return new Worker(blob, { type: 'module' });
  }
  return new Worker(url, { type: 'module' });
}

export class ModelClient {
  #worker;
  #next = 1;
  #pending = new Map(); // request id → { resolve, reject, handlers }

  /** `worker`: one already started (startWorker), for a page that starts it before its modules load. */
  constructor({ worker } = {}) {
    this.#worker = worker ?? startWorker();
    this.#worker.onmessage = ({ data }) => this.#receive(data);
    this.#worker.onerror = (e) => {
      e.preventDefault();
      this.#rejectAll(new Error(`the model worker failed: ${e.message || 'it could not be started (see the console)'}`));
    };
  }

  /** Rejects every request not yet answered with `error`. */
  #rejectAll(error) {
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
  }

  /** Posts the message `make(id)` and resolves with the reply that ends the request. */
  #request(make, handlers) {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, handlers });
      this.#worker.postMessage(make(id));
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
      case TO_PAGE.PROGRESS: return p.handlers.onProgress?.(msg);
      case TO_PAGE.CACHE: return p.handlers.onCache?.(msg.note);
      case TO_PAGE.THREADS: return p.handlers.onThreads?.(msg.runtime);
      case TO_PAGE.PHASES: return p.handlers.onPhases?.(msg.phases);
      case TO_PAGE.START: return p.handlers.onStart?.(msg);
      case TO_PAGE.TOKEN: return p.handlers.onToken?.(msg);
      case TO_PAGE.LOADED:
        // the cache note, the threads and the pool's phase may come after 'loaded': keep listening for them
        this.#pending.delete(msg.id);
        this.#pending.set(msg.id, { resolve() {}, reject() {},
          handlers: { onCache: p.handlers.onCache, onThreads: p.handlers.onThreads, onPhases: p.handlers.onPhases } });
        return p.resolve(msg);
      case TO_PAGE.DONE: return settle(p.resolve, msg);
      case TO_PAGE.RESULT: return settle(p.resolve, msg.value);
      case TO_PAGE.ERROR: {
        const error = new Error(msg.message);
        error.name = msg.name;
        error.code = msg.code;
        return settle(p.reject, error);
      }
    }
  }

  /**
   * Loads a model: `source` is a URL string or a File/Blob. Resolves to the worker's 'loaded'
   * message (protocol.mjs: { info, name, runtime, from, bytes, ms }). `onPhases` gets where the
   * load's time went (the 'phases' message) before it resolves; `onThreads` a runtime with fewer
   * threads, should the thread pool, which the worker does not wait for, fail to start them.
   * A newer load supersedes this one (its promise then never settles); a look inside the old
   * model (probe) rejects with an AbortError, since its caller waits to show something.
   */
  load(source, { threads, onProgress, onCache, onThreads, onPhases } = {}) {
    for (const [id, p] of this.#pending) {
      if (p.handlers.onToken) continue;
      this.#pending.delete(id);
      if (p.handlers.probe) p.reject(Object.assign(new Error('another model is loading'), { name: 'AbortError' }));
    }
    const url = typeof source == 'string' ? new URL(source, document.baseURI).href : undefined;
    const file = typeof source == 'string' ? undefined : source;
    return this.#request((id) => toWorker.load(id, { url, file, threads: threads || undefined }),
      { onProgress, onCache, onThreads, onPhases });
  }

  /**
   * Generates: `onStart` with the worker's 'start' message once the prompt is evaluated, then
   * `onToken` with each 'token' message. Resolves to the 'done' message ({ reason, count, ms })
   * when the generation ends (also when stopped). `onPhases`: the time to the first token, before
   * `onStart`. `held`: the ids of the tokens whose self rows the caller holds (protocol.mjs).
   */
  generate(prompt, options, { onStart, onToken, onPhases, held } = {}) {
    return this.#request((id) => toWorker.generate(id, prompt, options, held),
      { onStart, onToken: onToken ?? (() => {}), onPhases });
  }

  stop() {
    this.#worker.postMessage(toWorker.stop());
  }

  /**
   * Starts the library, the wasm and its thread pool for `threads` in the worker now, so that a
   * load asked for later (with the same threads) finds them running or on their way.
   */
  prepare({ threads } = {}) {
    this.#worker.postMessage(toWorker.prepare({ threads: threads || undefined }));
  }

  /** Starts opening the model at `url` (relative to the page) for a load of it that follows. */
  preopen(url) {
    this.#worker.postMessage(toWorker.preopen(new URL(url, document.baseURI).href));
  }

  /** Stops the worker; the requests it had not answered are rejected. */
  terminate() {
    this.#worker.terminate();
    this.#rejectAll(Object.assign(new Error('the model worker was stopped'), { name: 'AbortError' }));
  }

  /** A look inside the loaded model (worker-probe.mjs): resolves with the answer. */
  probe(what, args) {
    return this.#request((id) => toWorker.probe(id, what, args), { probe: true });
  }
}
