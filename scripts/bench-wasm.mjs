#!/usr/bin/env node
// Benchmark (not a test): saccade (native, and wasm in Node and Chromium) against llama.cpp
// itself — its llama-bench compiled the way saccade is (Emscripten 3.1.6, SIMD128 + pthreads, in
// Node) and natively (AVX2), from ../shared/peers/llama.cpp — and against wllama (llama.cpp's
// prebuilt wasm, in Chromium), on the same GPT-2-small-shaped random models (768 wide, 12 layers,
// 12 heads, vocab 50257, context 1024) at Q8_0, Q4_0, F16 and F32, with a synthetic GPT-2
// vocabulary (make_model --vocab) that llama.cpp needs to load them.
//
// Every engine evaluates a 128-token prompt as one batch (prefill), then 32 single tokens
// (decode) from an empty context: llama-bench's tg test does, and saccade's bench does with
// --decode-depth 0 (decodeDepth: 0 in Chromium; wllama's completion decodes after its prompt).
// The long-context run decodes at depth instead, every engine at the same depths. Rounds run
// every configuration once each, so a slow spell of the shared machine lands on all of them; each
// configuration keeps its best round, and the ratios of those are the targets of issue 17. The
// same ratios are also printed round by round (each round's figure over its peer's in that
// round: the median and the spread), which a drift of the machine's speed between rounds moves
// less; the JSON keeps every round. Each round also measures the machine's plain streaming-read
// bandwidth (build/tools/bench_stream): decode reads every weight once per token, and its
// effective GB/s (weights read per token × tokens/s) is printed beside it. Absolute figures move
// 20-30% between runs.
//
//   node scripts/bench-wasm.mjs [--types q8_0,q4_0,f16,f32] [--threads 2] [--repeat 3]
//                               [--no-browser] [--no-peers] [--depths 128,512,1024,2048]
//                               [--no-depth-capture] [--no-gqa] [--json OUT]
//                               [--simd both] [--browser-rounds N] [--browser-only] [--no-wllama]
//                               [--js-flags=FLAGS]
//
// --threads 1,2 adds the 1-thread runs; --depths adds the long-context run: decode at those
// depths on a GPT-2-small-sized llama-shaped model (Q8_0, context 4096), saccade beside llama.cpp,
// what attention capture costs there (bench --attention-cost: capture on and off by turns, token
// by token in one context, so both halves see the same depths and machine; --no-depth-capture
// skips it), and saccade in Node with bf16 and q8 KV caches (--kv-type; their capture cost too);
// then the same decode on its grouped-query twin (12 query heads over 3 kv heads, as real llama
// models group them; --no-gqa skips it), saccade (native, Node f32 and q8) beside llama.cpp.
// Each depth's run first evaluates its D tokens as one prompt: that prefill is printed too
// (long prompts), beside llama-bench's -p D. saccade's KV cache is otherwise f32; llama-bench's
// is its default, f16.
//
// In Chromium saccade runs the build its loader picks: the relaxed-SIMD one where the engine
// computes relaxed SIMD's int8 dot product right (the column says which ran). --simd both runs
// the relaxed and the SIMD128 builds side by side instead (loadModel's simd option), alternating,
// as 'saccade Chromium relaxed' and 'saccade Chromium SIMD128'; --browser-rounds N repeats the
// Chromium runs N times, interleaved, keeping each configuration's best; --browser-only skips the
// native and Node runs (and the peers); --no-wllama skips wllama. The peers run again beside the
// Chromium runs, and the Chromium ratios divide by those. --js-flags passes FLAGS to Chromium's
// V8: `--js-flags='--no-enable-avx-vnni --no-enable-avx-vnni-int8'` compiles relaxed SIMD's int8
// dot product as on an x86 CPU without AVX-VNNI (the report says how the dot was compiled).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { DEMO_PATHS, serve } from '../web/serve.mjs';
import { relaxedDotLowering } from './relaxed-dot-lowering.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: opts } = parseArgs({
  options: {
    types: { type: 'string', default: 'q8_0,q4_0,f16,f32' },
    threads: { type: 'string', default: '2' },
    repeat: { type: 'string', default: '3' },
    depths: { type: 'string', default: '' },
    'no-browser': { type: 'boolean', default: false },
    'no-peers': { type: 'boolean', default: false },
    'no-depth-capture': { type: 'boolean', default: false },
    'no-gqa': { type: 'boolean', default: false },
    simd: { type: 'string', default: 'auto' },
    'browser-rounds': { type: 'string', default: '1' },
    'browser-only': { type: 'boolean', default: false },
    'no-wllama': { type: 'boolean', default: false },
    'js-flags': { type: 'string', default: '' },
    json: { type: 'string', default: path.join(root, 'build/bench-wasm.json') },
  },
});
const types = opts.types.split(',');
const threadCounts = opts.threads.split(',').map(Number);
const depths = opts.depths ? opts.depths.split(',').map(Number) : [];
const repeat = Number(opts.repeat);
const PROMPT = 128;
const DECODE = 32;
const LLAMA_DEPTH_DECODE_SHARE = 0.1; // see llamaAtDepth
const peers = path.resolve(root, '../shared/peers/llama.cpp');
const browserOnly = opts['browser-only'];
const usePeers = !opts['no-peers'] && !browserOnly;
if (opts.simd !== 'auto' && opts.simd !== 'both') throw new Error(`--simd must be auto or both, got ${opts.simd}`);
const browserRounds = Number(opts['browser-rounds']);
// Chromium's saccade runs: [result key, loadModel's simd option]
const chromiumSaccade = opts.simd === 'both' ? [['saccade', 'relaxed'], ['saccade128', 'simd128']] : [['saccade', undefined]];
const depthCapture = !opts['no-depth-capture'];
const depthGqa = !opts['no-gqa'];

