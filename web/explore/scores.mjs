// Score functions: the same random queries and keys through each score the primitive offers,
// side by side, with the mean row entropy of each; a d slider shows the unscaled dot product
// saturating into one-hot rows as d grows while the scaled one does not, and the temperature τ
// moves every softmax between argmax and uniform.
import { ACCENT, ACCENT2, MatrixView, Plot } from './draw.mjs';
import { normal, normals, rowEntropy } from './data.mjs';
import { attempt, attention, build, hoverReadout, num, scheduler, showError, slider } from './ui.mjs';

const N = 10; // queries and keys
const HIDDEN = 16; // additive: the hidden layer's size
const DIMS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** Each score: its label and formula (d = the query/key size). */
export const SCORES = [
  { score: 'additive', label: 'additive', formula: 'vᵀ tanh(W<sub>q</sub>q + W<sub>k</sub>k)',
    note: `tanh bounds it by Σ|v<sub>h</sub>| whatever d (${HIDDEN} hidden units)` },
  { score: 'dot', label: 'dot product', formula: 'qᵀk', note: 'variance d: saturates as d grows' },
  { score: 'scaledDot', label: 'scaled dot product', formula: 'qᵀk / √d', note: 'variance 1 at every d' },
  { score: 'general', label: 'general (bilinear)', formula: 'qᵀWk', note: 'W with entries N(0, 1/d): variance d, like the dot product' },
  { score: 'cosine', label: 'cosine', formula: 'qᵀk / (‖q‖ ‖k‖)', note: 'in [−1, 1]: nearly uniform unless τ is small' },
];

const TEXT = `
  <h2>Score functions: how a query is compared with a key</h2>
  <p>Attention scores every key against the query with a score a(q, k), and a softmax turns each
    row of scores into weights that are positive and sum to 1. The same ${N} random queries and keys
    (entries drawn from N(0, 1), size d) go through each score below. The dot product's variance grows
    with d, so its rows saturate into one-hot ones (low entropy H) as d grows; dividing by √d keeps
    them spread. The temperature τ moves every softmax between argmax (τ → 0) and uniform (τ → ∞).</p>
  <p class="formula">α<sub>ij</sub> = exp(a(q<sub>i</sub>, k<sub>j</sub>) / τ) / Σ<sub>l</sub> exp(a(q<sub>i</sub>, k<sub>l</sub>) / τ),
    &nbsp; H<sub>i</sub> = −Σ<sub>j</sub> α<sub>ij</sub> log α<sub>ij</sub> (at most log ${N} = ${Math.log(N).toFixed(2)} nats)</p>`;

