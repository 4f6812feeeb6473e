// saccade — run small GGUF language models in WebAssembly and capture their attention.
//
// This file is the whole JavaScript layer: it picks a wasm build (threaded or not), streams the
// model file into the wasm heap, and calls the C API (src/saccade.h) through the exported
// functions, reading and writing C structs and strings in the heap itself. No model math here.
//
// Reading order: runtime choice → instantiating a wasm module → heap helpers → model sources
// (bytes, files, URLs, responses, blobs) → loadModel → the Model class → generate.

const isNode = typeof process == 'object' && typeof process.versions?.node == 'string';

const MB = 1 << 20;
const WASM_MEMORY_LIMIT = 4 * 1024 * MB; // -sMAXIMUM_MEMORY=4GB in scripts/wasm.mk
const MAX_ALLOCATION = 2048 * MB - 64 * 1024; // one malloc must stay below 2 GB (dlmalloc/sbrk)
const DEFAULT_THREADS_CAP = 8;
const CHUNK = 8 * MB; // copy granularity for in-memory sources (progress and abort checks)

// Constants of saccade.h.
const SAC_OK = 0;
const SAC_ERR_ARG = 1;
const SAC_LOAD_TAKE_OWNERSHIP = 1;
const SAC_LOAD_VOCAB_ONLY = 2;
const SAC_EVAL_ALL_LOGITS = 1;
const SAC_TOKENIZE_BOS = 1;
const SAC_TOKENIZE_EOS = 2;
const SAC_TOKENIZE_SPECIAL = 4;
const ATTENTION_KINDS = { self: 0, cross: 1, encoder: 2 };

/** An error reported by the engine or by argument checks; `code` is the C status name. */
export class SaccadeError extends Error {
  constructor(message, code = 'SAC_ERR_ARG') {
    super(message);
    this.name = 'SaccadeError';
    this.code = code;
  }
}

const fail = (message, code) => {
  throw new SaccadeError(message, code);
};

// ---------------------------------------------------------------------------------------------
// Runtime choice: threads need SharedArrayBuffer, which browsers only give cross-origin
// isolated pages (COOP: same-origin + COEP: require-corp) and their workers. Node always has it.
// ---------------------------------------------------------------------------------------------

const nodeOs = isNode ? await import('node:os') : null;

function defaultThreads() {
  let n = 1;
  if (nodeOs) n = nodeOs.availableParallelism();
  else if (typeof navigator == 'object' && navigator.hardwareConcurrency > 0) n = navigator.hardwareConcurrency;
  return Math.max(1, Math.min(DEFAULT_THREADS_CAP, n));
}

/** Which build to run and why: { variant, threads, simd, isolated, reason }. */
export function chooseRuntime({ threads, variant } = {}) {
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 1 && threads <= 256))
    fail(`threads must be an integer from 1 to 256, got ${String(threads)}`);
  if (variant !== undefined && variant !== 'mt' && variant !== 'st')
    fail(`variant must be 'mt' (threaded) or 'st' (single-threaded), got ${String(variant)}`);
  const shared = typeof SharedArrayBuffer == 'function';
  const isolated = isNode || (globalThis.crossOriginIsolated === true && shared);
  const why = isNode
    ? 'Node.js always has SharedArrayBuffer'
    : isolated
      ? 'the page is cross-origin isolated, so SharedArrayBuffer is available'
      : 'the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and ' +
        'Cross-Origin-Embedder-Policy: require-corp to get threads)';
  if (variant === 'mt' && !isolated) fail(`the threaded build cannot run here: ${why}`, 'SAC_ERR_UNSUPPORTED');
  const n = threads ?? defaultThreads();
  if (variant === 'st') return { variant: 'st', threads: 1, simd: true, isolated, reason: "variant 'st' requested" };
  if (variant === 'mt') return { variant: 'mt', threads: n, simd: true, isolated, reason: `variant 'mt' requested; ${why}` };
  if (!isolated) return { variant: 'st', threads: 1, simd: true, isolated, reason: why };
  if (n === 1) {
    const r = threads === 1 ? 'threads: 1 requested' : 'only one hardware thread';
    return { variant: 'st', threads: 1, simd: true, isolated, reason: r };
  }
  return { variant: 'mt', threads: n, simd: true, isolated, reason: why };
}

// ---------------------------------------------------------------------------------------------
// Instantiating a wasm module: one per model, so disposing a model returns all its memory.
// The compiled WebAssembly.Module is cached per variant; instantiating it again is cheap.
// ---------------------------------------------------------------------------------------------

// The smallest module using a SIMD128 instruction (i32x4.splat of i32.const 0, then drop).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 9, 1, 7, 0,
  65, 0, 253, 17, 26, 11]);

const compiled = new Map(); // variant → Promise<WebAssembly.Module>

async function fetchWasm(url) {
  if (isNode) {
    const { readFile } = await import('node:fs/promises');
    return WebAssembly.compile(await readFile(url));
  }
  if (typeof WebAssembly.compileStreaming == 'function') {
    try {
      return await WebAssembly.compileStreaming(fetch(url));
    } catch {
      // e.g. served without Content-Type: application/wasm — compile from the bytes below
    }
  }
  const response = await fetch(url);
  if (!response.ok) fail(`cannot fetch ${url}: HTTP ${response.status}`, 'SAC_ERR_STATE');
  return WebAssembly.compile(await response.arrayBuffer());
}

