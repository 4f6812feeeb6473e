// The Model class: the public API over one Engine (a model, its context and its wasm instance).
// It owns the option checks of each call and the rule that one generation at a time uses the
// context: the latest generate, forward or bench takes it over (see generate.mjs).
import { attentionMatrix, attentionRows, capturedRows } from './attention.mjs';
import { checkCallCapture } from './budget.mjs';
import { chat } from './chat.mjs';
import { disposedError, fail } from './errors.mjs';
import { generateOptions, Run, samplingDefaults, steps, superseded } from './generate.mjs';
import { constants, readInfo } from './layout.mjs';
import { bool, checkIds, describe, int, optionsOf } from './options.mjs';
import { ablatedHeads, ablationMask, attentionScores, queryKeys, setAblation, softmaxRow } from './probe.mjs';

const { SAC_EVAL_ALL_LOGITS, SAC_TOKENIZE_BOS, SAC_TOKENIZE_EOS, SAC_TOKENIZE_SPECIAL } = constants;

/** A runtime's reason, saying so when fewer than `wanted` threads could be started (loadModel's, and later threadsReady's). */
export const withShortfall = (reason, threads, wanted) =>
  threads < wanted ? `${reason}; only ${threads} of ${wanted} threads could be started` : reason;

/** How many leading ids of `prompt` `held` shares, leaving at least the last to evaluate. */
function sharedPrefix(held, prompt) {
  const n = Math.min(held.length, prompt.length - 1);
  let i = 0;
  while (i < n && held[i] === prompt[i]) i++;
  return i;
}

/**
 * bench's prompt and decode lengths, those not given (undefined) fitted to the context so that
 * bench runs on any model: a quarter of the context decoded (at most 32), the prompt the rest (at
 * most 128; all of it when the decode has its own depth or context), as the native CLI's
 * bench_lengths. Given lengths stay (refused when they do not fit).
 */
export function benchLengths(nCtx, encdec, depthGiven, promptTokens, decodeTokens) {
  const nd = decodeTokens ?? Math.min(32, Math.max(1, Math.floor(nCtx / 4)));
  const np = promptTokens ?? Math.min(128, Math.max(1, encdec || depthGiven ? nCtx : nCtx - nd));
  return { promptTokens: np, decodeTokens: nd };
}

export class Model {
  #engine;
  #params;
  #run = null; // the generation that holds the context, if any
  #disposed = false;
  #source = null; // encoder–decoder models: the ids of the last encoded source
  // The tokens a generation left in the context, for the next to reuse: { ids, captured } (captured:
  // attention was captured for every one of them), or null when the context holds anything else.
  #held = null;
  #heldEpoch = 0; // counts #forget()s: a generation records what it holds only while none came

