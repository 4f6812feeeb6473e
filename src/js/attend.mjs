// The attention primitive without a model: attend, the kernel width fit and the sinusoid table
// (C's sac_attend, sac_kernel_fit_width, sac_kernel_loss, sac_sinusoid_positions) on a
// single-threaded wasm instance of its own. This module only checks options, copies arrays into
// the heap and results out: every number is computed in C.
import { fail } from './errors.mjs';
import { Heap } from './heap.mjs';
import { instantiate, release } from './instantiate.mjs';
import { constants, sizeOf, writeStruct } from './layout.mjs';
import { bool, int, number, optionsOf } from './options.mjs';
import { chooseRuntime } from './runtime.mjs';

const C = constants;
const SCORES = {
  dot: C.SAC_SCORE_DOT, scaledDot: C.SAC_SCORE_SCALED_DOT, general: C.SAC_SCORE_GENERAL,
  additive: C.SAC_SCORE_ADDITIVE, cosine: C.SAC_SCORE_COSINE, gaussian: C.SAC_SCORE_GAUSSIAN,
  boxcar: C.SAC_SCORE_BOXCAR, epanechnikov: C.SAC_SCORE_EPANECHNIKOV,
};
const KERNELS = ['gaussian', 'boxcar', 'epanechnikov'];
const MASKS = { none: 0, causal: C.SAC_MASK_CAUSAL, padding: C.SAC_MASK_PADDING,
  'causal+padding': C.SAC_MASK_CAUSAL | C.SAC_MASK_PADDING };
const ERRMSG_BYTES = 512;
const MAX_FLOATS = 2 ** 29; // 2 GB of float32 in one array: more cannot be copied into wasm32 at once

const ATTEND_OPTIONS = ['queries', 'keys', 'values', 'batch', 'dk', 'heads', 'score', 'width', 'W', 'Wq', 'Wk',
  'v', 'mask', 'keyLengths', 'temperature', 'returnScores'];
const KERNEL_DATA_OPTIONS = ['kernel', 'xTrain', 'yTrain', 'xHeldout', 'yHeldout', 'leaveOneOut'];

const isArrayLike = (x) => x != null && typeof x != 'string' && typeof x != 'function' && typeof x.length == 'number';

/**
 * A flat array or nested arrays of numbers (booleans with `booleans`) as { data, shape }: nested
 * arrays must be rectangular, every element a finite number.
 */
function tensor(name, x, { booleans = false } = {}) {
  if (!isArrayLike(x)) fail(`${name} must be an array of numbers (flat or nested), got ${x === null ? 'null' : typeof x}`);
  const shape = [];
  for (let y = x; isArrayLike(y); y = y[0]) {
    shape.push(y.length);
    if (y.length === 0) fail(`${name} has an empty dimension (shape [${shape.join(', ')}])`);
  }
  const size = shape.reduce((a, b) => a * b, 1);
  if (size > MAX_FLOATS) fail(`${name} has ${size} elements, more than ${MAX_FLOATS}`, 'SAC_ERR_NOMEM');
  const data = new Float32Array(size);
  let at = 0;
  const walk = (y, depth, path) => {
    if (depth === shape.length) {
      const ok = typeof y == 'number' ? Number.isFinite(y) : booleans && typeof y == 'boolean';
      if (!ok) fail(`${name}${path} is ${String(y)}, not a finite number${booleans ? ' or a boolean' : ''}`);
      data[at++] = Number(y);
      return;
    }
    if (!isArrayLike(y) || y.length !== shape[depth])
      fail(`${name}${path} must be an array of ${shape[depth]} (nested arrays must be rectangular)`);
    for (let i = 0; i < y.length; i++) walk(y[i], depth + 1, `${path}[${i}]`);
  };
  walk(x, 0, '');
  return { data, shape };
}

