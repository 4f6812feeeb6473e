// Type declarations for saccade's JavaScript API (src/js/index.mjs).
//
// Every call checks its options before anything reaches C: a value of the wrong type or out of
// range (integers beyond int32 included) throws a SaccadeError, and so does an option name the
// call does not know (the message lists the ones it does).

// Symbol.dispose for projects whose `lib` predates explicit resource management (the same
// declaration as TypeScript's esnext.disposable, so the two merge).
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/** An error from the engine or from argument checks. `code` is the C status name. */
export class SaccadeError extends Error {
  name: 'SaccadeError';
  code:
    | 'SAC_ERR_ARG'
    | 'SAC_ERR_NOMEM'
    | 'SAC_ERR_FORMAT'
    | 'SAC_ERR_UNSUPPORTED'
    | 'SAC_ERR_MODEL'
    | 'SAC_ERR_CONTEXT'
    | 'SAC_ERR_STATE'
    | (string & {});
  constructor(message: string, code?: string);
}

/** Which WebAssembly build runs a model, and why. */
export interface Runtime {
  /** 'mt': SIMD128 + threads on SharedArrayBuffer; 'st': SIMD128, single-threaded. */
  variant: 'mt' | 'st';
  /**
   * Threads that really run (including the calling thread). A model loaded with waitForThreads:
   * false runs on one until model.threadsReady resolves; this is then the threads it is starting.
   */
  threads: number;
  /** Both builds use WebAssembly SIMD128. */
  simd: true;
  /** SharedArrayBuffer is usable: always in Node, in browsers when cross-origin isolated. */
  isolated: boolean;
  /** A sentence saying why this variant and thread count were chosen. */
  reason: string;
  /**
   * The relaxed-SIMD build runs (dist/saccade-relaxed-*): its K-quant kernels use
   * i32x4.relaxed_dot_i8x16_i7x16_add_s, with results bitwise those of the SIMD128 build. Chosen
   * where the engine runs that instruction right (checked on a test vector, not just validated);
   * training always runs the SIMD128 trainer.
   */
  relaxed: boolean;
  /** A sentence saying why the relaxed-SIMD build runs or not. */
  relaxedReason: string;
}

/** A loaded model's runtime: the build, and the context it runs with. */
export interface ModelRuntime extends Runtime {
  /** Tokens the context holds (0 for a vocabOnly model). */
  contextLength: number;
  /**
   * Why: requested, or the default — the model's training length, at most 4096 tokens so that the
   * KV cache fits the device (the message then says how to ask for the full length).
   */
  contextReason: string;
  /** What the KV cache holds (loadModel's kvType; null for a vocabOnly model). */
  kvType: KvType | null;
}

/**
 * A KV cache type. 'f32' (the default) is exact. 'bf16' rounds every key and value to bfloat16
 * (round to nearest even) as it is cached: half the cache's memory and half of what attention
 * reads per token, which speeds up decoding at long contexts; logits move by about bf16's
 * precision (a few parts in a thousand). 'q8' keeps each head's keys and values as 8-bit
 * integers with one scale per 32 values (72 bytes for 64 values, bf16's 128) and scores keys
 * with integer dot products against the query rounded the same way: the fastest at long
 * contexts and the smallest, with logits moving up to about 1% of their scale. Results stay
 * identical across thread counts and between Node, browsers and the native build.
 * Encoder–decoder cross-attention keeps f32; 'q8' needs a head size of at most 256.
 */
export type KvType = 'f32' | 'bf16' | 'q8';

export interface RuntimeOptions {
  /** Threads including the caller. Default: one per core, at most 8 (1 → the 'st' build). */
  threads?: number;
  /** Force a build; 'mt' throws where SharedArrayBuffer is unavailable. */
  variant?: 'mt' | 'st';
  /**
   * 'relaxed': the relaxed-SIMD build, which throws where the engine lacks relaxed SIMD or gets
   * its int8 dot product wrong; 'simd128': never the relaxed build. Default: relaxed where it
   * runs right.
   */
  simd?: 'relaxed' | 'simd128';
}

/** Where a model's bytes come from. */
export type SourceKind =
  /** The browser's download cache (see LoadOptions.cache). */
  | 'cache'
  /** A URL downloaded (fetch). */
  | 'network'
  /** A file path or file: URL (Node). */
  | 'file'
  /** Bytes, a Blob, a Response or a stream the caller gave. */
  | 'memory';

export interface Progress {
  /** Bytes copied into the wasm heap so far (over every shard of a split model). */
  loaded: number;
  /**
   * The size of the model, or null while a source does not say (no Content-Length). A split
   * model's first five shards are requested together (the next as each is read), so the total of
   * a model of up to five shards is known once their headers arrive; of more, once the last opens.
   */
  total: number | null;
  /** Split models: the shard being read (0-based) and how many there are. */
  shard?: number;
  shards?: number;
  /** Where the bytes being read come from. */
  from: SourceKind;
}

