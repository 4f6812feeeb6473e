// The page's first module: it hands the model worker that index.html started (before any module
// had loaded) to the page's ModelClient, or starts it, and has it warm up the library, the wasm and
// its thread pool while the page's other modules load. app.mjs takes the client from here.
import { ModelClient } from './client.mjs';

export const bootTime = performance.now();
export const client = new ModelClient({ worker: window.saccadeEarlyWorker ?? undefined });
delete window.saccadeEarlyWorker;
client.prepare({ threads: Number(new URLSearchParams(location.search).get('threads')) || undefined });
