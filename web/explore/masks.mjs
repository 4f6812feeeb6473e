// Masks: a batch of sequences of different lengths, padded to one length, through the primitive
// with a padding mask, a causal mask, both or neither. A masked cell is the primitive's own
// verdict (its score comes back −∞) and is drawn hatched, never in the weights' colours.
import { MatrixView, colorRamp, maskSwatch } from './draw.mjs';
import { normal, normals } from './data.mjs';
import { attempt, attention, build, checkbox, hoverReadout, num, scheduler, showError } from './ui.mjs';

const SENTENCES = [
  ['the', 'cat', 'sat', 'on', 'the', 'mat'],
  ['a', 'dog', 'ran', 'home'],
  ['birds', 'sing'],
];
const T = 6; // the padded length
const D = 8;
const PAD = '⟨pad⟩';

const TEXT = `
  <h2>Masks: what a query may not see</h2>
  <p>A batch holds sequences of different lengths, padded to one length T = ${T}. A padding mask gives
    the keys past a sequence's true length L<sub>b</sub> a score of −∞ before the softmax, so they get
    weight 0; a causal mask does the same for every key after the query, so that a decoder cannot look at
    the tokens it must predict. Both are the same routine with a different M; rows are queries, columns keys.</p>
  <p class="formula">α = softmax(QKᵀ/√d + M), &nbsp; M<sub>ij</sub> = −∞ if key j is masked for query i
    (padding: j ≥ L<sub>b</sub>; causal: j &gt; i), else 0</p>`;

export function mountMasks(host, { padding = true, causal = false, seed = 3 } = {}) {
  const lengths = SENTENCES.map((s) => s.length);
  const { root, $ } = build(host, `${TEXT}
    <div class="controls">
      ${checkbox('padding', 'padding mask', padding)}
      ${checkbox('causal', 'causal mask', causal)}
      ${SENTENCES.map((s, b) => `<label class="ctl">L<sub>${b + 1}</sub> <input data-k="len-${b}" type="number" min="1" max="${T}" step="1" value="${lengths[b]}"></label>`).join('')}
    </div>
    <div class="legend-row"><canvas data-k="ramp"></canvas> weight 0 → 1
      <canvas data-k="swatch"></canvas> masked (score −∞, weight 0)</div>
    <div class="figures">
      ${SENTENCES.map((_, b) => `<figure><canvas data-k="map-${b}" role="img" aria-label="Sequence ${b + 1}: attention weights with masked cells hatched"></canvas>
        <figcaption data-k="cap-${b}"></figcaption></figure>`).join('')}
    </div>
    <p class="readout" data-k="hover"></p>
    <p class="error" data-k="error" role="alert" hidden></p>`);
  const ui = { padding: $('padding'), causal: $('causal'), error: $('error') };
  const maps = SENTENCES.map((_, b) => new MatrixView($(`map-${b}`)));
  maps.forEach((view, b) => hoverReadout(view, $('hover'), (r, c, value) => {
    const word = (i) => (i < state.lengths[b] ? SENTENCES[b][i] ?? `w${i + 1}` : PAD);
    return `sequence ${b + 1}: query ${r + 1} “${word(r)}”, key ${c + 1} “${word(c)}”: ` +
      (value === null ? 'masked (score −∞, weight 0)' : `α = ${num(value)}`);
  }));
  colorRamp($('ramp'), 90, 10);
  maskSwatch($('swatch'), 12);

  const g = normal(seed);
  const queries = normals(g, SENTENCES.length * T * D);
  const keys = normals(g, SENTENCES.length * T * D);
  const values = normals(g, SENTENCES.length * T * D);
  const state = { A: null, result: null, lengths: [...lengths], mask: 'none', computed: 0 };

  function maskName() {
    const p = ui.padding.checked;
    const c = ui.causal.checked;
    return p && c ? 'causal+padding' : p ? 'padding' : c ? 'causal' : 'none';
  }

  /** Sequence b's length as its box gives it: a whole number from 1 to T (0, −5, 99, '' clamped). */
  const lengthOf = (b) => Math.min(T, Math.max(1, Math.round(Number($(`len-${b}`).value)) || 1));

  function compute() {
    const A = state.A;
    if (!A) return;
    state.lengths = SENTENCES.map((_, b) => lengthOf(b));
    state.mask = maskName();
    state.result = null;
    attempt(state, ui.error, () => {
      const opts = { queries, keys, values, batch: SENTENCES.length, dk: D, score: 'scaledDot', mask: state.mask, returnScores: true };
      if (state.mask.includes('padding')) opts.keyLengths = state.lengths;
      state.result = A.attend(opts);
    });
    draw();
  }

  function draw() {
    const r = state.result;
    if (!r) return;
    SENTENCES.forEach((words, b) => {
      const L = state.lengths[b];
      const labels = Array.from({ length: T }, (_, i) => (i < L ? words[i] ?? `w${i + 1}` : PAD));
      const base = b * T * T;
      maps[b].draw({
        rows: T, cols: T, range: [0, 1], rowLabels: labels, colLabels: labels, rowTitle: 'query', colTitle: 'key',
        title: `sequence ${b + 1} (L = ${L})`, size: 150, colorBar: false,
        value: (i, j) => (r.scores[base + i * T + j] === -Infinity ? null : r.weights[base + i * T + j]),
      });
      const masked = Array.from(r.scores.subarray(base, base + T * T)).filter((s) => s === -Infinity).length;
      $(`cap-${b}`).textContent = `${masked} of ${T * T} cells masked${L < T && !state.mask.includes('padding') ? ' — padding is attended to without a padding mask' : ''}`;
    });
  }

  const schedule = scheduler(compute);
  for (const el of [ui.padding, ui.causal, ...SENTENCES.map((_, b) => $(`len-${b}`))]) {
    el.addEventListener('input', schedule);
    el.addEventListener('change', schedule);
  }
  // a length out of range, once entered, shows as the one drawn (the box kept 0 or 99 while the maps used 1 or 6)
  SENTENCES.forEach((_, b) => $(`len-${b}`).addEventListener('change', (e) => {
    e.target.value = String(lengthOf(b));
  }));

  const ready = attention().then((A) => {
    state.A = A;
    compute();
  }, (e) => showError(ui.error, e));
  return { root, state, ready, compute, maps };
}
