#!/usr/bin/env node
// Benchmark (not a test): saccade's wasm builds against its native build, and against wllama
// (llama.cpp in wasm, what users would pick instead), on GPT-2-small-shaped random models
// (768 wide, 12 layers, 12 heads, vocab 50257, context 1024) at Q8_0, Q4_0, F16 and F32.
// Every engine evaluates a 128-token prompt as one batch (prefill), then 32 single tokens
// (decode); best of --repeat runs (in Node: --repeat rounds, each running every configuration
// once, in a process that runs it twice). Figures move 10-30% between runs on a shared 2-core
// machine: read the ratios, which come from one invocation (best per configuration). Decode
// reads every weight once per token, so its 2-thread gain is capped by the memory bandwidth
// two cores share: the native build's 2t/1t, printed beside the wasm one, shows what the
// machine allowed during the run.
//
//   node scripts/bench-wasm.mjs [--types q8_0,q4_0,f16,f32] [--repeat 3] [--no-browser] [--json OUT]
//
// Node: build/saccade bench (native) and src/js/cli.mjs bench (wasm; 1 thread → st, 2 → mt).
// Chromium (headless, a COOP/COEP localhost page, scripts/bench-page/): saccade in a module
// worker and wllama, side by side on the same files. wllama refuses files without a
// vocabulary, so every engine reads a copy with a synthetic GPT-2-style one (tests/js/gguf.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { withSyntheticGpt2Tokenizer } from '../tests/js/gguf.mjs';
import { DEMO_PATHS, serve } from '../web/serve.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: opts } = parseArgs({
  options: {
    types: { type: 'string', default: 'q8_0,q4_0,f16,f32' },
    repeat: { type: 'string', default: '3' },
    'no-browser': { type: 'boolean', default: false },
    json: { type: 'string', default: path.join(root, 'build/bench-wasm.json') },
  },
});
const types = opts.types.split(',');
const repeat = Number(opts.repeat);
const PROMPT = 128;
const DECODE = 32;

for (const f of ['build/saccade', 'build/tools/make_model', 'dist/saccade-mt.wasm', 'dist/saccade-st.wasm'])
  if (!existsSync(path.join(root, f))) throw new Error(`${f} is missing: run \`make bench-wasm\``);

const log = (...a) => console.error(...a);

/** build/bench-models/gpt2-small-TYPE-tok.gguf (made from make_model's file on first use). */
function model(type) {
  const dir = path.join(root, 'build/bench-models');
  mkdirSync(dir, { recursive: true });
  const plain = path.join(dir, `gpt2-small-${type}.gguf`);
  const withVocab = path.join(dir, `gpt2-small-${type}-tok.gguf`);
  if (!existsSync(plain)) {
    log(`writing ${plain}`);
    execFileSync(path.join(root, 'build/tools/make_model'), [`${plain}.tmp`, '--gpt2-small', '--type', type]);
    renameSync(`${plain}.tmp`, plain);
  }
  if (!existsSync(withVocab) || statSync(withVocab).mtimeMs < statSync(plain).mtimeMs) {
    log(`writing ${withVocab}`);
    writeFileSync(`${withVocab}.tmp`, withSyntheticGpt2Tokenizer(readFileSync(plain), 50257));
    renameSync(`${withVocab}.tmp`, withVocab);
  }
  return withVocab;
}

/** One process: the better of two runs, as the first pays for page faults and V8's tier-up. */
function benchCli(cmd, args, file, threads) {
  const out = execFileSync(cmd, [...args, 'bench', file, '--threads', String(threads), '--prompt-tokens', String(PROMPT),
    '--decode-tokens', String(DECODE), '--repeat', '2'], { encoding: 'utf8' });
  const j = JSON.parse(out);
  return { prefill: j.prefill_tokens_per_s, decode: j.decode_tokens_per_s, threads: j.threads };
}

/** Keeps the best prefill and the best decode seen for one configuration. */
function keepBest(r, key, run) {
  const b = r[key];
  r[key] = b ? { ...b, prefill: Math.max(b.prefill, run.prefill), decode: Math.max(b.decode, run.decode) } : run;
}

// Other processes on the machine skew everything, threads most: say how busy it was.
const loadBefore = os.loadavg()[0];
const results = {};
// Rounds: each runs every Node configuration once, so a slow spell of the machine (a VM's
// stolen time drifts over minutes) lands on all of them instead of on the one that ran then.
const engines = [['native', path.join(root, 'build/saccade'), []], ['node', process.execPath, [path.join(root, 'src/js/cli.mjs')]]];
for (const type of types) {
  const file = model(type);
  const r = (results[type] = { file: path.relative(root, file), bytes: statSync(file).size });
  for (let round = 1; round <= repeat; round++)
    for (const threads of [1, 2])
      for (const [key, cmd, args] of engines) {
        log(`${type}: ${key === 'node' ? 'wasm in Node' : 'native'}, ${threads} thread(s), round ${round} of ${repeat}`);
        keepBest(r, `${key}${threads}`, benchCli(cmd, args, file, threads));
      }
}

