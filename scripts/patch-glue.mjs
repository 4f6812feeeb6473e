#!/usr/bin/env node
// Post-processes Emscripten 3.1.6's threaded glue (dist/saccade-mt.mjs) and its pthread worker
// script (dist/saccade-mt.worker.js), right after the link; the trainer's threaded build
// (dist/saccade-train-mt.*) likewise:
//
// 1. allocateUnusedWorker: the glue starts each pool worker itself, with
//    `new Worker(new URL('saccade-mt.worker.js', import.meta.url))` — a classic worker from a
//    path relative to the glue. Bundlers rewrite that pattern (Vite bundles the worker as an ES
//    module, then the classic start fails), a worker on another origin cannot be started at all,
//    and a constructor that throws (CSP) escapes. The glue now asks Module.createPthreadWorker(),
//    which src/js/instantiate.mjs defines: it starts the worker where the files really are, from
//    a same-origin blob when they are on another origin.
// 2. worker.onerror: the glue logs a worker's error and rethrows it as an uncaught exception, and
//    its pool never finishes loading, so the factory's promise never settles. It now first calls
//    Module.onPthreadError(worker, event); when that returns true (instantiate.mjs rejects the
//    load with the error) the glue does nothing more.
// 3. The worker script imports the glue with a bare `import(url).then(…)`: when the import fails
//    (404, CORS, not JavaScript) the rejection stays inside the worker and the page never hears
//    of it. An unhandled rejection in a browser worker is now rethrown as an uncaught error,
//    which reaches the worker's error event (Node reports it there already).
// 4. The pool's workers are started before the glue is imported (instantiate.mjs), and told
//    {cmd: "saccade-preload", url} at once: the worker script now imports the glue on that
//    message, so that the import is done (or under way: the module is fetched and run once)
//    when the glue's "load" message comes with the compiled module.
// 5. The glue's factory waits for every pool worker to load the module before it resolves. It
//    now resolves once the main instance is made, and Module.saccadeWorkersLoaded (a promise)
//    tells when the workers have loaded: a page can parse its model meanwhile, and run on one
//    thread until then (instantiate.mjs waits for it unless asked not to; a thread started
//    before its worker has loaded is queued by the glue until it has).
// 6. Browsers get the worker script as an ES module too, saccade-mt.worker.mjs, started as a
//    module worker: a dev server that rewrites the JavaScript it serves (Vite adds imports for
//    the dynamic import) breaks a classic worker. The .js (CommonJS) stays for Node.
//
// Each pattern must occur exactly once, so that a different Emscripten fails the build here.
import { readFileSync, writeFileSync } from 'node:fs';

const [glueFile, workerFile, moduleWorkerFile] = process.argv.slice(2);
if (!glueFile || !workerFile || !moduleWorkerFile) {
  console.error('usage: node scripts/patch-glue.mjs dist/saccade-mt.mjs dist/saccade-mt.worker.js dist/saccade-mt.worker.mjs');
  process.exit(2);
}

function replaceOnce(text, pattern, replacement, what) {
  const matches = text.match(new RegExp(pattern.source, 'g')) ?? [];
  if (matches.length !== 1) {
    console.error(`patch-glue: expected one ${what}, found ${matches.length}: is this Emscripten 3.1.6's output?`);
    process.exit(1);
  }
  return text.replace(pattern, replacement);
}

let glue = readFileSync(glueFile, 'utf8');
glue = replaceOnce(glue, /allocateUnusedWorker:function\(\)\{.*?\},getNewWorker:/,
  'allocateUnusedWorker:function(){PThread.unusedWorkers.push(Module["createPthreadWorker"]())},getNewWorker:',
  'allocateUnusedWorker');
glue = replaceOnce(glue, /worker\.onerror=\(e=>\{/,
  'worker.onerror=(e=>{if(Module["onPthreadError"]&&Module["onPthreadError"](worker,e))return;', 'worker.onerror');
glue = replaceOnce(glue,
  /PThread\.unusedWorkers\.forEach\(function\(w\)\{PThread\.loadWasmModuleToWorker\(w,function\(\)\{if\(!--numWorkersToLoad\)removeRunDependency\("wasm-instantiate"\)\}\)\}\)/,
  'Module["saccadeWorkersLoaded"]=new Promise(function(loaded){PThread.unusedWorkers.forEach(function(w){' +
  'PThread.loadWasmModuleToWorker(w,function(){if(!--numWorkersToLoad)loaded()})})});removeRunDependency("wasm-instantiate")',
  'pool load');
if (/new Worker\(/.test(glue)) {
  console.error('patch-glue: the glue still starts a worker itself');
  process.exit(1);
}
writeFileSync(glueFile, glue);

let worker = readFileSync(workerFile, 'utf8');
if (worker.includes('unhandledrejection')) {
  console.error(`patch-glue: ${workerFile} is patched already`);
  process.exit(1);
}
worker = replaceOnce(worker, /self\.onmessage=\(e=>\{try\{if\(e\.data\.cmd==="load"\)/,
  'self.onmessage=(e=>{try{if(e.data.cmd==="saccade-preload"){import(e.data.url).catch(function(){})}else if(e.data.cmd==="load")',
  'onmessage');
const patched = `${worker.trimEnd()}\nif(!ENVIRONMENT_IS_NODE)self.addEventListener("unhandledrejection",function(e){throw e.reason});\n`;
writeFileSync(workerFile, patched);
writeFileSync(moduleWorkerFile, `// The pthread worker script as an ES module, for browsers (see scripts/patch-glue.mjs).\n${patched}export {};\n`);
