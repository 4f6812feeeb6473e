// Generation: option checks, and the loop that samples a token, yields it, and evaluates it.
// A Run is one generation's claim on the model's context. The model keeps at most one: a new
// generate, forward or bench stops the current one, which then throws at its next step, and
// model.stop() aborts it, so a dropped iterator never locks the model.
import { stepRows } from './attention.mjs';
import { fail, SaccadeError } from './errors.mjs';
import { readSamplingDefaults, writeSamplingParams } from './layout.mjs';
import { abortSignal, bool, describe, int, number, optionsOf } from './options.mjs';
import { StopText } from './stops.mjs';

export const GENERATE_OPTIONS = ['maxTokens', 'temperature', 'topK', 'topP', 'repeatPenalty', 'repeatLastN', 'seed',
  'stop', 'signal', 'attention', 'ignoreEos', 'decoderStart', 'reuse'];

/** The shortest decimal that is the same float32 as x (C's 0.8f reads back as 0.800000011920929). */
function shortestFloat32(x) {
  for (let digits = 1; digits < 9; digits++) {
    const y = Number(x.toPrecision(digits));
    if (Math.fround(y) === x) return y;
  }
  return x;
}

/** What generate uses for an option left out: maxTokens, and C's sac_sampling_default_params. */
export function samplingDefaults(engine) {
  engine.M._sac_sampling_default_params(engine.scratch);
  const d = readSamplingDefaults(engine.heap, engine.scratch);
  for (const k of ['temperature', 'topP', 'repeatPenalty']) d[k] = shortestFloat32(d[k]);
  return { maxTokens: 64, ...d };
}

/**
 * Checks the options of generate (or complete: `call`) for a model of `vocabSize` tokens; returns
 * them with `d` (samplingDefaults) filled in (seed as a BigInt).
 */
export function generateOptions(d, options, call, vocabSize) {
  const o = optionsOf(options, GENERATE_OPTIONS, call);
  const nonNegative = (x) => x >= 0;
  let seed64;
  if (o.seed === undefined) seed64 = randomSeed();
  else {
    try {
      seed64 = typeof o.seed == 'number' || typeof o.seed == 'bigint' ? BigInt(o.seed) : -1n;
    } catch {
      seed64 = -1n; // a non-integer number
    }
    if (seed64 < 0n || seed64 >= 1n << 64n) fail(`seed must be an integer in [0, 2^64), got ${describe(o.seed)}`);
  }
  const stops = o.stop === undefined ? [] : Array.isArray(o.stop) ? o.stop : [o.stop];
  for (const s of stops)
    if (!(typeof s == 'string' && s.length > 0) && !(Number.isInteger(s) && s >= -0x80000000 && s <= 0x7fffffff))
      fail(`stop must be a non-empty string, a token id, or an array of them, got ${describe(s)}`);
    else if (typeof s == 'number' && (s < 0 || s >= vocabSize))
      fail(`stop token id ${s} is out of range (vocabulary size ${vocabSize})`);
  return {
    maxTokens: int('maxTokens', o.maxTokens, d.maxTokens, 0),
    temperature: number('temperature', o.temperature, d.temperature, nonNegative, 'a finite number >= 0 (0: greedy)'),
    topK: int('topK', o.topK, d.topK, 0, undefined, ' (0: off)'),
    topP: number('topP', o.topP, d.topP, (x) => x > 0 && x <= 1, 'in (0, 1] (1: off)'),
    repeatPenalty: number('repeatPenalty', o.repeatPenalty, d.repeatPenalty, (x) => x > 0, 'a finite number > 0 (1: off)'),
    repeatLastN: int('repeatLastN', o.repeatLastN, d.repeatLastN, -1, undefined, ' (-1: the whole context)'),
    seed: seed64,
    signal: abortSignal(o.signal),
    attention: bool('attention', o.attention),
    ignoreEos: bool('ignoreEos', o.ignoreEos),
    reuse: bool('reuse', o.reuse, true),
    decoderStart: o.decoderStart,
    stopStrings: stops.filter((s) => typeof s == 'string'),
    stopIds: new Set(stops.filter((s) => typeof s == 'number')),
  };
}

function randomSeed() {
  const words = new Uint32Array(2);
  globalThis.crypto.getRandomValues(words);
  return (BigInt(words[0]) << 32n) | BigInt(words[1]);
}

/** The step that ends an aborted generation: no token, what text was held back. */
export const abortedStep = (text) => ({ id: null, text, attention: undefined, cross: undefined, finishReason: 'aborted' });

/**
 * One generation's claim on the context. `stop(error)` ends it: its next step throws `error`
 * (another call took the context over, or the model was disposed). `abort()` ends it too: its
 * next step is the last, with finishReason 'aborted'. Either way the detokenizer is freed at
 * once, since the iterator may never be resumed.
 */
export class Run {
  stopped = null;
  aborted = false;
  dt = 0; // its detokenizer, freed when the run ends
  /** What complete() reports; filled in as the run goes. */
  timings = { promptTokens: 0, reusedTokens: 0, promptMs: 0, generatedTokens: 0, generateMs: 0 };

