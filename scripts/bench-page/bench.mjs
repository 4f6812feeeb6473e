// The two engines on one page: the same GGUF file, promptTokens ids evaluated as one batch
// (prefill), then decodeTokens generated one at a time (saccade's at decodeDepth; wllama's after
// its prompt).
import { Wllama } from '/node_modules/@wllama/wllama/esm/index.js';

/** The synthetic prompt saccade's bench uses (src/js/model.mjs, Model.bench). */
export const promptIds = (n, vocab) => Array.from({ length: n }, (_, i) => (i * 7919 + 13) % vocab);

export function saccade({ url, threads, promptTokens, decodeTokens, decodeDepth, repeat, simd }) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./saccade-worker.mjs', import.meta.url), { type: 'module' });
    worker.onmessage = ({ data }) => {
      worker.terminate();
      if (data.error) reject(new Error(data.error));
      else resolve(data);
    };
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ url, threads, promptTokens, decodeTokens, decodeDepth, repeat, simd });
  });
}

/**
 * wllama 3.8 (llama.cpp): best of `repeat` completions, with llama.cpp's own timings. Its server
 * JSON rejects token text that is not UTF-8, and random weights emit any bytes, so: the prompt is
 * text, "azaz…", which the synthetic vocabulary (tests/js/gguf.mjs) encodes as one "az" token per
 * two characters, and a logit bias forces the byte token 'a' (id 97) as every generated token.
 */
export async function wllama({ url, threads, promptTokens, decodeTokens, repeat }) {
  const w = new Wllama({ default: '/node_modules/@wllama/wllama/esm/wasm/wllama.wasm' }, { suppressNativeLog: true });
  const blob = await (await fetch(url)).blob();
  await w.loadModel([blob], { n_ctx: 1024, n_batch: promptTokens, n_ubatch: promptTokens, n_threads: threads, n_gpu_layers: 0 });
  const prompt = 'az'.repeat(promptTokens - (w.mustAddBosToken() ? 1 : 0));
  let prefill = 0;
  let decode = 0;
  try {
    for (let r = 0; r < repeat; r++) {
      const out = await w.createCompletion({
        prompt, max_tokens: decodeTokens + 1, temperature: 0, top_k: 1, seed: 1, ignore_eos: true, cache_prompt: false,
        logit_bias: [[97, 100]],
      });
      const t = out.timings;
      if (t.prompt_n !== promptTokens) throw new Error(`wllama evaluated ${t.prompt_n} prompt tokens, not ${promptTokens}`);
      prefill = Math.max(prefill, t.prompt_per_second);
      decode = Math.max(decode, t.predicted_per_second);
    }
    return { engine: 'wllama', threads: w.getNumThreads(), multithread: w.isMultithread(), prefillTokensPerSecond: prefill,
      decodeTokensPerSecond: decode };
  } finally {
    await w.exit();
  }
}
