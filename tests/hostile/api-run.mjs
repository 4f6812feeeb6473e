// api-run.mjs — one hostile file through the JS API, in a process of its own (a trap in a
// pthread can end the process, which must not end the test run). Prints one JSON line:
//   { status: 'ok', info, generate: { prompt_tokens, tokens, text }, logits, attention }
//     (attention: { rows, worstRowSumError }, or { refused: message } when capture cannot fit)
//   { status: 'error', stage, name, code, message }
// usage: node tests/hostile/api-run.mjs FILE st|mt
// What it runs mirrors the CLIs' `info`, `generate --prompt AB -n 8 --temp 0 --ignore-eos`
// and `logits --tokens 1,2,3`, so that hostile.test.mjs can compare the three surfaces; then,
// as the page's worker does, one generation with { attention: true }.
import { readFileSync } from 'node:fs';

import { loadModel } from '../../src/js/index.mjs';

const [file, variant] = process.argv.slice(2);
const out = { status: 'ok' };
let stage = 'load';
let model;
try {
  model = await loadModel(new Uint8Array(readFileSync(file)), { variant, threads: variant === 'mt' ? 2 : 1 });
  stage = 'info';
  out.info = model.info;
  stage = 'generate';
  const ids = model.tokenize('AB', { bos: model.info.addBos });
  const tokens = [];
  let text = '';
  for await (const step of model.generate(ids, { maxTokens: 8, temperature: 0, ignoreEos: true })) {
    tokens.push(step.id);
    text += step.text;
  }
  out.generate = { prompt_tokens: ids, tokens, text };
  stage = 'logits';
  // encoder–decoder models read [1, 2, 3] as the source too, as the CLIs' `logits --source 1,2,3`
  const source = model.info.architecture === 'encdec' ? { source: [1, 2, 3] } : {};
  out.logits = Array.from(model.forward([1, 2, 3], source));
  stage = 'attention';
  // every captured row is a probability distribution: finite, summing to 1 per head
  let rows = 0;
  let worst = 0;
  // long enough that a capture sized with a wrapped 32-bit product would overflow (issue 11 item 1)
  const maxTokens = Math.max(1, Math.min(160, model.info.contextLength - ids.length - 1));
  for await (const step of model.generate(ids, { maxTokens, temperature: 0, ignoreEos: true, attention: true })) {
    const { keys, data } = step.attention;
    for (let at = 0; at < data.length; at += keys) {
      let sum = 0;
      for (let k = 0; k < keys; k++) sum += data[at + k];
      worst = Math.max(worst, Number.isFinite(sum) ? Math.abs(sum - 1) : Infinity);
      rows++;
    }
  }
  out.attention = { rows, worstRowSumError: worst };
} catch (e) {
  // a capture that cannot fit is refused with SAC_ERR_NOMEM, the runs before it stand
  if (stage === 'attention' && e?.name === 'SaccadeError' && e.code === 'SAC_ERR_NOMEM') out.attention = { refused: e.message };
  else Object.assign(out, { status: 'error', stage, name: e?.name, code: e?.code, message: String(e?.message ?? e) });
} finally {
  model?.dispose();
}
// JSON cannot carry NaN: logits are checked here and sent as a flag plus the values
if (out.logits) {
  out.logitsFinite = out.logits.every(Number.isFinite);
  out.logits = out.logits.map((x) => (Number.isFinite(x) ? x : String(x)));
}
process.stdout.write(JSON.stringify(out) + '\n');