/** The heap copies of one call, freed together. */
class Arena {
  constructor(heap) {
    this.heap = heap;
    this.ptrs = [];
  }
  alloc(bytes) {
    const ptr = this.heap.malloc(bytes);
    this.ptrs.push(ptr);
    return ptr;
  }
  floats(data) {
    if (!data) return 0;
    const ptr = this.alloc(data.length * 4);
    this.heap.f32s(ptr, data.length).set(data);
    return ptr;
  }
  free() {
    for (const p of this.ptrs) this.heap.free(p);
    this.ptrs = [];
  }
}

/** Splits a flat/nested array's size into [batch, rows, cols] given what is known. */
function rowsOf(name, t, batch, cols, colsName) {
  const { shape, data } = t;
  if (shape.length === 3) {
    if (shape[0] !== batch) fail(`${name} has ${shape[0]} batch elements, batch is ${batch}`);
    if (cols !== undefined && shape[2] !== cols) fail(`${name} has rows of ${shape[2]}, ${colsName} is ${cols}`);
    return [shape[1], shape[2]];
  }
  if (shape.length === 2) {
    if (batch !== 1) fail(`${name} is [rows][cols] but batch is ${batch}: give [batch][rows][cols] or a flat array`);
    if (cols !== undefined && shape[1] !== cols) fail(`${name} has rows of ${shape[1]}, ${colsName} is ${cols}`);
    return [shape[0], shape[1]];
  }
  if (shape.length !== 1) fail(`${name} must be flat, [rows][cols] or [batch][rows][cols], got ${shape.length} levels`);
  if (cols === undefined) fail(`${name} is a flat array: give ${colsName} (its row size)`);
  const rows = data.length / (batch * cols);
  if (!Number.isInteger(rows) || rows < 1)
    fail(`${name} holds ${data.length} numbers, not a whole number of batch (${batch}) × rows × ${colsName} (${cols})`);
  return [rows, cols];
}

function checkLength(name, t, expected, what) {
  if (t.data.length !== expected) fail(`${name} holds ${t.data.length} numbers but must be ${what} = ${expected}`);
}

/** A model-free wasm instance for the attention calls; see index.d.ts. */
export class Attention {
  #M;
  #heap;
  #err;

  constructor(M, runtime) {
    this.#M = M;
    this.#heap = new Heap(M);
    this.#err = this.#heap.malloc(ERRMSG_BYTES);
    this.runtime = Object.freeze(runtime);
  }

  #usable() {
    if (!this.#M) fail('the Attention instance was disposed', 'SAC_ERR_STATE');
    return this.#M;
  }

  #check(status) {
    if (status === C.SAC_OK) return;
    const M = this.#M;
    fail(this.#heap.cstring(this.#err), this.#heap.cstring(M._sac_status_name(status)));
  }

