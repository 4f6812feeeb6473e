// The attention primitive through the library (createAttention, attend, fitKernelWidth,
// kernelLoss, sinusoidPositions) against a float64 computation written here, its option checks,
// and the model calls that come with it (noPositions, readTensor).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { attend, createAttention, loadModel, SaccadeError } from '../../src/js/index.mjs';
import { llamaGguf } from './gguf.mjs';

let A;
before(async () => {
  A = await createAttention();
});
after(() => A.dispose());

let seed = 12345;
function random() {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
}
const randoms = (n, lo = -1.5, hi = 1.5) => Array.from({ length: n }, () => lo + (hi - lo) * random());

// ------------------------------------------------------------------------------------------
// The float64 reference: straight from the formulas, one row at a time.
// ------------------------------------------------------------------------------------------

function kernel(name, u2) {
  if (name === 'gaussian') return Math.exp(-u2 / 2);
  if (name === 'boxcar') return Math.sqrt(u2) <= 1 ? 1 : 0;
  return Math.max(0, 1 - u2);
}

function score(o, h, q, k, d) {
  const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
  switch (o.score) {
    case 'dot': return dot(q, k);
    case 'scaledDot': return dot(q, k) / Math.sqrt(d);
    case 'cosine': return dot(q, k) / Math.sqrt(dot(q, q) * dot(k, k));
    case 'general': {
      let s = 0;
      for (let a = 0; a < d; a++) for (let c = 0; c < d; c++) s += q[a] * o.W[h * d * d + a * d + c] * k[c];
      return s;
    }
    case 'additive': {
      const hidden = o.v.length / o.heads;
      let s = 0;
      for (let a = 0; a < hidden; a++) {
        let z = 0;
        for (let c = 0; c < d; c++) z += o.Wq[(h * hidden + a) * d + c] * q[c] + o.Wk[(h * hidden + a) * d + c] * k[c];
        s += o.v[h * hidden + a] * Math.tanh(z);
      }
      return s;
    }
    default: {
      const u2 = q.reduce((s, x, i) => s + (x - k[i]) ** 2, 0) * o.width ** 2;
      const K = kernel(o.score, u2);
      return K > 0 ? Math.log(K) : -Infinity;
    }
  }
}

/** o: flat queries/keys/values with batch, nq, nk, dk, dv, heads, and the attend options. */
function reference(o) {
  const { batch: B, nq, nk, dk, dv, heads: H } = o;
  const d = dk / H, e = dv / H;
  const out = new Float64Array(B * nq * dv), weights = new Float64Array(B * H * nq * nk);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < nq; i++) {
        const q = o.queries.slice((b * nq + i) * dk + h * d, (b * nq + i) * dk + h * d + d);
        const s = [];
        for (let j = 0; j < nk; j++) {
          let ok = true;
          if (o.mask === 'causal' || o.mask === 'causal+padding') ok &&= j <= i + nk - nq;
          if (o.mask === 'padding' || o.mask === 'causal+padding') ok &&= j < o.keyLengths[b];
          if (Array.isArray(o.mask)) ok &&= o.mask[(o.mask.length === nq * nk ? 0 : b * nq * nk) + i * nk + j] !== 0;
          const k = o.keys.slice((b * nk + j) * dk + h * d, (b * nk + j) * dk + h * d + d);
          s.push(ok ? score(o, h, q, k, d) : -Infinity);
        }
        const max = Math.max(...s);
        const t = o.temperature ?? 1;
        const w = s.map((x) => (x === -Infinity ? 0 : t === 0 ? Number(x === max) : Math.exp((x - max) / t)));
        const total = w.reduce((a, x) => a + x, 0);
        for (let j = 0; j < nk; j++) weights[((b * H + h) * nq + i) * nk + j] = total > 0 ? w[j] / total : 0;
        for (let c = 0; c < e; c++) {
          let acc = 0;
          for (let j = 0; j < nk; j++) acc += weights[((b * H + h) * nq + i) * nk + j] * o.values[(b * nk + j) * dv + h * e + c];
          out[(b * nq + i) * dv + h * e + c] = acc;
        }
      }
  return { out, weights };
}

function maxDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

function problem(score, mask, { batch = 2, nq = 4, nk = 6, dk = 8, dv = 4, heads = 2, temperature } = {}) {
  const d = dk / heads, hidden = 3;
  const o = { queries: randoms(batch * nq * dk), keys: randoms(batch * nk * dk), values: randoms(batch * nk * dv, -2, 2),
    batch, dk, heads, score, mask };
  if (temperature !== undefined) o.temperature = temperature;
  if (score === 'general') o.W = randoms(heads * d * d, -0.8, 0.8);
  if (score === 'additive') Object.assign(o, { Wq: randoms(heads * hidden * d), Wk: randoms(heads * hidden * d), v: randoms(heads * hidden) });
  if (['gaussian', 'boxcar', 'epanechnikov'].includes(score)) o.width = 0.6;
  if (mask === 'padding' || mask === 'causal+padding') o.keyLengths = Array.from({ length: batch }, (_, b) => (b * 4 + 1) % (nk + 1));
  if (mask === 'explicit') o.mask = Array.from({ length: nq * nk }, () => Number(random() < 0.6));
  if (mask === 'explicitBatch') o.mask = Array.from({ length: batch * nq * nk }, () => Number(random() < 0.6));
  return { options: o, shape: { batch, nq, nk, dk, dv, heads } };
}

// ------------------------------------------------------------------------------------------

describe('attend against the float64 reference', () => {
  const SCORES = ['dot', 'scaledDot', 'general', 'additive', 'cosine', 'gaussian', 'boxcar', 'epanechnikov'];
  const MASKS = [undefined, 'causal', 'padding', 'causal+padding', 'explicit', 'explicitBatch'];
  for (const score of SCORES)
    test(`${score}: every mask`, () => {
      for (const mask of MASKS) {
        const { options, shape } = problem(score, mask);
        const r = A.attend({ ...options, returnScores: true });
        const ref = reference({ ...options, ...shape });
        assert.equal(r.output.length, shape.batch * shape.nq * shape.dv);
        assert.equal(r.weights.length, shape.batch * shape.heads * shape.nq * shape.nk);
        assert.deepEqual([r.batch, r.heads, r.queries, r.keys, r.dk, r.dv],
          [shape.batch, shape.heads, shape.nq, shape.nk, shape.dk, shape.dv]);
        // float32 scores and softmax against float64: weights within 2e-6, outputs within 2e-5
        assert.ok(maxDiff(r.weights, ref.weights) <= 2e-6, `${score} ${mask}: weights differ by ${maxDiff(r.weights, ref.weights)}`);
        assert.ok(maxDiff(r.output, ref.out) <= 2e-5, `${score} ${mask}: outputs differ by ${maxDiff(r.output, ref.out)}`);
        for (let i = 0; i < r.weights.length; i++)
          if (ref.weights[i] === 0 && r.scores[i] === -Infinity) assert.equal(r.weights[i], 0);
        // every row sums to 1, or is all 0 when nothing is admissible
        for (let row = 0; row < r.weights.length / r.keys; row++) {
          const sum = r.weights.subarray(row * r.keys, (row + 1) * r.keys).reduce((a, x) => a + x, 0);
          assert.ok(Math.abs(sum - 1) < 1e-5 || sum === 0, `row ${row} sums to ${sum}`);
        }
      }
    });

  test('temperatures, including the argmax limit with ties', () => {
    for (const temperature of [0.2, 1, 5, 0]) {
      const { options, shape } = problem('dot', undefined, { temperature, batch: 1, heads: 1 });
      options.keys.splice(5 * shape.dk, shape.dk, ...options.keys.slice(2 * shape.dk, 3 * shape.dk)); // key 5 = key 2
      const r = A.attend(options);
      const ref = reference({ ...options, ...shape });
      assert.ok(maxDiff(r.weights, ref.weights) <= 2e-6, `temperature ${temperature}`);
      assert.ok(maxDiff(r.output, ref.out) <= 2e-5);
    }
  });

  test('nested arrays give the same result as flat ones; row() is a view of one row', () => {
    const { options, shape } = problem('scaledDot', 'causal', { batch: 2, heads: 2 });
    const nest = (flat, rows, cols) => Array.from({ length: shape.batch }, (_, b) =>
      Array.from({ length: rows }, (_, i) => flat.slice((b * rows + i) * cols, (b * rows + i + 1) * cols)));
    const flat = A.attend(options);
    const nested = A.attend({ ...options, dk: undefined, batch: undefined, queries: nest(options.queries, shape.nq, shape.dk),
      keys: nest(options.keys, shape.nk, shape.dk), values: nest(options.values, shape.nk, shape.dv) });
    assert.deepEqual(nested.output, flat.output);
    assert.deepEqual(Array.from(flat.row(1, 1, 2)),
      Array.from(flat.weights.slice(((1 * 2 + 1) * shape.nq + 2) * shape.nk, ((1 * 2 + 1) * shape.nq + 3) * shape.nk)));
  });

  test('a row with no admissible key is 0, never NaN; the top-level attend shares an instance', async () => {
    const r = await attend({ queries: [[0], [1]], keys: [[0], [1], [2]], values: [[1], [2], [3]], mask: 'padding', keyLengths: [0],
      returnScores: true });
    assert.deepEqual(Array.from(r.output), [0, 0]);
    assert.deepEqual(Array.from(r.weights), [0, 0, 0, 0, 0, 0]);
    assert.ok(r.scores.every((s) => s === -Infinity));
  });
});

