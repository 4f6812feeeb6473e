// Kernel regression: attention pooling as Nadaraya–Watson regression. The test inputs are the
// queries, the training inputs the keys, the training targets the values; the primitive
// (sac_attend with a kernel score) gives the fit and the weights, and sac_kernel_fit_width
// learns the width by gradient descent on held-out points.
import { ACCENT, ACCENT2, INK, MUTED, MatrixView, Plot } from './draw.mjs';
import { X_RANGE, testInputs, trainingSet, truth } from './data.mjs';
import { attempt, attention, build, checkbox, hoverReadout, num, scheduler, select, showError, slider } from './ui.mjs';

const KERNELS = {
  gaussian: { label: 'Gaussian', K: 'K(u) = exp(−u²/2)' },
  boxcar: { label: 'boxcar', K: 'K(u) = 1 if |u| ≤ 1, else 0' },
  epanechnikov: { label: 'Epanechnikov', K: 'K(u) = max(0, 1 − u²)' },
  flat: { label: 'flat (average pooling)', K: 'K(u) = 1' },
};
const Y_RANGE = [-2, 6];
const STEPS = 40; // gradient steps of "learn w", one drawn per frame
const RATES = ['0.25', '0.5', '1', '2', '5'];
const HIT_PX = 10; // how near a pointer must be to pick a point

const TEXT = `
  <h2>Kernel regression: attention as a weighted average</h2>
  <p>Given training pairs (x<sub>i</sub>, y<sub>i</sub>), predict at a query x by averaging the
    values y<sub>i</sub> with weights α that compare x with each key x<sub>i</sub>. A flat kernel
    ignores x and gives the plain average; a Gaussian kernel gives a smooth fit, and the width w
    sets how local it is. Drag the points (or focus the plot and use the arrow keys; [ and ] pick a point).</p>
  <p class="formula" data-k="formula"></p>`;

