// A module worker that runs saccade off the main thread, as the demo page does: it loads the
// model from a URL, generates, and posts back what it saw.
import { loadModel } from '../../../src/js/index.mjs';

onmessage = async ({ data }) => {
  try {
    const progress = [];
    const model = await loadModel(data.url, { threads: data.threads, onProgress: (p) => progress.push(p) });
    const ids = [];
    const controller = new AbortController();
    let aborted = false;
    for await (const step of model.generate(data.prompt, { maxTokens: data.maxTokens + 5, temperature: 0, ignoreEos: true, signal: controller.signal })) {
      if (step.finishReason === 'aborted') aborted = step.id === null;
      else ids.push(step.id);
      if (ids.length === data.maxTokens) controller.abort();
    }
    const logits = Array.from(model.forward(data.prompt));
    // attention in bulk: the rows of a generation, as a view, equal the rows its steps carried
    const steps = [];
    for await (const step of model.generate(data.prompt, { maxTokens: 3, temperature: 0, ignoreEos: true, attention: true }))
      steps.push(step);
    const rows = model.attentionRows('self', 0, undefined, { view: true });
    const rowsMatch = steps.every(({ attention: a }) =>
      String(rows.data.subarray(rows.offsets[a.query], rows.offsets[a.query + 1])) === String(a.data));
    const attention = { finishReason: steps.at(-1).finishReason, rows: rows.to, rowsMatch,
      floats: rows.data.length, end: rows.offsets[rows.to] };
    postMessage({ runtime: { ...model.runtime }, isolated: globalThis.crossOriginIsolated, ids, aborted, logits,
      progress: progress.at(-1), reports: progress.length, attention });
    model.dispose();
  } catch (e) {
    postMessage({ error: `${e.name}: ${e.message}` });
  }
};
