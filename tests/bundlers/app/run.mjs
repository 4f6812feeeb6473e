// The sample apps' page code, the same for every bundler: load the shipped model (copied next
// to the page as model.gguf, as a user would put it in their public folder), generate with
// attention, read one attention matrix, then train a few steps in the trainer's own wasm module,
// and leave the outcome in window.result for the test.
import { loadModel, train } from 'saccade';

export async function run() {
  const model = await loadModel(new URL('model.gguf', document.baseURI).href, { threads: 2, attention: true });
  let text = '';
  let rows = 0;
  for await (const step of model.generate('ROMEO:', { maxTokens: 8, seed: 1, attention: true })) {
    text += step.text;
    if (step.attention) rows++;
  }
  const matrix = model.attention(0, 0);
  const last = matrix.data.subarray((matrix.queries - 1) * matrix.keys, matrix.queries * matrix.keys);
  const { variant, threads, isolated, reason, relaxed, relaxedReason } = model.runtime;
  model.dispose();
  const trained = await trainFew();
  return { variant, threads, isolated, reason, relaxed, relaxedReason, text, rows, queries: matrix.queries, lastRowSum: last.reduce((a, b) => a + b, 0),
    trained };
}

/** Five steps of the smallest preset: the trainer's files must load as the inference build's do. */
async function trainFew() {
  const run = await train({ task: 'reverse', preset: 'tiny', steps: 5, threads: 2 });
  try {
    const { history } = await run.done;
    const { variant, threads } = run.runtime;
    return { variant, threads, steps: history.length, loss: history.at(-1).loss };
  } finally {
    run.dispose();
  }
}

export function start() {
  window.result = null;
  run().then((r) => (window.result = r), (e) => (window.result = { error: `${e?.name}: ${e?.message}` }));
}
