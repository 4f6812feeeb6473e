// Loading: checks the options, picks a runtime, streams the source into a fresh wasm instance,
// parses the model and creates its context within the memory budget.
import { checkFileSize, checkLoadBudget, MAX_ALLOCATION } from './budget.mjs';
import { cacheName } from './cache.mjs';
import { Engine, SCRATCH_BYTES, statusName } from './engine.mjs';
import { fail, SaccadeError } from './errors.mjs';
import { Heap } from './heap.mjs';
import { handOver, instantiate, poolReady, poolStarted, terminate } from './instantiate.mjs';
import { constants, KV_TYPES, readInfo, writeContextParams } from './layout.mjs';
import { Model, withShortfall } from './model.mjs';
import { abortSignal, bool, int, oneOf, optionsOf } from './options.mjs';
import { ablationMask, setAblation } from './probe.mjs';
import { chooseRuntime } from './runtime.mjs';
import { modelSources } from './shards.mjs';
import { takePreopened } from './preopen.mjs';
import { openSource } from './sources.mjs';
import { measure, now } from './timing.mjs';

const { SAC_OK, SAC_LOAD_TAKE_OWNERSHIP, SAC_LOAD_VOCAB_ONLY, SAC_DEFAULT_N_CTX } = constants;

export const LOAD_OPTIONS = ['threads', 'variant', 'onProgress', 'signal', 'contextLength', 'batchSize', 'attention',
  'vocabOnly', 'noPositions', 'cache', 'scores', 'qk', 'ablate', 'kvType', 'simd', 'waitForThreads'];

/**
 * Copies every chunk of the source into one malloc'd buffer; returns [ptr, size]. `ready`: a
 * promise of the Heap — the wasm instance may still be starting while the first chunks arrive,
 * and those wait in JS (copied: a source may reuse its buffer) until it is there, then go into
 * the heap once, like every later chunk. `onProgress(loaded)`.
 */
