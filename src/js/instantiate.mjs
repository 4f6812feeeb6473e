// Instantiating a wasm module: one per model, so disposing a model returns all its memory.
// The compiled WebAssembly.Module is cached per variant; instantiating it again is cheap.
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

/** A running Emscripten module of the runtime's variant, its pthread pool sized for its threads. */
export async function instantiate(runtime) {
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
  return M;
}

/** Stops the pool workers (a Node process can then exit); the module is unusable afterwards. */
export function terminate(M) {
  M.PThread?.terminateAllThreads();
}