function compileVariant(variant) {
  if (!compiled.has(variant)) {
    if (!WebAssembly.validate(SIMD_PROBE))
      fail('this JavaScript engine lacks WebAssembly SIMD128, which saccade needs', 'SAC_ERR_UNSUPPORTED');
    // Literal URLs so that bundlers can find the files.
    const url = variant === 'mt'
      ? new URL('../../dist/saccade-mt.wasm', import.meta.url)
      : new URL('../../dist/saccade-st.wasm', import.meta.url);
    const promise = fetchWasm(url);
    promise.catch(() => compiled.delete(variant));
    compiled.set(variant, promise);
  }
  return compiled.get(variant);
}

async function instantiate(runtime) {
  const wasmModule = await compileVariant(runtime.variant);
  const factory = runtime.variant === 'mt'
    ? (await import('../../dist/saccade-mt.mjs')).default
    : (await import('../../dist/saccade-st.mjs')).default;
  let failed; // the factory never settles when instantiateWasm fails: race it
  const instantiationFailed = new Promise((_, reject) => (failed = reject));
  const M = await Promise.race([
    factory({
      // the calling thread is thread 0; the pool holds the others
      pthreadPoolSize: Math.max(1, runtime.threads - 1),
      instantiateWasm(imports, receive) {
        WebAssembly.instantiate(wasmModule, imports).then((instance) => receive(instance, wasmModule), failed);
        return {};
      },
      print: (s) => console.log(s),
      printErr: (s) => console.warn(s),
    }),
    instantiationFailed,
  ]);
  // Pool workers only compute while the main thread is inside a C call, so they need not keep
  // a Node process alive: unref them (dispose() terminates them).
  if (M.PThread && isNode) for (const w of M.PThread.unusedWorkers) w.unref?.();
  return M;
}

// ---------------------------------------------------------------------------------------------
// Heap access. Views are made fresh for every access: the heap grows (st replaces its
// ArrayBuffer; mt's old SharedArrayBuffer views keep their old length). Text goes through a
// copy because TextDecoder rejects views of shared memory.
// ---------------------------------------------------------------------------------------------

const encoder = new TextEncoder();
const decoder = new TextDecoder();

class Heap {
  constructor(M) {
    this.M = M;
  }
  get buffer() {
    return (this.M.wasmMemory ?? this.M.HEAPU8).buffer;
  }
  u8(ptr, n) {
    return new Uint8Array(this.buffer, ptr, n);
  }
  view(ptr, n) {
    return new DataView(this.buffer, ptr, n);
  }
  i32(ptr) {
    return new Int32Array(this.buffer, ptr, 1)[0];
  }
  u32(ptr) {
    return new Uint32Array(this.buffer, ptr, 1)[0];
  }
  f32s(ptr, n) {
    return new Float32Array(this.buffer, ptr, n);
  }
  malloc(n) {
    const ptr = this.M._malloc(Math.max(1, n)) >>> 0;
    if (!ptr) fail(`out of wasm memory allocating ${n} bytes`, 'SAC_ERR_NOMEM');
    return ptr;
  }
  free(ptr) {
    if (ptr) this.M._free(ptr);
  }
  cstring(ptr) {
    ptr >>>= 0; // pointers above 2 GB come back from exports as negative numbers
    if (!ptr) return '';
    const u8 = new Uint8Array(this.buffer);
    let end = ptr;
    while (u8[end] !== 0) end++;
    return decoder.decode(u8.slice(ptr, end));
  }
  text(ptr, len) {
    return len ? decoder.decode(new Uint8Array(this.buffer).slice(ptr, ptr + len)) : '';
  }
  /** Copies a string into the heap as UTF-8; returns [ptr, byteLength]. */
  string(s) {
    const bytes = encoder.encode(s);
    const ptr = this.malloc(bytes.length + 1);
    const dst = this.u8(ptr, bytes.length + 1);
    dst.set(bytes);
    dst[bytes.length] = 0;
    return [ptr, bytes.length];
  }
  /** Copies token ids into the heap as int32; returns the pointer. */
  ids(ids) {
    const ptr = this.malloc(ids.length * 4);
    new Int32Array(this.buffer, ptr, ids.length).set(ids);
    return ptr;
  }
}

// Struct layouts for wasm32 (pointers are 4 bytes, uint64_t is 8-byte aligned). A layout
// mismatch shows up in tests/js/api.test.mjs, which compares with the native CLI.
const INFO_SIZE = 88; // sac_model_info
const CONTEXT_PARAMS_SIZE = 16; // sac_context_params: n_ctx, n_batch, n_threads, capture_attention
const SAMPLING_PARAMS_SIZE = 32; // sac_sampling_params: temp, top_k, top_p, repeat_penalty, repeat_last_n, pad, seed