describe('option checks', () => {
  const base = { queries: [[1, 2]], keys: [[1, 2], [3, 4]], values: [[1], [2]] };
  const refuses = (options, pattern) => assert.throws(() => A.attend(options), (e) => e instanceof SaccadeError && pattern.test(e.message));
  test('unknown names, wrong types and shapes are refused with a reason', () => {
    refuses({ ...base, temprature: 1 }, /unknown option 'temprature' for attend; the options are: queries/);
    refuses({ ...base, score: 'bilinear' }, /score must be one of dot, scaledDot/);
    refuses({ ...base, score: 'general' }, /score 'general' needs W/);
    refuses({ ...base, W: [[1, 0], [0, 1]] }, /W is for score 'general'/);
    refuses({ ...base, width: 2 }, /width is for the kernel scores/);
    refuses({ ...base, score: 'gaussian', width: 0 }, /width must be a finite number > 0/);
    refuses({ ...base, temperature: -1 }, /temperature must be a finite number >= 0/);
    refuses({ ...base, temperature: Infinity }, /temperature/);
    refuses({ ...base, heads: 3 }, /heads \(3\) must divide dk \(2\)/);
    refuses({ ...base, queries: [[1, 2, 3]] }, /keys has rows of 2, dk is 3/);
    refuses({ ...base, values: [[1], [2], [3]] }, /values has 3 rows but keys has 2/);
    refuses({ ...base, queries: [[1, NaN]] }, /queries\[0\]\[1\] is NaN/);
    refuses({ ...base, queries: [[1, 2], [3]] }, /rectangular/);
    refuses({ ...base, queries: [1, 2, 3] }, /flat array: give dk/);
    refuses({ ...base, mask: 'padding' }, /needs keyLengths/);
    refuses({ ...base, mask: 'padding', keyLengths: [3] }, /keyLengths\[0\] must be an integer >= 0 and <= 2/);
    refuses({ ...base, keyLengths: [1] }, /keyLengths is for mask 'padding'/);
    refuses({ ...base, mask: [1, 0, 1] }, /explicit mask holds nq × nk \(2\)/);
    refuses({ ...base, mask: 'diagonal' }, /mask must be one of none, causal/);
    refuses({ ...base, score: 'general', W: [1, 2, 3] }, /W holds 3 numbers but must be heads × d × d = 4/);
    assert.throws(() => A.attend(), /attend needs queries/);
  });

  test("C's own refusal comes through with its status and message", () => {
    assert.throws(() => A.attend({ ...base, queries: [[1e30, 1e30]], keys: [[1e30, 1e30], [0, 0]], score: 'dot' }),
      (e) => e.code === 'SAC_ERR_ARG' && /not finite/.test(e.message));
  });

  test('a disposed instance refuses calls', async () => {
    const B = await createAttention();
    B.dispose();
    B.dispose();
    assert.throws(() => B.attend(base), /disposed/);
  });
});