/** What became of the download cache copy of a model's URL(s). */
export interface CacheReport {
  /**
   * 'hit': read from the cache; 'stored': downloaded and saved; 'failed': downloaded, not saved
   * (message says why: no Content-Length, quota…); 'off': cache: false, or not a URL;
   * 'unavailable': no Cache API here (Node, an insecure origin, storage disabled);
   * 'pending': the download's copy is still being written (model.sourceInfo.cache as loadModel
   * resolves, until model.cached settles; never a final report).
   */
  status: 'hit' | 'stored' | 'failed' | 'off' | 'unavailable' | 'pending';
  /** A sentence for people, e.g. 'saved in the browser cache'. */
  message: string;
}

/** Where a loaded model came from. */
export interface SourceInfo {
  /** 'network' when any shard was downloaded; else where the (first) shard came from. */
  from: SourceKind;
  /** Bytes of every shard read together. */
  bytes: number;
  /** The files read: 1, or the number of files of a split model (1 when a shard's name is loaded vocabOnly). */
  shards: number;
  /** The URLs (resolved) or file paths loaded, shard by shard; [] for in-memory sources. */
  urls: readonly string[];
  cache: Readonly<CacheReport>;
}

/** One cached file (each shard of a split model is one). */
export interface CachedModel {
  url: string;
  bytes: number;
  /** When it was stored (null for an entry without that record). */
  stored: Date | null;
}

export interface CacheOptions {
  /** The cache: a name, or true for the default (DEFAULT_CACHE). */
  cache?: true | string;
}

export interface LoadOptions extends RuntimeOptions {
  /** Called after every chunk copied into the wasm heap. */
  onProgress?: (progress: Progress) => void;
  /** Aborts the download or copy; loadModel then rejects with signal.reason. */
  signal?: AbortSignal;
  /**
   * Tokens the KV cache holds, up to 2^31 - 1. Default (0): the model's training context length, at
   * most 4096 (runtime.contextLength says what is in use); pass the training length for all of it.
   */
  contextLength?: number;
  /** Most tokens evaluated in one pass; longer inputs are split. Default (0): 64. */
  batchSize?: number;
  /** What the KV cache holds: 'f32' (default, exact), 'bf16' (half the memory) or 'q8' (a bit over a quarter); see KvType. */
  kvType?: KvType;
  /**
   * Capture attention on every forward/generate (memory: 4 × layers × heads × n²/2 bytes for an
   * n-token context, checked against the wasm32 limits at load).
   */
  attention?: boolean;
  /**
   * Read only the tokenizer: the model can tokenize and detokenize, nothing else. A shard's name
   * then reads only its model's first shard (it holds the tokenizer); an array is read whole.
   */
  vocabOnly?: boolean;
  /**
   * Run the model without its position information (C's sac_context_params.no_positions): gpt2's
   * learned position embeddings and encdec's sinusoids are not added, llama-like models skip
   * RoPE. Attention is then permutation-equivariant: permuting the prompt permutes every
   * layer's outputs (the causal mask aside). Default false.
   */
  noPositions?: boolean;
  /**
   * Download caching of http(s) URLs in browsers (the Cache API): true (the default) uses
   * DEFAULT_CACHE, a string names another cache, false turns it off. A download is stored only
   * once all of it arrived and the engine parsed it (never a partial, aborted or refused one);
   * a cached copy is used when its length is the one recorded and the server (asked with HEAD:
   * ETag, Last-Modified, length) has not changed it, or cannot be asked. On by default because
   * a model is the bulk of what a page downloads and the Cache API is the browser's evictable,
   * per-origin storage (as transformers.js and wllama do); where there is no Cache API (Node) it
   * does nothing. model.sourceInfo.cache says what happened (model.cached: the final report, once
   * the copy is written — loadModel does not wait for it).
   */
  cache?: boolean | string;
  /** Keep the pre-softmax scores q·k/√d beside captured probabilities (model.attentionScores); doubles capture memory. */
  scores?: boolean;
  /** Keep every layer's query and key vectors (model.queryKeys). */
  qk?: boolean;
  /** Decoder self-attention heads to ablate: [layer, head] pairs, or text "L:H,L:H" as the CLIs' --ablate (see model.setAblation). */
  ablate?: Array<[number, number]> | string;
  /**
   * true (default): resolve once the threaded build's workers have started, and reject when one
   * cannot (its script missing or blocked). false: resolve as soon as the model is parsed; it runs
   * on one thread until the workers have started, and they join between calls, with the same
   * results (see Model.threadsReady).
   */
  waitForThreads?: boolean;
}

export interface QueryKeys {
  kind: AttentionKind;
  layer: number;
  head: number;
  queries: number;
  keys: number;
  headDim: number;
  /** 1/√headDim: score = Σ q·k · scale (with kvType 'q8', to about q8's rounding: the scores use the query rounded as the keys are). */
  scale: number;
  /** queries × headDim, row-major. */
  q: Float32Array;
  /** keys × headDim, row-major. */
  k: Float32Array;
}

/** One file. */
export type ModelFile = Uint8Array | ArrayBuffer | ArrayBufferView | Blob | Response | ReadableStream<Uint8Array> | URL | string;

/**
 * A model: one file, or the shards of a split model in order (llama.cpp's gguf-split). A URL or
 * path named like a shard (…-00001-of-00003.gguf) stands for every shard of its model (with
 * vocabOnly: its first).
 */
