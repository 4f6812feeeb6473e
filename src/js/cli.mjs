#!/usr/bin/env node
// The saccade command line on Node: the same subcommands, options and JSON as the native
// build/saccade (src/cli.c), running the WebAssembly build: the same ranges and messages too.
// One JSON value on stdout per command; errors go to stderr with exit status 1.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { droppedNote, NO_TEMPLATE_NOTE } from './chat.mjs';
import { loadModel } from './index.mjs';
import { KV_TYPES } from './layout.mjs';
import { benchLengths } from './model.mjs';

const usage = `usage:
  saccade info MODEL.gguf
  saccade logits MODEL.gguf --tokens 1,2,3 [--source 4,5,6] [--all] [--threads N] [--ctx N] [--kv-type T]
  saccade generate MODEL.gguf (--tokens 1,2,3 | --prompt TEXT) [-n 32] [--temp T] [--top-k K]
                   [--top-p P] [--repeat-penalty R] [--seed S] [--threads N] [--ctx N] [--kv-type T]
                   [--ignore-eos] [--bos] [--decoder-start 1] [--ablate L:H,...]
  saccade generate MODEL.gguf --chat [--system TEXT] [--prompt TEXT] [-n 32] [sampling options]
  saccade tokenize MODEL.gguf --text TEXT [--bos]
  saccade bench MODEL.gguf [--prompt-tokens 128] [--decode-tokens 32] [--threads N] [--ctx N] [--repeat 3]
                   [--attention | --attention-cost] [--kv-type T] [--decode-depth N]
Encoder-decoder models: generate encodes the prompt and decodes from BOS (or --decoder-start);
logits encodes --source and decodes --tokens; bench encodes --prompt-tokens ids and decodes
--decode-tokens ids. bench's 128 and 32 shrink to fit a shorter context: a quarter of it is
decoded (at most 32), the prompt takes the rest (at most 128; all of it with --decode-depth).
--attention: bench with attention capture on (every softmax probability kept), to see its cost.
--attention-cost: decode with capture on and off by turns, token by token in one context, and
report both speeds (decode_tokens_per_s without, decode_capture_tokens_per_s with).
--decode-depth N: bench decodes with N tokens already in the context (default: after the
prompt; 0 decodes from an empty context, as llama-bench's tg test does). Decoder-only models.
--ablate L:H,...: zero these decoder self-attention heads (layer:head, from 0) in logits and generate.
--ctx N: tokens the context holds (default: the model's training length, at most 4096).
--kv-type f32|bf16|q8: what the KV cache holds (default f32, exact; bf16 rounds keys and values,
halving the cache and what long-context decoding reads; q8 keeps them as 8-bit integers with a
scale per 32, a bit over a quarter of f32, and scores keys with integer dot products).
--chat: the prompt is a user turn of a conversation, formatted with the model's chat template
(tokenizer.chat_template; the native CLI knows chatml, llama2, llama3, zephyr, gemma and phi3, the
Node CLI runs any template); --system TEXT adds a system turn first (none if TEXT is empty).
Without --prompt, every non-empty line of stdin is a user turn: each gets a reply (one JSON object per line)
that stays in the conversation. Replies stop at the template's end-of-turn token. A model without
a template gets the turns as plain text, one per line, and a note on stderr. When a turn's prompt
would leave the reply less than min(-n, half the context) tokens (--ctx), the oldest exchanges
after the system turn are left out, as few as bring it to half (or all but the last), with a note
on stderr; a last turn too long even so fails. -n must be at least 1.
saccade --version: the version.
`;

class UsageError extends Error {}

// ---------------------------------------------------------------------------------------------
// printf-compatible formatting, so that the output is byte-identical to the native CLI's
// ---------------------------------------------------------------------------------------------

/** Whether x·10^s lies exactly halfway between two integers, and the lower one is even. */
function evenTie(x, s) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const fraction = bits & ((1n << 52n) - 1n);
  const m = biased ? fraction | (1n << 52n) : fraction; // |x| = m·2^e exactly
  const e = (biased || 1) - 1075;
  let num = m, den = 1n;
  if (e >= 0) num <<= BigInt(e); else den <<= BigInt(-e);
  if (s >= 0) num *= 10n ** BigInt(s); else den *= 10n ** BigInt(-s);
  return (2n * num) % (2n * den) === den && (num / den) % 2n === 0n;
}

/** The double next to x towards zero. */
function towardZero(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) - 1n);
  return view.getFloat64(0);
}

/** C's %.{p}g. JS rounds an exact decimal tie away from zero, printf (glibc) to even: a value
 *  exactly halfway with an even lower neighbour is formatted from the double just below it. */