function readInfo(heap, ptr) {
  const v = heap.view(ptr, INFO_SIZE);
  return {
    architecture: heap.cstring(v.getUint32(0, true)),
    name: heap.cstring(v.getUint32(4, true)),
    vocabSize: v.getInt32(8, true),
    contextLength: v.getInt32(12, true),
    embeddingSize: v.getInt32(16, true),
    feedForwardSize: v.getInt32(20, true),
    layers: v.getInt32(24, true),
    heads: v.getInt32(28, true),
    kvHeads: v.getInt32(32, true),
    headDim: v.getInt32(36, true),
    ropeDim: v.getInt32(40, true),
    ropeFreqBase: v.getFloat32(44, true),
    normEps: v.getFloat32(48, true),
    tiedOutput: v.getInt32(52, true) !== 0,
    hasTokenizer: v.getInt32(56, true) !== 0,
    parameters: Number(v.getBigUint64(64, true)),
    tensorBytes: Number(v.getBigUint64(72, true)),
    ggufVersion: v.getUint32(80, true),
    encoderLayers: v.getInt32(84, true),
  };
}

function writeContextParams(heap, ptr, p) {
  const v = heap.view(ptr, CONTEXT_PARAMS_SIZE);
  v.setInt32(0, p.contextLength, true);
  v.setInt32(4, p.batchSize, true);
  v.setInt32(8, p.threads, true);
  v.setInt32(12, p.attention ? 1 : 0, true);
}

function writeSamplingParams(heap, ptr, p) {
  const v = heap.view(ptr, SAMPLING_PARAMS_SIZE);
  v.setFloat32(0, p.temperature, true);
  v.setInt32(4, p.topK, true);
  v.setFloat32(8, p.topP, true);
  v.setFloat32(12, p.repeatPenalty, true);
  v.setInt32(16, p.repeatLastN, true);
  v.setInt32(20, 0, true);
  v.setBigUint64(24, p.seed, true);
}

// ---------------------------------------------------------------------------------------------
// Model sources. Each becomes { size, chunks(): AsyncIterable<Uint8Array>, cancel() }; size is
// null when unknown (a response without Content-Length); cancel() releases a source whose
// chunks were never read.
// ---------------------------------------------------------------------------------------------

function bytesSource(bytes) {
  return {
    size: bytes.length,
    async *chunks() {
      for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.subarray(at, at + CHUNK);
    },
    cancel() {},
  };
}

function streamSource(stream, size) {
  return {
    size,
    async *chunks() {
      const reader = stream.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    },
    cancel() {
      if (!stream.locked) stream.cancel().catch(() => {});
    },
  };
}

function responseSource(response, what) {
  if (!response.ok) fail(`cannot load ${what}: HTTP ${response.status} ${response.statusText}`.trim(), 'SAC_ERR_STATE');
  if (response.bodyUsed) fail(`cannot load ${what}: the response body was already read`);
  const encoding = response.headers.get('content-encoding');
  const length = response.headers.get('content-length');
  // With a content encoding, Content-Length counts compressed bytes.
  const size = length !== null && (!encoding || encoding === 'identity') ? Number(length) : null;
  if (!response.body) return bytesSource(new Uint8Array(0));
  return streamSource(response.body, Number.isSafeInteger(size) ? size : null);
}

async function fileSource(path) {
  const { open, stat } = await import('node:fs/promises');
  let size;
  try {
    ({ size } = await stat(path));
  } catch (e) {
    fail(`cannot open '${path}': ${e.code === 'ENOENT' ? 'no such file' : e.message}`, 'SAC_ERR_ARG');
  }
  return {
    size,
    async *chunks() {
      const handle = await open(path, 'r');
      const buffer = new Uint8Array(Math.min(CHUNK, Math.max(1, size)));
      try {
        for (let at = 0; ; ) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
          if (bytesRead === 0) return;
          at += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
      } finally {
        await handle.close();
      }
    },
    cancel() {},
  };
}

async function openSource(source, signal) {
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer == 'function' && source instanceof SharedArrayBuffer))
    return bytesSource(new Uint8Array(source));
  if (ArrayBuffer.isView(source)) return bytesSource(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  if (typeof Response == 'function' && source instanceof Response) return responseSource(source, 'the model');
  if (typeof Blob == 'function' && source instanceof Blob) return streamSource(source.stream(), source.size);
  if (typeof ReadableStream == 'function' && source instanceof ReadableStream) return streamSource(source, null);
  let url;
  if (source instanceof URL) url = source;
  else if (typeof source == 'string') {
    if (isNode && !/^(https?|file|data|blob):/i.test(source)) return fileSource(source);
    try {
      url = new URL(source, globalThis.location?.href);
    } catch {
      fail(`'${source}' is not a valid URL`);
    }
  } else {
    fail('the model source must be a Uint8Array, ArrayBuffer, Blob, Response, ReadableStream, URL or string ' +
      `(a URL, or a file path in Node), got ${source === null ? 'null' : typeof source}`);
  }
  if (isNode && url.protocol === 'file:') return fileSource((await import('node:url')).fileURLToPath(url));
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    fail(`cannot fetch ${url.href}: ${e.message}`, 'SAC_ERR_STATE');
  }
  return responseSource(response, url.href);
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

const mb = (bytes) => `${(bytes / MB).toFixed(1)} MB`;

function checkFileSize(size) {
  if (size === 0) fail('the model is empty (0 bytes)', 'SAC_ERR_FORMAT');
  if (size > MAX_ALLOCATION)
    fail(`the model is ${mb(size)}: more than the ${mb(MAX_ALLOCATION)} one WebAssembly allocation can hold ` +
      '(wasm32 heap: 2 GB per allocation, 4 GB in all); use a smaller or more quantized model (Q8_0, Q4_0)',
      'SAC_ERR_NOMEM');
}

