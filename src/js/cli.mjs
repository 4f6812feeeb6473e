#!/usr/bin/env node
// The saccade command line on Node: the same subcommands, options and JSON as the native
// build/saccade (src/cli.c), running the WebAssembly build. One JSON value on stdout per
// command; errors go to stderr with exit status 1.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { loadModel } from './index.mjs';

const usage = `usage:
  saccade info MODEL.gguf
  saccade logits MODEL.gguf --tokens 1,2,3 [--all] [--threads N]
  saccade generate MODEL.gguf (--tokens 1,2,3 | --prompt TEXT) [-n 32] [--temp T] [--top-k K]
                   [--top-p P] [--repeat-penalty R] [--seed S] [--threads N] [--ignore-eos]
  saccade tokenize MODEL.gguf --text TEXT [--bos]
  saccade bench MODEL.gguf [--prompt-tokens 128] [--decode-tokens 32] [--threads N] [--repeat 3]
`;

class UsageError extends Error {}

// ---------------------------------------------------------------------------------------------
// printf-compatible formatting, so that the output is byte-identical to the native CLI's
// ---------------------------------------------------------------------------------------------

/** C's %.{p}g. */
export function formatG(x, p = 6) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
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
// Options (as src/cli.c parses them)
// ---------------------------------------------------------------------------------------------

const isInt = (s) => /^\s*[+-]?\d+$/.test(s) && Math.abs(Number(s)) <= 2147483647;
const isFloat = (s) => /^\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf(inity)?|nan)$/i.test(s);

function parseOptions(args) {
  const o = {
    all: false, bos: false, ignoreEos: false, nPredict: 32, threads: 1, promptTokens: 128, decodeTokens: 32,
    repeat: 3, sampling: { seed: 0n },
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const v = args[i + 1];
    let ok = true;
    let takesValue = true;
    const int = (min) => (ok = isInt(v) && Number(v) >= min) && Number(v);
    const float = () => (ok = isFloat(v)) && Number(v.replace(/inf(inity)?/i, 'Infinity').replace(/nan/i, 'NaN'));
    if (a === '--all') (o.all = true), (takesValue = false);
    else if (a === '--bos') (o.bos = true), (takesValue = false);
    else if (a === '--ignore-eos') (o.ignoreEos = true), (takesValue = false);
    else if (v === undefined) throw new UsageError(`option ${a} needs a value`);
    else if (a === '--tokens') o.tokens = v;
    else if (a === '--prompt') o.prompt = v;
    else if (a === '--text') o.text = v;
    else if (a === '-n') o.nPredict = int(0);
    else if (a === '--threads') o.threads = int(1);
    else if (a === '--prompt-tokens') o.promptTokens = int(1);
    else if (a === '--decode-tokens') o.decodeTokens = int(1);
    else if (a === '--repeat') o.repeat = int(1);
    else if (a === '--temp') o.sampling.temperature = float();
    else if (a === '--top-k') o.sampling.topK = int(-2147483647);
    else if (a === '--top-p') o.sampling.topP = float();
    else if (a === '--repeat-penalty') o.sampling.repeatPenalty = float();
    else if (a === '--seed') (ok = /^\d+$/.test(v) && BigInt(v) < 1n << 64n) && (o.sampling.seed = BigInt(v));
    else throw new UsageError(`unknown option ${a}`);
    if (!ok) throw new UsageError(`invalid value for ${a}`);
    if (takesValue) i++;
  }
  return o;
}

function parseIds(s) {
  const parts = s.split(',');
  if (!parts.every(isInt)) return null;
  return parts.map(Number);
}

/** The prompt as ids: --tokens, or --prompt/--text through the model's tokenizer. */
function promptIds(model, o) {
  if (o.tokens !== undefined) {
    const ids = parseIds(o.tokens);
    if (!ids) throw new UsageError(`--tokens must be a comma-separated list of integers, got '${o.tokens}'`);
    return ids;
  }
  const text = o.prompt ?? o.text;
  if (text === undefined) throw new UsageError('give --tokens or --prompt');
  return model.tokenize(text, { bos: o.bos || (o.prompt !== undefined && model.info.addBos) });
}

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
  const ids = o.tokens === undefined ? null : parseIds(o.tokens);
  if (!ids) throw new UsageError('logits needs --tokens 1,2,3');
  const out = model.forward(ids, { allLogits: o.all });
  const V = model.info.vocabSize;
  const rows = [];
  for (let r = 0; r < out.length / V; r++) {
    const row = new Array(V);
    for (let i = 0; i < V; i++) row[i] = formatG(out[r * V + i], 9);
    rows.push(`[${row.join(',')}]`);
  }
  return `{"logits":[${rows.join(',')}]}`;
}

async function generate(model, o) {
  const ids = promptIds(model, o);
  if (ids.length === 0) throw new UsageError('the prompt is empty');
  const tokens = [];
  let text = '';
  const t0 = performance.now();
  let t1 = t0;
  const steps = model.generate(ids, { ...o.sampling, maxTokens: o.nPredict, ignoreEos: o.ignoreEos });
  for await (const t of steps) {
    if (tokens.length === 0) t1 = performance.now(); // prefill ends with the first token
    tokens.push(t.id);
    text += t.text;
  }
  if (tokens.length === 0) t1 = performance.now();
  const t2 = performance.now();
  const textField = model.info.hasTokenizer ? `,"text":${jsonString(text)}` : '';
  return `{"prompt_tokens":${jsonIds(ids)},"tokens":${jsonIds(tokens)}${textField},` +
    `"timings":{"prefill_ms":${(t1 - t0).toFixed(3)},"decode_ms":${(t2 - t1).toFixed(3)},` +
    `"threads":${model.runtime.threads}}}`;
}

function tokenize(model, o) {
  if (o.text === undefined) throw new UsageError('tokenize needs --text TEXT');
  return jsonIds(promptIds(model, { ...o, prompt: undefined }));
}

function bench(model, o) {
  if (o.promptTokens + o.decodeTokens > model.info.contextLength)
    throw new UsageError('--prompt-tokens + --decode-tokens exceed the context length');
  const r = model.bench({ promptTokens: o.promptTokens, decodeTokens: o.decodeTokens, repeat: o.repeat });
  return `{"engine":${jsonString(r.engine)},"type":${jsonString(r.type)},"threads":${r.threads},` +
    `"prompt_tokens":${r.promptTokens},"decode_tokens":${r.decodeTokens},` +
    `"prefill_tokens_per_s":${r.prefillTokensPerSecond.toFixed(2)},` +
    `"decode_tokens_per_s":${r.decodeTokensPerSecond.toFixed(2)}}`;
}

const commands = { info, logits, generate, tokenize, bench };

export async function main(argv) {
  if (argv.length < 2) {
    const help = argv[0] === 'help' || argv[0] === '--help';
    (argv.length < 1 ? process.stderr : process.stdout).write(usage);
    return argv.length < 1 || !help ? 1 : 0;
  }
  const [cmd, file, ...rest] = argv;
  let model;
  try {
    const o = parseOptions(rest);
    if (!Object.hasOwn(commands, cmd)) throw new UsageError(`unknown command '${cmd}' (try: saccade help)`);
    // tokenize needs only the vocabulary: it also works on vocab-only GGUF files
    model = await loadModel(file, {
      threads: o.threads, batchSize: cmd === 'bench' ? o.promptTokens : 0, vocabOnly: cmd === 'tokenize',
    });
    process.stdout.write((await commands[cmd](model, o)) + '\n');
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
  process.exitCode = await main(process.argv.slice(2));
}