export type ModelSource = ModelFile | readonly ModelFile[];

export interface TensorInfo {
  name: string;
  /** ggml's type name: 'F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q2_K' … 'Q6_K' */
  type: string;
  /** Innermost first, as GGUF stores them. */
  dims: number[];
}

export interface ModelInfo {
  /** 'gpt2', 'llama', 'qwen2', 'gemma', 'phi3' or 'encdec' ('' for a vocabOnly model). */
  architecture: string;
  /** general.name, or ''. */
  name: string;
  ggufVersion: number;
  vocabSize: number;
  /** The context length the model was trained for. */
  contextLength: number;
  embeddingSize: number;
  feedForwardSize: number;
  /** Transformer blocks (decoder blocks for 'encdec'). */
  layers: number;
  /** Encoder blocks of an 'encdec' model, else 0. */
  encoderLayers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  /** llama: rotary dimensions; gpt2: 0. */
  ropeDim: number;
  ropeFreqBase: number;
  normEps: number;
  tiedOutput: boolean;
  hasTokenizer: boolean;
  /** Values in all tensors. */
  parameters: number;
  /** Bytes of tensor data. */
  tensorBytes: number;
  /** Tensor type name → number of tensors. */
  tensorTypes: Record<string, number>;
  tensors: TensorInfo[];
  /** GGUF metadata rendered as text (arrays as "[type; count]"). */
  metadata: Record<string, string>;
  /** Special token ids, -1 when the vocabulary has none. */
  bosId: number;
  eosId: number;
  /** The tokenizer asks for BOS before a prompt (generate adds it to text prompts). */
  addBos: boolean;
}

export interface TokenizeOptions {
  /** Prepend BOS. Default false. */
  bos?: boolean;
  /** Append EOS. Default false. */
  eos?: boolean;
  /** Recognise control tokens written in the text ("<s>"). Default false. */
  special?: boolean;
}

export interface ForwardOptions {
  /** Logits of every position (row-major, ids.length × vocabSize) instead of the last. */
  allLogits?: boolean;
  /** Capture attention for model.attention(). */
  attention?: boolean;
  /** Encoder–decoder models: the source ids to encode first (default: the last source). */
  source?: ArrayLike<number>;
}

export interface GenerateOptions {
  /** Default 64; 0 evaluates the prompt and yields no step (chat refuses 0). Generation also ends at EOS
   * (unless ignoreEos), a stop, or a full context. */
  maxTokens?: number;
  /** 0 → greedy. Default 0.8. */
  temperature?: number;
  /** 0 → off. Default 40. */
  topK?: number;
  /** In (0, 1]; 1 → off. Default 0.95. */
  topP?: number;
  /** > 0; 1 → off. Default 1. */
  repeatPenalty?: number;
  /** Recent ids the penalty looks at; 0 → off, -1 → the whole context. Default 64. */
  repeatLastN?: number;
  /** PRNG seed, an integer in [0, 2^64). Default: random. */
  seed?: number | bigint;
  /**
   * Stop strings and/or token ids. The step whose text completes a stop string (or whose id is
   * a stop id) is yielded, then the generation ends. Neither the stop string (nor what follows
   * it in that token) nor a stop id's own text is part of the text. A stop string may span
   * several tokens: text that could be its beginning is held back (its steps carry less text,
   * or '') until a later token completes it (dropped) or rules it out (released).
   */
  stop?: string | number | Array<string | number>;
  /** Checked between steps: once aborted, the next step is the last, with finishReason 'aborted'. */
  signal?: AbortSignal;
  /** Yield each step's attention row (and, for encoder–decoder models, its cross row). */
  attention?: boolean;
  /** Do not stop at the model's EOS. */
  ignoreEos?: boolean;
  /** Encoder–decoder models: the ids the decoder starts from. Default: [BOS]. */
  decoderStart?: ArrayLike<number>;
  /**
   * Keep the tokens the previous generation left in the context that this prompt starts with
   * (a chat's earlier turns), evaluating only the rest: the same results, sooner. Default true;
   * decoder-only models. Any other use of the context (forward, bench, setAblation,
   * captureScores, captureQueryKeys, also during a generation) forgets them; a generation that
   * captures attention keeps only tokens whose attention was captured.
   */
  reuse?: boolean;
}

/** The attention of the query that produced a token, over every layer and head. */
export interface AttentionRow {
  /** The query position (the last evaluated token). */
  query: number;
  /** query + 1 (self-attention), or the source length (cross-attention). */
  keys: number;
  /** layers × heads × keys probabilities, layer-major then head. A copy, yours to keep. */
  data: Float32Array;
}

/** Why a generation ended, on its last step. */
export type FinishReason =
  /** The model's EOS token (yielded; not with ignoreEos). */
  | 'eos'
  /** A stop id or stop string (the step that completes it is yielded). */
  | 'stop'
  /** The context is full: the step's token could not be evaluated. */
  | 'contextFull'
  /** maxTokens steps. */
  | 'maxTokens'
  /** The signal aborted, or model.stop() was called: that last step carries no token. */
  | 'aborted';

/** One token of a generation, or (finishReason 'aborted') the step that ends it without one. */
export type GenerateStep = TokenStep | AbortedStep;