  attend(options) {
    const M = this.#usable();
    const o = optionsOf(options, ATTEND_OPTIONS, 'attend');
    for (const name of ['queries', 'keys', 'values'])
      if (o[name] === undefined) fail(`attend needs ${name}`);
    const q = tensor('queries', o.queries);
    const k = tensor('keys', o.keys);
    const vals = tensor('values', o.values);
    const batch = int('batch', o.batch, q.shape.length === 3 ? q.shape[0] : 1, 1);
    let dk = int('dk', o.dk, undefined, 1);
    const [nq, qd] = rowsOf('queries', q, batch, dk, 'dk');
    dk = qd;
    const [nk] = rowsOf('keys', k, batch, dk, 'dk');
    const vcols = vals.shape.length === 1 ? vals.data.length / (batch * nk) : undefined;
    if (vcols !== undefined && !(Number.isInteger(vcols) && vcols >= 1))
      fail(`values holds ${vals.data.length} numbers, not a whole number of batch (${batch}) × keys (${nk}) × dv`);
    const [vrows, dv] = rowsOf('values', vals, batch, vcols, 'dv');
    if (vrows !== nk) fail(`values has ${vrows} rows but keys has ${nk}: one value per key`);
    const heads = int('heads', o.heads, 1, 1);
    if (dk % heads || dv % heads) fail(`heads (${heads}) must divide dk (${dk}) and dv (${dv})`);
    const d = dk / heads;

    const scoreName = o.score ?? 'scaledDot';
    if (!(typeof scoreName == 'string' && Object.hasOwn(SCORES, scoreName)))
      fail(`score must be one of ${Object.keys(SCORES).join(', ')}, got ${String(scoreName)}`);
    const kernel = KERNELS.includes(scoreName);
    const width = number('width', o.width, 1, (x) => x > 0, 'a finite number > 0');
    if (o.width !== undefined && !kernel) fail(`width is for the kernel scores (${KERNELS.join(', ')}), not '${scoreName}'`);
    for (const [name, used] of [['W', 'general'], ['Wq', 'additive'], ['Wk', 'additive'], ['v', 'additive']]) {
      if (o[name] !== undefined && scoreName !== used) fail(`${name} is for score '${used}', not '${scoreName}'`);
      if (o[name] === undefined && scoreName === used) fail(`score '${used}' needs ${name}`);
    }
    let W = null;
    let hidden = 1;
    if (scoreName === 'general') {
      W = tensor('W', o.W);
      checkLength('W', W, heads * d * d, 'heads × d × d');
      W = W.data;
    } else if (scoreName === 'additive') {
      const Wq = tensor('Wq', o.Wq);
      const Wk = tensor('Wk', o.Wk);
      const v = tensor('v', o.v);
      hidden = v.data.length / heads;
      if (!Number.isInteger(hidden)) fail(`v holds ${v.data.length} numbers, not heads (${heads}) × hidden`);
      checkLength('Wq', Wq, heads * hidden * d, 'heads × hidden × d');
      checkLength('Wk', Wk, heads * hidden * d, 'heads × hidden × d');
      W = new Float32Array(Wq.data.length * 2 + v.data.length);
      W.set(Wq.data);
      W.set(Wk.data, Wq.data.length);
      W.set(v.data, 2 * Wq.data.length);
    }

    let mask = 0;
    let explicit = null;
    let perBatch = 0;
    if (typeof o.mask == 'string' || o.mask === undefined) {
      const name = o.mask ?? 'none';
      if (!Object.hasOwn(MASKS, name))
        fail(`mask must be one of ${Object.keys(MASKS).join(', ')} or an explicit [nq][nk] array, got '${name}'`);
      mask = MASKS[name];
    } else {
      const t = tensor('mask', o.mask, { booleans: true });
      if (t.data.length === nq * nk) perBatch = 0;
      else if (t.data.length === batch * nq * nk) perBatch = 1;
      else fail(`an explicit mask holds nq × nk (${nq * nk}) or batch × nq × nk (${batch * nq * nk}) entries, got ${t.data.length}`);
      mask = C.SAC_MASK_EXPLICIT;
      explicit = Uint8Array.from(t.data, (x) => (x !== 0 ? 1 : 0));
    }
    let lengths = null;
    if (mask & C.SAC_MASK_PADDING) {
      if (!isArrayLike(o.keyLengths) || o.keyLengths.length !== batch)
        fail(`a padding mask needs keyLengths, one length per batch element (${batch})`);
      lengths = Int32Array.from(o.keyLengths, (x, b) => int(`keyLengths[${b}]`, x, 0, 0, nk));
    } else if (o.keyLengths !== undefined) fail("keyLengths is for mask 'padding' (or 'causal+padding')");
    const temperature = number('temperature', o.temperature, 1, (x) => x >= 0, 'a finite number >= 0');
    const returnScores = bool('returnScores', o.returnScores);

    const nOut = batch * nq * dv;
    const nW = batch * heads * nq * nk;
    if (nOut > MAX_FLOATS || nW > MAX_FLOATS)
      fail(`the weights would hold ${nW} floats, more than ${MAX_FLOATS}: attend in smaller batches`, 'SAC_ERR_NOMEM');
    const heap = this.#heap;
    const arena = new Arena(heap);
    try {
      const p = arena.alloc(sizeOf('sac_attend_params'));
      writeStruct(heap, p, 'sac_attend_params', {
        batch, n_q: nq, n_k: nk, d_k: dk, d_v: dv, n_heads: heads, score: SCORES[scoreName], width, hidden, mask,
        mask_per_batch: perBatch, temperature,
      });
      const lengthsPtr = lengths ? arena.alloc(lengths.length * 4) : 0;
      if (lengths) new Int32Array(heap.buffer, lengthsPtr, lengths.length).set(lengths);
      const maskPtr = explicit ? arena.alloc(explicit.length) : 0;
      if (explicit) heap.u8(maskPtr, explicit.length).set(explicit);
      const qp = arena.floats(q.data), kp = arena.floats(k.data), vp = arena.floats(vals.data), Wp = arena.floats(W);
      const out = arena.alloc(nOut * 4), weights = arena.alloc(nW * 4), scores = returnScores ? arena.alloc(nW * 4) : 0;
      this.#check(M._sac_attend(p, qp, q.data.length, kp, k.data.length, vp, vals.data.length, Wp, W ? W.length : 0,
        lengthsPtr, lengths ? lengths.length : 0, maskPtr, explicit ? explicit.length : 0, out, nOut, weights, nW,
        scores, returnScores ? nW : 0, this.#err, ERRMSG_BYTES));
      const result = {
        output: heap.f32s(out, nOut).slice(), weights: heap.f32s(weights, nW).slice(),
        batch, heads, queries: nq, keys: nk, dk, dv,
        row(b, h, i) {
          return this.weights.subarray(((b * heads + h) * nq + i) * nk, ((b * heads + h) * nq + i + 1) * nk);
        },
      };
      if (returnScores) result.scores = heap.f32s(scores, nW).slice();
      return result;
    } finally {
      arena.free();
    }
  }

