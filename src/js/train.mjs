// train(): a small transformer trained in the trainer's own wasm module (dist/saccade-train-*),
// which is loaded only here, so loading a model never pays for it. The C training session
// (scripts/train/session.h) does the work; this module checks the options, runs one step at a
// time with the event loop free in between (pause, resume, abort, probes), and reads probes and
// exported GGUF bytes out of the heap. In a browser, run it in a Worker (src/js/train-worker.mjs
// is one) so the page stays responsive.
import { fail, SaccadeError } from './errors.mjs';
import { Heap } from './heap.mjs';
import { instantiate, terminate } from './instantiate.mjs';
import { abortSignal, bool, describe } from './options.mjs';
import { chooseRuntime } from './runtime.mjs';

export const TASKS = ['reverse', 'copy', 'dates', 'text'];

// The knobs of each group, by their JS names, and the C option each sets.
const MODEL_KEYS = { layers: 'layers', encLayers: 'enc_layers', decLayers: 'dec_layers', embd: 'embd', heads: 'heads',
  ff: 'ff', ctx: 'ctx' };
const OPTIMIZER_KEYS = { batch: 'batch', lr: 'lr', minLr: 'min_lr', warmup: 'warmup', weightDecay: 'wd',
  beta1: 'beta1', beta2: 'beta2', clip: 'clip' };
const DATA_KEYS = { minLen: 'min_len', maxLen: 'max_len', valN: 'val_n', evalSeed: 'eval_seed' };
const TOP_KEYS = ['task', 'preset', 'text', 'model', 'optimizer', 'data', 'steps', 'seed', 'threads', 'variant',
  'evalEvery', 'signal', 'onStep', 'paused'];

/**
 * Presets sized for a laptop's tab (a minute or two on two cores); every field can be
 * overridden through model / optimizer / data.
 */
export const PRESETS = {
  reverse: {
    // one length: the anti-diagonal forms within ~150 steps
    tiny: { task: 'reverse', steps: 400, model: { layers: 1, embd: 64, heads: 4 }, optimizer: { batch: 32, lr: 3e-3 },
      data: { minLen: 8, maxLen: 8 } },
    // strings of 5-8 letters: the decoder must find each string's end (99.6% held-out exact match by step 700)
    small: { task: 'reverse', steps: 1000, model: { layers: 2, embd: 64, heads: 4 }, optimizer: { batch: 32, lr: 3e-3 },
      data: { minLen: 5, maxLen: 8 } },
  },
  copy: {
    tiny: { task: 'copy', steps: 600, model: { layers: 1, embd: 64, heads: 4 }, optimizer: { batch: 32, lr: 3e-3 },
      data: { minLen: 4, maxLen: 10 } },
  },
  dates: {
    // 90% held-out exact match by step 800 (328 s in Chromium on 2 busy cores)
    small: { task: 'dates', steps: 2000, model: { layers: 2, embd: 96, heads: 4, ctx: 40 },
      optimizer: { batch: 48, lr: 2e-3 } },
    full: { task: 'dates', steps: 3500, model: { layers: 2, embd: 128, heads: 4, ctx: 40 },
      optimizer: { batch: 64, lr: 1e-3 } },
  },
  text: {
    tiny: { task: 'text', steps: 1000, model: { layers: 2, embd: 96, heads: 4, ctx: 64 },
      optimizer: { batch: 16, lr: 2e-3 } },
    small: { task: 'text', steps: 3000, model: { layers: 4, embd: 128, heads: 4, ctx: 128 },
      optimizer: { batch: 12, lr: 1e-3 } },
  },
};

/** The default probe input of a task: its maps are what the page draws. */
export const PROBES = { reverse: 'saccadesattention', copy: 'attentionsaccades', dates: 'sat 21 nov 2026', text: 'ROMEO:\nWhat' };

// ------------------------------------------------------------------------------------------
// Options
// ------------------------------------------------------------------------------------------

function plainObject(value, what) {
  if (value === undefined) return {};
  if (value === null || typeof value != 'object' || Array.isArray(value)) fail(`${what} must be an object`);
  return value;
}

/** { name: value } of C options from one group, refusing names the group lacks. */
function cOptions(group, keys, what, out) {
  for (const [name, value] of Object.entries(plainObject(group, what))) {
    if (!(name in keys)) fail(`unknown ${what} option '${name}' (known: ${Object.keys(keys).join(', ')})`);
    if (typeof value != 'number' || !Number.isFinite(value)) fail(`${what}.${name} must be a finite number`);
    out[keys[name]] = value;
  }
}

