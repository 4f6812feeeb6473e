// Instantiating a wasm module: one per live model or training run, so two never share a heap. The
// compiled WebAssembly.Module is cached per wasm file. A disposed model's instance (its C objects
// all freed) is parked for a few seconds and handed to the next load of the same variant and
// thread count: a new instance means a new wasm memory and, threaded, new workers, which the
// engine frees only when its garbage collector runs, so load/dispose loops would otherwise pile
// up memories and worker isolates (3x the single-threaded peak RSS).
import { fail, SaccadeError } from './errors.mjs';
import { optionsOf } from './options.mjs';
import { isNode, nodeBuiltin } from './runtime.mjs';
import { measure, now } from './timing.mjs';

// The smallest module using a SIMD128 instruction (i32x4.splat of i32.const 0, then drop).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 9, 1, 7, 0,
  65, 0, 253, 17, 26, 11]);

// ---------------------------------------------------------------------------------------------
// Where the files are. The glue (.mjs), the wasm and the pthread worker script are named by
// literal new URL(…, import.meta.url) so that bundlers which follow that pattern (Vite, webpack)
// copy them as they are; the glue is then imported by URL, never bundled, so no bundler rewrites
// the code that starts the threads. configure({ assetBase }) names the folder for the others.
// ---------------------------------------------------------------------------------------------

// Every build, by its file name: the inference builds (every model) and the trainer's (train()
// only). Each entry names its files once; nothing else in the library spells a dist/ path.
const BUILDS = {
  'saccade-mt': () => ({
    glue: new URL('../../dist/saccade-mt.mjs', import.meta.url),
    wasm: new URL('../../dist/saccade-mt.wasm', import.meta.url),
    // the browsers' (ES module) copy; Node starts the CommonJS one beside the glue
    worker: new URL('../../dist/saccade-mt.worker.mjs', import.meta.url),
  }),
  'saccade-st': () => ({
    glue: new URL('../../dist/saccade-st.mjs', import.meta.url),
    wasm: new URL('../../dist/saccade-st.wasm', import.meta.url),
  }),
  // the same with relaxed SIMD's int8 dot product (runtime.mjs's relaxedSimd() decides)
  'saccade-relaxed-mt': () => ({
    glue: new URL('../../dist/saccade-relaxed-mt.mjs', import.meta.url),
    wasm: new URL('../../dist/saccade-relaxed-mt.wasm', import.meta.url),
    worker: new URL('../../dist/saccade-relaxed-mt.worker.mjs', import.meta.url),
  }),
  'saccade-relaxed-st': () => ({
    glue: new URL('../../dist/saccade-relaxed-st.mjs', import.meta.url),
    wasm: new URL('../../dist/saccade-relaxed-st.wasm', import.meta.url),
  }),
  'saccade-train-mt': () => ({
    glue: new URL('../../dist/saccade-train-mt.mjs', import.meta.url),
    wasm: new URL('../../dist/saccade-train-mt.wasm', import.meta.url),
    worker: new URL('../../dist/saccade-train-mt.worker.mjs', import.meta.url),
  }),
  'saccade-train-st': () => ({
    glue: new URL('../../dist/saccade-train-st.mjs', import.meta.url),
    wasm: new URL('../../dist/saccade-train-st.wasm', import.meta.url),
  }),
};

let assetBase = null; // a URL ending in '/', or null: the files beside the library (BUILDS)

/**
 * Library-wide settings. `assetBase`: the URL of a folder holding the package's dist/ files
 * (saccade-mt.mjs, .wasm, .worker.mjs, .worker.js; saccade-st.mjs, .wasm; the relaxed-SIMD
 * saccade-relaxed-mt.* and saccade-relaxed-st.* likewise; the trainer's
 * saccade-train-mt.* and saccade-train-st.* likewise), for bundlers that do not copy the
 * files new URL(…, import.meta.url) names (esbuild, Rollup without a plugin), or a CDN; relative
 * URLs resolve against the page. null restores the default. Returns the settings in force.
 */
