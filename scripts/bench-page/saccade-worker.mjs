// Runs saccade's bench (prefill of promptTokens, then decodeTokens single-token steps at
// decodeDepth, best of `repeat`) in a module worker, off the page's main thread as an app would.
import { loadModel } from '../../src/js/index.mjs';

onmessage = async ({ data }) => {
  try {
    const { url, threads, promptTokens, decodeTokens, decodeDepth, repeat, simd } = data;
    const model = await loadModel(url, { threads, batchSize: promptTokens, ...(simd ? { simd } : {}) });
    const result = model.bench({ promptTokens, decodeTokens, repeat, ...(decodeDepth !== undefined && { decodeDepth }) });
    postMessage({ ...result, runtime: { ...model.runtime } });
    model.dispose();
  } catch (e) {
    postMessage({ error: `${e.name}: ${e.message}` });
  }
};
