// The model worker's looks inside (the page's row panel, neuron view and ablation comparison),
// all through the library: captured pre-softmax scores, q and k vectors, the C row softmax, and
// head ablation. Each probe takes (model, args, { label, evaluated }) and returns plain data.

/**
 * Scores, q and k are captured from the first time a row is opened (their memory is not spent
 * otherwise): the last generation is then evaluated again, in one forward pass.
 */
function capturing(model, read, evaluated) {
  try {
    return read();
  } catch (e) {
    if (e?.code !== 'SAC_ERR_STATE' || !evaluated?.ids.length) throw e;
    model.captureScores(true);
    model.captureQueryKeys(true);
    model.forward(evaluated.ids, { attention: true, ...(evaluated.source && { source: evaluated.source }) });
    return read();
  }
}

/** Row `query` of one layer and head of `kind`: its scores, probabilities, q and every k. */
function row(model, { kind, layer, head, query }, { evaluated }) {
  const qk = capturing(model, () => model.queryKeys(layer, head, { kind }), evaluated);
  const s = capturing(model, () => model.attentionScores(kind, query, query + 1), evaluated);
  const p = model.attentionRows(kind, query, query + 1);
  const keys = s.keys[0];
  const at = (layer * s.heads + head) * keys;
  const d = qk.headDim;
  return {
    kind, layer, head, query, keys, scale: s.scale, headDim: d,
    scores: Array.from(s.data.subarray(at, at + keys)), probs: Array.from(p.data.subarray(at, at + keys)),
    q: Array.from(qk.q.subarray(query * d, (query + 1) * d)), k: Array.from(qk.k.subarray(0, keys * d)),
  };
}

/** softmax(scores / temperature), by the C core (sac_softmax_row). */
const softmax = (model, { scores, temperature }) => Array.from(model.softmaxRow(scores, temperature));

/**
 * The ten most likely next tokens of `logits` under the sampler's cut-offs, as sampler.c applies
 * them (repeat penalty aside): softmax(logits / T), the top-k candidates, then the nucleus — the
 * fewest best candidates whose share of the candidates' mass reaches top-p.
 */
function topTen(logits, { temperature, topK, topP }, name) {
  const T = temperature > 0 ? temperature : 1; // greedy: show the T = 1 distribution, the argmax wins
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x / T);
  const p = Float64Array.from(logits, (x) => Math.exp(x / T - max));
  const sum = p.reduce((a, b) => a + b, 0);
  const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a] || a - b);
  const kept = topK > 0 && topK < order.length ? topK : order.length;
  let mass = 0;
  for (let i = 0; i < kept; i++) mass += p[order[i]];
  let nucleus = kept;
  if (topP < 1) {
    let acc = 0;
    for (let i = 0; i < kept; i++) {
      acc += p[order[i]];
      if (acc >= topP * mass) {
        nucleus = i + 1;
        break;
      }
    }
  }
  return {
    temperature, topK, topP, greedy: !(temperature > 0), kCut: kept, pCut: nucleus,
    bars: order.slice(0, 10).map((id) => ({ id, label: name(id), p: p[id] / sum })),
  };
}

/**
 * The same generation (same prompt, options and seed) without and with `heads` ablated, and the
 * next-token distribution of each at step `step`. Afterwards the ablation is cleared and the last
 * generation's tokens are evaluated again, so that the row panel reads the run the page shows.
 */
async function compare(model, { prompt, options, heads, kind = 'self', step }, { label, evaluated, signal }) {
  const { architecture, addBos, bosId } = model.info;
  const encdec = architecture === 'encdec';
  const input = typeof prompt == 'string' ? model.tokenize(prompt, { bos: addBos }) : prompt; // as generate does
  const o = { ...model.samplingDefaults, ...options };
  // (a lone id that is part of a character decodes to U+FFFD: its spelling names it better)
  const name = (id) => {
    const text = model.info.hasTokenizer ? model.detokenize([id]) : '';
    return label(id, text.includes('\uFFFD') ? '' : text);
  };
  const run = async (ablate) => {
    model.setAblation(ablate, { kind });
    const start = encdec ? [bosId] : Array.from(input);
    const tokens = [];
    for await (const s of model.generate(input, { ...options, ...(encdec && { decoderStart: start }), signal }))
      if (s.finishReason !== 'aborted') tokens.push({ id: s.id, text: s.text, label: label(s.id, s.text) });
    signal?.throwIfAborted(); // (Stop, or a load: the comparison ends here)
    const at = Math.max(0, Math.min(step, tokens.length - 1));
    const logits = model.forward([...start, ...tokens.slice(0, at).map((t) => t.id)], encdec ? { source: input } : undefined);
    return { tokens, step: at, top: topTen(logits, o, name) };
  };
  try {
    const plain = await run([]);
    const ablated = await run(heads);
    return { heads, kind, plain, ablated };
  } finally {
    model.setAblation([], { kind });
    if (evaluated?.ids.length)
      model.forward(evaluated.ids, { attention: true, ...(evaluated.source && { source: evaluated.source }) });
  }
}

export const PROBES = { row, softmax, compare };