export function configure(options) {
  const o = optionsOf(options, ['assetBase'], 'configure');
  if ('assetBase' in o) {
    const base = o.assetBase;
    if (base === null || base === undefined) assetBase = null;
    else {
      if (typeof base != 'string' && !(base instanceof URL))
        fail(`assetBase must be a URL or a string, got ${typeof base}`);
      let url;
      try {
        url = new URL(String(base), globalThis.document?.baseURI ?? globalThis.location?.href);
      } catch {
        fail(`assetBase is not a URL: '${String(base)}'`);
      }
      if (!url.pathname.endsWith('/')) url.pathname += '/';
      assetBase = url;
    }
    compiled.clear();
  }
  return { assetBase: assetBase?.href ?? null };
}

/**
 * The files of the build `name` ('saccade-mt', 'saccade-train-st', …): beside the library, or
 * by their own names under assetBase (a bundler may have renamed its copies).
 */
function filesOf(name) {
  const files = BUILDS[name]();
  if (!assetBase) return files;
  const suffixes = { glue: '.mjs', wasm: '.wasm', worker: '.worker.mjs' };
  for (const kind of Object.keys(files)) files[kind] = new URL(name + suffixes[kind], assetBase);
  return files;
}

// ---------------------------------------------------------------------------------------------
// Compiling
// ---------------------------------------------------------------------------------------------

const compiled = new Map(); // wasm URL → Promise<WebAssembly.Module>

async function fetchWasm(url) {
  const start = now();
  const module = await fetchAndCompile(url);
  measure('wasm-compile', start);
  return module;
}

async function fetchAndCompile(url) {
  if (isNode) return WebAssembly.compile(await nodeBuiltin('node:fs/promises').readFile(url));
  if (typeof WebAssembly.compileStreaming == 'function') {
    try {
      return await WebAssembly.compileStreaming(fetch(url));
    } catch {
      // e.g. served without Content-Type: application/wasm — compile from the bytes below
    }
  }
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    fail(`cannot fetch ${url}: ${e.message}`, 'SAC_ERR_STATE');
  }
  if (!response.ok) fail(`cannot fetch ${url}: HTTP ${response.status}`, 'SAC_ERR_STATE');
  return WebAssembly.compile(await response.arrayBuffer());
}

function compileWasm(url) {
  if (!compiled.has(url.href)) {
    if (!WebAssembly.validate(SIMD_PROBE))
      fail('this JavaScript engine lacks WebAssembly SIMD128, which saccade needs', 'SAC_ERR_UNSUPPORTED');
    const promise = fetchWasm(url);
    promise.catch(() => compiled.delete(url.href));
    compiled.set(url.href, promise);
  }
  return compiled.get(url.href);
}

/** The Emscripten factory of the glue at `url`, imported as it is (hidden from bundlers). */
async function importGlue(url) {
  const start = now();
  try {
    return (await import(/* webpackIgnore: true */ /* @vite-ignore */ url.href)).default;
  } catch (e) {
    fail(`cannot load ${url.href}: ${e.message}`, 'SAC_ERR_STATE');
  } finally {
    measure('glue-import', start);
  }
}

// ---------------------------------------------------------------------------------------------
// The pthread pool's workers
// ---------------------------------------------------------------------------------------------

/** How long the pool's workers may take to start before loadModel gives up. */
export const WORKER_START_MS = 30_000;

/**
 * A pool worker running the worker script at `url` (the glue calls this, see
 * scripts/patch-glue.mjs). Browsers: a module worker, from the URL when it is on the page's
 * origin, else from a same-origin blob that imports it (a worker script must be same-origin;
 * the files then need CORS headers, and CORP on an isolated page). Node: a worker thread of the
 * CommonJS copy beside the glue.
 */