  /** The points of a kernel call, checked, and the params struct fields they fill. */
  #kernelData(o, call) {
    const kernelName = o.kernel ?? 'gaussian';
    if (kernelName !== 'gaussian' && kernelName !== 'epanechnikov')
      fail(`kernel must be 'gaussian' or 'epanechnikov' for ${call} (a boxcar's width has no gradient), got ${String(kernelName)}`);
    for (const name of ['xTrain', 'yTrain']) if (o[name] === undefined) fail(`${call} needs ${name}`);
    const heldout = o.xHeldout !== undefined || o.yHeldout !== undefined;
    const leaveOneOut = bool('leaveOneOut', o.leaveOneOut, !heldout);
    if (leaveOneOut && heldout) fail('xHeldout/yHeldout are not used with leaveOneOut: give one or the other');
    if (!leaveOneOut && (o.xHeldout === undefined || o.yHeldout === undefined))
      fail(`${call} needs xHeldout and yHeldout (or leaveOneOut: true)`);
    const points = (xName, yName) => {
      const x = tensor(xName, o[xName]);
      const y = tensor(yName, o[yName]);
      if (x.shape.length > 2 || y.shape.length > 2) fail(`${xName} and ${yName} are numbers or [n][d] arrays`);
      const n = x.shape[0];
      if (y.shape[0] !== n) fail(`${xName} has ${n} points but ${yName} has ${y.shape[0]}`);
      return { x, y, n, dx: x.shape[1] ?? 1, dy: y.shape[1] ?? 1 };
    };
    const train = points('xTrain', 'yTrain');
    const held = leaveOneOut ? null : points('xHeldout', 'yHeldout');
    if (held && (held.dx !== train.dx || held.dy !== train.dy))
      fail('held-out points must have the sizes of the training points');
    return {
      fields: { score: SCORES[kernelName], n_train: train.n, n_heldout: held ? held.n : 0, d_x: train.dx, d_y: train.dy,
        leave_one_out: leaveOneOut ? 1 : 0 },
      arrays: [train.x.data, train.y.data, held?.x.data ?? null, held?.y.data ?? null],
    };
  }

  #kernelCall(arena, data, extra) {
    const heap = this.#heap;
    const p = arena.alloc(sizeOf('sac_kernel_fit_params'));
    writeStruct(heap, p, 'sac_kernel_fit_params', { width: 1, learning_rate: 1, n_steps: 0, ...data.fields, ...extra });
    const args = [];
    for (const a of data.arrays) args.push(arena.floats(a), a ? a.length : 0);
    return [p, args];
  }

  fitKernelWidth(options) {
    const M = this.#usable();
    const o = optionsOf(options, [...KERNEL_DATA_OPTIONS, 'width', 'learningRate', 'steps'], 'fitKernelWidth');
    const data = this.#kernelData(o, 'fitKernelWidth');
    const width = number('width', o.width, 1, (x) => x > 0, 'a finite number > 0');
    const learningRate = number('learningRate', o.learningRate, 1, (x) => x > 0, 'a finite number > 0');
    const steps = int('steps', o.steps, 50, 0, 1e6);
    const arena = new Arena(this.#heap);
    try {
      const [p, args] = this.#kernelCall(arena, data, { width, learning_rate: learningRate, n_steps: steps });
      const widths = arena.alloc((steps + 1) * 4), losses = arena.alloc((steps + 1) * 4);
      this.#check(M._sac_kernel_fit_width(p, ...args, widths, steps + 1, losses, steps + 1, this.#err, ERRMSG_BYTES));
      const w = this.#heap.f32s(widths, steps + 1).slice();
      return { widths: w, losses: this.#heap.f32s(losses, steps + 1).slice(), width: w[steps] };
    } finally {
      arena.free();
    }
  }

  kernelLoss(options) {
    const M = this.#usable();
    const o = optionsOf(options, [...KERNEL_DATA_OPTIONS, 'width'], 'kernelLoss');
    const data = this.#kernelData(o, 'kernelLoss');
    if (o.width === undefined) fail('kernelLoss needs width');
    const width = number('width', o.width, 1, (x) => x > 0, 'a finite number > 0');
    const arena = new Arena(this.#heap);
    try {
      const [p, args] = this.#kernelCall(arena, data, {});
      const out = arena.alloc(16);
      this.#check(M._sac_kernel_loss(p, ...args, width, out, out + 8, this.#err, ERRMSG_BYTES));
      const v = this.#heap.view(out, 16);
      return { loss: v.getFloat64(0, true), gradient: v.getFloat64(8, true) };
    } finally {
      arena.free();
    }
  }

  sinusoidPositions(options) {
    const M = this.#usable();
    const o = optionsOf(options, ['positions', 'dims'], 'sinusoidPositions');
    const positions = int('positions', o.positions, undefined, 1);
    const dims = int('dims', o.dims, undefined, 1);
    if (positions === undefined || dims === undefined) fail('sinusoidPositions needs positions and dims');
    if (positions * dims > MAX_FLOATS) fail(`${positions} × ${dims} is more than ${MAX_FLOATS} floats`, 'SAC_ERR_NOMEM');
    const arena = new Arena(this.#heap);
    try {
      const out = arena.alloc(positions * dims * 4);
      this.#check(M._sac_sinusoid_positions(positions, dims, out, positions * dims, this.#err, ERRMSG_BYTES));
      return { positions, dims, data: this.#heap.f32s(out, positions * dims).slice() };
    } finally {
      arena.free();
    }
  }

  dispose() {
    if (!this.#M) return;
    this.#heap.free(this.#err);
    release(this.#M);
    this.#M = null;
  }
}

/** A single-threaded wasm instance for the attention calls. */
export async function createAttention() {
  const runtime = chooseRuntime({ threads: 1, variant: 'st' });
  runtime.reason = 'the attention primitive runs single-threaded';
  return new Attention(await instantiate(runtime), runtime);
}

let shared = null; // Promise<Attention>, made on first use of the functions below

function sharedInstance() {
  if (!shared) {
    shared = createAttention();
    shared.catch(() => (shared = null));
  }
  return shared;
}

export async function attend(options) {
  return (await sharedInstance()).attend(options);
}

export async function fitKernelWidth(options) {
  return (await sharedInstance()).fitKernelWidth(options);
}

export async function sinusoidPositions(options) {
  return (await sharedInstance()).sinusoidPositions(options);
}
