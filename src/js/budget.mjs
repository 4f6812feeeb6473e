// Memory limits of wasm32 and the checks that keep a model, its context and its attention
// capture inside them, made before anything is allocated so that the message can say what to change.
import { fail } from './errors.mjs';

const MB = 2 ** 20;
export const WASM_MEMORY_LIMIT = 4096 * MB; // -sMAXIMUM_MEMORY=4GB in scripts/wasm.mk
export const MAX_ALLOCATION = 2048 * MB - 64 * 1024; // one malloc must stay below 2 GB (dlmalloc/sbrk)

export const mb = (bytes) => `${(bytes / MB).toFixed(1)} MB`;

export function checkFileSize(size) {
  if (size === 0) fail('the model is empty (0 bytes)', 'SAC_ERR_FORMAT');
  if (size > MAX_ALLOCATION)
    fail(`the model is ${mb(size)}: more than the ${mb(MAX_ALLOCATION)} one WebAssembly allocation can hold ` +
      '(wasm32 heap: 2 GB per allocation, 4 GB in all); use a smaller or more quantized model (Q8_0, Q4_0)',
      'SAC_ERR_NOMEM');
}

/**
 * The allocations attention capture needs for `rows` decoder query rows and (encoder–decoder
 * models) `source` source tokens, in bytes: self (L·H·rows(rows+1)/2 floats), cross
 * (L·H·rows·source) and encoder (L_enc·H·source²).
 */
export function captureBytes(info, rows, source = 0, scores = false) {
  const { layers: L, heads: H, encoderLayers } = info;
  const parts = [4 * L * H * ((rows * (rows + 1)) / 2), 4 * L * H * rows * source, 4 * encoderLayers * H * source * source];
  return scores ? [...parts, ...parts] : parts; // captured scores: one more buffer of each size
}

/**
 * Weights (already in the heap) + KV cache + scratch (`contextBytes`, which includes a full
 * context's capture when capture is on) must fit the wasm memory limit.
 * `contextBytes` is 0 for parameters sac_context_new refuses: its message, not a budget's, explains them.
 */
export function checkLoadBudget({ heapBytes, weightBytes, contextBytes, threads, info, n, attention, scores }) {
  if (contextBytes === 0) return; // parameters C refuses: sac_context_new gives its own reason
  const stacks = Math.max(0, threads - 1) * 2 * MB; // pthread stacks come from the heap
  const total = heapBytes + contextBytes + stacks;
  const hint = 'pass a smaller contextLength' + (attention ? ' or turn attention capture off' : '');
  if (total > WASM_MEMORY_LIMIT)
    fail(`the model does not fit in WebAssembly memory: ${mb(weightBytes)} of weights and ${mb(heapBytes - weightBytes)} ` +
      `else in use + ${mb(contextBytes)} for a ${n}-token context (KV cache and scratch) = ${mb(total)}, ` +
      `more than the ${mb(WASM_MEMORY_LIMIT)} limit; ${hint}`, 'SAC_ERR_NOMEM');
  // (the key and value caches are equal: one above 2 GB would already exceed the total)
  if (attention) checkCapture(captureBytes(info, n, info.encoderLayers ? n : 0, scores), 0, `over a ${n}-token context`, hint);
}

/**
 * A call that captures attention (forward or generate with { attention: true }) checks the rows
 * it can reach: each capture allocation must fit one wasm allocation, and all of them the memory
 * left. `what` says which rows, `hint` what to change.
 */
export function checkCallCapture(heapBytes, info, rows, source, what, hint, scores = false) {
  checkCapture(captureBytes(info, rows, source, scores), heapBytes, what, hint);
}

function checkCapture(parts, heapBytes, what, hint) {
  const total = parts.reduce((a, b) => a + b, 0);
  const largest = Math.max(...parts);
  if (largest > MAX_ALLOCATION)
    fail(`attention capture ${what} needs ${mb(largest)} in one allocation, more than the ${mb(MAX_ALLOCATION)} ` +
      `WebAssembly allows; ${hint}`, 'SAC_ERR_NOMEM');
  if (heapBytes && heapBytes + total > WASM_MEMORY_LIMIT)
    fail(`attention capture ${what} needs ${mb(total)} with ${mb(heapBytes)} already in use, more than the ` +
      `${mb(WASM_MEMORY_LIMIT)} of WebAssembly memory; ${hint}`, 'SAC_ERR_NOMEM');
}
