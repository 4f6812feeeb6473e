// The page's first module: it hands the model worker that index.html started (before any module
// had loaded, and already warming up) to the page's ModelClient, or starts it and has it warm up
// the library, the wasm and its thread pool while the page's other modules load. app.mjs takes
// the client from here. (The threads are app.mjs's: ?threads=N.)
import { ModelClient, startWorker } from './client.mjs';

/** The worker's script: its bundle (scripts/bundle-web.mjs), as index.html starts it. */
const WORKER_SCRIPT = new URL('./bundle/worker.mjs', import.meta.url);

export const bootTime = performance.now();
const early = window.saccadeEarlyWorker;
delete window.saccadeEarlyWorker;
export const client = new ModelClient({ worker: early ?? startWorker(WORKER_SCRIPT) });
if (!early) client.prepare({ threads: Number(new URLSearchParams(location.search).get('threads')) || undefined });