  /**
   * @internal — use loadModel(). `cacheDone`: a promise (never rejected) of the final cache report,
   * which replaces a pending sourceInfo.cache. `pool`: null, or the promise of a thread pool still
   * starting (loadModel's waitForThreads: false); the context runs on one thread until it has.
   */
  constructor(engine, runtime, params, sourceInfo, cacheDone = Promise.resolve(sourceInfo.cache), pool = null) {
    this.#engine = engine;
    this.#params = params;
    this.info = Object.freeze(this.#readInfo());
    this.runtime = Object.freeze(runtime);
    /** Where the model's bytes came from and what became of their cache copy (see index.d.ts). */
    this.sourceInfo = Object.freeze({ ...sourceInfo, urls: Object.freeze(sourceInfo.urls),
      cache: Object.freeze(sourceInfo.cache) });
    /** The final cache report, once the copy is written; sourceInfo is replaced by one that has it first. */
    this.cached = cacheDone.then((report) => {
      if (this.sourceInfo.cache !== report) this.sourceInfo = Object.freeze({ ...this.sourceInfo, cache: Object.freeze(report) });
      return this.sourceInfo.cache;
    });
    this.samplingDefaults = Object.freeze(samplingDefaults(engine));
    /** The threads the model runs on once its pool has started (or failed to); never rejects. */
    this.threadsReady = pool ? pool.then(() => this.#addThreads(), (e) => this.#noThreads(e)) : Promise.resolve(runtime.threads);
  }

  /** The started pool's threads join the context (between C calls: this runs from a promise job). */
  #addThreads() {
    const wanted = this.runtime.threads;
    if (this.#disposed) return wanted;
    const e = this.#engine;
    let st;
    try {
      st = e.M._sac_context_set_threads(e.ctx, wanted);
    } catch (error) {
      return this.#noThreads(error); // a trap: the instance is not reused (instantiate.mjs's guarded)
    }
    const threads = e.M._sac_context_n_threads(e.ctx);
    const reason = st !== constants.SAC_OK
      ? `${this.runtime.reason}; the threads could not join: ${e.heap.cstring(e.M._sac_context_errmsg(e.ctx))}`
      : withShortfall(this.runtime.reason, threads, wanted);
    this.runtime = Object.freeze({ ...this.runtime, threads, reason });
    return threads;
  }

  /** The pool failed to start: the model stays on one thread, and runtime.reason says why. */
  #noThreads(error) {
    this.runtime = Object.freeze({ ...this.runtime, threads: 1,
      reason: `${this.runtime.reason}; running on 1 thread: ${error?.message ?? error}` });
    return 1;
  }

  #readInfo() {
    const e = this.#engine;
    const { M, heap, scratch: s } = e;
    M._sac_model_get_info(e.model, s);
    const info = readInfo(heap, s);
    const tensors = [];
    const tensorTypes = {};
    for (let i = 0, n = M._sac_model_n_tensors(e.model); i < n; i++) {
      // name, type, n_dims at s, s+4, s+8; dims (int64[4]) at s+16
      e.check(M._sac_model_tensor(e.model, i, s, s + 4, s + 8, s + 16), 'model');
      const v = heap.view(s, 48);
      const name = heap.cstring(v.getUint32(0, true));
      const type = heap.cstring(v.getUint32(4, true));
      const nDims = v.getInt32(8, true);
      const dims = [];
      for (let d = 0; d < nDims; d++) dims.push(Number(v.getBigInt64(16 + 8 * d, true)));
      tensors.push({ name, type, dims });
      tensorTypes[type] = (tensorTypes[type] ?? 0) + 1;
    }
    const metadata = {};
    for (let i = 0, n = M._sac_model_n_metadata(e.model); i < n; i++) {
      e.check(M._sac_model_metadata(e.model, i, s, s + 4), 'model');
      // defineProperty: a key such as "__proto__" is data here, not the prototype
      Object.defineProperty(metadata, heap.cstring(heap.u32(s)),
        { value: heap.cstring(heap.u32(s + 4)), enumerable: true, writable: true, configurable: true });
    }
    info.tensorTypes = tensorTypes;
    info.tensors = tensors;
    info.metadata = metadata;
    info.bosId = M._sac_token_bos(e.model);
    info.eosId = M._sac_token_eos(e.model);
    info.addBos = M._sac_token_add_bos(e.model) === 1;
    return info;
  }

  #usable() {
    if (this.#disposed) throw disposedError();
    return this.#engine;
  }