for (const f of ['build/saccade', 'build/tools/make_model', 'build/tools/bench_stream', 'dist/saccade-mt.wasm', 'dist/saccade-st.wasm'])
  if (!existsSync(path.join(root, f))) throw new Error(`${f} is missing: run \`make bench-wasm\``);
if (usePeers && !existsSync(path.join(peers, 'llama-bench-native')))
  throw new Error(`llama.cpp's llama-bench is not in ${peers} (see its README), or run with --no-peers`);

const log = (...a) => console.error(...a);
const f1 = (x) => (x === undefined ? '-' : x.toFixed(1));

/** build/bench-models/NAME.gguf, written by make_model with a synthetic vocabulary on first use. */
function model(name, args) {
  const dir = path.join(root, 'build/bench-models');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.gguf`);
  if (!existsSync(file)) {
    log(`writing ${file}`);
    execFileSync(path.join(root, 'build/tools/make_model'), [`${file}.tmp`, ...args, '--vocab']);
    renameSync(`${file}.tmp`, file);
  }
  return file;
}

// Bytes per weight of each type make_model writes (block bytes / values per block, ggml's layouts).
const BYTES_PER_VALUE = {
  f32: 4, f16: 2, bf16: 2, q8_0: 34 / 32, q4_0: 18 / 32, q5_0: 22 / 32, q4_1: 20 / 32, q5_1: 24 / 32,
  q2_k: 84 / 256, q3_k: 110 / 256, q4_k: 144 / 256, q5_k: 176 / 256, q6_k: 210 / 256,
};

/** Bytes of weights one decode token reads: all of them but the embedding tables, of which it
 * reads a row (build/saccade info gives the sizes; the tables have the weights' type). */
function decodeBytes(file, type) {
  const info = JSON.parse(execFileSync(path.join(root, 'build/saccade'), ['info', file], { encoding: 'utf8' }));
  const perValue = BYTES_PER_VALUE[type];
  if (perValue === undefined) throw new Error(`--types: no block size known for ${type}`);
  const tables = info.n_vocab + (info.architecture === 'gpt2' ? info.n_ctx : 0);
  return info.n_bytes - tables * info.n_embd * perValue;
}

/** saccade's bench command (native or the Node CLI): the better of two runs in one process, as
 * the first pays for page faults and V8's tier-up. Decode starts at `depth` tokens (0: from an
 * empty context, as llama-bench's tg test). With `captureCost`, decode takes capture by
 * turns (--attention-cost; three runs, the first not counted) and `capture` is the captured
 * tokens' speed, `decode` the others'. */
function benchSaccade(cmd, args, file, threads,
  { prompt = PROMPT, ctx = 0, captureCost = false, kvType = 'f32', depth = 0 } = {}) {
  const out = execFileSync(cmd, [...args, 'bench', file, '--threads', String(threads), '--prompt-tokens', String(prompt),
    '--decode-tokens', String(DECODE), '--decode-depth', String(depth), '--repeat', captureCost ? '3' : '2', ...(ctx ? ['--ctx', String(ctx)] : []),
    ...(captureCost ? ['--attention-cost'] : []), '--kv-type', kvType], { encoding: 'utf8' });
  const j = JSON.parse(out);
  if (j.threads !== threads) throw new Error(`${cmd} ran ${j.threads} threads, not ${threads}`);
  if (j.kv_type !== kvType) throw new Error(`${cmd} ran a ${j.kv_type} KV cache, not ${kvType}`);
  if (j.decode_depth !== depth) throw new Error(`${cmd} decoded at depth ${j.decode_depth}, not ${depth}`);
  return { prefill: j.prefill_tokens_per_s, decode: j.decode_tokens_per_s,
    ...(captureCost && { capture: j.decode_capture_tokens_per_s }) };
}

/** llama-bench (its own warm-up run, then one measured run of each test): prefill from its
 * n_prompt test, decode from n_gen (from an empty cache, as saccade's headline decode). With
 * `pg`, decode at depth D comes from -pg D,32 less -p D. */
function benchLlama(which, file, threads, extra = ['-p', String(PROMPT), '-n', String(DECODE)]) {
  const out = execFileSync(path.join(peers, `llama-bench-${which}`),
    ['-m', file, ...extra, '-t', String(threads), '-r', '1', '-o', 'json'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 24 });
  const tests = JSON.parse(out);
  for (const t of tests) if (t.n_threads !== threads) throw new Error(`llama-bench ran ${t.n_threads} threads, not ${threads}`);
  return tests;
}

function llamaPrefillDecode(which, file, threads) {
  const tests = benchLlama(which, file, threads);
  return { prefill: tests.find((t) => t.n_prompt > 0 && t.n_gen === 0).avg_ts, decode: tests.find((t) => t.n_gen > 0 && t.n_prompt === 0).avg_ts };
}

function stream() {
  const j = JSON.parse(execFileSync(path.join(root, 'build/tools/bench_stream'), { encoding: 'utf8' }));
  return { 1: j.threads_1_gb_s, 2: j.threads_2_gb_s };
}

const ratioOf = (a, b) => (a === undefined || b === undefined ? undefined : a / b);

/** Keeps each figure's best over the rounds (a figure a round could not measure is undefined),
 * and every round's figures in r.rounds[key], in order: round i of an engine and round i of its
 * peer ran minutes apart at most, so their ratio sees one state of a machine whose speed drifts
 * more than that between rounds (pairedRatios). */
function keepBest(r, key, run) {
  const b = r[key];
  const best = (x, y) => (x === undefined ? y : y === undefined ? x : Math.max(x, y));
  r[key] = b ? Object.fromEntries(Object.keys(run).map((k) => [k, best(b[k], run[k])])) : run;
  r.rounds ??= {};
  (r.rounds[key] ??= []).push(run);
}

/** Round by round, field of a's figures / field of b's: their median, least and most, or
 * undefined when either ran no round. */
function pairedRatios(rounds, a, b, field) {
  const xs = rounds?.[a], ys = rounds?.[b];
  if (!xs || !ys) return undefined;
  const ratios = xs.slice(0, ys.length).map((x, i) => ratioOf(x[field], ys[i][field])).filter((x) => x !== undefined);
  if (!ratios.length) return undefined;
  const sorted = [...ratios].sort((x, y) => x - y), mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1] };
}

// Other processes on the machine skew everything, threads most: say how busy it was.
const loadSeen = [os.loadavg()[0]];
const results = {};
const files = Object.fromEntries(types.map((type) => [type, model(`gpt2-small-${type}-tok`, ['--gpt2-small', '--type', type])]));
for (const type of types) results[type] = { file: path.relative(root, files[type]), bytes: statSync(files[type]).size, decodeBytes: decodeBytes(files[type], type) };

const engines = browserOnly ? [] : [
  ['native', (file, t) => benchSaccade(path.join(root, 'build/saccade'), [], file, t)],
  ['node', (file, t) => benchSaccade(process.execPath, [path.join(root, 'src/js/cli.mjs')], file, t)],
  ...(usePeers ? [['llamaNative', (file, t) => llamaPrefillDecode('native', file, t)], ['llamaWasm', (file, t) => llamaPrefillDecode('wasm', file, t)]] : []),
];
const streamBest = {};
for (let round = 1; round <= repeat; round++) {
  keepBest(streamBest, 'gbs', stream());
  for (const type of types)
    for (const threads of threadCounts)
      for (const [key, run] of engines) {
        log(`round ${round} of ${repeat}: ${type}, ${key}, ${threads} thread(s)`);
        keepBest(results[type], `${key}${threads}`, run(files[type], threads));
      }
  loadSeen.push(os.loadavg()[0]);
}

// Long context: decode at each depth, saccade (native and Node) beside llama.cpp.
const long = {};
if (depths.length) {
  const maxDepth = Math.max(...depths);
  const shape = ['--arch', 'llama', '--gpt2-small', '--type', 'q8_0', '--ctx', String(Math.max(4096, maxDepth + DECODE))];
  const file = model('llama-small-q8_0-tok', shape);
  const gqaFile = depthGqa ? model('llama-small-gqa4-q8_0-tok', [...shape, '--n-head-kv', '3']) : null;
  const t = Math.max(...threadCounts);
  /** llama.cpp's decode at depth d: -pg d,32 less -p d; and its prefill of the d tokens (-p d). */
  const llamaAtDepth = (which, f, d) => {
    const tests = benchLlama(which, f, t, ['-p', String(d), '-n', '0', '-pg', `${d},${DECODE}`]);
    const p = tests.find((x) => x.n_gen === 0), pg = tests.find((x) => x.n_gen > 0);
    const decodeNs = pg.avg_ns - p.avg_ns;
    // The two prefills of d tokens differ by a few percent from run to run: where the decoded
    // tokens take less than a tenth of the -pg run, the difference is that spread, not their time
    // (llama.cpp's wasm at depth 2048 gave 131 and 0 tokens/s so), and no figure is kept.
    const decode = decodeNs >= LLAMA_DEPTH_DECODE_SHARE * pg.avg_ns ? DECODE / (decodeNs / 1e9) : undefined;
    return { decode, prefill: p.avg_ts };
  };
  for (let round = 1; round <= repeat; round++)
    for (const d of depths) {
      log(`long context, round ${round} of ${repeat}: depth ${d}`);
      const r = (long[d] ??= {});
      const native = [path.join(root, 'build/saccade'), []], node = [process.execPath, [path.join(root, 'src/js/cli.mjs')]];
      const atDepth = ([cmd, args], kvType, captureCost = false, f = file) =>
        benchSaccade(cmd, args, f, t, { prompt: d, ctx: d + DECODE, depth: d, kvType, captureCost });
      // (each run first evaluates the d tokens as one prompt: its prefill, kept beside)
      keepBest(r, 'native', atDepth(native, 'f32'));
      keepBest(r, 'node', atDepth(node, 'f32'));
      keepBest(r, 'node_bf16', atDepth(node, 'bf16'));
      keepBest(r, 'node_q8', atDepth(node, 'q8'));
      if (depthCapture) {
        // capture's cost from pairs of tokens in one process: each round's with / without, kept
        // per round (the best of each half separately would unpair them)
        const pairs = [['native_capture', native, 'f32'], ['node_capture', node, 'f32'],
          ['node_bf16_capture', node, 'bf16'], ['node_q8_capture', node, 'q8']];
        for (const [key, engine, kv] of pairs) {
          const { decode, capture } = atDepth(engine, kv, true);
          (r[key] ??= []).push(capture / decode);
        }
      }
      if (usePeers) for (const which of ['native', 'wasm']) keepBest(r, `llama_${which}`, llamaAtDepth(which, file, d));
      if (gqaFile) {
        keepBest(r, 'gqa_native', { decode: atDepth(native, 'f32', false, gqaFile).decode });
        keepBest(r, 'gqa_node', { decode: atDepth(node, 'f32', false, gqaFile).decode });
        keepBest(r, 'gqa_node_q8', { decode: atDepth(node, 'q8', false, gqaFile).decode });
        if (usePeers) for (const which of ['native', 'wasm']) keepBest(r, `gqa_llama_${which}`, llamaAtDepth(which, gqaFile, d));
      }
    }
  loadSeen.push(os.loadavg()[0]);
}

let chromiumLowering;
if (!opts['no-browser']) {
  const { chromium } = await import('playwright-core');
  const server = await serve({ root, isolated: true,
    allow: [...DEMO_PATHS, '/scripts/bench-page/', '/node_modules/@wllama/wllama/esm/', '/build/bench-models/'] });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--headless',
      ...(opts['js-flags'] ? [`--js-flags=${opts['js-flags']}`] : [])],
  });
  {
    const page = await browser.newPage();
    chromiumLowering = await page.evaluate(relaxedDotLowering);
    await page.close();
    log(`Chromium${opts['js-flags'] ? ` (--js-flags=${opts['js-flags']})` : ''}: ${chromiumLowering}`);
  }
  const runPage = async (engine, args) => {
    const page = await browser.newPage(); // a fresh page per run: nothing left over
    try {
      await page.goto(`${server.url}/scripts/bench-page/index.html`);
      await page.waitForFunction(() => globalThis.bench);
      return await page.evaluate(({ engine, args }) => globalThis.bench[engine](args), { engine, args });
    } finally {
      await page.close();
    }
  };
  try {
    // Some runs' first Chromium pages read slow (the browser's start-up work on few cores is one
    // suspect): one untimed run first, and each round starts at another type, so that no type
    // is always the first one timed.
    log('warm-up: saccade in Chromium, untimed');
    await runPage('saccade', { url: `/${results[types[0]].file}`, threads: threadCounts.at(-1), promptTokens: PROMPT,
      decodeTokens: DECODE, decodeDepth: 0, repeat: 1, simd: chromiumSaccade[0][1] });
    for (let round = 1; round <= browserRounds; round++)
      for (const type of types.map((_, i) => types[(i + round - 1) % types.length])) {
        const url = `/${results[type].file}`;
        for (const threads of threadCounts) {
          const runs = [...chromiumSaccade.map(([key, simd]) => ({ key, engine: 'saccade', simd })),
            ...(opts['no-wllama'] ? [] : [{ key: 'wllama', engine: 'wllama' }])];
          for (const { key, engine, simd } of runs) {
            const args = { url, threads, promptTokens: PROMPT, decodeTokens: DECODE, decodeDepth: 0, repeat, simd };
            const out = await runPage(engine, args);
            if (out.threads !== threads) throw new Error(`${engine} ran ${out.threads} threads, not ${threads}`);
            if (engine === 'saccade' && out.decodeDepth !== 0) throw new Error(`saccade decoded at depth ${out.decodeDepth}, not 0`);
            log(`round ${round} of ${browserRounds}: ${type}: ${key} in Chromium, ${threads} thread(s): ` +
              `prefill ${f1(out.prefillTokensPerSecond)}, decode ${f1(out.decodeTokensPerSecond)} tok/s`);
            keepBest(results[type], `${key}${threads}`, { prefill: out.prefillTokensPerSecond, decode: out.decodeTokensPerSecond });
            if (key === 'saccade') {
              results[type].relaxed = out.runtime.relaxed;
              results[type].relaxedReason = out.runtime.relaxedReason;
            }
          }
          // The peers again, beside the Chromium runs: the Chromium ratios divide by these, not
          // by the first phase's, which ran a quarter of an hour earlier on a machine whose speed
          // drifts that much (the browser is idle meanwhile).
          if (usePeers)
            for (const [key, which] of [['llamaNativeC', 'native'], ['llamaWasmC', 'wasm']]) {
              const run = llamaPrefillDecode(which, files[type], threads);
              log(`round ${round} of ${browserRounds}: ${type}: llama.cpp ${which} beside Chromium, ${threads} thread(s): ` +
                `prefill ${f1(run.prefill)}, decode ${f1(run.decode)} tok/s`);
              keepBest(results[type], `${key}${threads}`, run);
            }
        }
      }
  } finally {
    await browser.close();
    await server.close();
  }
  loadSeen.push(os.loadavg()[0]);
}

const load = { seen: loadSeen, cores: os.availableParallelism() };
writeFileSync(opts.json, JSON.stringify({ date: new Date().toISOString(), prompt: PROMPT, decode: DECODE, repeat, load,
  stream: streamBest.gbs, chromium: { jsFlags: opts['js-flags'], lowering: chromiumLowering }, results, long }, null, 2));

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const fx = (x) => (x === undefined ? '-' : `${x.toFixed(2)}x`);
const row = (cells, widths) => cells.map((c, i) => String(c).padStart(widths[i])).join(' ');

const saccadeChromium = opts.simd === 'both' ? 'saccade Chromium relaxed'
  : `saccade Chromium${Object.values(results).some((r) => r.relaxed) ? ' (relaxed)' : ''}`;
const names = [['native', 'saccade native'], ['node', 'saccade wasm Node'], ['saccade', saccadeChromium],
  ['saccade128', 'saccade Chromium SIMD128'],
  ['llamaNative', 'llama.cpp native'], ['llamaWasm', 'llama.cpp wasm'],
  ['llamaNativeC', 'llama.cpp native (Chr.)'], ['llamaWasmC', 'llama.cpp wasm (Chr.)'], ['wllama', 'wllama Chromium']];
for (const type of types)
  if (results[type].relaxedReason) log(`${type}: saccade in Chromium: relaxed SIMD ${results[type].relaxed ? 'on' : 'off'}: ${results[type].relaxedReason}`);
console.log(`\nprefill ${PROMPT} tokens, decode ${DECODE}, best of ${repeat} interleaved rounds` +
  `${browserRounds > 1 ? ` (Chromium: best of ${browserRounds} interleaved rounds of the best of ${repeat} runs)` : ''}; ${load.cores} cores; ` +
  `load average (1 min) seen ${load.seen.map((x) => x.toFixed(1)).join(' → ')}`);
if (chromiumLowering) console.log(`Chromium${opts['js-flags'] ? ` (--js-flags=${opts['js-flags']})` : ''}: ${chromiumLowering}`);
const busiest = Math.max(...load.seen);
if (busiest > load.cores)
  console.log(`WARNING: the load average reached ${busiest.toFixed(1)} on ${load.cores} cores. Engines whose threads ` +
    'busy-wait between kernels (llama.cpp polls by default, saccade spins briefly) then lose most of their time to ' +
    'other processes, each in its own way: these figures measure the scheduler more than the kernels, and the ' +
    'ratios below are not valid for the targets. Rerun on a quiet machine.');
console.log(`plain streaming read (build/tools/bench_stream, best of the rounds): ${f1(streamBest.gbs[1])} GB/s on 1 thread, ` +
  `${f1(streamBest.gbs[2])} GB/s on 2\n`);
const widths = [6, 25, 7, 13, 12, 9, 13];
console.log(row(['type', 'engine', 'threads', 'prefill tok/s', 'decode tok/s', 'ms/token', 'decode GB/s'], widths));
for (const type of types) {
  const r = results[type];
  for (const [key, name] of names)
    for (const t of threadCounts) {
      const x = r[`${key}${t}`];
      if (x) console.log(row([type, name, t, f1(x.prefill), f1(x.decode), (1000 / x.decode).toFixed(1), f1((r.decodeBytes * x.decode) / 1e9)], widths));
    }
}
console.log(`\ndecode GB/s = weights read per token (all but the embedding tables) × decode tokens/s\n`);

// Issue 17's targets, at the most threads run: saccade's wasm (Node, and Chromium when run)
// against llama.cpp's wasm and native builds, and saccade native against llama.cpp native.
const T = Math.max(...threadCounts);
const goals = {
  q8_0: { decodeWasm: 1.5, decodeNative: 0.9, prefillWasm: 3, prefillNative: 0.6 },
  q4_0: { decodeWasm: 2, decodeNative: 0.75, prefillWasm: 3, prefillNative: 0.6 },
  f16: { decodeWasm: 3, prefillWasm: 2 },
  f32: { decodeNative: 0.95, prefillWasm: 2 },
};
const targets = [];
const pairedRows = []; // the same ratios round by round, printed after these
const spread = (p) => (p ? `${p.median.toFixed(2)} [${p.min.toFixed(2)}-${p.max.toFixed(2)}]` : '-');
console.log(`ratios at ${T} threads (issue 17's targets in brackets; Chromium's against llama.cpp's runs of the Chromium phase` +
  ` where they ran; every decode from an empty context but wllama's*, which follows its prompt)\n`);
const rw = [6, 26, 14, 14, 14, 14];
console.log(row(['type', 'saccade', 'decode/ll-wasm', 'decode/ll-nat', 'prefill/ll-wasm', 'prefill/ll-nat'], rw));
for (const type of types) {
  const r = results[type];
  const g = goals[type] ?? {};
  for (const [key, name] of [['node', 'wasm (Node)'], ['saccade', 'wasm (Chromium)'], ['native', 'native']]) {
    const s = r[`${key}${T}`];
    if (!s) continue;
    // Chromium's figures against the peers' runs of the same phase (see the browser loop)
    const phase = key === 'saccade' && r[`llamaWasmC${T}`] ? 'C' : '';
    const lw = r[`llamaWasm${phase}${T}`], ln = r[`llamaNative${phase}${T}`];
    const dw = ratioOf(s.decode, lw?.decode), dn = ratioOf(s.decode, ln?.decode);
    const pw = ratioOf(s.prefill, lw?.prefill), pn = ratioOf(s.prefill, ln?.prefill);
    const tag = (x, goal) => `${fx(x)}${goal && key !== 'native' ? ` [${goal}]` : ''}`;
    console.log(row([type, name, tag(dw, g.decodeWasm), tag(dn, g.decodeNative), tag(pw, g.prefillWasm), tag(pn, g.prefillNative)], rw));
    const paired = (peer, field) => pairedRatios(r.rounds, `${key}${T}`, `${peer}${phase}${T}`, field);
    const pdw = paired('llamaWasm', 'decode'), pdn = paired('llamaNative', 'decode');
    const ppw = paired('llamaWasm', 'prefill'), ppn = paired('llamaNative', 'prefill');
    pairedRows.push([type, name, spread(pdw), spread(pdn), spread(ppw), spread(ppn)]);
    if (key === 'native') continue;
    for (const [label, value, goal, pair] of [['decode vs llama.cpp wasm', dw, g.decodeWasm, pdw],
      ['decode vs llama.cpp native', dn, g.decodeNative, pdn], ['prefill vs llama.cpp wasm', pw, g.prefillWasm, ppw],
      ['prefill vs llama.cpp native', pn, g.prefillNative, ppn]])
      if (goal !== undefined && value !== undefined) targets.push([`${type} saccade ${name} ${label}`, value, goal, pair]);
  }
  if (r.wllama1 || r.wllama2) {
    const s = r[`saccade${T}`], w = r[`wllama${T}`];
    // wllama's decode follows its prompt (depth 128-160), saccade's starts empty: indicative only
    console.log(row([type, `vs wllama (Chromium)*`, fx(ratioOf(s?.decode, w?.decode)), '', fx(ratioOf(s?.prefill, w?.prefill)), ''], rw));
  }
}

// The same ratios round by round: on a VM whose speed drifts between rounds, the best of each
// engine may come from different states of the machine; a round and its peer's are adjacent.
console.log(`\npaired ratios at ${T} threads: each round's figure over its peer's in the same round, the median [least-most]` +
  ` of ${repeat} rounds${opts['no-browser'] ? '' : ` (Chromium: of ${browserRounds})`}\n`);
const pw2 = [6, 26, 18, 18, 18, 18];
console.log(row(['type', 'saccade', 'decode/ll-wasm', 'decode/ll-nat', 'prefill/ll-wasm', 'prefill/ll-nat'], pw2));
for (const cells of pairedRows) console.log(row(cells, pw2));

if (depths.length) {
  console.log(`\nlong context: decode tok/s at depth (GPT-2-small-sized llama, Q8_0, ${T} threads; llama.cpp's from -pg D,${DECODE} less -p D,` +
    ` '-' where those tokens took under ${100 * LLAMA_DEPTH_DECODE_SHARE}% of the -pg run, within its prefill's spread;` +
    ` KV cache: saccade f32 unless said, llama.cpp f16)\n`);
  const lw = [7, 14, 14, 16, 16, 22, 22, 14, 24, 12, 24];
  console.log(row(['depth', 'saccade native', 'saccade Node', 'llama.cpp native', 'llama.cpp wasm', 'native capture cost', 'Node capture cost',
    'Node bf16 KV', 'Node bf16 capture cost', 'Node q8 KV', 'Node q8 capture cost'], lw));
  /** Capture's paired ratios (with / without, one per round): their mean, and the cost it means
   * (1 − with / without) with each round's in brackets. */
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const withCost = (ratios) => (ratios ? `${(100 * (1 - mean(ratios))).toFixed(1)}% [${ratios.map((x) => (100 * (1 - x)).toFixed(1)).join(' ')}]` : '-');
  for (const d of depths) {
    const r = long[d];
    console.log(row([d, f1(r.native?.decode), f1(r.node?.decode), f1(r.llama_native?.decode), f1(r.llama_wasm?.decode),
      withCost(r.native_capture), withCost(r.node_capture), f1(r.node_bf16?.decode), withCost(r.node_bf16_capture),
      f1(r.node_q8?.decode), withCost(r.node_q8_capture)], lw));
    // capture "stays free": at most 5% of decode speed (the target's with / without >= 0.95)
    if (r.node_capture) targets.push([`saccade wasm (Node) decode with capture / without (paired), depth ${d}`, mean(r.node_capture), 0.95]);
    if (r.node_bf16_capture)
      targets.push([`saccade wasm (Node, bf16 KV) decode with capture / without (paired), depth ${d}`, mean(r.node_bf16_capture), 0.95]);
    if (r.node_q8_capture)
      targets.push([`saccade wasm (Node, q8 KV) decode with capture / without (paired), depth ${d}`, mean(r.node_q8_capture), 0.95]);
  }
  const first = long[depths[0]], last = long[depths[depths.length - 1]];
  const kept = last.node.decode / first.node.decode, kept16 = last.node_bf16.decode / first.node_bf16.decode;
  const kept8 = last.node_q8.decode / first.node_q8.decode;
  console.log(`saccade wasm decode at depth ${depths[depths.length - 1]} / at ${depths[0]}: ${kept.toFixed(2)}x (f32 KV), ` +
    `${kept16.toFixed(2)}x (bf16 KV), ${kept8.toFixed(2)}x (q8 KV)`);
  if (long[depths[0]].gqa_node) {
    console.log(`\ngrouped-query twin (12 query heads over 3 kv heads): decode tok/s at depth\n`);
    const gw = [7, 14, 14, 14, 16, 16];
    console.log(row(['depth', 'saccade native', 'saccade Node', 'Node q8 KV', 'llama.cpp native', 'llama.cpp wasm'], gw));
    for (const d of depths) {
      const r = long[d];
      console.log(row([d, f1(r.gqa_native?.decode), f1(r.gqa_node?.decode), f1(r.gqa_node_q8?.decode),
        f1(r.gqa_llama_native?.decode), f1(r.gqa_llama_wasm?.decode)], gw));
    }
    const kept = (key) => (last[key]?.decode && first[key]?.decode ? (last[key].decode / first[key].decode).toFixed(2) : '-');
    console.log(`depth ${depths[depths.length - 1]} / ${depths[0]}: saccade native ${kept('gqa_native')}, Node ${kept('gqa_node')}, ` +
      `Node q8 KV ${kept('gqa_node_q8')}, llama.cpp native ${kept('gqa_llama_native')}, wasm ${kept('gqa_llama_wasm')}`);
  }
  // the prompts the depth runs evaluate first: a long prefill is mostly attention over the batch
  console.log(`\nlong prompts: prefill tok/s of a D-token prompt (the same runs; KV cache: saccade f32 unless said, llama.cpp f16)\n`);
  const pw = [7, 14, 14, 12, 12, 16, 16, 16, 16];
  console.log(row(['prompt', 'saccade native', 'saccade Node', 'Node bf16 KV', 'Node q8 KV', 'llama.cpp native', 'llama.cpp wasm',
    'Node / ll-wasm', 'Node / ll-nat'], pw));
  for (const d of depths) {
    const r = long[d];
    console.log(row([d, f1(r.native?.prefill), f1(r.node?.prefill), f1(r.node_bf16?.prefill), f1(r.node_q8?.prefill),
      f1(r.llama_native?.prefill), f1(r.llama_wasm?.prefill), fx(ratioOf(r.node?.prefill, r.llama_wasm?.prefill)),
      fx(ratioOf(r.node?.prefill, r.llama_native?.prefill))], pw));
  }
  if (depths[0] === 128 && depths[depths.length - 1] === 2048) {
    targets.push(['saccade wasm (Node) decode at depth 2048 / 128', kept, 0.7]);
    targets.push(['saccade wasm (Node, bf16 KV) decode at depth 2048 / 128', kept16, 0.7]);
    targets.push(['saccade wasm (Node, q8 KV) decode at depth 2048 / 128', kept8, 0.7]);
  }
}

console.log('\ntargets\n');
for (const [label, value, min, pair] of targets)
  console.log(`${value >= min ? 'met    ' : 'MISSED '} ${label}: ${value.toFixed(2)}x (target >= ${min}x)` +
    `${pair ? `; round by round ${spread(pair)}` : ''}`);
console.log(`\nraw results: ${path.relative(root, opts.json)}`);