/** Copies every chunk of the source into one malloc'd buffer; returns [ptr, size]. */
async function streamIntoHeap(heap, source, onProgress, signal) {
  const total = source.size; // null: unknown, so gather the chunks and copy them at the end
  const parts = [];
  let ptr = total === null ? 0 : heap.malloc(total);
  let loaded = 0;
  const chunks = source.chunks()[Symbol.asyncIterator]();
  try {
    if (total !== null) onProgress?.({ loaded, total });
    for (;;) {
      signal?.throwIfAborted();
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
        heap.u8(ptr + loaded, chunk.length).set(chunk);
      }
      loaded += chunk.length;
      onProgress?.({ loaded, total });
    }
    signal?.throwIfAborted();
    if (total !== null && loaded !== total)
      fail(`the model source ended after ${loaded} of the ${total} bytes it announced`, 'SAC_ERR_FORMAT');
    if (total === null) {
      checkFileSize(loaded);
      ptr = heap.malloc(loaded);
      let at = 0;
      for (const part of parts) {
        heap.u8(ptr + at, part.length).set(part);
        at += part.length;
      }
    }
    return [ptr, loaded];
  } catch (e) {
    await chunks.return?.().catch(() => {});
    heap.free(ptr);
    throw e;
  }
}

/**
 * Loads a GGUF model. `source`: Uint8Array, ArrayBuffer, Blob, Response, ReadableStream, URL, or
 * a string (a URL; in Node also a file path). See index.d.ts for the options.
 */
export async function loadModel(source, options = {}) {
  const { onProgress, signal, contextLength = 0, batchSize = 0, attention = false, vocabOnly = false } = options;
  if (onProgress !== undefined && typeof onProgress != 'function') fail('onProgress must be a function');
  if (!(Number.isInteger(contextLength) && contextLength >= 0))
    fail(`contextLength must be an integer >= 0 (0: the model's), got ${String(contextLength)}`);
  if (!(Number.isInteger(batchSize) && batchSize >= 0))
    fail(`batchSize must be an integer >= 0 (0: the default), got ${String(batchSize)}`);
  // a vocabulary-only model never computes: no threads
  const runtime = chooseRuntime(vocabOnly ? { ...options, threads: 1, variant: 'st' } : options);
  if (vocabOnly) runtime.reason = 'vocabOnly: tokenizer only';
  signal?.throwIfAborted();
  const input = await openSource(source, signal);
  let M;
  try {
    if (input.size !== null) checkFileSize(input.size); // before allocating anything
    M = await instantiate(runtime);
  } catch (e) {
    input.cancel();
    throw e;
  }
  const heap = new Heap(M);
  const scratch = heap.malloc(256);
  let model = 0;
  let ctx = 0;
  try {
    const [data, size] = await streamIntoHeap(heap, input, onProgress, signal);
    // The model owns `data` from here on, even when loading fails.
    const flags = SAC_LOAD_TAKE_OWNERSHIP | (vocabOnly ? SAC_LOAD_VOCAB_ONLY : 0);
    const status = M._sac_model_load(data, size, flags, scratch);
    model = heap.u32(scratch);
    if (!model) fail('out of wasm memory loading the model', 'SAC_ERR_NOMEM');
    if (status !== SAC_OK) fail(heap.cstring(M._sac_model_errmsg(model)), statusName(M, status));

    const params = { contextLength, batchSize, threads: runtime.threads, attention };
    if (vocabOnly) return new Model(M, heap, model, 0, scratch, runtime, params);
    M._sac_model_get_info(model, scratch);
    const info = readInfo(heap, scratch);
    checkBudget(M, heap, model, info, params, scratch, size);

    writeContextParams(heap, scratch, params);
    const st = M._sac_context_new(model, scratch, scratch + 64);
    ctx = heap.u32(scratch + 64);
    if (!ctx) fail('out of wasm memory creating the context', 'SAC_ERR_NOMEM');
    if (st !== SAC_OK) fail(heap.cstring(M._sac_context_errmsg(ctx)), statusName(M, st));

    const threads = M._sac_context_n_threads(ctx);
    if (threads < runtime.threads)
      runtime.reason += `; only ${threads} of ${runtime.threads} threads could be started`;
    runtime.threads = threads;
    return new Model(M, heap, model, ctx, scratch, runtime, params);
  } catch (e) {
    if (ctx) M._sac_context_free(ctx);
    if (model) M._sac_model_free(model);
    heap.free(scratch);
    terminate(M);
    throw e;
  }
}

function statusName(M, status) {
  return new Heap(M).cstring(M._sac_status_name(status));
}

