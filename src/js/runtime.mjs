// Runtime choice: threads need SharedArrayBuffer, which browsers only give cross-origin
// isolated pages (COOP: same-origin + COEP: require-corp) and their workers. Node always has it.
import { fail } from './errors.mjs';

export const isNode = typeof process == 'object' && typeof process.versions?.node == 'string';

/**
 * A Node built-in module ('node:fs/promises', …), loaded synchronously: no top-level await (so
 * `require('saccade')` works) and no 'node:' import for a browser bundler to trip on.
 */
export function nodeBuiltin(name) {
  if (typeof process.getBuiltinModule != 'function')
    fail(`saccade needs Node.js 20.16 or later (process.getBuiltinModule); this is ${process.version}`, 'SAC_ERR_UNSUPPORTED');
  return process.getBuiltinModule(name);
}

const DEFAULT_THREADS_CAP = 8;

function defaultThreads() {
  let n = 1;
  if (isNode) n = nodeBuiltin('node:os').availableParallelism();
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
