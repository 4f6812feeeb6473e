// The page's first module: it hands the model worker that index.html started (before any module
// had loaded; its URL has it warm up the library, the wasm and its thread pool, and open the
// page's default model) to the page's ModelClient. When index.html could not start it, it starts
// it here and asks for the same by messages: the warm-up, and the model the page opens with when
// no parameter names another (app.mjs's start: Model A). app.mjs takes the client from here.
import { ModelClient, startWorker } from './client.mjs';
import { MODELS } from './config.mjs';

/** The worker's script: its bundle (scripts/bundle-web.mjs), as index.html starts it. */
const WORKER_SCRIPT = new URL('./bundle/worker.mjs', import.meta.url);

const bootTime = performance.now();
/** The page's first phases (ms since navigation): the worker started (by index.html, or here), this module run. */
export const bootPhases = {
  'page-worker': { start: 0, end: performance.getEntriesByName('saccade:page-worker')[0]?.startTime ?? bootTime },
  'page-boot': { start: 0, end: bootTime },
};
const params = new URLSearchParams(location.search);
const early = window.saccadeEarlyWorker;
delete window.saccadeEarlyWorker;
export const client = new ModelClient({ worker: early ?? startWorker(WORKER_SCRIPT) });
if (!early) {
  client.prepare({ threads: Number(params.get('threads')) || undefined });
  if (!params.get('model') && (params.get('source') ?? 'a') === 'a') client.preopen(MODELS.a.url);
}