/** Weights (already in the heap) + KV cache + scratch must fit the wasm memory limit. */
function checkBudget(M, heap, model, info, params, scratch, weightBytes) {
  writeContextParams(heap, scratch, params);
  const contextBytes = Number(M._sac_context_memory(model, scratch));
  const n = params.contextLength || info.contextLength;
  const stacks = Math.max(0, params.threads - 1) * 2 * MB; // pthread stacks come from the heap
  const inUse = heap.buffer.byteLength; // weights, parsed metadata, tokenizer, glue
  const total = inUse + contextBytes + stacks;
  const hint = 'pass a smaller contextLength' + (params.attention ? ' or turn attention capture off' : '');
  if (total > WASM_MEMORY_LIMIT)
    fail(`the model does not fit in WebAssembly memory: ${mb(weightBytes)} of weights and ${mb(inUse - weightBytes)} ` +
      `else in use + ${mb(contextBytes)} for a ${n}-token context (KV cache and scratch) = ${mb(total)}, ` +
      `more than the ${mb(WASM_MEMORY_LIMIT)} limit; ${hint}`, 'SAC_ERR_NOMEM');
  // (the key and value caches are equal: one above 2 GB would already exceed the total)
  const capture = params.attention ? 4 * info.layers * info.heads * ((n * (n + 1)) / 2) : 0;
  if (capture > MAX_ALLOCATION)
    fail(`attention capture over a ${n}-token context needs ${mb(capture)} in one allocation, more than the ` +
      `${mb(MAX_ALLOCATION)} WebAssembly allows; ${hint}`, 'SAC_ERR_NOMEM');
}