/** The options merged over the preset: { task, text, c: { name: value }, steps, evalEvery, … }. */
export function trainOptions(options = {}) {
  const o = plainObject(options, 'the options');
  for (const name of Object.keys(o))
    if (!TOP_KEYS.includes(name)) fail(`unknown option '${name}' (known: ${TOP_KEYS.join(', ')})`);
  let task = o.task ?? 'reverse';
  if (!TASKS.includes(task)) fail(`unknown task '${String(task)}' (known: ${TASKS.join(', ')})`);
  let preset = {};
  if (o.preset !== undefined) {
    preset = PRESETS[task]?.[o.preset];
    if (!preset)
      fail(`unknown preset '${String(o.preset)}' for task '${task}' (known: ${Object.keys(PRESETS[task]).join(', ')})`);
  }
  const c = {};
  cOptions(preset.model, MODEL_KEYS, 'model', c);
  cOptions(preset.optimizer, OPTIMIZER_KEYS, 'optimizer', c);
  cOptions(preset.data, DATA_KEYS, 'data', c);
  cOptions(o.model, MODEL_KEYS, 'model', c);
  cOptions(o.optimizer, OPTIMIZER_KEYS, 'optimizer', c);
  cOptions(o.data, DATA_KEYS, 'data', c);
  const steps = o.steps ?? preset.steps;
  if (steps !== undefined) {
    if (!Number.isInteger(steps) || steps < 1) fail(`steps must be a positive integer, got ${describe(steps)}`);
    c.steps = steps;
  }
  if (o.seed !== undefined) {
    if (!Number.isSafeInteger(o.seed) || o.seed < 0) fail(`seed must be a non-negative integer, got ${describe(o.seed)}`);
    c.seed = o.seed;
  }
  const evalEvery = o.evalEvery ?? 50;
  if (!Number.isInteger(evalEvery) || evalEvery < 0)
    fail(`evalEvery must be a non-negative integer (0: never), got ${String(evalEvery)}`);
  if (task === 'text' && typeof o.text != 'string') fail("the 'text' task needs a text: { text: '…' }");
  if (task !== 'text' && o.text !== undefined) fail(`only the 'text' task takes a text, not '${task}'`);
  if (o.onStep !== undefined && typeof o.onStep != 'function') fail('onStep must be a function');
  return { task, text: o.text, c, evalEvery, signal: abortSignal(o.signal), onStep: o.onStep, paused: bool('paused', o.paused),
    threads: o.threads, variant: o.variant };
}

// ------------------------------------------------------------------------------------------
// A run
// ------------------------------------------------------------------------------------------

// Lets the event loop run (timers, abort events, messages) between steps. setTimeout(0) is
// clamped to 4 ms in browsers; a MessageChannel round trip is not.
let channel = null; // made on first use: importing the library must not open ports
const waiting = [];
function yieldToEvents() {
  if (typeof setImmediate == 'function') return new Promise((resolve) => setImmediate(resolve));
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => waiting.shift()?.();
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });
}

const now = () => (typeof performance == 'object' ? performance.now() : Date.now());

/** What onStep and run.history see of one step. */
function stepRecord(run, step, loss, seconds) {
  return { step, loss, lr: run.get('lr'), gradNorm: run.get('grad_norm'), tokens: run.get('tokens'),
    tokensPerSecond: seconds > 0 ? run.get('step_tokens') / seconds : 0 };
}

export class TrainingRun {
  constructor(M, handle, o, runtime) {
    this.M = M;
    this.heap = new Heap(M);
    this.handle = handle;
    this.task = o.task;
    this.runtime = runtime;
    this.options = o;
    this.scratch = this.heap.malloc(16);
    this.steps = this.get('steps');
    this.step = 0;
    this.history = []; // { step, loss, valLoss?, exact? }
    // 'training', 'paused', 'stopped', 'done', 'failed', 'disposed'; pause() and resume() set it
    // at once: steps run between the event loop's turns, so none is under way while they run
    this.state = o.paused ? 'paused' : 'training';
    this._resume = null;
    let settle;
    this.done = new Promise((resolve, reject) => (settle = { resolve, reject }));
    this.done.catch(() => {}); // the caller may never await it; the rejection is still delivered to those who do
    this._settle = settle;
    this._stopRequested = false;
    // a paused run sees it too; removed when the run ends, so a signal shared by many runs keeps none of them
    this._onAbort = () => this.resume();
    o.signal?.addEventListener('abort', this._onAbort, { once: true });
  }

  /** The run is over (done, stopped, failed or disposed): the signal need not reach it. */
  _forgetSignal() {
    this.options.signal?.removeEventListener('abort', this._onAbort);
  }

  /** The task's probe input, cut to what the model reads (reverse and copy: max_len letters). */
  get defaultProbe() {
    const probe = PROBES[this.task];
    return this.task === 'reverse' || this.task === 'copy' ? probe.slice(0, this.get('max_len')) : probe;
  }

