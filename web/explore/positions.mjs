// Positions: the sinusoid table and its dot products (sac_sinusoid_positions, then the
// primitive's dot scores), Model A's learned position embeddings read from its GGUF and compared
// by the primitive's cosine score, and the equivariance switch: Model A run with its positions
// removed on a prompt and on a permutation of it.
import { loadModel } from '../../src/js/index.mjs';
import { DEFAULT_MODEL } from '../config.mjs';
import { MatrixView } from './draw.mjs';
import { uniform } from './data.mjs';
import { attempt, attention, build, checkbox, hoverReadout, num, scheduler, showError, slider } from './ui.mjs';

const DEFAULT_SRC = new URL(DEFAULT_MODEL, new URL('../config.mjs', import.meta.url)).href;
const EQUAL = 1e-4; // |Δ| below this is "equal" (float rounding of a different summation order)

const TEXT = `
  <h2>Positions: attention alone sees a set</h2>
  <p>Attention compares every query with every key by content alone, so shuffling the tokens only
    shuffles the outputs the same way (it is permutation-equivariant). Positions fix that: the
    Transformer adds sinusoids of geometrically spaced frequencies, whose dot product PE(i)·PE(j) depends
    only on i − j; GPT-2 (and Model A) learn one vector per position, up to the length they were trained on.</p>
  <p class="formula">PE(p, 2i) = sin(p / 10000<sup>2i/d</sup>), &nbsp; PE(p, 2i+1) = cos(p / 10000<sup>2i/d</sup>),
    &nbsp; x<sub>p</sub> = embedding(token<sub>p</sub>) + PE(p)</p>`;