export function mountKernel(host, { kernel = 'gaussian', width = 1, noise = 0.5, points = 50, seed = 1 } = {}) {
  const { root, $ } = build(host, `${TEXT}
    <div class="controls">
      ${select('kernel', 'kernel K', Object.entries(KERNELS).map(([k, v]) => [k, v.label]), KERNELS[kernel] ? kernel : 'gaussian')}
      ${slider('width', 'width w', { min: -1, max: 1.5, step: 0.01, value: Math.log10(width) })}
      ${slider('noise', 'noise σ', { min: 0, max: 1.5, step: 0.05, value: noise })}
      ${slider('points', 'points n', { min: 5, max: 100, step: 1, value: points })}
      <button data-k="resample" type="button">New sample</button>
      ${select('rate', 'step η', RATES.map((r) => [r, r]), '1')}
      <button data-k="learn" type="button">Learn w</button>
      ${checkbox('truth', 'show f', true)}
    </div>
    <div class="figures">
      <figure><canvas data-k="plot" tabindex="0" role="img"
        aria-label="The training points, the fit and the average. Arrow keys move the selected point; [ and ] select another."></canvas>
        <figcaption><span class="key fit"></span> fit f̂(x) <span class="key avg"></span> average ȳ
          <span class="key truth"></span> f(x) = 2 sin x + x<sup>0.8</sup> <span class="key held"></span> held-out points;
          y<sub>i</sub> = f(x<sub>i</sub>) + ε, ε ~ N(0, σ²)</figcaption></figure>
      <figure><canvas data-k="heatmap" role="img" aria-label="Attention weights: test inputs (rows) × training inputs (columns)"></canvas>
        <figcaption>α(x, x<sub>i</sub>): one row per test input x (the queries), one column per training input x<sub>i</sub> (the keys, sorted).</figcaption></figure>
      <figure><canvas data-k="loss" role="img" aria-label="Held-out loss while learning w"></canvas>
        <figcaption><span data-k="loss-text">Learn w: gradient descent on the held-out squared error, computed in C:</span>
          L(w) = 1/m Σ<sub>j</sub> (f̂(x′<sub>j</sub>) − y′<sub>j</sub>)², &nbsp; w ← w − η dL/dw</figcaption></figure>
    </div>
    <p class="readout" data-k="readout" aria-live="polite"></p>
    <p class="readout" data-k="hover"></p>
    <p class="error" data-k="error" role="alert" hidden></p>`);

  const ui = {
    kernel: $('kernel'), width: $('width'), noise: $('noise'), points: $('points'), truth: $('truth'),
    resample: $('resample'), learn: $('learn'), rate: $('rate'), readout: $('readout'), error: $('error'), lossText: $('loss-text'),
  };
  const plot = new Plot($('plot'), { width: 420, height: 280 });
  const lossPlot = new Plot($('loss'), { width: 300, height: 200, margin: { l: 44, r: 10, t: 20, b: 30 } });
  const heatmap = new MatrixView($('heatmap'));
  hoverReadout(heatmap, $('hover'), (r, c, value) => {
    const i = state.result.order[c];
    return `query x = ${num(queries[r])}, key xᵢ = ${num(state.train.x[i])} (point ${i + 1}): α = ${num(value)}`;
  });

  const state = {
    seed, train: null, heldout: null, selected: -1, dragging: false,
    fit: null, // { widths, losses, step } while / after learning w
    result: null, // the last computation: { fit, average, weights, order, w, kernel }
    computed: 0, // computations so far (tests wait on it)
    A: null,
  };
  const queries = testInputs();

  function sample() {
    const n = Number(ui.points.value);
    const sigma = Number(ui.noise.value);
    state.train = trainingSet({ n, noise: sigma, seed: state.seed });
    state.heldout = trainingSet({ n: 50, noise: sigma, seed: state.seed + 7919 });
    state.selected = -1;
    state.fit = null;
  }

  const w = () => 10 ** Number(ui.width.value);

  /** The attention primitive's call for the current kernel and width. */
  function pool(A, kernelName, width) {
    const { x, y } = state.train;
    // the flat kernel: a boxcar so wide that every key is in reach (u = |x − xᵢ|·w ≤ 1)
    const flat = kernelName === 'flat';
    return A.attend({
      queries, keys: x, values: y, dk: 1, score: flat ? 'boxcar' : kernelName,
      width: flat ? 1e-6 : width,
    });
  }

  function compute() {
    const A = state.A;
    if (!A) return;
    const kernelName = ui.kernel.value;
    const width = state.fit ? state.fit.widths[state.fit.step] : w();
    state.result = null;
    attempt(state, ui.error, () => {
      const fit = pool(A, kernelName, width);
      const average = pool(A, 'flat', 1);
      const n = state.train.x.length;
      const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => state.train.x[a] - state.train.x[b]);
      // the held-out loss at this w (sac_kernel_loss), for the kernels whose w can be learned
      const loss = ['gaussian', 'epanechnikov'].includes(kernelName)
        ? A.kernelLoss({ kernel: kernelName, xTrain: state.train.x, yTrain: state.train.y, xHeldout: state.heldout.x, yHeldout: state.heldout.y, width }).loss
        : null;
      // rows whose weights are all 0: no training point within the kernel's reach (the primitive predicts 0)
      let empty = 0;
      for (let r = 0; r < queries.length; r++) if (!fit.row(0, 0, r).some((v) => v > 0)) empty++;
      state.result = { fit: fit.output, weights: fit.weights, average: average.output[0], order, w: width, kernel: kernelName, n, loss, empty };
    });
    draw();
  }

  function draw() {
    const { train, heldout, result } = state;
    plot.draw({ x: X_RANGE, y: Y_RANGE, xLabel: 'x', title: 'f̂(x) = Σᵢ α(x, xᵢ) yᵢ' });
    if (ui.truth.checked) {
      const xs = Array.from({ length: 101 }, (_, i) => X_RANGE[0] + (i / 100) * (X_RANGE[1] - X_RANGE[0]));
      plot.line(xs, xs.map(truth), { color: MUTED, width: 1.5, dash: [5, 4] });
    }
    plot.points(heldout.x, heldout.y, { color: '#98a2b3', radius: 2.5, fill: false });
    if (result) {
      plot.hline(result.average, { color: INK, width: 1.5, dash: [2, 3] });
      plot.line(queries, result.fit, { color: ACCENT, width: 2.5 });
    }
    plot.points(train.x, train.y, { color: ACCENT2, radius: 4, selected: state.selected });

    if (result) {
      const { weights, order, n } = result;
      let max = 0;
      for (const v of weights) if (v > max) max = v;
      heatmap.draw({
        rows: queries.length, cols: n, value: (r, c) => weights[r * n + order[c]], range: [0, max || 1],
        rowLabels: Array.from(queries, (q, i) => (i % 10 === 0 ? q.toFixed(0) : '')), rowTitle: 'test input x (query)',
        colTitle: 'training input xᵢ (key)', title: `α, ${KERNELS[result.kernel].label}${result.kernel === 'flat' ? '' : `, w = ${num(result.w)}`}`,
        size: 220, labelEvery: 1,
      });
    }

    const f = state.fit;
    if (f) {
      const upto = f.step + 1;
      const steps = Array.from({ length: upto }, (_, i) => i);
      const losses = Array.from(f.losses.subarray(0, upto));
      const hi = Math.max(...f.losses) * 1.05;
      lossPlot.draw({ x: [0, f.losses.length - 1], y: [0, hi || 1], xLabel: 'step', title: 'held-out L(w)' });
      lossPlot.line(steps, losses, { color: ACCENT, width: 2 });
      ui.lossText.textContent = `step ${f.step} of ${f.losses.length - 1}: w = ${num(f.widths[f.step])}, L(w) = ${num(f.losses[f.step])}` +
        ` (from w = ${num(f.widths[0])}, L = ${num(f.losses[0])})`;
    } else {
      lossPlot.draw({ x: [0, STEPS], y: [0, 1], xLabel: 'step', title: 'held-out L(w)' });
    }

    ui.width.disabled = ui.kernel.value === 'flat';
    $('width-out').textContent = num(result?.w ?? w());
    $('noise-out').textContent = ui.noise.value;
    $('points-out').textContent = ui.points.value;
    ui.learn.disabled = !state.A || !['gaussian', 'epanechnikov'].includes(ui.kernel.value) || (state.fit && state.fit.step < state.fit.losses.length - 1);
    ui.learn.title = ui.learn.disabled && !state.fit ? 'w is learned for the Gaussian and Epanechnikov kernels (the boxcar\'s dL/dw is 0 almost everywhere)' : '';
    const k = KERNELS[ui.kernel.value];
    $('formula').innerHTML = `f̂(x) = Σ<sub>i</sub> α(x, x<sub>i</sub>) y<sub>i</sub>, &nbsp; α(x, x<sub>i</sub>) = K((x − x<sub>i</sub>)·w) / Σ<sub>j</sub> K((x − x<sub>j</sub>)·w), &nbsp; ${k.K}`;
    if (result) {
      const sel = state.selected >= 0 ? ` · point ${state.selected + 1}: (${num(train.x[state.selected])}, ${num(train.y[state.selected])})` : '';
      const loss = result.loss === null ? '' : ` · held-out L(w) = ${num(result.loss)}`;
      const empty = result.empty ? ` · ${result.empty} test inputs have no training point within reach (f̂ = 0 there)` : '';
      ui.readout.textContent = `n = ${result.n} points · average ȳ = ${num(result.average)} · f̂(2.5) = ${num(result.fit[25])}${loss}${empty}${sel}`;
    }
  }

  const schedule = scheduler(compute);

  // ---- learning w: the whole descent runs in C at once; the frames replay it step by step
  function learn() {
    const A = state.A;
    if (!A) return;
    try {
      const start = state.fit ? state.fit.widths[state.fit.losses.length - 1] : w();
      const f = A.fitKernelWidth({
        kernel: ui.kernel.value, xTrain: state.train.x, yTrain: state.train.y,
        xHeldout: state.heldout.x, yHeldout: state.heldout.y, width: start, learningRate: Number(ui.rate.value), steps: STEPS,
      });
      state.fit = { widths: f.widths, losses: f.losses, step: 0 };
      showError(ui.error, null);
    } catch (e) {
      showError(ui.error, e);
      return;
    }
    // with reduced motion the descent is shown at its end at once
    if (globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches) state.fit.step = state.fit.losses.length - 1;
    const tick = () => {
      const f = state.fit;
      if (!f) return;
      ui.width.value = String(Math.log10(f.widths[f.step]));
      compute();
      if (f.step < f.losses.length - 1) {
        f.step++;
        requestAnimationFrame(tick);
      } else {
        root.dispatchEvent(new CustomEvent('learned', { bubbles: true, composed: true, detail: { width: f.widths[f.step], losses: f.losses } }));
      }
    };
    tick();
  }

  // ---- dragging and the keyboard
  function nearest(event) {
    const r = plot.canvas.getBoundingClientRect();
    const sx = r.width / plot.width || 1;
    let best = -1;
    let bestD = HIT_PX;
    for (let i = 0; i < state.train.x.length; i++) {
      const dx = (plot.px(state.train.x[i]) * sx) - (event.clientX - r.left);
      const dy = (plot.py(state.train.y[i]) * sx) - (event.clientY - r.top);
      const d = Math.hypot(dx, dy);
      if (d < bestD) {
        bestD = d;
        best = i;
      }
    }
    return best;
  }

  const clampX = (v) => Math.min(X_RANGE[1], Math.max(X_RANGE[0], v));
  const clampY = (v) => Math.min(Y_RANGE[1], Math.max(Y_RANGE[0], v));

  function movePoint(i, x, y) {
    state.train.x[i] = clampX(x);
    state.train.y[i] = clampY(y);
    state.fit = null;
    schedule();
  }

  const canvas = plot.canvas;
  canvas.addEventListener('pointerdown', (e) => {
    const i = nearest(e);
    if (i < 0) return;
    state.selected = i;
    state.dragging = true;
    canvas.setPointerCapture(e.pointerId);
    e.preventDefault();
    schedule();
  });
  canvas.addEventListener('pointermove', (e) => {
    if (state.dragging) {
      const { x, y } = plot.toData(e.clientX, e.clientY);
      movePoint(state.selected, x, y);
    } else canvas.style.cursor = nearest(e) >= 0 ? 'grab' : '';
  });
  const release = () => {
    state.dragging = false;
  };
  canvas.addEventListener('pointerup', release);
  canvas.addEventListener('pointercancel', release);
  canvas.addEventListener('keydown', (e) => {
    const n = state.train.x.length;
    if (e.key === '[' || e.key === ']') {
      state.selected = ((state.selected < 0 ? 0 : state.selected + (e.key === ']' ? 1 : -1)) + n) % n;
      schedule();
    } else if (e.key.startsWith('Arrow')) {
      if (state.selected < 0) state.selected = 0;
      const i = state.selected;
      const step = e.shiftKey ? 0.5 : 0.1;
      const dx = e.key === 'ArrowRight' ? step : e.key === 'ArrowLeft' ? -step : 0;
      const dy = e.key === 'ArrowUp' ? step : e.key === 'ArrowDown' ? -step : 0;
      movePoint(i, state.train.x[i] + dx, state.train.y[i] + dy);
    } else return;
    e.preventDefault();
  });

  // ---- controls
  const fresh = () => {
    state.fit = null;
    schedule();
  };
  ui.kernel.addEventListener('change', fresh);
  ui.width.addEventListener('input', fresh);
  ui.truth.addEventListener('change', schedule);
  for (const el of [ui.noise, ui.points]) el.addEventListener('input', () => {
    sample();
    schedule();
  });
  ui.resample.addEventListener('click', () => {
    state.seed++;
    sample();
    schedule();
  });
  ui.learn.addEventListener('click', learn);

  sample();
  draw(); // the frame and points, before the primitive is ready
  const ready = attention().then((A) => {
    state.A = A;
    compute();
  }, (e) => showError(ui.error, e));

  return { root, state, ready, learn, compute, plot, heatmap };
}