  /** The session's value of a C option or statistic (see session.h). */
  get(name) {
    this.live();
    const [str] = this.heap.string(name);
    try {
      return this.M._sac_train_get(this.handle, str);
    } finally {
      this.heap.free(str);
    }
  }

  /** The model's shape and the optimizer's settings in use (defaults filled in). */
  get config() {
    const names = ['layers', 'enc_layers', 'dec_layers', 'embd', 'heads', 'ff', 'ctx', 'batch', 'steps', 'lr', 'min_lr',
      'warmup', 'wd', 'beta1', 'beta2', 'clip', 'seed', 'threads', 'val_n', 'min_len', 'max_len', 'params', 'vocab'];
    return Object.fromEntries(names.map((n) => [n, this.get(n)]));
  }

  live() {
    if (this.state === 'disposed') fail('this training run has been disposed', 'SAC_ERR_STATE');
  }

  check(status) {
    if (status === 0) return;
    const msg = this.heap.cstring(this.M._sac_train_errmsg(this.handle));
    fail(msg, this.heap.cstring(this.M._sac_status_name(status)));
  }

  /** Pauses: no step runs until resume(). */
  pause() {
    this.live();
    if (this.state === 'training') this.state = 'paused';
  }

  resume() {
    this.live();
    if (this.state === 'paused') this.state = 'training';
    const r = this._resume;
    this._resume = null;
    r?.();
  }

  get paused() {
    return this.state === 'paused';
  }

  /** Ends training after the step under way; done resolves, the weights stay for probe and export. */
  stop() {
    if (this.state === 'disposed') return;
    this._stopRequested = true;
    this.resume();
  }

  /** One optimization step, synchronously; returns its loss. */
  stepOnce() {
    this.live();
    const status = this.M._sac_train_step(this.handle, this.scratch);
    this.check(status);
    this.step++;
    return this.heap.f32s(this.scratch, 1)[0];
  }

  /** { loss, exact } over the held-out set (exact: null for the text task). */
  evaluate() {
    this.live();
    this.check(this.M._sac_train_evaluate(this.handle, this.scratch, this.scratch + 4));
    const [loss, exact] = this.heap.f32s(this.scratch, 2);
    return { loss, exact: exact < 0 ? null : exact };
  }

  /**
   * The current weights run on `input`; returns the attention maps of that probe:
   * { kind: 'cross'|'self', input, output, layers, heads, queries: labels, keys: labels,
   *   maps: Float32Array [layers][heads][queries][keys], attention(layer, head) → { queries, keys, data } }.
   * For encoder–decoder tasks the output is greedy decoding and the maps are its cross-attention.
   */
  probe(input = this.defaultProbe) {
    this.live();
    if (typeof input != 'string' || input.length === 0) fail('probe input must be a non-empty string');
    const { M, heap } = this;
    const [str, len] = heap.string(input);
    try {
      this.check(M._sac_train_probe(this.handle, str, len));
    } finally {
      heap.free(str);
    }
    const dim = (i) => M._sac_train_probe_dim(this.handle, i);
    const [kind, layers, heads, nq, nk] = [0, 1, 2, 3, 4].map(dim);
    const labels = (keys) => {
      const ptr = M._sac_train_probe_labels(this.handle, keys, this.scratch) >>> 0;
      const size = heap.u32(this.scratch);
      const text = heap.text(ptr, size);
      return text.split('\0').slice(0, keys ? nk : nq);
    };
    const maps = heap.f32s(M._sac_train_probe_maps(this.handle) >>> 0, layers * heads * nq * nk).slice();
    const output = heap.cstring(M._sac_train_probe_output(this.handle));
    return {
      kind: kind === 1 ? 'cross' : 'self', input, output, layers, heads, queries: labels(0), keys: labels(1), maps,
      attention(layer, head) {
        if (!(Number.isInteger(layer) && layer >= 0 && layer < layers)) fail(`layer must be 0..${layers - 1}`);
        if (!(Number.isInteger(head) && head >= 0 && head < heads)) fail(`head must be 0..${heads - 1}`);
        const at = (layer * heads + head) * nq * nk;
        return { queries: nq, keys: nk, data: maps.subarray(at, at + nq * nk) };
      },
    };
  }

  /** The current weights as GGUF bytes that loadModel accepts ({ type: 'f32'|'f16'|'q8_0'|'q4_0', name }). */
  exportGGUF({ type = 'f32', name = '' } = {}) {
    this.live();
    if (typeof type != 'string') fail('type must be a string such as "f32" or "q8_0"');
    if (typeof name != 'string') fail('name must be a string');
    const { M, heap } = this;
    const [t] = heap.string(type);
    const [n] = heap.string(name);
    try {
      this.check(M._sac_train_export(this.handle, t, n, this.scratch, this.scratch + 4));
      const ptr = heap.u32(this.scratch), size = heap.u32(this.scratch + 4);
      const bytes = heap.u8(ptr, size).slice();
      heap.free(ptr);
      return bytes;
    } finally {
      heap.free(t);
      heap.free(n);
    }
  }

