// Runs saccade's bench (prefill of promptTokens, then decodeTokens single-token steps, best of
// `repeat`) in a module worker, off the page's main thread as an app would.
import { loadModel } from '../../src/js/index.mjs';

onmessage = async ({ data }) => {
  try {
    const model = await loadModel(data.url, { threads: data.threads, batchSize: data.promptTokens });
    const result = model.bench(data);
    postMessage({ ...result, runtime: { ...model.runtime } });
    model.dispose();
  } catch (e) {
    postMessage({ error: `${e.name}: ${e.message}` });
  }
};