describe('kernel regression', () => {
  // d2l's data: y = 2 sin(x) + x^0.8 + noise
  const xTrain = Array.from({ length: 40 }, () => 5 * random()).sort((a, b) => a - b);
  const yTrain = xTrain.map((x) => 2 * Math.sin(x) + x ** 0.8 + (random() - 0.5));
  const xHeldout = Array.from({ length: 50 }, (_, i) => i / 10);
  const yHeldout = xHeldout.map((x) => 2 * Math.sin(x) + x ** 0.8);

  function loss(kernelName, w, leaveOneOut) {
    const xs = leaveOneOut ? xTrain : xHeldout, ys = leaveOneOut ? yTrain : yHeldout;
    let L = 0;
    xs.forEach((x, e) => {
      let num = 0, den = 0;
      xTrain.forEach((xi, i) => {
        if (leaveOneOut && i === e) return;
        const K = kernel(kernelName, ((x - xi) * w) ** 2);
        num += K * yTrain[i];
        den += K;
      });
      L += ((den > 0 ? num / den : 0) - ys[e]) ** 2;
    });
    return L / xs.length;
  }

  test('kernelLoss is the mean squared error, and its gradient matches finite differences', () => {
    for (const kernelName of ['gaussian', 'epanechnikov'])
      for (const leaveOneOut of [false, true]) {
        const data = leaveOneOut ? { xTrain, yTrain } : { xTrain, yTrain, xHeldout, yHeldout };
        const w = 1.7, h = 1e-3;
        const { loss: L, gradient } = A.kernelLoss({ ...data, kernel: kernelName, width: w });
        assert.ok(Math.abs(L - loss(kernelName, w, leaveOneOut)) < 1e-6, `${kernelName}: ${L}`);
        const fd = (A.kernelLoss({ ...data, kernel: kernelName, width: w + h }).loss -
          A.kernelLoss({ ...data, kernel: kernelName, width: w - h }).loss) / (2 * h);
        assert.ok(Math.abs(gradient - fd) <= 2e-2 * Math.max(Math.abs(gradient), 1e-3), `${kernelName}: ${gradient} vs ${fd}`);
      }
  });

  test('fitKernelWidth lowers the held-out loss; its last width predicts through attend with that loss', () => {
    const fit = A.fitKernelWidth({ xTrain, yTrain, xHeldout, yHeldout, width: 1, learningRate: 0.5, steps: 30 });
    assert.equal(fit.widths.length, 31);
    assert.equal(fit.losses.length, 31);
    assert.ok(fit.losses[30] < fit.losses[0], `${fit.losses[0]} → ${fit.losses[30]}`);
    assert.equal(fit.width, fit.widths[30]);
    const r = A.attend({ queries: xHeldout.map((x) => [x]), keys: xTrain.map((x) => [x]), values: yTrain.map((y) => [y]),
      score: 'gaussian', width: fit.width });
    const mse = xHeldout.reduce((s, _, i) => s + (r.output[i] - yHeldout[i]) ** 2, 0) / xHeldout.length;
    assert.ok(Math.abs(mse - fit.losses[30]) <= 1e-4 * fit.losses[30], `${mse} vs ${fit.losses[30]}`);
  });

  test('fit options are checked', () => {
    assert.throws(() => A.fitKernelWidth({ xTrain, yTrain, kernel: 'boxcar' }), /'gaussian' or 'epanechnikov'/);
    assert.throws(() => A.fitKernelWidth({ xTrain, yTrain, xHeldout }), /needs xHeldout and yHeldout/);
    assert.throws(() => A.fitKernelWidth({ xTrain, yTrain: yTrain.slice(1) }), /xTrain has 40 points but yTrain has 39/);
    assert.throws(() => A.fitKernelWidth({ xTrain, yTrain, learningRate: 0 }), /learningRate/);
    assert.throws(() => A.fitKernelWidth({ xTrain, yTrain, step: 3 }), /unknown option 'step'/);
  });
});