export function mountScores(host, { d = 16, temperature = 1, seed = 1 } = {}) {
  const dIndex = Math.max(0, DIMS.findIndex((v) => v >= d));
  const { root, $ } = build(host, `${TEXT}
    <div class="controls">
      ${slider('d', 'size d', { min: 0, max: DIMS.length - 1, step: 1, value: dIndex })}
      ${slider('tau', 'temperature τ', { min: -1.3, max: 1, step: 0.01, value: Math.log10(temperature) })}
      <button data-k="resample" type="button">New queries and keys</button>
    </div>
    <div class="figures scores">
      ${SCORES.map((s) => `<figure data-score="${s.score}"><canvas data-k="map-${s.score}" role="img"
        aria-label="${s.label} attention weights, queries × keys"></canvas>
        <figcaption><b>${s.label}</b>: a(q, k) = ${s.formula}; ${s.note}<br><span data-k="h-${s.score}" class="entropy"></span></figcaption></figure>`).join('')}
      <figure><canvas data-k="curve" role="img" aria-label="Mean row entropy against d"></canvas>
        <figcaption>Mean row entropy H against d, at τ = <span data-k="tau-echo"></span>: <span class="key dot"></span> dot product
          <span class="key scaled"></span> scaled dot product; the marker is the current d.</figcaption></figure>
    </div>
    <p class="readout" data-k="hover"></p>
    <p class="error" data-k="error" role="alert" hidden></p>`);

  const ui = { d: $('d'), tau: $('tau'), resample: $('resample'), error: $('error') };
  const maps = Object.fromEntries(SCORES.map((s) => [s.score, new MatrixView($(`map-${s.score}`))]));
  for (const { score, label } of SCORES) {
    hoverReadout(maps[score], $('hover'), (r, c, value) => {
      const s = state.results[score].scores;
      return `${label}: query ${r + 1}, key ${c + 1}: α = ${num(value)}${s ? `, a(q, k) = ${num(s[r * N + c])}` : ''}`;
    });
  }
  const curve = new Plot($('curve'), { width: 300, height: 200, margin: { l: 36, r: 10, t: 20, b: 30 } });
  const state = { seed, A: null, results: {}, entropy: {}, curve: null, computed: 0 };

  /** Queries, keys and the score parameters for size d (the same seed gives the same draws). */
  function inputs(dim) {
    const g = normal(state.seed * 1000003 + dim);
    return {
      queries: normals(g, N * dim), keys: normals(g, N * dim), values: new Float32Array(N).fill(1),
      W: normals(g, dim * dim, 1 / Math.sqrt(dim)),
      Wq: normals(g, HIDDEN * dim, 1 / Math.sqrt(dim)), Wk: normals(g, HIDDEN * dim, 1 / Math.sqrt(dim)),
      v: normals(g, HIDDEN, 1),
    };
  }

  function run(A, score, dim, tau, data) {
    const { queries, keys, values, W, Wq, Wk, v } = data;
    const opts = { queries, keys, values, dk: dim, score, temperature: tau, returnScores: true };
    if (score === 'general') opts.W = W;
    if (score === 'additive') Object.assign(opts, { Wq, Wk, v });
    return A.attend(opts);
  }

  function compute() {
    const A = state.A;
    if (!A) return;
    const dim = DIMS[Number(ui.d.value)];
    const tau = 10 ** Number(ui.tau.value);
    attempt(state, ui.error, () => {
      const data = inputs(dim);
      for (const { score } of SCORES) {
        const r = run(A, score, dim, tau, data);
        state.results[score] = r;
        state.entropy[score] = rowEntropy(r.weights, N, N).mean;
      }
      // the entropy curves over every d, for the two dot products
      const dot = [];
      const scaled = [];
      for (const dd of DIMS) {
        const other = inputs(dd);
        dot.push(rowEntropy(run(A, 'dot', dd, tau, other).weights, N, N).mean);
        scaled.push(rowEntropy(run(A, 'scaledDot', dd, tau, other).weights, N, N).mean);
      }
      state.curve = { dot, scaled };
      state.d = dim;
      state.tau = tau;
    });
    draw();
  }

  function draw() {
    const dim = DIMS[Number(ui.d.value)];
    const tau = 10 ** Number(ui.tau.value);
    $('d-out').textContent = String(dim);
    $('tau-out').textContent = num(tau);
    $('tau-echo').textContent = num(tau);
    for (const { score, label } of SCORES) {
      const r = state.results[score];
      if (!r) continue;
      maps[score].draw({
        rows: N, cols: N, value: (i, j) => r.weights[i * N + j], range: [0, 1], rowTitle: 'query', colTitle: 'key',
        title: label, size: 150, colorBar: score === SCORES[SCORES.length - 1].score,
      });
      $(`h-${score}`).textContent = `H = ${state.entropy[score].toFixed(2)} nats`;
    }
    const c = state.curve;
    const xs = DIMS.map((v) => Math.log2(v));
    curve.draw({ x: [0, xs[xs.length - 1]], y: [0, Math.log(N) * 1.05], xLabel: 'log₂ d', title: 'mean row entropy H (nats)' });
    if (c) {
      curve.line(xs, c.dot, { color: ACCENT, width: 2 });
      curve.line(xs, c.scaled, { color: ACCENT2, width: 2 });
      const i = Number(ui.d.value);
      curve.points([xs[i], xs[i]], [c.dot[i], c.scaled[i]], { color: '#1d2129', radius: 3.5 });
    }
  }

  const schedule = scheduler(compute);
  ui.d.addEventListener('input', schedule);
  ui.tau.addEventListener('input', schedule);
  ui.resample.addEventListener('click', () => {
    state.seed++;
    schedule();
  });

  draw();
  const ready = attention().then((A) => {
    state.A = A;
    compute();
  }, (e) => showError(ui.error, e));
  return { root, state, ready, compute };
}