  #hasContext() {
    const e = this.#usable();
    if (!e.ctx) fail('the model was loaded with { vocabOnly: true }: it can only tokenize and detokenize', 'SAC_ERR_STATE');
    return e;
  }

  /** The context for a new use: a generation still holding it is stopped first. */
  #takeOver() {
    const e = this.#hasContext();
    this.#run?.stop(superseded());
    this.#run = null;
    this.#forget();
    return e;
  }

  /** The next generation starts from a fresh context, and the running one stops recording what it holds. */
  #forget() {
    this.#held = null;
    this.#heldEpoch++;
  }

  /**
   * Ends the running generation, if any: its next step is its last, with no token and
   * finishReason 'aborted' (as when its signal aborts). Returns whether one was running. A
   * generation whose iterator was dropped holds the context only until the next generate,
   * forward or bench — or this call.
   */
  stop() {
    this.#usable();
    const run = this.#run;
    if (!run) return false;
    run.abort();
    this.#run = null;
    this.#engine.setCapture(this.#params.attention);
    return true;
  }

  /** Text → token ids. Options: bos, eos (add the special tokens), special (parse "<s>" etc.). */
  tokenize(text, options) {
    const e = this.#usable();
    const o = optionsOf(options, ['bos', 'eos', 'special'], 'tokenize');
    if (typeof text != 'string') fail(`text must be a string, got ${describe(text)}`);
    const flags = (bool('bos', o.bos) ? SAC_TOKENIZE_BOS : 0) | (bool('eos', o.eos) ? SAC_TOKENIZE_EOS : 0) |
      (bool('special', o.special) ? SAC_TOKENIZE_SPECIAL : 0);
    // in the option's words (C names its flag)
    if (o.bos && this.info.bosId < 0) fail('bos: the vocabulary has no BOS token');
    if (o.eos && this.info.eosId < 0) fail('eos: the vocabulary has no EOS token');
    return e.tokenize(text, flags);
  }

  /** Token ids → text (complete UTF-8 characters; a trailing partial one becomes U+FFFD). */
  detokenize(ids) {
    return this.pieces(ids).join('');
  }

  /**
   * The text each id adds, in one pass: pieces(ids).join('') === detokenize(ids). A character
   * split across ids comes with the id that completes it (the others get ''); an incomplete one
   * at the end becomes U+FFFD in the last piece.
   */
  pieces(ids) {
    const e = this.#usable();
    checkIds(ids);
    const dt = e.detokenizer();
    try {
      const out = Array.from(ids, (id) => e.push(dt, id));
      const rest = e.flush(dt);
      if (out.length) out[out.length - 1] += rest;
      return out;
    } finally {
      e.freeDetokenizer(dt);
    }
  }

  /**
   * Each id as the vocabulary spells it, control tokens included ('<|im_start|>', '<0x0A>',
   * '▁the', 'Ġthe'): for labels, where pieces() gives '' for what decodes to nothing.
   */
  spellings(ids) {
    const e = this.#usable();
    checkIds(ids);
    return Array.from(ids, (id) => e.spelling(id));
  }

  get #encdec() {
    return this.info.architecture === 'encdec';
  }

  /**
   * Starts over: forgets every token, sets attention capture, and for an encoder–decoder model
   * runs the encoder over `source` (by default the last one again: a reset forgets it).
   */
  #reset(attention, source = this.#source) {
    const e = this.#engine;
    e.reset(attention || this.#params.attention);
    if (!source) return;
    e.encode(source);
    this.#source = Array.from(source);
  }

  /** Capture that `rows` decoder rows (and `source` source tokens) need must fit the memory left. */
  #checkCapture(rows, source, hint) {
    const e = this.#engine;
    // (a longer source or prompt than the context is refused by C with that reason, not a size)
    const n = Math.min(rows, e.nCtx);
    checkCallCapture(e.heap.buffer.byteLength, this.info, n, Math.min(source ?? this.#source?.length ?? 0, e.nCtx),
      `of ${n} query rows`, hint, this.#params.scores);
  }

  /**
   * Evaluates `ids` from a fresh context; returns the logits of the last position
   * (vocabSize floats), or of every position with allLogits (row-major). A copy.
   * Encoder–decoder models: `ids` are decoder tokens, read against `source` (encoded first)
   * or, without it, against the last encoded source.
   */
  forward(ids, options) {
    this.#hasContext();
    const o = optionsOf(options, ['allLogits', 'attention', 'source'], 'forward');
    const allLogits = bool('allLogits', o.allLogits);
    const attention = bool('attention', o.attention);
    checkIds(ids);
    if (o.source !== undefined) this.#checkSource(o.source);
    if (attention) this.#checkCapture(ids.length, o.source?.length, 'evaluate fewer tokens, or turn attention off');
    const e = this.#takeOver();
    this.#reset(attention, o.source);
    e.eval(ids, allLogits ? SAC_EVAL_ALL_LOGITS : 0);
    return e.logits();
  }

  /**
   * The captured attention probabilities of one layer and head over the current context:
   * { queries, keys, data } with data[q * keys + k] (zero above the diagonal). A copy.
   */
  attention(layer, head, options) {
    const e = this.#hasContext();
    const { kind = 'self' } = optionsOf(options, ['kind'], 'attention');
    return attentionMatrix(e, this.info, layer, head, kind);
  }

  /**
   * Captured rows [from, to) of `kind` ('self', 'cross' or 'encoder') in one block:
   * { kind, layers, heads, from, to, keys, offsets, data }. `from` defaults to 0, `to` to every
   * row captured. With { view: true } data is a view of the wasm memory, valid only until the
   * next call on the model.
   */
  attentionRows(kind = 'self', from, to, options) {
    const e = this.#hasContext();
    const view = bool('view', optionsOf(options, ['view'], 'attentionRows').view);
    return attentionRows(e, this.info, kind, from, to, view);
  }

  /**
   * The pre-softmax scores q·k·scale of rows [from, to) of `kind`, captured by the C core beside
   * the probabilities (load with { scores: true }): attentionRows' shape plus `scale` (1/√d);
   * −Infinity marks keys a query does not see. softmaxRow(row, 1) gives the probabilities.
   */
  attentionScores(kind = 'self', from, to, options) {
    const e = this.#hasContext();
    const view = bool('view', optionsOf(options, ['view'], 'attentionScores').view);
    return attentionScores(e, this.info, kind, from, to, view);
  }

  /** The scale of the scores, 1/√headDim. */
  get attentionScale() {
    const e = this.#usable();
    return e.M._sac_attention_scale(e.model);
  }

  /** softmax(scores / temperature) as the C core computes attention (−Infinity → 0). */
  softmaxRow(scores, temperature = 1) {
    const e = this.#usable();
    return softmaxRow(e.M, e.heap, scores, temperature);
  }

  /**
   * The query and key vectors of one layer and head over the current context (load with
   * { qk: true }): { queries, keys, headDim, scale, q, k }, q and k row-major. Copies.
   */
  queryKeys(layer, head, options) {
    const e = this.#hasContext();
    const { kind = 'self' } = optionsOf(options, ['kind'], 'queryKeys');
    return queryKeys(e, this.info, kind, layer, head);
  }

  /**
   * Turns score capture on (room for the scores beside the captured probabilities) or off. Rows
   * captured before it was on are refused until the next forward or generate.
   */
  captureScores(on) {
    const e = this.#hasContext();
    e.check(e.M._sac_attention_scores_enable(e.ctx, bool('on', on) ? 1 : 0));
    this.#params.scores = on; // the capture budget of later calls counts them
    this.#forget(); // rows evaluated before lack their scores
  }

  /**
   * Turns q/k capture on (its memory is allocated the first time) or off. Tokens evaluated before
   * it was on are not recorded: queryKeys refuses until the next forward or generate.
   */
  captureQueryKeys(on) {
    const e = this.#hasContext();
    e.check(e.M._sac_context_capture_qk(e.ctx, bool('on', on) ? 1 : 0));
    this.#forget(); // tokens evaluated before lack their queries and keys
  }

  /**
   * Ablates heads of `kind` (default 'self') from the next evaluation on: `heads` is a list of
   * [layer, head] pairs whose attention output is zeroed before the output projection; [] or null
   * restores them. Tokens already evaluated are not recomputed.
   */
  setAblation(heads, options) {
    const { kind = 'self' } = optionsOf(options, ['kind'], 'setAblation');
    const e = this.#takeOver();
    setAblation(e, kind, ablationMask(this.info, kind, heads));
  }

  /** The ablated heads of `kind` as [layer, head] pairs. */
  ablation(kind = 'self') {
    return ablatedHeads(this.#hasContext(), this.info, kind);
  }

  /** Query rows captured so far for `kind` (0 when capture is off or nothing ran). */
  capturedRows(kind = 'self') {
    return capturedRows(this.#hasContext(), kind);
  }

  /**
   * Generates tokens after a prompt (text, tokenized with BOS when the model asks for it, or
   * ids). Returns an async iterator of { id, text, attention, cross, finishReason }. Options are
   * checked here, so bad ones throw at the call; the prompt is evaluated at the first step.
   * Encoder–decoder models: the prompt is the source; the decoder starts from
   * options.decoderStart (default [BOS]).
   */
  generate(prompt, options) {
    return this.#start(prompt, options, 'generate').steps;
  }

  /**
   * Generates to the end and returns { text, tokens, finishReason, timings }: the text without
   * any stop string, the ids generated, why it ended, and how long the prompt and the
   * generation took. Takes generate's options.
   */
  async complete(prompt, options) {
    const t0 = performance.now();
    const { run, steps } = this.#start(prompt, options, 'complete');
    let text = '';
    const tokens = [];
    let finishReason = 'maxTokens'; // maxTokens: 0 has no steps
    for await (const step of steps) {
      text += step.text;
      if (step.id !== null) tokens.push(step.id);
      finishReason = step.finishReason ?? finishReason;
    }
    return { text, tokens, finishReason, timings: { ...run.timings, totalMs: performance.now() - t0 } };
  }

  /** Checks a generation's arguments and takes the context: { run, steps }. */
  #start(prompt, options, call) {
    const e = this.#hasContext();
    const o = generateOptions(this.samplingDefaults, options, call, this.info.vocabSize);
    const ids = typeof prompt == 'string' ? this.tokenize(prompt, { bos: this.info.addBos }) : [...checkIds(prompt, 'prompt', 'text or ')];
    if (ids.length === 0) fail('the prompt is empty');
    let source = null;
    let start = ids;
    if (this.#encdec) {
      this.#checkSource(ids);
      source = ids;
      start = o.decoderStart ?? (this.info.bosId >= 0 ? [this.info.bosId] : null);
      if (!start) fail('the model has no BOS token to start the decoder with: pass options.decoderStart (token ids)');
      start = [...checkIds(start, 'decoderStart')];
      if (start.length === 0) fail('decoderStart is empty');
    } else if (o.decoderStart !== undefined) {
      fail(`decoderStart is for encoder–decoder models; this model is ${this.info.architecture}`);
    }
    // evaluated: the start, then every sampled token but the last
    if (o.attention) this.#checkCapture(start.length + Math.max(0, o.maxTokens - 1), source?.length,
      'lower maxTokens or contextLength, or turn attention off');
    const held = this.#held;
    this.#takeOver();
    const epoch = this.#heldEpoch;
    const run = new Run(e);
    this.#run = run;
    const capture = o.attention || this.#params.attention;
    let captured = capture;
    return { run, steps: steps(run, {
      engine: e, info: this.info, ids: start, o, withCross: source !== null,
      // The tokens the last generation left that this prompt starts with are kept, not evaluated
      // again (a chat's earlier turns): the same bits either way. Not when this run captures
      // attention and theirs was not captured, nor for an encoder-decoder model, nor after a
      // #forget() since generate() was called, nor for a prompt the context cannot hold (its
      // refusal then counts the whole prompt). Returns how many ids were kept.
      begin: () => {
        const keep = o.reuse && !this.#encdec && held && this.#heldEpoch === epoch && (held.captured || !capture)
          && start.length <= e.nCtx ? sharedPrefix(held.ids, start) : 0;
        if (keep === 0) {
          this.#reset(o.attention, source ?? undefined);
          return 0;
        }
        captured = capture && held.captured;
        e.setCapture(capture); // first: truncating with capture off forgets every captured row
        e.truncate(keep);
        return keep;
      },
      holding: (ids) => {
        if (this.#run === run && this.#heldEpoch === epoch) this.#held = { ids, captured };
      },
      end: () => {
        if (this.#run !== run) return;
        this.#run = null;
        e.setCapture(this.#params.attention);
      },
    }) };
  }

  /**
   * The next turn of a conversation ([{ role, content }, ...]) rendered with the model's chat
   * template: generate's steps, stopping at an end-of-turn token. See chat.mjs.
   */
  chat(messages, options) {
    return chat(this, this.#hasContext(), messages, options, () => this.#claim());
  }

  /**
   * A chat's hold on the context from its call to its first step, where its own generation takes
   * over from it: a call made in between supersedes the chat, not the other way round. Unlike
   * #takeOver it keeps what the context holds, since those are the chat's earlier turns.
   * `end()` lets go of it when the chat ends before its generation began (a no-op once another
   * call or model.stop() took it).
   */
  #claim() {
    this.#run?.stop(superseded());
    const run = new Run(this.#engine);
    this.#run = run;
    return {
      live: () => run.live(),
      aborted: () => run.aborted,
      end: () => {
        if (this.#run === run) this.#run = null;
      },
    };
  }

  #checkSource(source) {
    if (!this.#encdec) fail(`only encoder–decoder models take a source; this model is ${this.info.architecture}`);
    checkIds(source, 'source');
  }

  /** Encoder–decoder models: the source ids the decoder reads (of the last generate or forward). */
  get sourceIds() {
    return this.#source ? [...this.#source] : null;
  }

  /**
   * Rows [from, from + rows) of a tensor (name or index) as float32, dequantized in C
   * (sac_model_tensor_read): { name, from, rows, cols, data } with data rows × cols, a copy.
   */
  readTensor(tensor, options) {
    const e = this.#usable();
    const o = optionsOf(options, ['from', 'rows'], 'readTensor');
    const index = typeof tensor == 'string' ? this.info.tensors.findIndex((t) => t.name === tensor)
      : int('tensor', tensor, undefined, 0, this.info.tensors.length - 1);
    if (index < 0) fail(`no tensor named '${String(tensor)}' in the model`);
    const { name, dims } = this.info.tensors[index];
    const cols = dims[0];
    const total = dims.slice(1).reduce((a, b) => a * b, 1);
    const from = int('from', o.from, 0, 0, Math.max(0, total - 1));
    const rows = int('rows', o.rows, total - from, 0, total - from, ` (the tensor has ${total} rows from 0)`);
    const floats = rows * cols;
    if (floats * 4 > 2 ** 31) fail(`${rows} rows of ${cols} floats are too many to read at once`, 'SAC_ERR_NOMEM');
    const { M, heap } = e;
    const out = heap.malloc(floats * 4);
    try {
      e.check(M._sac_model_tensor_read(e.model, index, from, rows, out, floats), 'model');
      return { name, from, rows, cols, data: heap.f32s(out, floats).slice() };
    } finally {
      heap.free(out);
    }
  }

  /**
   * Prefill and decode speed on synthetic ids, as `saccade bench` measures it natively:
   * best of `repeat` runs of a `promptTokens` prefill followed by `decodeTokens` single-token evals,
   * which start with `decodeDepth` tokens in the context: by default the prompt's (decode follows
   * the prefill); otherwise the context is reset and given that many ids, untimed (0: decode from
   * an empty context, as llama-bench's tg test does). Decoder-only models.
   * With attentionCost, decode turns attention capture on and off token by token (the prefill
   * captures), and decodeCaptureTokensPerSecond gives the captured tokens' speed beside the
   * others': sums over every run but the first (it pays the page faults of fresh capture rows;
   * with repeat 1 it is all there is), each run starting its turns at the other token, so both
   * halves see the same depths and the same moment of the machine.
   */
  bench(options) {
    this.#hasContext();
    const o = optionsOf(options, ['promptTokens', 'decodeTokens', 'decodeDepth', 'repeat', 'attentionCost'], 'bench');
    const { promptTokens, decodeTokens } = benchLengths(this.runtime.contextLength, this.#encdec, o.decodeDepth !== undefined,
      int('promptTokens', o.promptTokens, undefined, 1), int('decodeTokens', o.decodeTokens, undefined, 1));
    const decodeDepth = int('decodeDepth', o.decodeDepth, promptTokens, 0);
    if (this.#encdec && o.decodeDepth !== undefined)
      fail('decodeDepth: an encoder-decoder model decodes from an empty decoder context; leave it out');
    const repeat = int('repeat', o.repeat, 3, 1);
    const alternate = bool('attentionCost', o.attentionCost);
    if (alternate && decodeTokens < 2)
      fail('attentionCost needs decodeTokens >= 2 (tokens with capture and without, by turns)');
    const e = this.#takeOver();
    const V = this.info.vocabSize;
    // An encoder–decoder model encodes the prompt ids and decodes against them: each has the whole context.
    let tooLong = '';
    if (this.#encdec) tooLong = promptTokens > e.nCtx || decodeTokens > e.nCtx ? 'promptTokens and decodeTokens must each fit in' : '';
    else if (o.decodeDepth === undefined) tooLong = promptTokens + decodeTokens > e.nCtx ? 'promptTokens + decodeTokens exceed' : '';
    else if (promptTokens > e.nCtx) tooLong = 'promptTokens exceeds';
    else if (decodeDepth + decodeTokens > e.nCtx) tooLong = 'decodeDepth + decodeTokens exceed';
    if (tooLong) fail(`${tooLong} the context length (${e.nCtx})`);
    if (alternate) this.#checkCapture(this.#encdec ? decodeTokens : Math.max(promptTokens, decodeDepth + decodeTokens),
      this.#encdec ? promptTokens : 0, 'bench with attentionCost');
    const ids = Array.from({ length: Math.max(promptTokens, decodeDepth) },
      (_, i) => Number((BigInt(i) * 7919n + 13n) % BigInt(V)));
    const prompt = ids.slice(0, promptTokens), atDepth = ids.slice(0, decodeDepth);
    const decode = Array.from({ length: decodeTokens }, (_, i) => Number((BigInt(i) * 104729n + 7n) % BigInt(V)));
    let prefill = Infinity;
    let step = Infinity;
    const sum = [0, 0], count = [0, 0]; // attentionCost: without capture, with
    for (let r = 0; r < repeat; r++) {
      const t0 = performance.now();
      if (this.#encdec) this.#reset(alternate, prompt);
      else {
        this.#reset(alternate);
        e.eval(prompt);
      }
      prefill = Math.min(prefill, performance.now() - t0);
      if (decodeDepth !== promptTokens) { // untimed: the context at the decode's depth
        this.#reset(alternate);
        if (decodeDepth > 0) e.eval(atDepth);
      }
      const t1 = performance.now();
      for (let i = 0; i < decode.length; i++) {
        if (!alternate) {
          e.eval([decode[i]]);
          continue;
        }
        const on = (i + r) % 2 === 0 ? 1 : 0;
        e.setCapture(on); // outside the timing: turning capture on clears the row the last token skipped
        const t = performance.now();
        e.eval([decode[i]]);
        if (r === 0 && repeat > 1) continue;
        sum[on] += performance.now() - t;
        count[on]++;
      }
      const t2 = performance.now();
      step = Math.min(step, t2 - t1);
    }
    const type = this.info.tensors.find((t) => t.name.includes('ffn_up'))?.type ?? '';
    return {
      engine: `saccade-wasm-${this.runtime.variant}`, type, threads: this.runtime.threads, promptTokens, decodeTokens,
      decodeDepth: this.#encdec ? 0 : decodeDepth, // an encoder–decoder model's decoder starts empty
      prefillTokensPerSecond: promptTokens / (prefill / 1e3),
      ...(alternate ? {
        decodeTokensPerSecond: count[0] / (sum[0] / 1e3), decodeCaptureTokensPerSecond: count[1] / (sum[1] / 1e3),
      } : { decodeTokensPerSecond: decodeTokens / (step / 1e3) }),
    };
  }

  /** Frees the model, its context and its wasm instance (and threads). Later calls throw. */
  dispose() {
    if (this.#disposed) return;
    this.#run?.stop(disposedError());
    this.#run = null;
    this.#disposed = true;
    this.#engine.free();
    this.#engine = null;
  }

  get disposed() {
    return this.#disposed;
  }
}

// `using model = await loadModel(…)` disposes of the model at the end of the block, where the
// runtime has explicit resource management (`await using` falls back to this one too).
if (typeof Symbol.dispose == 'symbol')
  Object.defineProperty(Model.prototype, Symbol.dispose, {
    value: function dispose() {
      this.dispose();
    },
    writable: true,
    configurable: true,
  });