  constructor(engine) {
    this.engine = engine;
  }

  stop(error) {
    if (this.stopped || this.aborted) return;
    this.stopped = error;
    this.release();
  }

  abort() {
    if (this.stopped || this.aborted) return;
    this.aborted = true;
    this.release();
  }

  release() {
    if (this.dt) this.engine.freeDetokenizer(this.dt);
    this.dt = 0;
  }

  /** Throws why the run was stopped, if it was. */
  live() {
    if (this.stopped) throw this.stopped;
  }
}

export const superseded = () => new SaccadeError(
  'this generation was stopped: a later generate(), complete(), chat(), forward(), bench() or setAblation() on the ' +
  'same model took over its context',
  'SAC_ERR_STATE');

// Lets the event loop run (timers, abort events, messages) between generated tokens.
const nextTask = typeof setImmediate == 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : (() => {
      const channel = new MessageChannel();
      const waiting = [];
      channel.port1.onmessage = () => waiting.shift()();
      return () => new Promise((resolve) => {
        waiting.push(resolve);
        channel.port2.postMessage(0);
      });
    })();

/**
 * The steps of one generation. `begin()` prepares the context with capture as asked: a fresh
 * one (encoding the source), or the tokens it holds cut back to the first `keep` of `ids`,
 * which it already holds, and returns `keep` (0: fresh); `ids` are what the decoder starts
 * from, and it evaluates those after the first `keep`. `holding(ids)` learns the tokens the
 * context holds after each evaluation.
 * `end()` runs when the run ends without having been stopped or aborted by model.stop().
 *
 * Each step's text is what it releases: text that may begin a stop string waits (stops.mjs),
 * and a stop string is dropped with everything after it. An abort (the signal, or model.stop())
 * ends the generation with a step that has no token (id null) and finishReason 'aborted'.
 */
export async function* steps(run, { engine, info, ids, o, withCross, begin, holding = () => {}, end }) {
  const { M, heap, scratch } = engine;
  const ctx = engine.ctx;
  const stops = new StopText(o.stopStrings);
  const timings = run.timings;
  const t0 = performance.now();
  let t1 = t0;
  const aborted = () => run.aborted || Boolean(o.signal?.aborted);
  const abortStep = () => {
    let text = stops.end();
    if (run.dt) text += engine.flush(run.dt);
    timings.generateMs = performance.now() - t1;
    return abortedStep(text);
  };
  try {
    run.live();
    if (aborted()) return yield abortStep();
    if (info.hasTokenizer) {
      run.dt = engine.detokenizer();
      // the generated text continues the decoder's input: without it, a llama vocabulary would
      // drop the first generated token's leading space as the start of a text
      for (const id of ids) engine.push(run.dt, id);
    }
    writeSamplingParams(heap, scratch, o);
    engine.check(M._sac_sampler_init(ctx, scratch));
    const keep = begin() ?? 0;
    holding(ids.slice(0, keep)); // what the context holds if the evaluation fails
    engine.eval(ids.slice(keep));
    const held = Array.from(ids);
    holding(held);
    t1 = performance.now();
    Object.assign(timings, { promptTokens: ids.length - keep, reusedTokens: keep, promptMs: t1 - t0 });
    const { eosId } = info;
    for (let n = 1; n <= o.maxTokens; n++) {
      // Let the event loop run (abort events, timers) after every evaluation.
      await nextTask();
      run.live(); // a newer call or dispose() may have run meanwhile
      if (aborted()) return yield abortStep();
      engine.check(M._sac_sample(ctx, scratch));
      const id = heap.i32(scratch);
      const piece = run.dt ? engine.push(run.dt, id) : '';
      const eos = id === eosId && !o.ignoreEos;
      // a stop id ends the text before its own piece
      const stopId = !eos && o.stopIds.has(id);
      let { text, stopped } = stopId ? { text: stops.end(), stopped: true } : stops.push(piece);
      let finishReason = eos ? 'eos' : stopped ? 'stop'
        : engine.nPast >= engine.nCtx ? 'contextFull'
          : n === o.maxTokens ? 'maxTokens' : null;
      if (finishReason && !stopped) {
        // what the detokenizer holds back may still complete a stop string
        const tail = stops.push(run.dt ? engine.flush(run.dt) : '');
        text += tail.text;
        if (tail.stopped) finishReason = eos ? 'eos' : 'stop';
        else text += stops.end();
      }
      timings.generatedTokens = n;
      timings.generateMs = performance.now() - t1;
      // the query row whose output predicted `id`
      const rows = o.attention ? stepRows(engine, info, engine.nPast - 1, withCross) : {};
      yield { id, text, attention: rows.attention, cross: rows.cross, finishReason };
      if (finishReason) return;
      run.live(); // the consumer may have disposed the model or started another call
      if (aborted()) return yield abortStep();
      engine.eval([id]);
      held.push(id);
      holding(held);
    }
  } finally {
    if (!run.stopped && !run.aborted) {
      run.release();
      end();
    }
  }
}