export interface TokenStep {
  id: number;
  /**
   * The text this step releases: the text of its token ('' without a tokenizer; multi-byte
   * characters split across tokens arrive whole with the token that completes them), less a
   * stop string, plus text held back from earlier steps (see GenerateOptions.stop).
   */
  text: string;
  /** With { attention: true }; otherwise undefined. */
  attention?: AttentionRow;
  /** Encoder–decoder models with { attention: true }: the decoder → source row. */
  cross?: AttentionRow;
  /** On the last step, why the generation ended; null on the others. */
  finishReason: Exclude<FinishReason, 'aborted'> | null;
}

/** The last step of an aborted generation: no token, only text held back for a stop string. */
export interface AbortedStep {
  id: null;
  text: string;
  attention: undefined;
  cross: undefined;
  finishReason: 'aborted';
}

/** How long a complete() took, in milliseconds, and how many tokens. */
export interface Timings {
  /** Tokens the prompt evaluated (for an encoder–decoder model, the decoder start). */
  promptTokens: number;
  /** Tokens of the prompt kept from the previous generation, not evaluated again (GenerateOptions.reuse). */
  reusedTokens: number;
  /** Evaluating the prompt (and encoding the source). */
  promptMs: number;
  /** Tokens generated (TokenSteps). */
  generatedTokens: number;
  /** From the end of the prompt to the last step. */
  generateMs: number;
  /** The whole call, option checks and tokenizing included. */
  totalMs: number;
}

export interface Completion {
  /** Every step's text: the generated text without stop strings. */
  text: string;
  /** The ids generated (an EOS or stop id included). */
  tokens: number[];
  /** Why it ended ('maxTokens' also for maxTokens: 0). */
  finishReason: FinishReason;
  timings: Timings;
}

/** One turn of a conversation. Templates may read other fields (e.g. tool calls): they are passed on. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | (string & {});
  content: string;
  [field: string]: unknown;
}

export interface ChatOptions extends Omit<GenerateOptions, 'decoderStart'> {
  /** End the prompt with the assistant's turn opened (the template's add_generation_prompt). Default true. */
  addGenerationPrompt?: boolean;
  /**
   * When the prompt would leave the reply less than min(maxTokens, half the context), leave out
   * the oldest exchanges after the leading system messages (a user message and what follows it),
   * as few as bring the prompt down to half the context; the first step's prompt says which
   * (`messages`, `dropped`). Default true; false refuses such a conversation (SAC_ERR_ARG).
   */
  dropOldest?: boolean;
  /** A Jinja chat template to use instead of the file's tokenizer.chat_template. */
  template?: string;
  /** Extra template variables (tools, documents, date_string, ...). */
  templateArgs?: Record<string, unknown>;
  /**
   * The @huggingface/jinja module. By default it is imported (`import('@huggingface/jinja')`)
   * when a template is first rendered; pass it where that bare import cannot resolve: a
   * browser page without a bundler or import map, or a Web Worker (import maps do not reach
   * workers), e.g. `{ jinja: await import('/node_modules/@huggingface/jinja/dist/index.js') }`.
   */
  jinja?: { Template: new (template: string) => { render(vars: Record<string, unknown>): string } };
}

/** A step of chat(): generate's, and on the first one the prompt. */
export type ChatStep = GenerateStep & {
  /**
   * On the first step: the prompt the conversation became. `template` is false when the file
   * has no chat template and the turns were joined as plain text, one per line.
   */
  prompt?: {
    text: string;
    ids: number[];
    template: boolean;
    /** The messages the model read: all, or without the `dropped` oldest after the system ones (dropOldest). */
    messages: ChatMessage[];
    dropped: number;
  };
};

export type AttentionKind = 'self' | 'cross' | 'encoder';

/**
 * Captured query rows [from, to) of one kind in one block. Row q (from ≤ q < to) holds
 * layers × heads × keys[q - from] floats starting at data[offsets[q - from]], layer-major, then
 * head, then key: the probability that query q of layer l, head h gives key k is
 * data[offsets[q - from] + (l * heads + h) * keys[q - from] + k].
 * Self rows have q + 1 keys; cross and encoder rows one per source token.
 */
export interface AttentionRows {
  kind: AttentionKind;
  /** Decoder layers (self, cross) or encoder layers (encoder). */
  layers: number;
  heads: number;
  from: number;
  to: number;
  /** Keys of each row. */
  keys: Int32Array;
  /** Where each row starts in data; offsets[to - from] === data.length. */
  offsets: Uint32Array;
  /** A copy, or with { view: true } a view of the wasm memory (see AttentionRowsOptions.view). */
  data: Float32Array;
}

export interface AttentionRowsOptions {
  /**
   * Return a view of the wasm memory instead of a copy (no copy for large maps). It is valid only
   * until the next call on the model: the next eval overwrites it, and when the wasm memory grows
   * the single-threaded build's view is detached (length 0). Copy what you keep.
   */
  view?: boolean;
}

export interface AttentionMatrix {
  queries: number;
  keys: number;
  /** queries × keys probabilities, row-major by query (0 above the diagonal). A copy. */
  data: Float32Array;
}