export function formatG(x, p = 6) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const rounded = Number(x.toExponential(p - 1).split('e')[1]);
  // the tie is at the digit exponent before rounding, which a carry (9.5 → 1e1) may have raised
  if (evenTie(x, p - 1 - rounded) || evenTie(x, p - rounded)) x = towardZero(x);
  const strip = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  const [mantissa, e] = x.toExponential(p - 1).split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= p) return `${strip(mantissa)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return strip(x.toFixed(p - 1 - exp));
}

/** A JSON string escaped as src/cli.c's json_string does. */
export function jsonString(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

const jsonIds = (ids) => `[${ids.join(',')}]`;

// ---------------------------------------------------------------------------------------------
// Options: one table says which command takes which option and what values it accepts (as
// src/cli.c's option_specs does, with the same ranges and messages)
// ---------------------------------------------------------------------------------------------

// Integers are [+-]digits; floats plain decimal (no spaces, hex, "inf" or "nan"), judged after
// rounding to float32: what the sampler stores, and what src/cli.c gets from (float)strtod.
const bigint = (v, min, max) => {
  if (!/^[+-]?\d+$/.test(v)) return undefined;
  const n = BigInt(v);
  return n >= min && n <= max ? n : undefined;
};
const INT32_MAX = 2147483647n;
const integer = (min, max, note = '') => ({
  accepts: `an integer from ${min} to ${max}${note}`,
  parse: (v) => {
    const n = bigint(v, BigInt(min), BigInt(max));
    return n === undefined ? undefined : Number(n);
  },
});
const number = (accepts, ok) => ({
  accepts,
  parse: (v) => {
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v)) return undefined;
    const x = Math.fround(Number(v));
    return ok(x) ? x : undefined;
  },
});
const seed = { accepts: 'an integer from 0 to 18446744073709551615', parse: (v) => bigint(v, 0n, (1n << 64n) - 1n) };
const ids = {
  accepts: 'a comma-separated list of token ids (integers from 0 to 2147483647)',
  parse: (v) => (v.split(',').every((s) => /^\d+$/.test(s) && BigInt(s) <= INT32_MAX) ? v : undefined),
};
const text = { parse: (v) => v };
const KV_NAMES = Object.keys(KV_TYPES);
const kvType = { accepts: `one of ${KV_NAMES.join(', ')}`, parse: (v) => (KV_NAMES.includes(v) ? v : undefined) };
const flag = null;

const [L, G, T, B] = ['logits', 'generate', 'tokenize', 'bench'];
// option → [key in the parsed options, the commands that take it, its values]
const OPTIONS = {
  '--tokens': ['tokens', [L, G], ids],
  '--source': ['source', [L], ids],
  '--decoder-start': ['decoderStart', [G], ids],
  '--prompt': ['prompt', [G], text],
  '--text': ['text', [T], text],
  '--ablate': ['ablate', [L, G], text],
  '--all': ['all', [L], flag],
  '--attention': ['attention', [B], flag],
  '--attention-cost': ['attentionCost', [B], flag],
  '--bos': ['bos', [G, T], flag],
  '--ignore-eos': ['ignoreEos', [G], flag],
  '--chat': ['chat', [G], flag],
  '--system': ['system', [G], text],
  '-n': ['nPredict', [G], integer(0, 2147483647)],
  '--threads': ['threads', [L, G, B], integer(1, 256)],
  '--ctx': ['nCtx', [L, G, B], integer(1, 2147483647)],
  '--kv-type': ['kvType', [L, G, B], kvType],
  '--prompt-tokens': ['promptTokens', [B], integer(1, 2147483647)],
  '--decode-tokens': ['decodeTokens', [B], integer(1, 2147483647)],
  '--decode-depth': ['decodeDepth', [B], integer(0, 2147483647)],
  '--repeat': ['repeat', [B], integer(1, 2147483647)],
  '--temp': ['temperature', [G], number('a finite float >= 0 (at most 3.4e38; 0: greedy)', (x) => Number.isFinite(x) && x >= 0)],
  '--top-k': ['topK', [G], integer(0, 2147483647, ' (0: off)')],
  '--top-p': ['topP', [G], number('a number in (0, 1] (1: off)', (x) => x > 0 && x <= 1)],
  '--repeat-penalty': ['repeatPenalty', [G], number('a finite float > 0 (at most 3.4e38; 1: off)', (x) => Number.isFinite(x) && x > 0)],
  '--seed': ['seed', [G], seed],
};

function parseOptions(cmd, args) {
  const o = {
    all: false, attention: false, attentionCost: false, bos: false, ignoreEos: false, nPredict: 32, threads: 1, repeat: 3,
    seed: 0n,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!Object.hasOwn(OPTIONS, a)) throw new UsageError(`unknown option ${a}`);
    const [key, commands, value] = OPTIONS[a];
    if (!commands.includes(cmd)) throw new UsageError(`${cmd} does not take ${a}`);
    if (value === flag) {
      o[key] = true;
      continue;
    }
    if (i + 1 >= args.length) throw new UsageError(`option ${a} needs a value`);
    const v = args[++i];
    const parsed = value.parse(v);
    if (parsed === undefined) throw new UsageError(`${a} must be ${value.accepts}, got '${v}'`);
    o[key] = parsed;
  }
  return o;
}

/** A list the options accepted → ids. */
const parseIds = (s) => s.split(',').map(Number);

/**
 * The prompt as ids: --tokens as given, or --prompt (tokenize: --text) through the model's
 * tokenizer, with BOS as the model asks or --bos says.
 */
function promptIds(model, o) {
  if (o.tokens !== undefined && o.prompt !== undefined) throw new UsageError('give --tokens or --prompt, not both');
  if (o.tokens !== undefined && o.bos) throw new UsageError('--bos is for --prompt: --tokens are used as given');
  if (o.tokens !== undefined) return parseIds(o.tokens);
  const text = o.prompt ?? o.text;
  if (text === undefined) throw new UsageError('give --tokens or --prompt');
  if (o.bos && model.info.bosId < 0) throw new UsageError('--bos: the vocabulary has no BOS token');
  return model.tokenize(text, { bos: o.bos || (o.prompt !== undefined && model.info.addBos) });
}

const isEncdec = (model) => model.info.architecture === 'encdec';

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

function info(model) {
  const i = model.info;
  const types = Object.entries(i.tensorTypes).slice(0, 16).map(([t, n]) => `${jsonString(t)}:${n}`);
  const meta = Object.entries(i.metadata).map(([k, v]) => `${jsonString(k)}:${jsonString(v)}`);
  return `{"architecture":${jsonString(i.architecture)},"name":${jsonString(i.name)},` +
    `"gguf_version":${i.ggufVersion},"n_vocab":${i.vocabSize},"n_ctx":${i.contextLength},` +
    `"n_embd":${i.embeddingSize},"n_ff":${i.feedForwardSize},"n_layer":${i.layers},"n_head":${i.heads},` +
    `"n_head_kv":${i.kvHeads},"head_dim":${i.headDim},"rope_dim":${i.ropeDim},` +
    `"rope_freq_base":${formatG(i.ropeFreqBase)},"norm_eps":${formatG(i.normEps)},"n_encoder_layer":${i.encoderLayers},` +
    `"tied_output":${i.tiedOutput},"n_params":${i.parameters},"n_bytes":${i.tensorBytes},` +
    `"has_tokenizer":${i.hasTokenizer},"tensor_types":{${types.join(',')}},"metadata":{${meta.join(',')}}}`;
}

function logits(model, o) {
  if (o.tokens === undefined) throw new UsageError('logits needs --tokens 1,2,3');
  if (isEncdec(model) && o.source === undefined)
    throw new UsageError('an encoder-decoder model needs --source 1,2,3 (the ids the encoder reads)');
  if (!isEncdec(model) && o.source !== undefined)
    throw new UsageError(`only encoder-decoder models take --source; this model is ${model.info.architecture}`);
  const source = o.source === undefined ? {} : { source: parseIds(o.source) };
  const out = model.forward(parseIds(o.tokens), { allLogits: o.all, ...source });
  const V = model.info.vocabSize;
  const rows = [];
  for (let r = 0; r < out.length / V; r++) {
    const row = new Array(V);
    for (let i = 0; i < V; i++) row[i] = formatG(out[r * V + i], 9);
    rows.push(`[${row.join(',')}]`);
  }
  return `{"logits":[${rows.join(',')}]}`;
}

/** What the decoder evaluates first for an encoder-decoder model (whose prompt is the source). */
function decoderStart(model, o) {
  if (!isEncdec(model)) {
    if (o.decoderStart !== undefined)
      throw new UsageError(`only encoder-decoder models take --decoder-start; this model is ${model.info.architecture}`);
    return {};
  }
  if (o.decoderStart !== undefined) return { decoderStart: parseIds(o.decoderStart) };
  if (model.info.bosId < 0)
    throw new UsageError('the model has no BOS token to start the decoder with: give --decoder-start 1,2,3');
  return { decoderStart: [model.info.bosId] };
}

/**
 * One generation's JSON line, as src/cli.c's generate_from prints it; also returns the text.
 * `ids`: the prompt, or (chat) undefined: the ids the first step reports.
 */
async function generation(model, steps, ids, t0) {
  const tokens = [];
  let text = '';
  let t1 = t0;
  let prompt;
  for await (const t of steps) {
    if (tokens.length === 0) t1 = performance.now(); // prefill ends with the first token
    prompt ??= t.prompt;
    ids ??= t.prompt.ids;
    tokens.push(t.id);
    text += t.text;
  }
  if (tokens.length === 0) t1 = performance.now();
  const t2 = performance.now();
  const textField = model.info.hasTokenizer ? `,"text":${jsonString(text)}` : '';
  const json = `{"prompt_tokens":${jsonIds(ids)},"tokens":${jsonIds(tokens)}${textField},` +
    `"timings":{"prefill_ms":${(t1 - t0).toFixed(3)},"decode_ms":${(t2 - t1).toFixed(3)},` +
    `"threads":${model.runtime.threads}}}`;
  return { json, text, prompt };
}

const samplingOf = (o) => {
  const sampling = {};
  for (const k of ['temperature', 'topK', 'topP', 'repeatPenalty', 'seed']) if (o[k] !== undefined) sampling[k] = o[k];
  return { ...sampling, maxTokens: o.nPredict, ignoreEos: o.ignoreEos };
};

/** Every line of stdin (without its \n, nor a \r before it), as it arrives. */
async function* stdinLines() {
  const decoder = new TextDecoder();
  let pending = new Uint8Array(0);
  const line = (bytes) => decoder.decode(bytes.at(-1) === 0x0d ? bytes.subarray(0, -1) : bytes);
  for await (const chunk of process.stdin) {
    const joined = new Uint8Array(pending.length + chunk.length);
    joined.set(pending);
    joined.set(chunk, pending.length);
    let start = 0;
    for (let i; (i = joined.indexOf(0x0a, start)) >= 0; start = i + 1) yield line(joined.subarray(start, i));
    pending = joined.slice(start);
  }
  if (pending.length) yield line(pending);
}

/** generate --chat: the reply to --prompt, or to every line of stdin in turn (one JSON line each). */
async function chat(model, o) {
  if (o.tokens !== undefined || o.bos || o.decoderStart !== undefined)
    throw new UsageError('--chat does not take --tokens, --bos or --decoder-start');
  if (isEncdec(model)) throw new UsageError('--chat needs a decoder-only model; this model is encdec');
  if (o.nPredict === 0) throw new UsageError('--chat needs -n of at least 1: a turn with no reply');
  if (!model.info.hasTokenizer) throw new UsageError('chat needs a tokenizer; the file has no tokenizer.ggml.* metadata');
  if (!model.info.metadata['tokenizer.chat_template']) process.stderr.write(`saccade: ${NO_TEMPLATE_NOTE}\n`);
  // an empty --system adds no turn, as the native CLI (templates disagree on an empty one)
  let messages = o.system === undefined || o.system === '' ? [] : [{ role: 'system', content: o.system }];
  const turn = async (content) => {
    messages.push({ role: 'user', content });
    const reply = await generation(model, model.chat(messages, samplingOf(o)), undefined, performance.now());
    process.stdout.write(reply.json + '\n');
    if (reply.prompt.dropped) {
      // the next turns go on without them, keeping what the context holds
      process.stderr.write(`saccade: ${droppedNote(reply.prompt.dropped, model.runtime.contextLength)}\n`);
      messages = [...reply.prompt.messages];
    }
    messages.push({ role: 'assistant', content: reply.text });
  };
  if (o.prompt !== undefined) await turn(o.prompt);
  else for await (const line of stdinLines()) if (line !== '') await turn(line);
}

async function generate(model, o) {
  if (o.chat) return chat(model, o);
  if (o.system !== undefined) throw new UsageError('--system needs --chat');
  const ids = promptIds(model, o);
  if (ids.length === 0) throw new UsageError('the prompt is empty');
  const start = decoderStart(model, o);
  const t0 = performance.now();
  return (await generation(model, model.generate(ids, { ...samplingOf(o), ...start }), ids, t0)).json;
}

function tokenize(model, o) {
  if (o.text === undefined) throw new UsageError('tokenize needs --text TEXT');
  return jsonIds(promptIds(model, o));
}

function bench(model, o) {
  const { decodeDepth } = o;
  if (isEncdec(model) && decodeDepth !== undefined)
    throw new UsageError('--decode-depth: an encoder-decoder model decodes from an empty decoder context; leave it out');
  if (o.attentionCost && o.attention) throw new UsageError('--attention-cost turns capture on and off itself: leave out --attention');
  const nCtx = model.runtime.contextLength;
  const { promptTokens: np, decodeTokens: nd } = benchLengths(nCtx, isEncdec(model), decodeDepth !== undefined, o.promptTokens, o.decodeTokens);
  if (o.attentionCost && nd < 2)
    throw new UsageError('--attention-cost needs --decode-tokens >= 2 (tokens with capture and without, by turns)');
  let tooLong;
  if (isEncdec(model)) tooLong = np > nCtx || nd > nCtx ? '--prompt-tokens and --decode-tokens must each fit in' : '';
  else if (decodeDepth === undefined) tooLong = np + nd > nCtx ? '--prompt-tokens + --decode-tokens exceed' : '';
  else if (np > nCtx) tooLong = '--prompt-tokens exceeds';
  else tooLong = decodeDepth + nd > nCtx ? '--decode-depth + --decode-tokens exceed' : '';
  if (tooLong) throw new UsageError(`${tooLong} the context length (${nCtx})`);
  const r = model.bench({ promptTokens: np, decodeTokens: nd, repeat: o.repeat, attentionCost: o.attentionCost,
    ...(decodeDepth !== undefined && { decodeDepth }) });
  return `{"engine":${jsonString(r.engine)},"type":${jsonString(r.type)},"threads":${r.threads},` +
    `"kv_type":${jsonString(model.runtime.kvType)},` +
    `"prompt_tokens":${r.promptTokens},"decode_tokens":${r.decodeTokens},"decode_depth":${r.decodeDepth},` +
    `"prefill_tokens_per_s":${r.prefillTokensPerSecond.toFixed(2)},` +
    `"decode_tokens_per_s":${r.decodeTokensPerSecond.toFixed(2)}` +
    (o.attentionCost ? `,"decode_capture_tokens_per_s":${r.decodeCaptureTokensPerSecond.toFixed(2)}}` : '}');
}

const commands = { info, logits, generate, tokenize, bench };

/** package.json's version. */
export const version = () => JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

export async function main(argv) {
  if (argv.length === 1 && argv[0] === '--version') {
    process.stdout.write(`saccade ${version()}\n`);
    return 0;
  }
  const isHelp = (arg) => arg === 'help' || arg === '--help' || arg === '-h';
  if (argv.length > 0 && (isHelp(argv[0]) || (argv[1]?.startsWith('-') && isHelp(argv[1])))) {
    process.stdout.write(usage);
    return 0;
  }
  if (argv.length < 2) {
    process.stderr.write(usage);
    return 1;
  }
  const [cmd, file, ...rest] = argv;
  let model;
  try {
    if (!Object.hasOwn(commands, cmd)) throw new UsageError(`unknown command '${cmd}' (try: saccade help)`);
    // `saccade logits --tokens 1 m.gguf` would otherwise read "1" as an unknown option
    if (file.startsWith('-') && !existsSync(file))
      throw new UsageError(`the model file comes before the options: saccade ${cmd} MODEL.gguf [options] ('${file}' is not a file)`);
    const o = parseOptions(cmd, rest);
    // tokenize needs only the vocabulary: it also works on vocab-only GGUF files
    model = await loadModel(file, {
      threads: o.threads, contextLength: o.nCtx, batchSize: cmd === 'bench' ? o.promptTokens : 0, vocabOnly: cmd === 'tokenize',
      ...(o.ablate !== undefined && { ablate: o.ablate }),
      ...((o.attention || o.attentionCost) && { attention: true }),
      ...(o.kvType !== undefined && { kvType: o.kvType }),
    }).catch((e) => {
      // the library's advice names its option; here that is --ctx
      if (e?.name === 'SaccadeError') e.message = e.message.replace('a smaller contextLength', 'a smaller --ctx');
      throw e;
    });
    const out = await commands[cmd](model, o); // chat writes its lines as they come
    if (out !== undefined) process.stdout.write(out + '\n');
    return 0;
  } catch (e) {
    process.stderr.write(`saccade: ${e instanceof Error ? e.message : String(e)}\n`);
    if (!(e instanceof Error) || (!(e instanceof UsageError) && e.name !== 'SaccadeError')) console.error(e);
    return 1;
  } finally {
    model?.dispose();
  }
}

// Run when executed (also through npm's bin symlink), not when imported.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => (process.exitCode = code)); // no top-level await in the package
}