async function streamIntoHeap(ready, source, onProgress, signal) {
  const total = source.size; // null: unknown, so gather the chunks and copy them at the end
  let heap = null;
  let startFailed = null;
  ready.then((h) => (heap = h), (e) => (startFailed = e));
  const parts = []; // chunks read before the heap is there, or all of them when the size is unknown
  let ptr = 0;
  let allocated = false;
  let loaded = 0;
  let placed = 0; // bytes in the heap
  /** The gathered parts into the heap at `ptr` (allocated here when the size is known). */
  const place = () => {
    if (!allocated) {
      ptr = heap.malloc(total);
      allocated = true;
    }
    for (const part of parts) {
      heap.u8(ptr + placed, part.length).set(part);
      placed += part.length;
    }
    parts.length = 0;
  };
  const chunks = source.chunks()[Symbol.asyncIterator]();
  try {
    if (total !== null) onProgress(loaded);
    for (;;) {
      signal?.throwIfAborted();
      if (startFailed) throw startFailed;
      let next;
      try {
        next = await chunks.next();
      } catch (e) {
        signal?.throwIfAborted();
        fail(`reading the model failed after ${loaded} bytes: ${e.message}`, 'SAC_ERR_STATE');
      }
      if (next.done) break;
      const chunk = next.value;
      if (total === null) {
        if (loaded + chunk.length > MAX_ALLOCATION) checkFileSize(loaded + chunk.length);
        parts.push(chunk.slice());
      } else {
        if (loaded + chunk.length > total)
          fail(`the model source delivered more than the ${total} bytes it announced`, 'SAC_ERR_FORMAT');
        if (heap) {
          if (parts.length || !allocated) place();
          heap.u8(ptr + placed, chunk.length).set(chunk);
          placed += chunk.length;
        } else parts.push(chunk.slice());
      }
      loaded += chunk.length;
      onProgress(loaded);
    }
    signal?.throwIfAborted();
    if (total !== null && loaded !== total)
      fail(`the model source ended after ${loaded} of the ${total} bytes it announced`, 'SAC_ERR_FORMAT');
    if (total === null) checkFileSize(loaded);
    heap = await untilAborted(ready, signal); // (the instance may still be starting: an abort ends the wait)
    if (total === null) {
      ptr = heap.malloc(loaded);
      allocated = true;
    }
    place();
    return [ptr, loaded];
  } catch (e) {
    await chunks.return?.().catch(() => {});
    if (allocated) heap.free(ptr);
    throw e;
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
async function untilAborted(promise, signal) {
  if (!signal) return promise;
  let onAbort;
  const abort = new Promise((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, abort]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A source as a message names it. */
function sourceName(source) {
  if (typeof source == 'string') return source;
  if (source instanceof URL) return source.href;
  return source?.constructor?.name ?? typeof source;
}

/** Shards opened ahead of the one being read. */
const OPEN_AHEAD = 4;

/**
 * The shards' sources, opened: the one being read and up to OPEN_AHEAD after it (so that a
 * split model's few shards add up to a total early, while the shards are read in order, which
 * keeps to the browser's connections per host); none after one that fails (a name such as
 * m-00001-of-99999.gguf sent a request for every shard). Returns { input(i): Promise of shard
 * i's source, sizes: each shard's size once it is open (null before, or unknown),
 * settle(verdict) }: settle cancels what was not read and tells each source the verdict (see
 * cache.mjs); it resolves to what each source says of its cache copy.
 */
function openAll(sources, { signal, cache }) {
  const inputs = [];
  const sizes = new Array(sources.length).fill(null);
  let failed = false;
  const open = (i) => {
    const s = sources[i];
    const p = (typeof s == 'string' && sources.length === 1 && takePreopened(s, cache)) || openSource(s, { signal, cache });
    p.then((input) => (sizes[i] = input.size), () => (failed = true)); // each is awaited in turn, or cancelled
    inputs.push(p);
  };
  return {
    sizes,
    input(i) {
      while (inputs.length < sources.length && inputs.length <= i + OPEN_AHEAD && !failed) open(inputs.length);
      return inputs[i] ?? Promise.reject(new SaccadeError('an earlier shard failed to open', 'SAC_ERR_STATE'));
    },
    settle: (verdict) => Promise.all(inputs.map((p) => p.then((input) => {
      input.cancel();
      return input.settle(verdict);
    }, () => null))),
  };
}

/** Says which shard (and its name) a failure of one shard's bytes came from: shard i of `sources`, every shard of the model. */
function inShard(e, i, sources) {
  if (sources.length === 1 || !(e instanceof SaccadeError)) return e;
  return new SaccadeError(`shard ${i + 1} of ${sources.length} (${sourceName(sources[i])}): ${e.message}`, e.code);
}

/** What settle() reported for each shard, as one { status, message }. */
function cacheReport(notes) {
  return notes.find((n) => n.status === 'failed') ?? notes.find((n) => n.status === 'stored') ?? notes[0];
}

/** model.sourceInfo.cache while a download's cache copy is still being written (see model.cached). */
const PENDING = Object.freeze({ status: 'pending', message: 'being saved in the browser cache' });

/** The final report of a loaded model's cache copies; never rejects (a failed write is a 'failed' report). */
function cacheOutcome(notes) {
  return notes.then(cacheReport).then((r) => r ?? { status: 'failed', message: 'not cached: no report' },
    (e) => ({ status: 'failed', message: `not cached: ${e?.message ?? e}` }));
}

/**
 * Loads a GGUF model. `source`: Uint8Array, ArrayBuffer, Blob, Response, ReadableStream, URL, or
 * a string (a URL; in Node also a file path); a split model's first shard (…-00001-of-0000N.gguf,
 * as URL or path: the other shards follow from it), or an array of shard sources in order.
 * See index.d.ts for the options.
 */
export async function loadModel(source, options) {
  const o = optionsOf(options, LOAD_OPTIONS, 'loadModel');
  const { onProgress } = o;
  if (onProgress !== undefined && typeof onProgress != 'function') fail('onProgress must be a function');
  const signal = abortSignal(o.signal);
  const contextLength = int('contextLength', o.contextLength, 0, 0, undefined, ' (0: the default)');
  const batchSize = int('batchSize', o.batchSize, 0, 0, undefined, ' (0: the default)');
  const kvType = oneOf('kvType', o.kvType, 'f32', Object.keys(KV_TYPES));
  const attention = bool('attention', o.attention);
  const vocabOnly = bool('vocabOnly', o.vocabOnly);
  const noPositions = bool('noPositions', o.noPositions);
  const cache = cacheName(o.cache);
  const named = modelSources(source); // a shard's name: every shard of its model
  // vocab-only, a shard's name reads the first shard alone: it holds the tokenizer (src/model.c)
  const sources = vocabOnly && !Array.isArray(source) ? named.slice(0, 1) : named;
  const scores = bool('scores', o.scores);
  const qk = bool('qk', o.qk);
  const waitForThreads = bool('waitForThreads', o.waitForThreads, true);
  if (o.ablate != null && !Array.isArray(o.ablate) && typeof o.ablate != 'string')
    fail("ablate must be an array of [layer, head] pairs or a string such as '0:1,1:3'");
  // a vocabulary-only model never computes: no threads
  const runtime = chooseRuntime(vocabOnly ? { threads: 1, variant: 'st' } : { threads: o.threads, variant: o.variant, simd: o.simd });
  if (vocabOnly) runtime.reason = 'vocabOnly: tokenizer only';
  signal?.throwIfAborted();
  const n = sources.length;
  const opening = now();
  const opened = openAll(sources, { signal, cache });
  // The wasm instance (its compile, and its thread pool) starts while the model downloads.
  let M = null;
  let heap = null;
  let scratch = 0;
  const ready = instantiate(runtime, 'saccade', { waitForThreads }).then((instance) => {
    M = instance;
    heap = new Heap(M);
    scratch = heap.malloc(SCRATCH_BYTES);
    return heap;
  });
  /** The instance as instantiate gave it, once it is there (this load gave up before using it). */
  const untouched = () => ready.then(() => {
    heap.free(scratch);
    return M;
  });
  let startError = null; // the instance's failure, reported as it is (not as a shard's)
  ready.catch((e) => (startError = e));
  let first;
  try {
    // (raced with the signal: a source preopen.mjs opened was not given it)
    first = await untilAborted(opened.input(0), signal).catch((e) => {
      throw inShard(e, 0, named);
    });
    measure('model-open', opening);
    if (first.size !== null) checkFileSize(first.size); // before allocating anything for it
  } catch (e) {
    handOver(runtime, untouched());
    await opened.settle('abandoned');
    throw e;
  }
  const buffers = []; // [ptr, size] of each shard read, until C owns them
  let model = 0;
  let ctx = 0;
  let verdict = 'abandoned';
  try {
    const { sizes } = opened;
    const froms = [];
    const names = [];
    let storing = false; // a download's cache copy will be written after the verdict
    let before = 0; // bytes of the shards already read
    const reading = now();
    for (let i = 0; i < n; i++) {
      try {
        const input = i === 0 ? first : await opened.input(i);
        if (input.size !== null) checkFileSize(input.size);
        sizes[i] = input.size;
        froms.push(input.from);
        storing ||= input.storing === true;
        names.push(input.name);
        const report = (loaded) => onProgress?.({
          loaded: before + loaded, total: sizes.includes(null) ? null : sizes.reduce((a, b) => a + b, 0),
          ...(n > 1 && { shard: i, shards: n }), from: input.from,
        });
        buffers.push(await streamIntoHeap(ready, input, report, signal));
        before += buffers[i][1];
      } catch (e) {
        throw e === startError ? e : inShard(e, i, named);
      }
    }
    measure('model-read', reading);
    signal?.throwIfAborted();
    // The model owns the buffers from here on, even when loading fails.
    const parsing = now();
    const flags = SAC_LOAD_TAKE_OWNERSHIP | (vocabOnly ? SAC_LOAD_VOCAB_ONLY : 0);
    // one file or several: sac_model_load_split with one buffer is sac_model_load
    const status = loadSplit(M, heap, buffers, flags, scratch);
    measure('model-parse', parsing);
    buffers.length = 0;
    model = heap.u32(scratch);
    if (!model) fail('out of wasm memory loading the model', 'SAC_ERR_NOMEM');
    if (status !== SAC_OK) {
      verdict = 'refused';
      fail(nameShard(heap.cstring(M._sac_model_errmsg(model)), sources), statusName(M, heap, status));
    }
    verdict = 'loaded';
    // The cache copies are written from here on; the model is usable before they are (model.cached).
    const cacheDone = cacheOutcome(opened.settle(verdict));
    const size = before;
    const sourceInfo = {
      from: froms.includes('network') ? 'network' : froms[0], bytes: size, shards: n,
      urls: names.includes(null) ? [] : names,
    };

    const params = { contextLength, batchSize, threads: runtime.threads, attention, noPositions, scores, qk, kvType };
    if (vocabOnly) {
      Object.assign(runtime, { contextLength: 0, contextReason: 'vocabOnly: no context', kvType: null });
      sourceInfo.cache = storing ? PENDING : await cacheDone;
      signal?.throwIfAborted(); // (a model of an aborted load would be nobody's to dispose)
      return new Model(new Engine(M, heap, model, 0, scratch), runtime, params, sourceInfo, cacheDone);
    }
    const contextStart = now();
    M._sac_model_get_info(model, scratch);
    const info = readInfo(heap, scratch);
    const nCtx = contextLength || defaultContext(info);
    writeContextParams(heap, scratch, params);
    checkLoadBudget({
      heapBytes: heap.buffer.byteLength, weightBytes: size, contextBytes: Number(M._sac_context_memory(model, scratch)),
      threads: runtime.threads, info, n: nCtx, attention, scores,
    });

    // A pool still starting (waitForThreads: false): one thread until it has (model.threadsReady).
    const later = !poolReady(M);
    writeContextParams(heap, scratch, later ? { ...params, threads: 1 } : params);
    const st = M._sac_context_new(model, scratch, scratch + 64);
    ctx = heap.u32(scratch + 64);
    if (!ctx) fail('out of wasm memory creating the context', 'SAC_ERR_NOMEM');
    if (st !== SAC_OK) fail(heap.cstring(M._sac_context_errmsg(ctx)), statusName(M, heap, st));

    if (!later) {
      const threads = M._sac_context_n_threads(ctx);
      runtime.reason = withShortfall(runtime.reason, threads, runtime.threads);
      runtime.threads = threads;
    }
    if (o.ablate) {
      const engine = { M, heap, ctx, check: (s) => s && fail(heap.cstring(M._sac_context_errmsg(ctx)), statusName(M, heap, s)) };
      setAblation(engine, 'self', typeof o.ablate == 'string' ? o.ablate : ablationMask(info, 'self', o.ablate));
    }
    runtime.contextLength = M._sac_context_n_ctx(ctx);
    runtime.contextReason = contextReason(contextLength, runtime.contextLength, info.contextLength);
    const kvCode = M._sac_context_kv_type(ctx);
    runtime.kvType = Object.keys(KV_TYPES).find((name) => KV_TYPES[name] === kvCode);
    measure('context', contextStart);
    // nothing to write (a cache hit, no cache): the report is there within a few microtasks
    sourceInfo.cache = storing ? PENDING : await cacheDone;
    signal?.throwIfAborted();
    return new Model(new Engine(M, heap, model, ctx, scratch), runtime, params, sourceInfo, cacheDone,
      later ? poolStarted(M) : null);
  } catch (e) {
    if (verdict !== 'loaded') await opened.settle(verdict);
    if (M) {
      for (const [ptr] of buffers) heap.free(ptr);
      if (ctx) M._sac_context_free(ctx);
      if (model) M._sac_model_free(model);
      heap.free(scratch);
      terminate(M);
    } else handOver(runtime, untouched()); // still starting: the next load may take it
    throw e;
  }
}

/** sac_model_load_split over the shards' buffers (pointers, then sizes: both 32-bit in wasm32). */
function loadSplit(M, heap, buffers, flags, out) {
  const n = buffers.length;
  const table = heap.malloc(8 * n);
  try {
    const v = heap.view(table, 8 * n);
    buffers.forEach(([ptr, size], i) => {
      v.setUint32(4 * i, ptr, true);
      v.setUint32(4 * (n + i), size, true);
    });
    return M._sac_model_load_split(table, table + 4 * n, n, flags, out);
  } finally {
    heap.free(table);
  }
}

/** C names a shard by number ("shard 2 of 3 …"); add which source that is. */
function nameShard(message, sources) {
  const m = /^shard (\d+) of \d+/.exec(message);
  if (!m || sources.length === 1) return message;
  return `${message} (shard ${m[1]} is ${sourceName(sources[Number(m[1]) - 1])})`;
}

/** The context C gives for n_ctx = 0: the model's training length, at most SAC_DEFAULT_N_CTX. */
function defaultContext(info) {
  return Math.min(info.contextLength, SAC_DEFAULT_N_CTX);
}

function contextReason(requested, inUse, trained) {
  if (requested) return `contextLength: ${requested} requested (the model was trained for ${trained} tokens)`;
  if (inUse < trained)
    return `the default: at most ${SAC_DEFAULT_N_CTX} tokens, to fit the device (the model was trained for ${trained}; ` +
      `pass { contextLength: ${trained} } for the full length)`;
  return `the default: the model's training length (${trained} tokens)`;
}