export interface BenchOptions {
  /** Default 128, or what a shorter context leaves after decodeTokens (all of it with decodeDepth). */
  promptTokens?: number;
  /** Default 32, or a quarter of a shorter context. */
  decodeTokens?: number;
  /**
   * Tokens in the context when decode starts. Default: promptTokens (decode follows the prefill);
   * otherwise the context is reset and given that many ids, untimed. 0 decodes from an empty
   * context, as llama-bench's tg test does. Decoder-only models.
   */
  decodeDepth?: number;
  /** Best of this many runs. Default 3. */
  repeat?: number;
  /**
   * Decode with attention capture on and off by turns, token by token (the prefill captures),
   * and report both speeds: decodeTokensPerSecond without, decodeCaptureTokensPerSecond with,
   * from the sums of every run but the first (which pays the page faults of fresh capture rows).
   * Needs decodeTokens >= 2. Default false.
   */
  attentionCost?: boolean;
}

export interface BenchResult {
  engine: 'saccade-wasm-mt' | 'saccade-wasm-st';
  /** The type of the feed-forward weights. */
  type: string;
  threads: number;
  promptTokens: number;
  decodeTokens: number;
  /** Tokens in the context when decode started (an encoder–decoder model's decoder: 0). */
  decodeDepth: number;
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
  /** With attentionCost: the speed of the tokens decoded with capture on. */
  decodeCaptureTokensPerSecond?: number;
}

export interface SamplingDefaults {
  maxTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  repeatPenalty: number;
  repeatLastN: number;
}

export class Model {
  private constructor();
  readonly info: Readonly<ModelInfo>;
  readonly runtime: Readonly<ModelRuntime>;
  /**
   * Where the bytes came from (network, cache, file, memory), their size, and the cache report.
   * A downloaded model's cache copy is written after loadModel resolves: cache is then
   * { status: 'pending' } until the write ends, when sourceInfo is replaced by a new frozen
   * object with the final report (see cached).
   */
  readonly sourceInfo: Readonly<SourceInfo>;
  /**
   * The final cache report: resolves once the download's cache copy is written ('stored', or
   * 'failed' with the reason, e.g. a full quota) and model.sourceInfo has it; at once when nothing
   * is written ('hit', 'off', 'unavailable'). Never rejects; dispose() does not stop the write.
   */
  readonly cached: Promise<Readonly<CacheReport>>;
  /**
   * The threads the model runs on once its thread pool has started: at once unless it was loaded
   * with waitForThreads: false. A pool that failed to start resolves it to 1, with the reason in
   * runtime.reason (runtime is then replaced by a new frozen object). Never rejects.
   */
  readonly threadsReady: Promise<number>;
  /** What generate uses for each option left out (C's sac_sampling_default_params, and maxTokens). */
  readonly samplingDefaults: Readonly<SamplingDefaults>;
  readonly disposed: boolean;
  /** Encoder–decoder models: the source ids of the last generate/forward; otherwise null. */
  readonly sourceIds: number[] | null;

