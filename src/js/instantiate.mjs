// Instantiating a wasm module: one per live model, so two models never share a heap. The
// compiled WebAssembly.Module is cached per variant. A disposed model's instance (its C objects
// all freed) is parked for a few seconds and handed to the next load of the same variant and
// thread count: a new instance means a new wasm memory and, threaded, new workers, which the
// engine frees only when its garbage collector runs, so load/dispose loops would otherwise pile
// up memories and worker isolates (3x the single-threaded peak RSS).
import { fail } from './errors.mjs';
import { isNode } from './runtime.mjs';

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

const PARK_MS = 5000;
const PARK_MAX_BYTES = 512 * 2 ** 20; // a larger memory is returned at once rather than kept
const parked = new Map(); // variant/pool size → { M, timer }
const keys = new WeakMap(); // M → its variant/pool size

/** A running Emscripten module of the runtime's variant, its pthread pool sized for its threads. */
export async function instantiate(runtime) {
  const key = `${runtime.variant}/${Math.max(1, runtime.threads - 1)}`;
  const idle = parked.get(key);
  if (idle) {
    parked.delete(key);
    clearTimeout(idle.timer);
    return idle.M;
  }
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
  // a Node process alive: unref them (terminate() stops them).
  if (M.PThread && isNode) for (const w of M.PThread.unusedWorkers) w.unref?.();
  keys.set(M, key);
  return M;
}

/**
 * Done with an instance whose C objects are all freed: parks it for the next load of the same
 * runtime (see above), or terminates it when its memory is large or one is parked already.
 */
export function release(M) {
  const key = keys.get(M);
  const bytes = (M.wasmMemory ?? M.HEAPU8).buffer.byteLength;
  if (!key || parked.has(key) || bytes > PARK_MAX_BYTES) return terminate(M);
  const timer = setTimeout(() => {
    if (parked.get(key)?.M !== M) return;
    parked.delete(key);
    terminate(M);
  }, PARK_MS);
  timer.unref?.(); // a parked instance never keeps a Node process alive
  parked.set(key, { M, timer });
}

/** Stops the pool workers (a Node process can then exit); the module is unusable afterwards. */
export function terminate(M) {
  M.PThread?.terminateAllThreads();
}
