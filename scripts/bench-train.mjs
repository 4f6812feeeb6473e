// Training speed: the wasm trainer (Node and headless Chromium) against the native tool
// build/tools/train_task, at 1 and 2 threads, on the same runs (the losses are bitwise equal, so
// the work is the same); then, in Chromium, the wall time until the reversal preset's
// cross-attention is an anti-diagonal, and (with --dates) until a dates preset reaches 90% exact
// match on its held-out pairs. A benchmark, not a test: figures move with the machine's load.
//
//   node scripts/bench-train.mjs [--steps 60] [--dates] [--no-browser]
//   (needs make wasm-train build/tools/train_task node_modules/.stamp; Chromium at /usr/bin/chromium)
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PRESETS, train } from '../src/js/train.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const STEPS = value('--steps', 60);

// The runs measured: one per architecture and size class.
const RUNS = [
  { label: 'reverse tiny (encdec 1+1 × 64)', task: 'reverse', preset: 'tiny' },
  { label: 'dates small (encdec 2+2 × 96)', task: 'dates', preset: 'small' },
];

/** { wall, cpu }: tokens per second and per CPU-second of the native tool over STEPS steps (its own clocks). */
function nativeSpeed(run, threads) {
  const out = execFileSync(path.join(root, 'build/tools/train_task'),
    ['--task', run.task, ...presetArgs(run), '--steps', STEPS, '--print-every', STEPS, '--threads', threads].map(String),
    { encoding: 'utf8' });
  const m = /# [\d.]+ s, (\d+) tokens\/s; [\d.]+ CPU s, (\d+) tokens per CPU-second/.exec(out);
  return { wall: Number(m[1]), cpu: Number(m[2]) };
}

/** The preset as the native tool's options. */
function presetArgs({ task, preset }) {
  const p = PRESETS[task][preset];
  const flags = { layers: '--layers', embd: '--embd', heads: '--heads', ctx: '--ctx', batch: '--batch', lr: '--lr',
    minLen: '--min-len', maxLen: '--max-len' };
  const out = [];
  for (const group of [p.model, p.optimizer, p.data])
    for (const [k, v] of Object.entries(group ?? {})) out.push(flags[k], v);
  return out;
}

async function nodeSpeed(run, threads) {
  const r = await train({ task: run.task, preset: run.preset, steps: STEPS, threads, evalEvery: 0,
    variant: threads === 1 ? 'st' : 'mt' });
  await new Promise((resolve) => setTimeout(resolve, 0));
  const t0 = performance.now(), cpu0 = process.cpuUsage(); // the whole process: every pool thread
  const tokens0 = r.get('tokens');
  await r.done;
  const cpu = process.cpuUsage(cpu0), tokens = r.get('tokens') - tokens0;
  r.dispose();
  return { wall: tokens / ((performance.now() - t0) / 1000), cpu: tokens / ((cpu.user + cpu.system) / 1e6) };
}

const fmt = (x) => Math.round(x).toLocaleString('en');

const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
console.log(`training throughput, tokens/s over ${STEPS} steps (source + target tokens for encoder–decoder); ` +
  `load average ${load()} on ${os.cpus().length} CPUs`);
const table = [];
for (const run of RUNS)
  for (const threads of [1, 2]) {
    const native = nativeSpeed(run, threads);
    const node = await nodeSpeed(run, threads);
    table.push({ run: run.label, threads, native, node });
    console.log(`  ${run.label}, ${threads} thread${threads > 1 ? 's' : ''}: native ${fmt(native.wall)}, wasm in Node ` +
      `${fmt(node.wall)} (${(node.wall / native.wall).toFixed(2)}× native); per CPU-second: native ${fmt(native.cpu)}, ` +
      `wasm ${fmt(node.cpu)} (${(node.cpu / native.cpu).toFixed(2)}×)`);
  }

// The second thread's gain in wall time: the issue asks ≥ 1.6× (it needs an otherwise idle machine).
for (const run of RUNS) {
  const [one, two] = [1, 2].map((n) => table.find((t) => t.run === run.label && t.threads === n));
  console.log(`  ${run.label}: 2 threads vs 1, native ${(two.native.wall / one.native.wall).toFixed(2)}×, ` +
    `wasm in Node ${(two.node.wall / one.node.wall).toFixed(2)}×`);
}
console.log(`  load average after: ${load()}`);