  tokenize(text: string, options?: TokenizeOptions): number[];
  detokenize(ids: ArrayLike<number>): string;
  /**
   * The text each id adds, in one pass (pieces(ids).join('') === detokenize(ids)): a character
   * split across ids comes whole with the id that completes it, the others get ''.
   */
  pieces(ids: ArrayLike<number>): string[];
  /** Each id as the vocabulary spells it, control tokens included ('<|im_start|>', '<0xE2>', 'Ġthe'). */
  spellings(ids: ArrayLike<number>): string[];
  /** Evaluates ids from a fresh context; a copy of the logits. */
  forward(ids: ArrayLike<number>, options?: ForwardOptions): Float32Array;
  /**
   * An async iterator of steps. Options are checked at the call (throws); the prompt is
   * evaluated at the first step. For an encoder–decoder model the prompt is the source, and the
   * decoder starts from options.decoderStart.
   * One generation at a time per model: a later generate, complete, chat, forward, bench or
   * setAblation takes the context over at the call (also from a chat not yet begun),
   * and the generation it interrupts throws a SaccadeError (SAC_ERR_STATE) at its next step — so
   * an iterator that is simply dropped never locks the model.
   */
  generate(prompt: string | ArrayLike<number>, options?: GenerateOptions): AsyncGenerator<GenerateStep, void, undefined>;
  /**
   * The reply to a conversation: the messages rendered with the file's chat template
   * (@huggingface/jinja, as transformers.js renders it: messages, add_generation_prompt,
   * bos_token, eos_token), tokenized with special tokens parsed and one BOS at most, then
   * generated as generate() does — the same steps, options and finishReason. The reply ends at
   * an end-of-turn token (EOS, <|im_end|>, <|eot_id|>, <end_of_turn>, ...: 'eos'). Bad messages or
   * options throw at the call; a template that refuses the conversation (raise_exception),
   * does not parse or does not render rejects the first step with a SaccadeError. A file
   * without a template gets the turns as plain text (first step: prompt.template false).
   */
  chat(messages: ChatMessage[], options?: ChatOptions): AsyncGenerator<ChatStep, void, undefined>;
  /**
   * Generates to the end and returns the whole text (without stop strings), the ids, why it
   * ended and how long it took. Takes generate's options; bad ones reject.
   */
  complete(prompt: string | ArrayLike<number>, options?: GenerateOptions): Promise<Completion>;
  /**
   * Ends the running generation: its next step is its last, with no token and finishReason
   * 'aborted'. Returns false when none was running.
   */
  stop(): boolean;
  /** The captured attention of one layer and head over the current context. */
  attention(layer: number, head: number, options?: { kind?: AttentionKind }): AttentionMatrix;
  /**
   * Captured query rows [from, to) of `kind` in one block (default: 'self', every row captured),
   * in the layout captured: the same rows that generate steps carry, without per-head copies.
   */
  attentionRows(kind?: AttentionKind, from?: number, to?: number, options?: AttentionRowsOptions): AttentionRows;
  /** Query rows captured so far for `kind` (0 when capture was off). */
  capturedRows(kind?: AttentionKind): number;
  /** Captured pre-softmax scores (load with { scores: true }), as attentionRows plus the scale 1/√d. */
  attentionScores(kind?: AttentionKind, from?: number, to?: number, options?: AttentionRowsOptions): AttentionRows & { scale: number };
  /** 1/√headDim. */
  readonly attentionScale: number;
  /** softmax(scores / temperature), computed as the C core computes attention. */
  softmaxRow(scores: ArrayLike<number>, temperature?: number): Float32Array;
  /** Query and key vectors of one layer and head (load with { qk: true }). */
  queryKeys(layer: number, head: number, options?: { kind?: AttentionKind }): QueryKeys;
  /** Turns score capture on or off (attentionScores then needs the rows captured again). */
  captureScores(on: boolean): void;
  /** Turns q/k capture on or off (queryKeys then needs the tokens evaluated again). */
  captureQueryKeys(on: boolean): void;
  /** Zeroes these heads' outputs from the next evaluation on; [] restores them. */
  setAblation(heads: Array<[number, number]> | null, options?: { kind?: AttentionKind }): void;
  /** The ablated heads of a kind. */
  ablation(kind?: AttentionKind): Array<[number, number]>;
  /**
   * Rows of a tensor (by name, e.g. 'position_embd.weight', or by index in info.tensors) as
   * float32, dequantized as the engine computes with them: rows × cols values, row-major, where
   * cols = dims[0] and the tensor has dims[1]·dims[2]·dims[3] rows. Default: every row. A copy.
   */
  readTensor(tensor: string | number, options?: { from?: number; rows?: number }): TensorRows;
  /** Prefill and decode speed on synthetic ids, as `saccade bench` measures it. */
  bench(options?: BenchOptions): BenchResult;
  /**
   * Frees the model; later calls throw. Its wasm instance is kept 5 s for the next loadModel of
   * the same variant and thread count, then terminated with its threads.
   */
  dispose(): void;
  /** dispose(), for `using model = await loadModel(…)` where the runtime has it. */
  [Symbol.dispose](): void;
}

export function loadModel(source: ModelSource, options?: LoadOptions): Promise<Model>;

/** The cache loadModel uses by default: 'saccade-models-v1'. */
export const DEFAULT_CACHE: string;

/** The files in the download cache ([] where there is no Cache API). */
export function listCachedModels(options?: CacheOptions): Promise<CachedModel[]>;

/**
 * Deletes cached files: those of `urls` (one shard of a split model stands for all of its
 * shards), or with no urls the whole cache. Resolves to how many files were deleted.
 */
export function clearCachedModels(urls?: string | URL | ReadonlyArray<string | URL>, options?: CacheOptions): Promise<number>;

/** The runtime loadModel would pick for these options (throws on invalid ones). */
export function chooseRuntime(options?: RuntimeOptions): Runtime;

/** Rows of a model tensor as float32 (Model.readTensor). */
export interface TensorRows {
  name: string;
  /** The first row read. */
  from: number;
  rows: number;
  /** Values per row (dims[0]). */
  cols: number;
  /** rows × cols, row-major. */
  data: Float32Array;
}

// ---------------------------------------------------------------------------------------------
// The attention primitive (C's sac_attend and friends), on arrays, without a model.
// ---------------------------------------------------------------------------------------------

/**
 * How a query q is compared with a key k (d = the head's size):
 * 'dot' qᵀk; 'scaledDot' qᵀk/√d; 'general' qᵀWk; 'additive' vᵀtanh(W_q q + W_k k);
 * 'cosine' qᵀk/(‖q‖‖k‖); kernels of u = ‖q − k‖·width, scored log K(u) so that the weights are
 * K/ΣK: 'gaussian' K = exp(−u²/2), 'boxcar' K = [u ≤ 1], 'epanechnikov' K = max(0, 1 − u²).
 */
export type AttendScore =
  | 'dot' | 'scaledDot' | 'general' | 'additive' | 'cosine' | 'gaussian' | 'boxcar' | 'epanechnikov';

/**
 * A flat array (row-major) or nested arrays. Nested arrays give their own shape; a flat array
 * takes it from `batch` and `dk` (see AttendOptions).
 */
export type Floats = ArrayLike<number> | ArrayLike<ArrayLike<number>> | ArrayLike<ArrayLike<ArrayLike<number>>>;