function startWorker(url, glue) {
  if (isNode) {
    const { Worker } = nodeBuiltin('node:worker_threads');
    return new Worker(nodeBuiltin('node:url').fileURLToPath(workerScript(url, glue)));
  }
  if (url.origin === globalThis.location?.origin) return new Worker(url, { type: 'module' });
  const blob = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};\n`], { type: 'text/javascript' }));
  try {
    return new Worker(blob, { type: 'module' }); // the blob's entry is resolved here: revoking it now is safe
  } finally {
    URL.revokeObjectURL(blob);
  }
}

/** The script a pool worker runs: `url`, or in Node the CommonJS copy beside the glue. */
const workerScript = (url, glue) => (isNode ? new URL(glue.href.replace(/\.mjs$/, '.worker.js')) : url);

/** The SaccadeError for a pool worker that failed to start, for `why`. */
function workerError(url, why) {
  return new SaccadeError(`a thread worker (${url.href}) failed to start: ${why}`, 'SAC_ERR_STATE');
}

/**
 * Why a worker failed, from its error event: the event's message (a SyntaxError, an uncaught
 * error, Node's error), else the Content-Security-Policy violation seen meanwhile, else the HTTP
 * status of the script (a browser reports a failed worker script load as a bare event).
 */
async function workerFailure(url, e, violation) {
  const message = e?.message || e?.error?.message;
  if (message) return message;
  await new Promise((resolve) => setTimeout(resolve, 0)); // the violation event may come second
  if (violation.directive) return `blocked by the Content-Security-Policy directive "${violation.directive}"`;
  const response = await fetch(url, { method: 'HEAD' }).catch(() => null);
  if (response && !response.ok) return `HTTP ${response.status} for the worker script`;
  return 'the browser gives no reason: the script may not be JavaScript (a SyntaxError, see the browser console), ' +
    'or, on a cross-origin isolated page, lack a Cross-Origin-Embedder-Policy header, or come from another origin ' +
    'without CORS headers';
}

// ---------------------------------------------------------------------------------------------
// Instantiating
// ---------------------------------------------------------------------------------------------

const PARK_MS = 5000;
const PARK_MAX_BYTES = 512 * 2 ** 20; // a larger memory is returned at once rather than kept
const parked = new Map(); // build/pool size → { M, timer }
const keys = new WeakMap(); // M → its build/pool size
const trapped = new WeakSet(); // instances a C call threw in (a trap), or whose pool failed: never reused
const pools = new WeakMap(); // M → Promise that its pool's workers have loaded the module (threaded builds)
const poolsLoaded = new WeakSet(); // M whose pool has
const abandons = new WeakMap(); // M → ends its pool's start (a rejection) when M is terminated first

/**
 * The module as the library calls it: its exported functions wrapped so that a throw — a wasm
 * trap or abort, which may leave the C heap inconsistent — marks the instance as never to be
 * reused. Everything else (memory, PThread) is read through from the module.
 */
function guarded(M) {
  const C = Object.create(M);
  for (const name of Object.keys(M))
    if (name.startsWith('_') && typeof M[name] == 'function')
      C[name] = (...args) => {
        try {
          return M[name](...args); // looked up per call: Emscripten rebinds its exports lazily
        } catch (e) {
          trapped.add(C);
          throw e;
        }
      };
  return C;
}

/**
 * A running Emscripten module of the runtime's variant, its pthread pool sized for its threads:
 * the inference build, or with `build` 'saccade-train' the trainer's. With `waitForThreads`
 * false it may come before its pool's workers have loaded (see poolStarted): C calls then run,
 * but a thread they start waits for its worker, so a caller must not wait on one meanwhile.
 */
export async function instantiate(runtime, build = 'saccade', { waitForThreads = true } = {}) {
  const M = await take(runtime, build);
  if (!waitForThreads) return M;
  try {
    await poolStarted(M);
  } catch (e) {
    terminate(M);
    throw e;
  }
  return M;
}

/** A parked, warming or new instance of the build (see instantiate). */
async function take(runtime, build) {
  const { name, key } = buildOf(runtime, build);
  const idle = parked.get(key);
  if (idle) {
    parked.delete(key);
    clearTimeout(idle.timer);
    return idle.M;
  }
  const early = warming.get(key);
  if (early) {
    warming.delete(key); // this load takes it
    try {
      return await early;
    } catch {
      // started afresh below, which reports its own failure
    }
  }
  return start(runtime, name, key);
}

/**
 * Resolves when the instance's thread pool has started (at once for a single-threaded build);
 * rejects with the pool's failure (a worker that cannot start, or the deadline).
 */
export function poolStarted(M) {
  return pools.get(M) ?? Promise.resolve();
}

/** Whether the instance's pool has started (always, single-threaded). */
export function poolReady(M) {
  return !pools.has(M) || poolsLoaded.has(M);
}

/**
 * The build's name and the key its instances are parked under (build/pool size). The trainer
 * has no relaxed-SIMD build.
 */
function buildOf(runtime, build) {
  const name = `${build}${runtime.relaxed && build === 'saccade' ? '-relaxed' : ''}-${runtime.variant}`;
  if (!Object.hasOwn(BUILDS, name)) fail(`no build named '${name}'`, 'SAC_ERR_STATE');
  return { name, key: `${name}/${Math.max(1, runtime.threads - 1)}` };
}

const warming = new Map(); // build/pool size → Promise of an instance that warmUp started

/**
 * Starts an instance of the runtime's build before any load asks for it — the wasm compiled, its
 * thread pool running — and parks it (see release) for the next load of the same runtime, which
 * also takes it while it is still starting. A page calls this before the model is chosen or its
 * download begins. Failures are left to that load to report.
 */
export function warmUp(runtime, build = 'saccade') {
  const { name, key } = buildOf(runtime, build);
  if (parked.has(key) || warming.has(key)) return;
  adopt(key, start(runtime, name, key));
}

/**
 * An instance a load gave up on while it was still starting (its signal aborted, its source
 * failed), untouched: the next load of the runtime takes it as it takes warmUp's, so loads
 * aborted in quick succession do not each leave one starting.
 */
export function handOver(runtime, starting, build = 'saccade') {
  const { key } = buildOf(runtime, build);
  if (parked.has(key) || warming.has(key)) starting.then(release, () => {});
  else adopt(key, starting);
}

/** `early` (a promise of an instance) is the next load's, or parked once it starts. */
function adopt(key, early) {
  warming.set(key, early);
  early.then((M) => {
    if (warming.get(key) !== early) return; // a load took it
    warming.delete(key);
    release(M);
  }, () => {
    if (warming.get(key) === early) warming.delete(key);
  });
}

/** A new instance (see instantiate). */
async function start(runtime, name, key) {
  const files = filesOf(name);
  const compiling = compileWasm(files.wasm);
  compiling.catch(() => {}); // reported through instantiateWasm
  // The factory never settles when instantiateWasm fails: race it against that and a deadline.
  // The main instance's failures end the factory's wait; a worker's end the pool's (poolStarted),
  // which a load with waitForThreads: false outlives on one thread.
  let failed;
  const startFailed = new Promise((_, reject) => (failed = reject));
  startFailed.catch(() => {}); // raced below
  let poolFailed;
  const workerFailed = new Promise((_, reject) => (poolFailed = reject));
  workerFailed.catch(() => {}); // raced below
  let starting = true;
  let instantiated; // when the main instance was made: the pool's workers load the module from then on
  const workers = [];
  const options = {
    // the calling thread is thread 0; the pool holds the others
    pthreadPoolSize: Math.max(1, runtime.threads - 1),
    instantiateWasm(imports, receive) {
      compiling.then(async (wasmModule) => {
        const start = now();
        const instance = await WebAssembly.instantiate(wasmModule, imports);
        measure('wasm-instantiate', start);
        instantiated = now();
        receive(instance, wasmModule);
      }).catch(failed);
      return {};
    },
    print: (s) => console.log(s),
    printErr: (s) => console.warn(s),
  };
  const violation = {}; // a Content-Security-Policy violation while the workers start
  const onViolation = (e) => (violation.directive ??= e.violatedDirective);
  const failedWorker = (e) => {
    if (starting) workerFailure(files.worker, e, violation).then((why) => poolFailed(workerError(workerScript(files.worker, files.glue), why)));
  };
  /** A pool worker, listened to from the start (the glue's own handler comes once the wasm is instantiated). */
  const poolWorker = () => {
    let worker;
    try {
      worker = startWorker(files.worker, files.glue);
    } catch (e) {
      const error = workerError(files.worker, e.message);
      failed(error);
      throw error;
    }
    if (isNode) worker.on('error', failedWorker);
    else {
      worker.addEventListener('error', failedWorker);
      worker.postMessage({ cmd: 'saccade-preload', url: files.glue.href }); // (scripts/patch-glue.mjs)
    }
    workers.push(worker);
    return worker;
  };
  const early = []; // the pool's workers, started while the glue is imported and the wasm compiles
  let factory;
  try {
    if (runtime.variant === 'mt') {
      globalThis.addEventListener?.('securitypolicyviolation', onViolation);
      for (let i = 0; i < options.pthreadPoolSize; i++) early.push(poolWorker());
    }
    factory = await importGlue(files.glue);
  } catch (e) {
    for (const w of workers) w.terminate();
    globalThis.removeEventListener?.('securitypolicyviolation', onViolation);
    throw e;
  }
  if (runtime.variant === 'mt') {
    Object.assign(options, {
      mainScriptUrlOrBlob: files.glue.href, // what each worker imports
      createPthreadWorker: () => early.shift() ?? poolWorker(), // (a throw leaves the factory call, below)
      // the glue's handler: true while starting (the load rejects, see above); a running thread's
      // error is the glue's to report
      onPthreadError: () => starting,
    });
  }
  let timer;
  const deadline = runtime.variant === 'mt' && new Promise((_, reject) => {
    timer = setTimeout(() => reject(new SaccadeError(`the ${options.pthreadPoolSize} thread worker(s) ` +
      `(${files.worker.href}) did not start within ${WORKER_START_MS / 1000} s`, 'SAC_ERR_STATE')), WORKER_START_MS);
  });
  const done = () => {
    starting = false;
    clearTimeout(timer);
    globalThis.removeEventListener?.('securitypolicyviolation', onViolation);
  };
  const failures = deadline ? [deadline] : [];
  let M;
  try {
    // (the factory resolves once the main instance is made: scripts/patch-glue.mjs)
    M = await Promise.race([factory(options), startFailed, ...failures]);
  } catch (e) {
    for (const w of workers) w.terminate();
    done();
    throw e;
  }
  // Pool workers only compute while the main thread is inside a C call, so they need not keep
  // a Node process alive: unref them (terminate() stops them).
  if (M.PThread && isNode) for (const w of M.PThread.unusedWorkers) w.unref?.();
  const C = guarded(M);
  keys.set(C, key);
  if (runtime.variant !== 'mt') {
    done();
    return C;
  }
  // The pool's workers load the module from here on; a failure now is the pool's (poolStarted).
  // (The deadline keeps a Node process alive meanwhile — the workers do not — and terminate ends it.)
  abandons.set(C, () => poolFailed(new SaccadeError('the instance was terminated before its threads started', 'SAC_ERR_STATE')));
  const pool = Promise.race([M.saccadeWorkersLoaded, workerFailed, ...failures]).then(() => {
    measure('thread-pool', instantiated);
    poolsLoaded.add(C);
  }, (e) => {
    trapped.add(C); // never handed to another load
    if (parked.get(key)?.M === C) {
      clearTimeout(parked.get(key).timer);
      parked.delete(key);
    }
    for (const w of workers) w.terminate();
    throw e;
  }).finally(() => {
    abandons.delete(C);
    done();
  });
  pool.catch(() => {}); // reported by whoever waits for it
  pools.set(C, pool);
  return C;
}

/**
 * Done with an instance whose C objects are all freed: parks it for the next load of the same
 * runtime (see above), or terminates it when a C call trapped in it, its memory is large, or one
 * is parked already.
 */
export function release(M) {
  const key = keys.get(M);
  const bytes = (M.wasmMemory ?? M.HEAPU8).buffer.byteLength;
  if (!key || trapped.has(M) || parked.has(key) || bytes > PARK_MAX_BYTES) return terminate(M);
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
  abandons.get(M)?.(); // a pool still starting: its promise rejects now rather than at the deadline
  M.PThread?.terminateAllThreads();
}
