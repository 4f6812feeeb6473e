// The page's first module: it starts the model worker — and in it the library, the wasm and its
// thread pool — while the page's other modules are still loading. app.mjs takes the client from here.
import { ModelClient } from './client.mjs';

export const bootTime = performance.now();
export const client = new ModelClient();
client.prepare({ threads: Number(new URLSearchParams(location.search).get('threads')) || undefined });