function terminate(M) {
  // Stops the pool workers (a Node process can then exit); the module is unusable afterwards.
  M.PThread?.terminateAllThreads();
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

// Lets the event loop run (timers, abort events, messages) between generated tokens.
const nextTask = typeof setImmediate == 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : (() => {
      const channel = new MessageChannel();
      const waiting = [];
      channel.port1.onmessage = () => waiting.shift()();
      return () => new Promise((resolve) => {
        waiting.push(resolve);
        channel.port2.postMessage(0);
      });
    })();

function checkIds(ids, what = 'ids') {
  if (typeof ids == 'string' || ids == null || typeof ids.length != 'number')
    fail(`${what} must be an array of token ids, got ${ids === null ? 'null' : typeof ids}`);
  for (let i = 0; i < ids.length; i++)
    if (!Number.isInteger(ids[i]) || ids[i] < -0x80000000 || ids[i] > 0x7fffffff)
      fail(`${what}[${i}] is ${String(ids[i])}, not a token id (an integer)`);
  return ids;
}

function randomSeed() {
  const words = new Uint32Array(2);
  globalThis.crypto.getRandomValues(words);
  return (BigInt(words[0]) << 32n) | BigInt(words[1]);
}

export class Model {
  #M;
  #heap;
  #model;
  #ctx;
  #scratch;
  #params;
  #generating = false;
  #disposed = false;
  #source = null; // encoder–decoder models: the ids of the last encoded source

  /** @internal — use loadModel(). */
  constructor(M, heap, model, ctx, scratch, runtime, params) {
    this.#M = M;
    this.#heap = heap;
    this.#model = model;
    this.#ctx = ctx;
    this.#scratch = scratch;
    this.#params = params;
    this.runtime = Object.freeze(runtime);
    this.info = Object.freeze(this.#readInfo());
  }

  #readInfo() {
    const M = this.#M;
    const heap = this.#heap;
    const s = this.#scratch;
    M._sac_model_get_info(this.#model, s);
    const info = readInfo(heap, s);
    const tensors = [];
    const tensorTypes = {};
    for (let i = 0, n = M._sac_model_n_tensors(this.#model); i < n; i++) {
      // name, type, n_dims at s, s+4, s+8; dims (int64[4]) at s+16
      this.#check(M._sac_model_tensor(this.#model, i, s, s + 4, s + 8, s + 16), 'model');
      const v = heap.view(s, 48);
      const name = heap.cstring(v.getUint32(0, true));
      const type = heap.cstring(v.getUint32(4, true));
      const nDims = v.getInt32(8, true);
      const dims = [];
      for (let d = 0; d < nDims; d++) dims.push(Number(v.getBigInt64(16 + 8 * d, true)));
      tensors.push({ name, type, dims });
      tensorTypes[type] = (tensorTypes[type] ?? 0) + 1;
    }
    const metadata = {};
    for (let i = 0, n = M._sac_model_n_metadata(this.#model); i < n; i++) {
      this.#check(M._sac_model_metadata(this.#model, i, s, s + 4), 'model');
      // defineProperty: a key such as "__proto__" is data here, not the prototype
      Object.defineProperty(metadata, heap.cstring(heap.u32(s)),
        { value: heap.cstring(heap.u32(s + 4)), enumerable: true, writable: true, configurable: true });
    }
    info.tensorTypes = tensorTypes;
    info.tensors = tensors;
    info.metadata = metadata;
    info.bosId = M._sac_token_bos(this.#model);
    info.eosId = M._sac_token_eos(this.#model);
    info.addBos = M._sac_token_add_bos(this.#model) === 1;
    return info;
  }

  /** Throws the handle's message when a C call failed. */
  #check(status, handle = 'context', ptr) {
    if (status === SAC_OK) return;
    const M = this.#M;
    const msg = handle === 'model' ? M._sac_model_errmsg(this.#model)
      : handle === 'detokenizer' ? M._sac_detokenizer_errmsg(ptr)
        : M._sac_context_errmsg(this.#ctx);
    fail(this.#heap.cstring(msg), statusName(M, status));
  }

  #usable() {
    if (this.#disposed) fail('the model was disposed', 'SAC_ERR_STATE');
  }

  #hasContext() {
    this.#usable();
    if (!this.#ctx) fail('the model was loaded with { vocabOnly: true }: it can only tokenize and detokenize', 'SAC_ERR_STATE');
  }

  #idle() {
    this.#hasContext();
    if (this.#generating)
      fail('a generation is running on this model; finish it or stop it (AbortSignal, or break out of the loop) first',
        'SAC_ERR_STATE');
  }

  /** Text → token ids. Options: bos, eos (add the special tokens), special (parse "<s>" etc.). */
  tokenize(text, { bos = false, eos = false, special = false } = {}) {
    this.#usable();
    if (typeof text != 'string') fail(`text must be a string, got ${typeof text}`);
    const M = this.#M;
    const heap = this.#heap;
    const flags = (bos ? SAC_TOKENIZE_BOS : 0) | (eos ? SAC_TOKENIZE_EOS : 0) | (special ? SAC_TOKENIZE_SPECIAL : 0);
    const [str, len] = heap.string(text);
    let capacity = len + 8;
    try {
      for (;;) {
        const out = heap.malloc(capacity * 4);
        try {
          const status = M._sac_tokenize(this.#model, str, len, flags, out, capacity, this.#scratch);
          const n = heap.i32(this.#scratch);
          if (status === SAC_ERR_ARG && n > capacity) {
            capacity = n;
            continue;
          }
          this.#check(status, 'model');
          return Array.from(new Int32Array(heap.buffer, out, n));
        } finally {
          heap.free(out);
        }
      }
    } finally {
      heap.free(str);
    }
  }

  /** Token ids → text (complete UTF-8 characters; a trailing partial one becomes U+FFFD). */
  detokenize(ids) {
    this.#usable();
    checkIds(ids);
    const dt = this.#detokenizer();
    try {
      let text = '';
      for (const id of ids) text += this.#push(dt, id);
      return text + this.#flush(dt);
    } finally {
      this.#M._sac_detokenizer_free(dt);
    }
  }

  #detokenizer() {
    this.#check(this.#M._sac_detokenizer_new(this.#model, this.#scratch), 'model');
    return this.#heap.u32(this.#scratch);
  }

  #push(dt, id) {
    const s = this.#scratch;
    this.#check(this.#M._sac_detokenizer_push(dt, id, s, s + 4), 'detokenizer', dt);
    return this.#heap.text(this.#heap.u32(s), this.#heap.u32(s + 4));
  }

  #flush(dt) {
    const s = this.#scratch;
    this.#check(this.#M._sac_detokenizer_flush(dt, s, s + 4), 'detokenizer', dt);
    return this.#heap.text(this.#heap.u32(s), this.#heap.u32(s + 4));
  }

  get #encdec() {
    return this.info.architecture === 'encdec';
  }

  /**
   * Starts over: forgets every token, sets attention capture, and for an encoder–decoder model
   * runs the encoder over `source` (by default the last one again: a reset forgets it).
   */
  #reset(attention, source = this.#source) {
    const M = this.#M;
    M._sac_context_reset(this.#ctx);
    this.#check(M._sac_attention_enable(this.#ctx, attention || this.#params.attention ? 1 : 0));
    if (!source) return;
    const ptr = this.#heap.ids(source);
    try {
      this.#check(M._sac_encode(this.#ctx, ptr, source.length, 0));
    } finally {
      this.#heap.free(ptr);
    }
    this.#source = Array.from(source);
  }

  /** Resets the context and appends `ids`; ids are checked before the context changes. */
  #evalFresh(ids, flags, attention, source) {
    this.#reset(attention, source);
    this.#eval(ids, flags);
  }

  #eval(ids, flags = 0) {
    const ptr = this.#heap.ids(ids);
    try {
      this.#check(this.#M._sac_eval(this.#ctx, ptr, ids.length, 0, flags));
    } finally {
      this.#heap.free(ptr);
    }
  }

  /**
   * Evaluates `ids` from a fresh context; returns the logits of the last position
   * (vocabSize floats), or of every position with allLogits (row-major). A copy.
   * Encoder–decoder models: `ids` are decoder tokens, read against `source` (encoded first)
   * or, without it, against the last encoded source.
   */
  forward(ids, { allLogits = false, attention = false, source } = {}) {
    this.#idle();
    checkIds(ids);
    if (source !== undefined) this.#checkSource(source);
    this.#evalFresh(ids, allLogits ? SAC_EVAL_ALL_LOGITS : 0, attention, source);
    const s = this.#scratch;
    const ptr = this.#M._sac_logits(this.#ctx, s, s + 4) >>> 0;
    const rows = this.#heap.i32(s);
    const vocab = this.#heap.i32(s + 4);
    return this.#heap.f32s(ptr, rows * vocab).slice();
  }

  /**
   * The captured attention probabilities of one layer and head over the current context:
   * { queries, keys, data } with data[q * keys + k] (zero above the diagonal). A copy.
   * Capture must have been on: loadModel({ attention: true }), or forward/generate with
   * { attention: true }. `kind` is 'self' (the default); encoder–decoder models also have
   * 'cross' (decoder queries × source keys) and 'encoder'.
   */
  attention(layer, head, { kind = 'self' } = {}) {
    this.#hasContext();
    if (!Object.hasOwn(ATTENTION_KINDS, kind)) fail(`kind must be 'self', 'cross' or 'encoder', got ${String(kind)}`);
    const layers = kind === 'encoder' ? this.info.encoderLayers : this.info.layers;
    const { heads } = this.info;
    if (!Number.isInteger(layer) || layer < 0 || layer >= layers)
      fail(`layer must be an integer in [0, ${layers}), got ${String(layer)}`);
    if (!Number.isInteger(head) || head < 0 || head >= heads)
      fail(`head must be an integer in [0, ${heads}), got ${String(head)}`);
    const M = this.#M;
    const heap = this.#heap;
    const s = this.#scratch;
    const k = ATTENTION_KINDS[kind];
    this.#check(M._sac_attention_get(this.#ctx, k, layer, head, 0, 0, s, s + 4)); // sizes only
    const queries = heap.i32(s);
    const keys = heap.i32(s + 4);
    const out = heap.malloc(queries * keys * 4);
    try {
      this.#check(M._sac_attention_get(this.#ctx, k, layer, head, out, queries * keys, s, s + 4));
      return { queries, keys, data: heap.f32s(out, queries * keys).slice() };
    } finally {
      heap.free(out);
    }
  }

  /**
   * Generates tokens after a prompt (text, tokenized with BOS when the model asks for it, or
   * ids). Returns an async iterator of { id, text, attention, cross }. Options are checked
   * here, so bad ones throw at the call; the prompt is evaluated at the first step.
   * Encoder–decoder models: the prompt is the source; the decoder starts from
   * options.decoderStart (default [BOS]).
   */
  generate(prompt, options = {}) {
    this.#idle();
    const o = this.#samplingOptions(options);
    const ids = typeof prompt == 'string' ? this.tokenize(prompt, { bos: this.info.addBos }) : [...checkIds(prompt, 'prompt')];
    if (ids.length === 0) fail('the prompt is empty');
    if (!this.#encdec) return this.#generate(null, ids, o);
    this.#checkSource(ids);
    const start = options.decoderStart ?? (this.info.bosId >= 0 ? [this.info.bosId] : null);
    if (!start) fail('the model has no BOS token to start the decoder with: pass options.decoderStart (token ids)');
    checkIds(start, 'decoderStart');
    if (start.length === 0) fail('decoderStart is empty');
    return this.#generate(ids, [...start], o);
  }

  #checkSource(source) {
    if (!this.#encdec) fail(`only encoder–decoder models take a source; this model is ${this.info.architecture}`);
    checkIds(source, 'source');
  }

  /** Encoder–decoder models: the source ids the decoder reads (of the last generate or forward). */
  get sourceIds() {
    return this.#source ? [...this.#source] : null;
  }

  #samplingOptions(options) {
    const M = this.#M;
    const s = this.#scratch;
    M._sac_sampling_default_params(s);
    const v = this.#heap.view(s, SAMPLING_PARAMS_SIZE);
    const {
      maxTokens = 64,
      temperature = v.getFloat32(0, true),
      topK = v.getInt32(4, true),
      topP = v.getFloat32(8, true),
      repeatPenalty = v.getFloat32(12, true),
      repeatLastN = v.getInt32(16, true),
      seed = randomSeed(),
      stop = [],
      signal,
      attention = false,
      ignoreEos = false,
    } = options;
    const isNumber = (x) => typeof x == 'number' && Number.isFinite(x);
    if (!(Number.isInteger(maxTokens) && maxTokens >= 0)) fail(`maxTokens must be an integer >= 0, got ${String(maxTokens)}`);
    if (!(isNumber(temperature) && temperature >= 0))
      fail(`temperature must be a finite number >= 0 (0: greedy), got ${String(temperature)}`);
    if (!(Number.isInteger(topK) && topK >= 0)) fail(`topK must be an integer >= 0 (0: off), got ${String(topK)}`);
    if (!(isNumber(topP) && topP > 0 && topP <= 1)) fail(`topP must be in (0, 1] (1: off), got ${String(topP)}`);
    if (!(isNumber(repeatPenalty) && repeatPenalty > 0))
      fail(`repeatPenalty must be a finite number > 0 (1: off), got ${String(repeatPenalty)}`);
    if (!(Number.isInteger(repeatLastN) && repeatLastN >= -1))
      fail(`repeatLastN must be an integer >= -1 (-1: the whole context), got ${String(repeatLastN)}`);
    let seed64;
    try {
      seed64 = BigInt(seed);
    } catch {
      seed64 = -1n;
    }
    if (seed64 < 0n || seed64 >= 1n << 64n) fail(`seed must be an integer in [0, 2^64), got ${String(seed)}`);
    const stops = Array.isArray(stop) ? stop : [stop];
    for (const s of stops)
      if (!(typeof s == 'string' && s.length > 0) && !Number.isInteger(s))
        fail(`stop must be a non-empty string, a token id, or an array of them, got ${String(s)}`);
    if (signal !== undefined && !(typeof signal == 'object' && signal !== null && 'aborted' in signal))
      fail('signal must be an AbortSignal');
    return {
      maxTokens, temperature, topK, topP, repeatPenalty, repeatLastN, seed: seed64, signal, attention, ignoreEos,
      stopStrings: stops.filter((s) => typeof s == 'string'),
      stopIds: new Set(stops.filter((s) => typeof s == 'number')),
    };
  }

  /** `source` null for decoder-only models; `ids` is what the decoder evaluates first. */
  async *#generate(source, ids, o) {
    // Checked again here: two iterators may be created before either starts.
    this.#idle();
    this.#generating = true;
    const M = this.#M;
    const heap = this.#heap;
    const ctx = this.#ctx;
    let dt = 0;
    try {
      o.signal?.throwIfAborted();
      if (this.info.hasTokenizer) dt = this.#detokenizer();
      writeSamplingParams(heap, this.#scratch, o);
      this.#check(M._sac_sampler_init(ctx, this.#scratch));
      this.#evalFresh(ids, 0, o.attention, source);
      const { layers, heads, eosId } = this.info;
      let text = '';
      for (let n = 1; n <= o.maxTokens; n++) {
        // Let the event loop run (abort events, timers) after every evaluation.
        await nextTask();
        this.#usable(); // dispose() may have run meanwhile
        o.signal?.throwIfAborted();
        this.#check(M._sac_sample(ctx, this.#scratch));
        const id = heap.i32(this.#scratch);
        let piece = dt ? this.#push(dt, id) : '';
        const before = text.length;
        text += piece;
        const full = M._sac_context_n_past(ctx) >= M._sac_context_n_ctx(ctx);
        const last = n === o.maxTokens || full || (id === eosId && !o.ignoreEos) || o.stopIds.has(id) ||
          o.stopStrings.some((s) => text.includes(s, Math.max(0, before - s.length + 1)));
        if (last && dt) piece += this.#flush(dt);
        let attention;
        let cross;
        if (o.attention) {
          const s = this.#scratch;
          const q = M._sac_context_n_past(ctx) - 1; // the query row whose output predicted `id`
          this.#check(M._sac_attention_row(ctx, q, s, s + 4));
          attention = { query: q, keys: q + 1, data: heap.f32s(heap.u32(s), layers * heads * (q + 1)).slice() };
          if (source) {
            this.#check(M._sac_attention_cross_row(ctx, q, s, s + 4));
            const keys = heap.i32(s + 4);
            cross = { query: q, keys, data: heap.f32s(heap.u32(s), layers * heads * keys).slice() };
          }
        }
        yield { id, text: piece, attention, cross };
        if (last) return;
        this.#usable(); // the consumer may have disposed the model or aborted
        o.signal?.throwIfAborted();
        this.#eval([id]);
      }
    } finally {
      if (dt && !this.#disposed) M._sac_detokenizer_free(dt);
      if (!this.#disposed) M._sac_attention_enable(ctx, this.#params.attention ? 1 : 0);
      this.#generating = false;
    }
  }

  /**
   * Prefill and decode speed on synthetic ids, as `saccade bench` measures it natively:
   * best of `repeat` runs of a `promptTokens` prefill followed by `decodeTokens` single-token evals.
   */
  bench({ promptTokens = 128, decodeTokens = 32, repeat = 3 } = {}) {
    this.#idle();
    for (const [k, v] of Object.entries({ promptTokens, decodeTokens, repeat }))
      if (!(Number.isInteger(v) && v >= 1)) fail(`${k} must be an integer >= 1, got ${String(v)}`);
    const M = this.#M;
    const ctx = this.#ctx;
    const V = this.info.vocabSize;
    const nCtx = M._sac_context_n_ctx(ctx);
    // An encoder–decoder model encodes the prompt ids and decodes against them: each has the whole context.
    if (this.#encdec ? promptTokens > nCtx || decodeTokens > nCtx : promptTokens + decodeTokens > nCtx)
      fail(this.#encdec ? 'promptTokens and decodeTokens must each fit in the context length'
        : 'promptTokens + decodeTokens exceed the context length');
    const ids = Array.from({ length: promptTokens }, (_, i) => Number((BigInt(i) * 7919n + 13n) % BigInt(V)));
    const decode = Array.from({ length: decodeTokens }, (_, i) => Number((BigInt(i) * 104729n + 7n) % BigInt(V)));
    let prefill = Infinity;
    let step = Infinity;
    for (let r = 0; r < repeat; r++) {
      const t0 = performance.now();
      if (this.#encdec) this.#reset(false, ids);
      else this.#evalFresh(ids, 0, false);
      const t1 = performance.now();
      for (const id of decode) this.#eval([id]);
      const t2 = performance.now();
      prefill = Math.min(prefill, t1 - t0);
      step = Math.min(step, t2 - t1);
    }
    const type = this.info.tensors.find((t) => t.name.includes('ffn_up'))?.type ?? '';
    return {
      engine: `saccade-wasm-${this.runtime.variant}`, type, threads: this.runtime.threads, promptTokens, decodeTokens,
      prefillTokensPerSecond: promptTokens / (prefill / 1e3), decodeTokensPerSecond: decodeTokens / (step / 1e3),
    };
  }

  /** Frees the model, its context and its wasm instance (and threads). Later calls throw. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    const M = this.#M;
    M._sac_context_free(this.#ctx);
    M._sac_model_free(this.#model);
    this.#heap.free(this.#scratch);
    terminate(M);
    this.#M = this.#heap = null;
  }

  get disposed() {
    return this.#disposed;
  }
}