describe('sinusoid positions', () => {
  test('the table is the formula, and PE(i)·PE(j) depends only on i − j', () => {
    const { data, positions, dims } = A.sinusoidPositions({ positions: 30, dims: 12 });
    assert.deepEqual([positions, dims, data.length], [30, 12, 360]);
    for (let p = 0; p < 30; p++)
      for (let c = 0; c < 12; c++) {
        const angle = p / 10000 ** ((c - (c % 2)) / 12);
        assert.ok(Math.abs(data[p * 12 + c] - (c % 2 ? Math.cos(angle) : Math.sin(angle))) < 1e-6);
      }
    const r = A.attend({ queries: data, keys: data, values: data, dk: 12, score: 'dot', returnScores: true });
    for (let i = 0; i + 1 < 30; i++)
      for (let j = 0; j + 1 < 30; j++) assert.ok(Math.abs(r.scores[i * 30 + j] - r.scores[(i + 1) * 30 + j + 1]) < 1e-5);
    assert.throws(() => A.sinusoidPositions({ positions: 0, dims: 4 }), /positions must be an integer >= 1/);
  });
});

describe('model calls', () => {
  test('readTensor returns the stored rows; bad names and ranges are refused', async () => {
    const bytes = llamaGguf({ layers: 1 });
    const model = await loadModel(bytes, { variant: 'st' });
    try {
      // token_embd.weight is the file's first tensor: the first 64 × 97 floats of its data section
      const t = model.readTensor('token_embd.weight', { from: 3, rows: 2 });
      assert.deepEqual([t.name, t.from, t.rows, t.cols, t.data.length], ['token_embd.weight', 3, 2, 64, 128]);
      const all = model.readTensor(0);
      assert.equal(all.rows, 97);
      assert.deepEqual(t.data, all.data.slice(3 * 64, 5 * 64));
      // the fixture's reproducible weights (gguf.mjs), in file order
      let seed2 = 1;
      const expected = new Float32Array(64 * 97);
      for (let i = 0; i < expected.length; i++) {
        seed2 = (seed2 * 1103515245 + 12345) % 2 ** 31;
        expected[i] = (seed2 / 2 ** 31 - 0.5) * 0.4;
      }
      assert.deepEqual(all.data, expected);
      assert.throws(() => model.readTensor('position_embd.weight'), /no tensor named 'position_embd.weight'/);
      assert.throws(() => model.readTensor('token_embd.weight', { from: 96, rows: 2 }), /rows must be an integer >= 0 and <= 1/);
      assert.throws(() => model.readTensor(10_000), /tensor must be an integer/);
      assert.throws(() => model.readTensor(0, { count: 1 }), /unknown option 'count'/);
    } finally {
      model.dispose();
    }
  });

  test('noPositions: a one-layer model\'s last logits ignore the order of the tokens before it', async () => {
    const bytes = llamaGguf({ layers: 1 });
    const ids = [5, 17, 42, 3, 88, 61, 9], permuted = [61, 3, 88, 5, 42, 17, 9];
    const lastDiff = async (noPositions) => {
      const model = await loadModel(bytes, { variant: 'st', noPositions });
      try {
        return maxDiff(model.forward(ids), model.forward(permuted));
      } finally {
        model.dispose();
      }
    };
    // the fixture's small weights move the logits little: 3e-8 (rounding) against 6e-4
    const without = await lastDiff(true), withPositions = await lastDiff(false);
    assert.ok(without < 1e-6, `without positions the last logits move by ${without}`);
    assert.ok(withPositions > 1e-4, `with positions they move by only ${withPositions}`);
    await assert.rejects(loadModel(bytes, { noPositions: 1 }), /noPositions must be true or false/);
  });
});