export function mountPositions(host, { positions = 64, dims = 64, src = null, prompt = 'ROMEO: what light', seed = 1 } = {}) {
  const { root, $ } = build(host, `${TEXT}
    <div class="controls">
      ${slider('n', 'positions n', { min: 8, max: 128, step: 8, value: positions })}
      ${slider('d', 'dimensions d', { min: 8, max: 128, step: 8, value: dims })}
    </div>
    <div class="figures">
      <figure><canvas data-k="pe" role="img" aria-label="The sinusoid matrix: positions × dimensions"></canvas>
        <figcaption>PE: positions p (rows) × dimensions (columns).</figcaption></figure>
      <figure><canvas data-k="dots" role="img" aria-label="PE(i)·PE(j) for every pair of positions"></canvas>
        <figcaption data-k="dots-cap">PE(i)·PE(j): constant along every diagonal.</figcaption></figure>
      <figure><canvas data-k="learned" role="img" aria-label="Cosine similarity of Model A's learned position embeddings"></canvas>
        <figcaption data-k="learned-cap">Model A's learned position embeddings: cos(P<sub>i</sub>, P<sub>j</sub>) (loading the model…)</figcaption></figure>
    </div>
    <p class="readout" data-k="hover"></p>
    <h3>Is Model A permutation-equivariant?</h3>
    <p>Model A runs on a prompt and on a shuffle of it (the last character stays last). Its first layer's
      attention from the last character, which sees every token, is compared key by key after undoing the
      shuffle. Remove the positions and the two agree; keep them and they do not. (Later layers still
      differ: a causal mask lets each token see only the tokens before it, which tells the model something
      about order.)</p>
    <div class="controls">
      ${checkbox('off', 'remove positions (x<sub>p</sub> = embedding only)', true)}
      <label class="ctl">prompt <input data-k="prompt" type="text" size="24" spellcheck="false"></label>
      <button data-k="shuffle" type="button">Another shuffle</button>
    </div>
    <p class="mono" data-k="texts"></p>
    <div class="figures">
      <figure><canvas data-k="eq-a" role="img" aria-label="Layer 0 attention of the last character, every head, on the prompt"></canvas>
        <figcaption>On the prompt: layer 0, last query, heads × keys.</figcaption></figure>
      <figure><canvas data-k="eq-b" role="img" aria-label="The same on the shuffled prompt, keys put back in the prompt's order"></canvas>
        <figcaption>On the shuffle, keys put back in the prompt's order.</figcaption></figure>
    </div>
    <p class="verdict" data-k="verdict" aria-live="polite"></p>
    <p class="muted" data-k="layers"></p>
    <p>Without the mask the whole layer is equivariant: one attention layer over Model A's own input vectors
      (queries = keys = values = x<sub>p</sub>, scaled dot product, no mask) gives every output row of the shuffle
      equal to the prompt's output row of the same token.</p>
    <p class="verdict" data-k="layer-verdict" aria-live="polite"></p>
    <p class="error" data-k="error" role="alert" hidden></p>`);

  const ui = { n: $('n'), d: $('d'), off: $('off'), prompt: $('prompt'), shuffle: $('shuffle'), error: $('error') };
  ui.prompt.value = prompt;
  const views = { pe: new MatrixView($('pe')), dots: new MatrixView($('dots')), learned: new MatrixView($('learned')),
    a: new MatrixView($('eq-a')), b: new MatrixView($('eq-b')) };
  hoverReadout(views.pe, $('hover'), (p, c, v) => `PE(${p}, ${c}) = ${num(v)}`);
  hoverReadout(views.dots, $('hover'), (i, j, v) => `PE(${i})·PE(${j}) = ${num(v)} (i − j = ${i - j})`);
  hoverReadout(views.learned, $('hover'), (i, j, v) => `cos(P${i}, P${j}) = ${num(v)} (i − j = ${i - j})`);
  const state = { A: null, models: null, seed, sinusoid: null, learned: null, equivariance: null, computed: 0 };

  // ---- sinusoids
  function computeSinusoids() {
    const A = state.A;
    if (!A) return;
    const n = Number(ui.n.value);
    const d = Number(ui.d.value);
    $('n-out').textContent = String(n);
    $('d-out').textContent = String(d);
    attempt(state, ui.error, () => {
      const pe = A.sinusoidPositions({ positions: n, dims: d });
      // PE(i)·PE(j) is the dot score of the table with itself
      const dots = A.attend({ queries: pe.data, keys: pe.data, values: new Float32Array(n).fill(1), dk: d, score: 'dot', returnScores: true }).scores;
      // how far from "a function of i − j only": every diagonal against its first entry
      let spread = 0;
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
        const ref = dots[Math.max(0, j - i) * n + Math.max(0, i - j)];
        spread = Math.max(spread, Math.abs(dots[i * n + j] - ref));
      }
      state.sinusoid = { n, d, pe: pe.data, dots, spread };
      const labels = Array.from({ length: Math.max(n, d) }, (_, i) => (i % 8 === 0 ? String(i) : ''));
      views.pe.draw({ rows: n, cols: d, value: (r, c) => pe.data[r * d + c], range: [-1, 1], rowLabels: labels, colLabels: labels,
        rowTitle: 'position p', colTitle: 'dimension', title: `PE (${n} × ${d})`, size: 220, labelEvery: 1 });
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of dots) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
      views.dots.draw({ rows: n, cols: n, value: (r, c) => dots[r * n + c], range: [lo, hi], rowLabels: labels, colLabels: labels,
        rowTitle: 'position i', colTitle: 'position j', title: 'PE(i)·PE(j)', size: 220, labelEvery: 1 });
      $('dots-cap').textContent = `PE(i)·PE(j): constant along every diagonal (the largest difference from its diagonal's first entry is ${num(spread)}).`;
    });
  }

  // ---- Model A
  async function loadModels() {
    const url = src ? new URL(src, document.baseURI).href : DEFAULT_SRC;
    const response = await fetch(url);
    if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    // two instances: as trained, and with the positions removed (C's no_positions)
    const options = { threads: 1, attention: true, contextLength: 128 };
    const trained = await loadModel(bytes, options);
    const removed = await loadModel(bytes, { ...options, noPositions: true });
    state.models = { trained, removed, url };
  }

  function drawLearned() {
    const { trained } = state.models;
    const names = trained.info.tensors.map((t) => t.name);
    for (const name of ['token_embd.weight', 'position_embd.weight'])
      if (!names.includes(name)) throw new Error(`${state.models.url} has no tensor ${name}: this section needs a model with learned positions (gpt2), such as Model A`);
    const P = trained.readTensor('position_embd.weight');
    state.tables = { P, E: trained.readTensor('token_embd.weight') };
    const cos = state.A.attend({ queries: P.data, keys: P.data, values: new Float32Array(P.rows).fill(1), dk: P.cols, score: 'cosine', returnScores: true }).scores;
    const n = P.rows;
    state.learned = { rows: n, cols: P.cols, cos };
    const labels = Array.from({ length: n }, (_, i) => (i % 32 === 0 ? String(i) : ''));
    views.learned.draw({ rows: n, cols: n, value: (r, c) => cos[r * n + c], range: [-1, 1], rowLabels: labels, colLabels: labels,
      rowTitle: 'position i', colTitle: 'position j', title: `cos(Pᵢ, Pⱼ), ${n} positions`, size: 220, labelEvery: 1 });
    $('learned-cap').innerHTML = `Model A's learned position embeddings P (${n} positions × ${P.cols}, read from the GGUF): ` +
      'cos(P<sub>i</sub>, P<sub>j</sub>). Nearby positions are alike; there is no row past the trained length.';
  }

  /** A shuffle of 0..n−1 that keeps the last index last (and a BOS first), from `seed`. */
  function shuffle(n, first, seed) {
    const u = uniform(seed);
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 2; i > first; i--) {
      const j = first + Math.floor(u() * (i - first + 1));
      [p[i], p[j]] = [p[j], p[i]];
    }
    return p;
  }

  /**
   * The first shuffle from the section's seed on that changes `ids` (one can leave them as they
   * were: "abc" keeps c last, and one of its two orders is its own), the seed moved to it; null
   * when none does (the characters it moves read alike).
   */
  function shuffleOf(ids, first) {
    for (let seed = state.seed; seed < state.seed + 64; seed++) {
      const perm = shuffle(ids.length, first, seed);
      const shuffled = perm.map((i) => ids[i]);
      if (shuffled.some((id, k) => id !== ids[k])) {
        state.seed = seed;
        return { perm, shuffled };
      }
    }
    return null;
  }

  /**
   * One unmasked attention layer (the primitive's scaled dot product) over Model A's input vectors
   * x_p = E[token_p] (+ P[p] with positions) for `ids` and for `shuffled`: the largest difference
   * between the shuffle's output row k and the prompt's output row perm[k].
   */
  function oneLayer(ids, shuffled, perm, removed) {
    const { E, P } = state.tables;
    const d = E.cols;
    const inputs = (tokens) => {
      const x = new Float32Array(tokens.length * d);
      tokens.forEach((t, p) => {
        x.set(E.data.subarray(t * d, (t + 1) * d), p * d);
        if (!removed) for (let c = 0; c < d; c++) x[p * d + c] += P.data[p * d + c];
      });
      return x;
    };
    const run = (tokens) => {
      const x = inputs(tokens);
      return state.A.attend({ queries: x, keys: x, values: x, dk: d, score: 'scaledDot' }).output;
    };
    const a = run(ids);
    const b = run(shuffled);
    let delta = 0;
    for (let k = 0; k < perm.length; k++)
      for (let c = 0; c < d; c++) delta = Math.max(delta, Math.abs(b[k * d + c] - a[perm[k] * d + c]));
    return { delta };
  }

  function runEquivariance() {
    if (!state.models) return;
    const model = ui.off.checked ? state.models.removed : state.models.trained;
    state.equivariance = null;
    const ok = attempt(state, ui.error, () => {
      let ids = model.tokenize(ui.prompt.value);
      const first = model.info.addBos && model.info.bosId >= 0 ? 1 : 0;
      if (first) ids = [model.info.bosId, ...ids];
      ids = ids.slice(0, 64);
      const n = ids.length;
      if (n - first < 3) throw new Error('the prompt needs at least 3 characters to shuffle');
      const moved = shuffleOf(ids, first);
      if (!moved)
        throw new Error('every shuffle leaves this prompt as it was (its characters are the same, or ones Model A does not ' +
          'know, which it reads alike): type a few different letters');
      const { perm, shuffled } = moved;
      const lastRow = (tokens) => {
        model.forward(tokens, { attention: true });
        const rows = model.attentionRows('self', n - 1, n);
        return { data: rows.data, layers: rows.layers, heads: rows.heads };
      };
      const a = lastRow(ids);
      const b = lastRow(shuffled);
      // b's key k is a's key perm[k]: put b back in a's order
      const back = new Float32Array(a.data.length);
      for (let lh = 0; lh < a.layers * a.heads; lh++)
        for (let k = 0; k < n; k++) back[lh * n + perm[k]] = b.data[lh * n + k];
      const deltas = [];
      for (let l = 0; l < a.layers; l++) {
        let m = 0;
        for (let i = l * a.heads * n; i < (l + 1) * a.heads * n; i++) m = Math.max(m, Math.abs(a.data[i] - back[i]));
        deltas.push(m);
      }
      const pieces = model.pieces(ids);
      const layer = oneLayer(ids, shuffled, perm, ui.off.checked);
      state.equivariance = { removed: ui.off.checked, ids, shuffled, perm, deltas, equal: deltas[0] < EQUAL, heads: a.heads, n, layer };

      const show = (s) => s.replace(/\n/g, '↵').replace(/ /g, '␣');
      $('texts').textContent = `prompt: ${show(model.detokenize(ids))}   shuffle: ${show(model.detokenize(shuffled))}`;
      const labels = pieces.map(show);
      const headLabels = Array.from({ length: a.heads }, (_, h) => `head ${h}`);
      for (const [view, data] of [[views.a, a.data], [views.b, back]])
        view.draw({ rows: a.heads, cols: n, value: (r, c) => data[r * n + c], range: [0, 1], rowLabels: headLabels, colLabels: labels,
          colTitle: 'key (prompt order)', title: 'layer 0, last query', size: 300, labelEvery: 1 });
      $('verdict').textContent = state.equivariance.equal
        ? `Positions removed: equal up to the shuffle — the largest difference in layer 0 is ${num(deltas[0])}.`
        : `Positions ${ui.off.checked ? 'removed' : 'as trained'}: different — the largest difference in layer 0 is ${num(deltas[0])}.`;
      $('verdict').className = `verdict ${state.equivariance.equal ? 'equal' : 'differ'}`;
      $('layer-verdict').textContent = `One attention layer on xₚ = embedding${ui.off.checked ? '' : ' + Pₚ'}: ` +
        `${layer.delta < EQUAL ? 'equal up to the shuffle' : 'different'} (the largest difference over every output is ${num(layer.delta)}).`;
      $('layer-verdict').className = `verdict ${layer.delta < EQUAL ? 'equal' : 'differ'}`;
      $('layers').textContent = `Largest difference per layer: ${deltas.map((v, l) => `layer ${l}: ${num(v)}`).join(' · ')}.`;
    });
    // a prompt that cannot be shuffled leaves no results of the one before it on screen
    if (!ok) for (const id of ['texts', 'verdict', 'layer-verdict', 'layers']) $(id).textContent = '';
    for (const view of [views.a, views.b]) view.canvas.hidden = !ok;
  }

  const schedule = scheduler(computeSinusoids);
  ui.n.addEventListener('input', schedule);
  ui.d.addEventListener('input', schedule);
  const rerun = scheduler(runEquivariance);
  ui.off.addEventListener('change', rerun);
  ui.prompt.addEventListener('input', rerun);
  ui.shuffle.addEventListener('click', () => {
    state.seed++;
    rerun();
  });

  const ready = (async () => {
    try {
      state.A = await attention();
      computeSinusoids();
      await loadModels();
      drawLearned();
      runEquivariance();
    } catch (e) {
      showError(ui.error, e);
    }
  })();

  /** Frees the two models. */
  const dispose = () => {
    state.models?.trained.dispose();
    state.models?.removed.dispose();
    state.models = null;
  };
  return { root, state, ready, dispose, runEquivariance };
}