if (!flag('--no-browser')) {
  const { chromium } = await import('playwright-core');
  const { serve } = await import('../web/serve.mjs');
  const server = await serve({ root, isolated: true });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--headless=new', '--disable-gpu'] });
  const page = await browser.newPage();
  await page.goto(`${server.url}/web/embed-example.html`);
  /** Runs the training worker in the page; returns { tokensPerSecond, seconds, diagonalAt, exactAt }. */
  const inBrowser = (options, watch) => page.evaluate(async ({ options, watch }) => {
    const worker = new Worker('/src/js/train-worker.mjs', { type: 'module' });
    const t0 = performance.now();
    let first = null, tokens0 = 0, last = null, diagonalAt = null, exactAt = null;
    return new Promise((resolve, reject) => {
      worker.onmessage = ({ data }) => {
        if (data.type === 'error') reject(new Error(data.message));
        if (data.type === 'step') {
          last = data.record;
          if (!first) { first = performance.now(); tokens0 = data.record.tokens; }
          if (watch === 'exact' && exactAt === null && data.record.exact >= 0.9) {
            exactAt = (performance.now() - t0) / 1000;
            worker.postMessage({ type: 'stop' });
          }
        }
        if (data.type === 'probe' && watch === 'diagonal' && diagonalAt === null && last) {
          // every output character's strongest source position (mean over the last layer's heads) mirrors it
          const { layers, heads, queries, keys, maps } = data.probe;
          const nq = queries.length - 1, nk = keys.length;
          let ok = nq === nk;
          for (let q = 0; q < nq && ok; q++) {
            let best = 0, bestW = -1;
            for (let k = 0; k < nk; k++) {
              let w = 0;
              for (let h = 0; h < heads; h++) w += maps[(((layers - 1) * heads + h) * queries.length + q) * nk + k];
              if (w > bestW) { bestW = w; best = k; }
            }
            ok = best === nk - 1 - q;
          }
          if (ok) {
            diagonalAt = (performance.now() - t0) / 1000;
            worker.postMessage({ type: 'stop' });
          }
        }
        if (data.type === 'done') {
          const seconds = (performance.now() - first) / 1000;
          worker.terminate();
          resolve({ tokensPerSecond: (last.tokens - tokens0) / seconds, seconds, steps: last.step, diagonalAt, exactAt });
        }
      };
      worker.postMessage({ type: 'start', options, probeEvery: watch === 'diagonal' ? 5 : 0 });
    });
  }, { options, watch });

  for (const run of RUNS)
    for (const threads of [1, 2]) {
      const r = await inBrowser({ task: run.task, preset: run.preset, steps: STEPS, threads, evalEvery: 0,
        variant: threads === 1 ? 'st' : 'mt' });
      const native = table.find((t) => t.run === run.label && t.threads === threads).native.wall;
      console.log(`  ${run.label}, ${threads} thread${threads > 1 ? 's' : ''}: wasm in Chromium ${fmt(r.tokensPerSecond)} ` +
        `(${(r.tokensPerSecond / native).toFixed(2)}× native)`);
    }

  const rev = await inBrowser({ task: 'reverse', preset: 'tiny', threads: 2, evalEvery: 0 }, 'diagonal');
  console.log(`reverse tiny, 2 threads in Chromium: cross-attention anti-diagonal (every output's strongest source ` +
    `position mirrors it) after ${rev.diagonalAt?.toFixed(1) ?? 'never'} s (step ${rev.steps})`);
  if (flag('--dates')) {
    const dates = await inBrowser({ task: 'dates', preset: 'small', threads: 2, evalEvery: 50 }, 'exact');
    console.log(`dates small, 2 threads in Chromium: 90% held-out exact match after ${dates.exactAt?.toFixed(0) ?? 'never'} s ` +
      `(step ${dates.steps})`);
  }
  await browser.close();
  await server.close();
}
