// Runtime choice: threads need SharedArrayBuffer, which browsers only give cross-origin
// isolated pages (COOP: same-origin + COEP: require-corp) and their workers. Node always has it.
import { fail } from './errors.mjs';
import { describe, optionsOf } from './options.mjs';

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

/**
 * Which build to run and why: { variant, threads, simd, isolated, reason, relaxed, relaxedReason }.
 * `simd`: 'relaxed' requires the relaxed-SIMD build, 'simd128' refuses it; by default it runs
 * where the engine computes relaxed SIMD's int8 dot product right (relaxedSimd()).
 */
export function chooseRuntime(options) {
  const { threads, variant, simd } = optionsOf(options, ['threads', 'variant', 'simd'], 'chooseRuntime');
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 1 && threads <= 256))
    fail(`threads must be an integer from 1 to 256, got ${describe(threads)}`);
  if (variant !== undefined && variant !== 'mt' && variant !== 'st')
    fail(`variant must be 'mt' (threaded) or 'st' (single-threaded), got ${describe(variant)}`);
  if (simd !== undefined && simd !== 'relaxed' && simd !== 'simd128')
    fail(`simd must be 'relaxed' (the relaxed-SIMD build) or 'simd128', got ${describe(simd)}`);
  const relaxed = relaxedChoice(simd);
  return { ...threadChoice(threads, variant), ...relaxed };
}

function threadChoice(threads, variant) {
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
// Relaxed SIMD: the relaxed builds (dist/saccade-relaxed-*) compute the K-quants' block dots
// with i32x4.relaxed_dot_i8x16_i7x16_add_s, bitwise the results of the SIMD128 builds. An engine
// qualifies when it runs the instruction right, not merely when it validates it: Node 20's V8
// (behind --experimental-wasm-relaxed-simd) validates it but returns twice the dot product
// without the accumulator.
// ---------------------------------------------------------------------------------------------

// (func (export "a"|"b") (result i32)  v128.const A  v128.const B  v128.const C
//   i32x4.relaxed_dot_i8x16_i7x16_add_s  i32x4.extract_lane 0|3)
const PROBE_A = [-128, 127, -1, 5, 1, 2, 3, 4, 9, 9, 9, 9, 127, -128, 127, -128];
const PROBE_B = [127, 127, 3, 0, 1, 1, 1, 1, 0, 0, 0, 0, 127, 126, 1, 0];
const PROBE_C = [1000, 0, 0, -70000];
/** Lane k of the exact result: C[k] + the dot of the bytes 4k..4k+3. */
const probeLane = (k) => PROBE_C[k] + [0, 1, 2, 3].reduce((s, j) => s + PROBE_A[4 * k + j] * PROBE_B[4 * k + j], 0);

function probeModule() {
  const bytes = (v) => [...new Uint8Array(v.buffer)];
  const body = (lane) => [62, 0, 0xfd, 0x0c, ...bytes(Int8Array.from(PROBE_A)), 0xfd, 0x0c, ...bytes(Int8Array.from(PROBE_B)),
    0xfd, 0x0c, ...bytes(Int32Array.from(PROBE_C)), 0xfd, 0x93, 0x02, 0xfd, 0x1b, lane, 0x0b];
  return new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7f, 3, 3, 2, 0, 0,
    7, 9, 2, 1, 0x61, 0, 0, 1, 0x62, 0, 1, 10, 127, 2, ...body(0), ...body(3)]);
}

let relaxedVerdict; // { ok, why }, computed once

/** Whether this engine has relaxed SIMD's int8 dot product, and computes it right: { ok, why }. */
export function relaxedSimd() {
  if (relaxedVerdict) return relaxedVerdict;
  const bytes = probeModule();
  if (!WebAssembly.validate(bytes)) relaxedVerdict = { ok: false, why: 'this engine lacks relaxed SIMD' };
  else {
    let got;
    try {
      const { exports } = new WebAssembly.Instance(new WebAssembly.Module(bytes));
      got = [exports.a(), exports.b()];
    } catch (e) {
      got = e.message;
    }
    const want = [probeLane(0), probeLane(3)];
    relaxedVerdict = Array.isArray(got) && got[0] === want[0] && got[1] === want[1]
      ? { ok: true, why: "this engine has relaxed SIMD's int8 dot product" }
      : { ok: false, why: `this engine's relaxed SIMD int8 dot product is wrong (a test gave ${JSON.stringify(got)}, ` +
        `not ${JSON.stringify(want)})` };
  }
  return relaxedVerdict;
}

function relaxedChoice(simd) {
  if (simd === 'simd128') return { relaxed: false, relaxedReason: "simd 'simd128' requested" };
  const { ok, why } = relaxedSimd();
  if (simd === 'relaxed' && !ok) fail(`the relaxed-SIMD build cannot run here: ${why}`, 'SAC_ERR_UNSUPPORTED');
  if (simd === 'relaxed') return { relaxed: true, relaxedReason: `simd 'relaxed' requested; ${why}` };
  return { relaxed: ok, relaxedReason: why };
}