export interface AttendOptions {
  /** [batch][nq][dk] (or [nq][dk] when batch is 1, or flat). Finite numbers. */
  queries: Floats;
  /** [batch][nk][dk]. */
  keys: Floats;
  /** [batch][nk][dv]. */
  values: Floats;
  /** Batch elements. Default: the first dimension of 3-level nested queries, else 1. */
  batch?: number;
  /** Query/key size, needed only when queries and keys are flat arrays. */
  dk?: number;
  /** Heads, dividing dk and dv: head h uses features [h·dk/heads, (h+1)·dk/heads). Default 1. */
  heads?: number;
  /** Default 'scaledDot'. */
  score?: AttendScore;
  /** Kernels: w > 0; a larger w is a narrower kernel. Default 1. */
  width?: number;
  /** 'general': [heads][d][d] (or [d][d] for one head, or flat); W[h][a][c] pairs q_a with k_c. */
  W?: Floats;
  /** 'additive': [heads][hidden][d]. */
  Wq?: Floats;
  /** 'additive': [heads][hidden][d]. */
  Wk?: Floats;
  /** 'additive': [heads][hidden] (hidden = v.length / heads). */
  v?: Floats;
  /**
   * 'none' (default); 'causal': query i sees keys j ≤ i + (nk − nq); 'padding': keys at or past
   * keyLengths[b] are hidden; 'causal+padding'; or an explicit mask (nonzero/true = admitted),
   * [nq][nk] shared by the batch or [batch][nq][nk].
   */
  mask?: 'none' | 'causal' | 'padding' | 'causal+padding' | ArrayLike<number | boolean> | ArrayLike<ArrayLike<number | boolean>> | ArrayLike<ArrayLike<ArrayLike<number | boolean>>>;
  /** With a padding mask: each batch element's true length, 0..nk. */
  keyLengths?: ArrayLike<number>;
  /** τ ≥ 0: softmax(s/τ). 0 is the argmax limit (ties share the weight equally). Default 1. */
  temperature?: number;
  /** Also return the scores before temperature and softmax (−Infinity where masked). */
  returnScores?: boolean;
}

export interface AttendResult {
  /** [batch][nq][dv]: the heads' outputs concatenated. Rows with no admissible key are 0. */
  output: Float32Array;
  /** [batch][heads][nq][nk]: every row sums to 1, or is all 0 when no key is admissible. */
  weights: Float32Array;
  /** [batch][heads][nq][nk], with returnScores. */
  scores?: Float32Array;
  batch: number;
  heads: number;
  /** nq */
  queries: number;
  /** nk */
  keys: number;
  dk: number;
  dv: number;
  /** weights[b][h][q] as a view (nk floats). */
  row(b: number, h: number, q: number): Float32Array;
}

export type KernelName = 'gaussian' | 'epanechnikov';

export interface KernelDataOptions {
  /** Default 'gaussian'. */
  kernel?: KernelName;
  /** Training inputs: numbers (1-D) or [n][dx]. */
  xTrain: Floats;
  /** Training targets: numbers or [n][dy]. */
  yTrain: Floats;
  /** Held-out inputs and targets (not with leaveOneOut). */
  xHeldout?: Floats;
  yHeldout?: Floats;
  /** Predict each training point from the others instead of held-out points. Default: true when no held-out points are given. */
  leaveOneOut?: boolean;
}

export interface FitKernelWidthOptions extends KernelDataOptions {
  /** w₀ > 0. Default 1. */
  width?: number;
  /** η > 0. Default 1. */
  learningRate?: number;
  /** Default 50. */
  steps?: number;
}

export interface KernelFit {
  /** widths[s]: w after s steps, s = 0..steps. */
  widths: Float32Array;
  /** losses[s]: the mean squared error at widths[s]. */
  losses: Float32Array;
  /** The fitted w (widths[steps]). */
  width: number;
}

export interface SinusoidOptions {
  /** Rows (positions 0..positions-1). */
  positions: number;
  /** Columns d. */
  dims: number;
}

/** A wasm instance for the attention primitive (no model). Every call is synchronous. */
export class Attention {
  private constructor();
  readonly runtime: Readonly<Runtime>;
  attend(options: AttendOptions): AttendResult;
  /** Gradient descent on a kernel's width w (C: sac_kernel_fit_width). */
  fitKernelWidth(options: FitKernelWidthOptions): KernelFit;
  /** The held-out mean squared error at a width and its analytic derivative dL/dw. */
  kernelLoss(options: KernelDataOptions & { width: number }): { loss: number; gradient: number };
  /** PE[p][2i] = sin(p/10000^(2i/d)), PE[p][2i+1] = cos(p/10000^(2i/d)): positions × dims. */
  sinusoidPositions(options: SinusoidOptions): { positions: number; dims: number; data: Float32Array };
  /** Frees the instance; later calls throw. */
  dispose(): void;
}

/** A single-threaded wasm instance for the attention calls (no model needed). */
export function createAttention(): Promise<Attention>;
/** attend() on a shared instance made on first use. */
export function attend(options: AttendOptions): Promise<AttendResult>;
export function fitKernelWidth(options: FitKernelWidthOptions): Promise<KernelFit>;
export function sinusoidPositions(options: SinusoidOptions): Promise<{ positions: number; dims: number; data: Float32Array }>;