  /** Frees the C session and the wasm instance (its workers). */
  dispose() {
    if (this.state === 'disposed') return;
    this.stop();
    const wasTraining = this.state === 'training' || this.state === 'paused';
    this.state = 'disposed';
    this._forgetSignal();
    this.M._sac_train_free(this.handle);
    this.heap.free(this.scratch);
    terminate(this.M);
    if (wasTraining) this._settle.reject(new SaccadeError('the training run was disposed', 'SAC_ERR_STATE'));
  }

  async _loop() {
    const { evalEvery, signal, onStep } = this.options;
    try {
      await yieldToEvents(); // train() resolves before the first step
      while (this.step < this.steps && !this._stopRequested) {
        signal?.throwIfAborted();
        if (this.state === 'paused') {
          await new Promise((resolve) => (this._resume = resolve));
          if (this.state === 'disposed') return;
          continue;
        }
        const t0 = now();
        const loss = this.stepOnce();
        const record = stepRecord(this, this.step, loss, (now() - t0) / 1000);
        if ((evalEvery && this.step % evalEvery === 0) || this.step === this.steps) {
          const { loss: valLoss, exact } = this.evaluate();
          record.valLoss = valLoss;
          if (exact !== null) record.exact = exact;
        }
        this.history.push(record);
        onStep?.(record, this);
        await yieldToEvents();
        if (this.state === 'disposed') return;
      }
      signal?.throwIfAborted();
      this.state = this._stopRequested && this.step < this.steps ? 'stopped' : 'done';
      this._forgetSignal();
      this._settle.resolve({ steps: this.step, history: this.history });
    } catch (e) {
      if (this.state === 'disposed') return;
      this.state = 'failed';
      this._forgetSignal();
      this._settle.reject(e);
    }
  }
}

/**
 * Starts training a small transformer and resolves once it is running:
 *
 *   const run = await train({ task: 'reverse', preset: 'tiny', onStep: ({ step, loss }) => … });
 *   run.pause(); run.resume(); const maps = run.probe('abcdefgh');
 *   await run.done;                       // { steps, history }; rejects on abort or failure
 *   const bytes = run.exportGGUF({ type: 'q8_0' });   // loadModel(bytes) runs it
 *   run.dispose();
 *
 * Options: task ('reverse' | 'copy' | 'dates' | 'text'), preset (see PRESETS), text (the text
 * task's UTF-8 text), model { layers, encLayers, decLayers, embd, heads, ff, ctx }, optimizer
 * { batch, lr, minLr, warmup, weightDecay, beta1, beta2, clip }, data { minLen, maxLen, valN,
 * evalSeed }, steps, seed, threads, variant ('mt' | 'st'), evalEvery (steps between held-out
 * evaluations, 0: only at the end), signal (AbortSignal), onStep(record, run), paused (start
 * paused). The same seed gives the same losses on every machine and thread count, in wasm and
 * in the native tool build/tools/train_task.
 */
export async function train(options = {}) {
  const o = trainOptions(options);
  o.signal?.throwIfAborted();
  const runtime = { ...chooseRuntime({ threads: o.threads, variant: o.variant }), relaxed: false,
    relaxedReason: 'the trainer has no relaxed-SIMD build' };
  const M = await instantiate(runtime, 'saccade-train'); // a new wasm memory per run
  const heap = new Heap(M);
  const scratch = heap.malloc(8);
  let handle = 0;
  try {
    const [name] = heap.string(o.task);
    const status = M._sac_train_new(name, scratch);
    heap.free(name);
    handle = heap.u32(scratch);
    const check = (st) => {
      if (st !== 0)
        fail(handle ? heap.cstring(M._sac_train_errmsg(handle)) : 'out of memory', heap.cstring(M._sac_status_name(st)));
    };
    check(status);
    const set = (key, value) => {
      const [k] = heap.string(key);
      try {
        check(M._sac_train_set(handle, k, value));
      } finally {
        heap.free(k);
      }
    };
    set('threads', runtime.threads);
    for (const [key, value] of Object.entries(o.c)) set(key, value);
    if (o.text !== undefined) {
      const [t, len] = heap.string(o.text);
      try {
        check(M._sac_train_set_text(handle, t, len));
      } finally {
        heap.free(t);
      }
    }
    check(M._sac_train_start(handle));
  } catch (e) {
    if (handle) M._sac_train_free(handle);
    terminate(M);
    throw e;
  } finally {
    heap.free(scratch);
  }
  const run = new TrainingRun(M, handle, o, runtime);
  run._loop();
  return run;
}
