// Loading: checks the options, picks a runtime, streams the source into a fresh wasm instance,
// parses the model and creates its context within the memory budget.
import { checkFileSize, checkLoadBudget, MAX_ALLOCATION } from './budget.mjs';
import { Engine, SCRATCH_BYTES, statusName } from './engine.mjs';
import { fail } from './errors.mjs';
import { Heap } from './heap.mjs';
import { instantiate, terminate } from './instantiate.mjs';
import { constants, readInfo, writeContextParams } from './layout.mjs';
import { Model } from './model.mjs';
import { abortSignal, bool, int, optionsOf } from './options.mjs';
import { ablationMask, setAblation } from './probe.mjs';
import { chooseRuntime } from './runtime.mjs';
import { openSource } from './sources.mjs';

const { SAC_OK, SAC_LOAD_TAKE_OWNERSHIP, SAC_LOAD_VOCAB_ONLY, SAC_DEFAULT_N_CTX } = constants;

export const LOAD_OPTIONS = ['threads', 'variant', 'onProgress', 'signal', 'contextLength', 'batchSize', 'attention',
  'vocabOnly', 'noPositions', 'scores', 'qk', 'ablate'];

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
export async function loadModel(source, options) {
  const o = optionsOf(options, LOAD_OPTIONS, 'loadModel');
  const { onProgress } = o;
  if (onProgress !== undefined && typeof onProgress != 'function') fail('onProgress must be a function');
  const signal = abortSignal(o.signal);
  const contextLength = int('contextLength', o.contextLength, 0, 0, undefined, ' (0: the default)');
  const batchSize = int('batchSize', o.batchSize, 0, 0, undefined, ' (0: the default)');
  const attention = bool('attention', o.attention);
  const vocabOnly = bool('vocabOnly', o.vocabOnly);
  const noPositions = bool('noPositions', o.noPositions);
  const scores = bool('scores', o.scores);
  const qk = bool('qk', o.qk);
  if (o.ablate != null && !Array.isArray(o.ablate) && typeof o.ablate != 'string')
    fail("ablate must be an array of [layer, head] pairs or a string such as '0:1,1:3'");
  // a vocabulary-only model never computes: no threads
  const runtime = chooseRuntime(vocabOnly ? { threads: 1, variant: 'st' } : { threads: o.threads, variant: o.variant });
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
  const scratch = heap.malloc(SCRATCH_BYTES);
  let model = 0;
  let ctx = 0;
  try {
    const [data, size] = await streamIntoHeap(heap, input, onProgress, signal);
    // The model owns `data` from here on, even when loading fails.
    const flags = SAC_LOAD_TAKE_OWNERSHIP | (vocabOnly ? SAC_LOAD_VOCAB_ONLY : 0);
    const status = M._sac_model_load(data, size, flags, scratch);
    model = heap.u32(scratch);
    if (!model) fail('out of wasm memory loading the model', 'SAC_ERR_NOMEM');
    if (status !== SAC_OK) fail(heap.cstring(M._sac_model_errmsg(model)), statusName(M, heap, status));

    const params = { contextLength, batchSize, threads: runtime.threads, attention, noPositions, scores, qk };
    if (vocabOnly) {
      Object.assign(runtime, { contextLength: 0, contextReason: 'vocabOnly: no context' });
      return new Model(new Engine(M, heap, model, 0, scratch), runtime, params);
    }
    M._sac_model_get_info(model, scratch);
    const info = readInfo(heap, scratch);
    const n = contextLength || defaultContext(info);
    writeContextParams(heap, scratch, params);
    checkLoadBudget({
      heapBytes: heap.buffer.byteLength, weightBytes: size, contextBytes: Number(M._sac_context_memory(model, scratch)),
      threads: runtime.threads, info, n, attention, scores,
    });

    writeContextParams(heap, scratch, params);
    const st = M._sac_context_new(model, scratch, scratch + 64);
    ctx = heap.u32(scratch + 64);
    if (!ctx) fail('out of wasm memory creating the context', 'SAC_ERR_NOMEM');
    if (st !== SAC_OK) fail(heap.cstring(M._sac_context_errmsg(ctx)), statusName(M, heap, st));

    const threads = M._sac_context_n_threads(ctx);
    if (threads < runtime.threads)
      runtime.reason += `; only ${threads} of ${runtime.threads} threads could be started`;
    runtime.threads = threads;
    if (o.ablate) {
      const engine = { M, heap, ctx, check: (s) => s && fail(heap.cstring(M._sac_context_errmsg(ctx)), statusName(M, heap, s)) };
      setAblation(engine, 'self', typeof o.ablate == 'string' ? o.ablate : ablationMask(info, 'self', o.ablate));
    }
    runtime.contextLength = M._sac_context_n_ctx(ctx);
    runtime.contextReason = contextReason(contextLength, runtime.contextLength, info.contextLength);
    return new Model(new Engine(M, heap, model, ctx, scratch), runtime, params);
  } catch (e) {
    if (ctx) M._sac_context_free(ctx);
    if (model) M._sac_model_free(model);
    heap.free(scratch);
    terminate(M);
    throw e;
  }
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