/** Library-wide settings for configure(). */
export interface Configuration {
  /**
   * The URL of a folder holding the package's dist/ files (saccade-mt.mjs, saccade-mt.wasm,
   * saccade-mt.worker.mjs, saccade-st.mjs, saccade-st.wasm; train()'s saccade-train-mt.* and
   * saccade-train-st.* likewise), for bundlers that do not copy the
   * files `new URL(…, import.meta.url)` names (esbuild), or a CDN; relative to the page. null:
   * the files beside the library (the default).
   */
  assetBase?: string | URL | null;
}

/** Sets library-wide settings; returns those in force. */
export function configure(options: Configuration): { assetBase: string | null };

// ---------------------------------------------------------------------------------------------
// Training (src/js/train.mjs): a small transformer trained in the trainer's own wasm module,
// loaded only when train() is called.
// ---------------------------------------------------------------------------------------------

export type TrainingTask = 'reverse' | 'copy' | 'dates' | 'text';

export interface TrainOptions {
  /** 'reverse' | 'copy' | 'dates' (encoder–decoder) or 'text' (decoder-only, needs `text`). Default 'reverse'. */
  task?: TrainingTask;
  /** A preset of the task (see trainingPresets): its fields are the defaults of the rest. */
  preset?: string;
  /** The text task's text: the first 90% trains, the rest is held out. */
  text?: string;
  model?: { layers?: number; encLayers?: number; decLayers?: number; embd?: number; heads?: number; ff?: number; ctx?: number };
  optimizer?: { batch?: number; lr?: number; minLr?: number; warmup?: number; weightDecay?: number; beta1?: number; beta2?: number; clip?: number };
  /** minLen/maxLen: reverse and copy string lengths; valN: held-out pairs (windows for text); evalSeed. */
  data?: { minLen?: number; maxLen?: number; valN?: number; evalSeed?: number };
  /** Steps of the run (and of the learning-rate schedule). */
  steps?: number;
  seed?: number;
  threads?: number;
  variant?: 'mt' | 'st';
  /** Steps between held-out evaluations (0: only at the end). Default 50. */
  evalEvery?: number;
  signal?: AbortSignal;
  onStep?: (record: TrainStep, run: TrainingRun) => void;
  /** Start paused (resume() starts). */
  paused?: boolean;
}

export interface TrainStep {
  step: number;
  /** Training loss of the step's batch (mean cross entropy, nats per target token). */
  loss: number;
  lr: number;
  gradNorm: number;
  /** Tokens trained so far (source + target tokens for encoder–decoder tasks). */
  tokens: number;
  tokensPerSecond: number;
  /** On evaluation steps: the held-out loss. */
  valLoss?: number;
  /** On evaluation steps of encoder–decoder tasks: the held-out exact match in [0, 1]. */
  exact?: number;
}

export interface TrainingProbe {
  kind: 'cross' | 'self';
  input: string;
  /** Greedy decoding of the input (text task: the most likely next character). */
  output: string;
  layers: number;
  heads: number;
  /** Labels of the rows (cross: output characters then <eos>) and of the columns (the input's characters). */
  queries: string[];
  keys: string[];
  /** [layers][heads][queries][keys] probabilities. */
  maps: Float32Array;
  attention(layer: number, head: number): AttentionMatrix;
}

export class TrainingRun {
  readonly task: TrainingTask;
  readonly runtime: Runtime;
  readonly steps: number;
  /** Steps done. */
  readonly step: number;
  readonly history: TrainStep[];
  readonly state: 'training' | 'paused' | 'stopped' | 'done' | 'failed' | 'disposed';
  readonly paused: boolean;
  /** The options in use, defaults filled in, and params (the parameter count). */
  readonly config: Record<string, number>;
  /** The task's probe input cut to what the model reads. */
  readonly defaultProbe: string;
  /** Resolves when the run ends (all steps, or stop()); rejects on abort, failure or dispose. */
  readonly done: Promise<{ steps: number; history: TrainStep[] }>;
  pause(): void;
  resume(): void;
  /** Ends training after the current step; the weights stay for probe() and exportGGUF(). */
  stop(): void;
  /** The current weights on `input` (default: the task's probe): the attention maps. */
  probe(input?: string): TrainingProbe;
  /** Held-out loss and exact match (null for the text task) of the current weights. */
  evaluate(): { loss: number; exact: number | null };
  /** A C option or statistic of the session by its C name ('embd', 'params', 'tokens', 'lr', …); NaN if unknown. */
  get(name: string): number;
  /** The current weights as GGUF bytes loadModel accepts; matrices as `type` (default 'f32'). */
  exportGGUF(options?: { type?: 'f32' | 'f16' | 'q8_0' | 'q4_0' | string; name?: string }): Uint8Array;
  /** Frees the trainer's wasm instance and its threads. */
  dispose(): void;
}

/** Starts training and resolves once the run is set up (steps then run in the background). */
export function train(options?: TrainOptions): Promise<TrainingRun>;

export const trainingPresets: Record<TrainingTask, Record<string, TrainOptions>>;