if (!opts['no-browser']) {
  const { chromium } = await import('playwright-core');
  const server = await serve({ root, isolated: true,
    allow: [...DEMO_PATHS, '/scripts/bench-page/', '/node_modules/@wllama/wllama/esm/', '/build/bench-models/'] });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--headless'],
  });
  try {
    for (const type of types) {
      const url = `/${results[type].file}`;
      for (const threads of [1, 2]) {
        const args = { url, threads, promptTokens: PROMPT, decodeTokens: DECODE, repeat };
        for (const engine of ['saccade', 'wllama']) {
          log(`${type}: ${engine} in Chromium, ${threads} thread(s)`);
          const page = await browser.newPage(); // a fresh page per run: nothing left over
          await page.goto(`${server.url}/scripts/bench-page/index.html`);
          await page.waitForFunction(() => globalThis.bench);
          const out = await page.evaluate(({ engine, args }) => globalThis.bench[engine](args), { engine, args });
          if (out.threads !== threads) throw new Error(`${engine} ran ${out.threads} threads, not ${threads}`);
          results[type][`${engine}${threads}`] = { prefill: out.prefillTokensPerSecond, decode: out.decodeTokensPerSecond };
          await page.close();
        }
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

const load = { before: loadBefore, after: os.loadavg()[0], cores: os.availableParallelism() };
writeFileSync(opts.json, JSON.stringify({ date: new Date().toISOString(), prompt: PROMPT, decode: DECODE, repeat, load, results }, null, 2));

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const f1 = (x) => (x === undefined ? '-' : x.toFixed(1));
const ratio = (a, b) => (a === undefined || b === undefined ? '-' : `${(a / b).toFixed(2)}x`);
const row = (cells, widths) => cells.map((c, i) => String(c).padStart(widths[i])).join(' ');

const header = ['type', 'engine', 'threads', 'prefill tok/s', 'decode tok/s', 'ms/token'];
const widths = [6, 16, 7, 13, 12, 9];
console.log(`\nprefill ${PROMPT} tokens, decode ${DECODE}, best of ${repeat}; ${load.cores} cores, load average ` +
  `${load.before.toFixed(1)} before and ${load.after.toFixed(1)} after (above ~0.5 the figures, threads most, are skewed)\n`);
console.log(row(header, widths));
for (const type of types) {
  const r = results[type];
  for (const [key, name] of [['native', 'native'], ['node', 'wasm (Node)'], ['saccade', 'wasm (Chromium)'], ['wllama', 'wllama']])
    for (const t of [1, 2]) {
      const x = r[`${key}${t}`];
      if (x) console.log(row([type, name, t, f1(x.prefill), f1(x.decode), (1000 / x.decode).toFixed(1)], widths));
    }
}

const targets = [];
const check = (label, value, min) => targets.push([label, value, min]);
console.log('\nratios (targets in brackets)\n');
const rw = [6, 22, 18, 22, 22, 24, 24];
console.log(row(['type', 'wasm decode 2t/1t', 'native 2t/1t', 'wasm/native decode 1t', 'wasm/native decode 2t', 'saccade/wllama prefill', 'saccade/wllama decode'], rw));
for (const type of types) {
  const r = results[type];
  const n21 = r.node2.decode / r.node1.decode;
  check(`${type} wasm decode 2t/1t (Node)`, n21, 1.7);
  check(`${type} wasm/native decode 1t`, r.node1.decode / r.native1.decode, 0.8);
  check(`${type} wasm/native decode 2t`, r.node2.decode / r.native2.decode, 0.8);
  const pw = r.wllama2 && `${ratio(r.saccade1?.prefill, r.wllama1?.prefill)} / ${ratio(r.saccade2.prefill, r.wllama2.prefill)}`;
  const dw = r.wllama2 && `${ratio(r.saccade1?.decode, r.wllama1?.decode)} / ${ratio(r.saccade2.decode, r.wllama2.decode)}`;
  if (r.wllama2 && (type === 'q8_0' || type === 'q4_0'))
    for (const t of [1, 2]) {
      check(`${type} saccade/wllama prefill ${t}t`, r[`saccade${t}`].prefill / r[`wllama${t}`].prefill, 4);
      check(`${type} saccade/wllama decode ${t}t`, r[`saccade${t}`].decode / r[`wllama${t}`].decode, 4);
    }
  console.log(row([type, `${n21.toFixed(2)}x [1.7]`, ratio(r.native2.decode, r.native1.decode), `${ratio(r.node1.decode, r.native1.decode)} [0.8]`,
    `${ratio(r.node2.decode, r.native2.decode)} [0.8]`, pw ? `${pw} (1t/2t)` : '-', dw ? `${dw} (1t/2t)` : '-'], rw));
}
console.log('\ntargets\n');
for (const [label, value, min] of targets)
  console.log(`${value >= min ? 'met    ' : 'MISSED '} ${label}: ${value.toFixed(2)}x (target >= ${min}x)`);
console.log(`\nraw results: ${path.relative(root, opts.json)}`);
