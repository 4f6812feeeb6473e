#!/usr/bin/env node
// The demo page's benchmark (not a test), in headless Chromium on localhost:
//
//  1. time from navigation to the first generated token with the default model (Model A, or its
//     stand-in): cold (empty browser cache) and warm (reload: weights from the Cache API), with
//     and without cross-origin isolation — the best and median of RUNS page loads each, and where
//     the time goes: each phase's start and end (ms since navigation, medians), from the page's
//     stats.phases (web/app.mjs: the page's and the worker's marks, and the library's
//     'saccade:' User Timing measures, src/js/timing.mjs); each cold load in a new tab that has
//     sat idle for TAB_IDLE_MS first, in a browser driven over its DevTools pipe with no domain
//     enabled and no omnibox popup built by the tab's first navigation (scripts/chromium-pipe.mjs:
//     84-106 ms of the cold first token), as a visitor's is: Playwright's instrumentation of the
//     page and its workers added 40-75 ms to the warm first token (medians of 5-7 interleaved
//     rounds; the same with the pipe given Playwright's launch switches; cold loads within this
//     VM's spread) — --playwright times it there (with the popup too);
//  2. the views' drawing time (text, heatmap, model view; the alignment for Model B) while tokens
//     stream, on a GPT-2-small-shaped model (12 layers × 12 heads = 144 thumbnails) with a
//     200-token prompt and 128 generated tokens: each drawing after the first (which pools the
//     prompt's rows), as the page paces them (web/views/pace.mjs), with the tokens each
//     covered and the decode speed the page saw; also the cost of switching the view at the end
//     (everything re-pooled; rollout computed for every row).
//
//  3. (--chat, alone) a chat's turns on that GPT-2-small-shaped model with a chat template
//     (ChatML) written beside it (build/web-models/chat-gpt2-small-q8_0.gguf, in the other
//     checkout too with --against): a first message of CHAT_FIRST tokens, then one of CHAT_NEXT,
//     in a fresh page each round; from the click to the first generated token in the page (after
//     the render that shows it: the next turn's draws the whole conversation's views, the first
//     turn's only the text), the worker's own time to it (the page's "first after"), and the
//     attention rows the next turn kept from the first (the rest are sent).
//
//   node scripts/bench-web.mjs [--runs 5] [--json] [--first-token | --chat] [--against DIR] [--playwright]
//   node scripts/bench-web.mjs --screenshot web/screenshot.png   only the README's screenshot (Model A)
//
// --first-token: part 1 only. --against DIR: part 1 (or 3) for this tree and for another checkout
// of the repository (its web/, src/js/, dist/ and models/, e.g. an older commit's), in interleaved
// runs (the order alternates each run), for before/after figures taken under the same load, and
// their difference paired by round.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { DEFAULT_MODEL } from '../web/config.mjs';
import { serve } from '../web/serve.mjs';
import { launchPiped } from './chromium-pipe.mjs';
import { CHROMIUM_ARGS, DEMO_GENERATION_DONE, DEMO_READ_FROM_CACHE, modelA } from '../tests/web/helpers.mjs';
import { devModel, root } from '../tests/web/dev-models.mjs';
import { TEMPLATES } from '../tests/js/chat-models.mjs';
import { addMetadata } from '../tests/js/gguf.mjs';

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS = Number(option('--runs')) || 5;
const against = option('--against');
const asJson = args.includes('--json');
const { chromium } = await import('playwright-core');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const log = (...a) => asJson || console.log(...a);
/** Best / median. */
const cell = (xs) => xs.length ? `${Math.min(...xs).toFixed(0)} / ${median(xs).toFixed(0)}` : '—';

const A = modelA();
// Playwright's browser: the screenshot, the chat, part 2, and part 1 with --playwright; launched
// when first needed, so that none sits beside the piped browser part 1 times the page in.
let launched = null;
const playwright = () => (launched ??= chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS }));
const closeBrowsers = async () => {
  await piped?.close();
  if (launched) await (await launched).close();
};
let piped = null; // part 1's browser (chromium-pipe.mjs), unless --playwright
const servers = { isolated: await serve({ root, isolated: true }), plain: await serve({ root, isolated: false }) };
const trees = [{ name: 'this tree', servers }];
if (against) {
  const other = path.resolve(against);
  trees.push({ name: path.basename(other), servers: { isolated: await serve({ root: other, isolated: true }),
    plain: await serve({ root: other, isolated: false }) } });
}

// The page's stats once its first token is drawn (older pages have no phases: only the first token's time).
const STATS_READY = '(() => { const s = window.saccadeDemo?.stats; return Boolean(s?.navigationToFirstToken && (!s.phases || s.firstTokenPainted)); })()';
const STATS = '(() => { const { navigationToFirstToken, firstTokenPainted, phases } = window.saccadeDemo.stats; ' +
  'return { firstToken: navigationToFirstToken, painted: firstTokenPainted ?? null, phases: phases ?? {} }; })()';
const text = (id) => `document.getElementById('${id}').textContent`;

const done = (page) => page.waitForFunction(DEMO_GENERATION_DONE, null, { timeout: 600_000 });

if (args.includes('--screenshot')) {
  // The demo after a generation with Model A, a token hovered: the README's picture.
  const file = path.resolve(args[args.indexOf('--screenshot') + 1] ?? 'web/screenshot.png');
  const page = await (await playwright()).newPage({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`${servers.isolated.url}/web/?${A.query ? `${A.query}&` : ''}run&max=60&seed=3`);
  await done(page);
  await page.selectOption('#head', 'mean');
  const n = await page.$$eval('#output .tok', (s) => s.length);
  await page.hover(`#output .tok[data-i="${Math.floor(n * 0.6)}"]`);
  await page.screenshot({ path: file });
  console.log(`wrote ${path.relative(root, file)} (${path.relative(root, A.file)})`);
  await closeBrowsers();
  await servers.isolated.close();
  await servers.plain.close();
  process.exit(0);
}
const large = devModel('gpt2-small-q8_0');
const results = { model: path.relative(root, A.file), defaultModel: DEFAULT_MODEL, firstToken: {}, render: {} };

// 3. a chat's turns (--chat): the second evaluates only its new tokens (prompt reuse), and the
// page is sent only the attention rows it does not hold
const CHAT_FIRST = 700; // tokens of the first message ('az' is one token of the synthetic vocabulary)
const CHAT_NEXT = 20;
if (args.includes('--chat')) {
  const name = 'build/web-models/chat-gpt2-small-q8_0.gguf';
  const bytes = addMetadata(readFileSync(large), [['tokenizer.chat_template', 'string', TEMPLATES.chatml]]);
  for (const dir of [root, ...(against ? [path.resolve(against)] : [])]) {
    mkdirSync(path.join(dir, 'build/web-models'), { recursive: true });
    writeFileSync(path.join(dir, name), bytes);
  }
  /** Both turns in a fresh page: [{ drawn, worker }] (ms from the click). */
  const turns = async (server) => {
    const context = await (await playwright()).newContext({ viewport: { width: 1400, height: 1100 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/web/?model=/${name}`);
    await page.waitForFunction(() => !document.getElementById('generate').disabled, null, { timeout: 120_000 });
    if (!(await page.isChecked('#chat-mode'))) throw new Error('the page did not offer chat for the model with a template');
    await page.fill('#max-tokens', '4');
    await page.fill('#seed', '1');
    const out = [];
    for (const n of [CHAT_FIRST, CHAT_NEXT]) {
      await page.fill('#prompt', 'az'.repeat(n));
      const drawn = await page.evaluate(() => new Promise((resolve, reject) => {
        const output = document.getElementById('output');
        const t0 = performance.now();
        const seen = new MutationObserver(() => {
          if (!output.querySelector('.tok.gen')) return;
          seen.disconnect();
          resolve(performance.now() - t0);
        });
        seen.observe(output, { childList: true, subtree: true });
        document.getElementById('generate').click();
        setTimeout(() => reject(new Error(`no token: ${document.getElementById('speed').textContent}`)), 120_000);
      }));
      await done(page);
      const worker = Number(/first after (\d+) ms/.exec(await page.textContent('#speed'))?.[1]);
      if (!Number.isFinite(worker)) throw new Error(`no first-token time in "${await page.textContent('#speed')}"`);
      const kept = await page.evaluate(() => window.saccadeDemo.stats.keptRows ?? null); // (null: a page without it)
      out.push({ drawn, worker, kept });
    }
    await context.close();
    return out;
  };
  const chatRuns = new Map(trees.map((t) => [t.name, []]));
  for (const tree of trees) await turns(tree.servers.isolated); // not counted: the server compresses each file on its first request
  for (let r = 0; r < RUNS; r++)
    for (const tree of r % 2 ? [...trees].reverse() : trees) chatRuns.get(tree.name).push(await turns(tree.servers.isolated));
  results.chat = {};
  log(`\nchat turns (GPT-2-small-shaped, Q8_0, ChatML; first message ${CHAT_FIRST} tokens, then ${CHAT_NEXT}; ` +
    `ms from the click; best / median of ${RUNS}):`);
  log('| | first turn, in the page | worker | next turn, in the page | worker | rows kept |');
  log('|---|---|---|---|---|---|');
  for (const [tree, list] of chatRuns) {
    const at = (turn, key) => list.map((x) => x[turn][key]);
    results.chat[tree] = { first: list.map((x) => x[0]), next: list.map((x) => x[1]) };
    log(`| ${tree} | ${cell(at(0, 'drawn'))} | ${cell(at(0, 'worker'))} | ${cell(at(1, 'drawn'))} | ${cell(at(1, 'worker'))} | ` +
      `${list[0][1].kept ?? '—'} |`);
  }
  await closeBrowsers();
  for (const tree of trees) for (const srv of Object.values(tree.servers)) await srv.close();
  if (asJson) console.log(JSON.stringify(results, null, 2));
  process.exit(0);
}

// 1. navigation → first token, and its phases
const PHASES = [
  ['page-worker', 'navigation → the page starts the worker (index.html)'],
  ['page-boot', 'navigation → boot.mjs runs (first in the bundle)'],
  ['page-modules', 'navigation → app.mjs runs (the page\'s bundle)'],
  ['page-setup', 'app.mjs → load requested'],
  ['worker-script', 'worker created → its script runs'],
  ['library-import', 'worker: library imported'],
  ['await-library', 'worker: load message → loadModel'],
  ['model-preopen', 'model: request → response, started early (preopen)'],
  ['cache-match', 'preopen: the Cache API opened and matched'],
  ['cache-fresh', 'preopen: the cached copy checked (HEAD)'],
  ['cache-blob', 'preopen: the cached copy as a Blob'],
  ['model-open', 'loadModel: waiting for that response'],
  ['wasm-compile', 'wasm fetch + compile'],
  ['glue-import', 'Emscripten glue import'],
  ['wasm-instantiate', 'wasm instantiate'],
  ['thread-pool', 'pthread pool start (the load does not wait for it)'],
  ['model-read', 'model bytes into the heap'],
  ['model-parse', 'model parse (sac_model_load_split)'],
  ['context', 'context'],
  ['loaded-message', 'load requested → page has the model'],
  ['tokenize', 'tokenize'],
  ['first-eval', 'first eval (prompt + first token)'],
  ['first-token-message', 'generate → page has the first token'],
  ['first-token-render', 'first token → drawn'],
];

const UNDISTURBED_MS = 1500; // the page loads alone this long before the first wait (below)
// A new tab is still being set up for ~0.5 s after it is opened (the browser process
// and a spare renderer process starting: ~100 ms more to the first token when navigated at once).
// A visitor navigates a tab that is already there, so the tab first sits idle this long.
const TAB_IDLE_MS = 1000;

/**
 * One page load and its reload in a fresh browser context: [cold, warm], each { firstToken,
 * painted, phases, runtime }. In a tab of the piped browser (scripts/chromium-pipe.mjs: no
 * DevTools domain enabled, as in a visitor's browser), or with --playwright in Playwright's.
 */
async function loadTwice(server) {
  const tab = piped ? await piped.newTab() : await playwrightTab();
  await new Promise((resolve) => setTimeout(resolve, TAB_IDLE_MS));
  const url = `${server.url}/web/?${A.query ? `${A.query}&` : ''}run&max=8&seed=1`;
  const out = [];
  for (const warm of [false, true]) {
    // The page records its own times. Every wait evaluates a script in the page, so none is made
    // until the first token has long been drawn.
    if (warm) await tab.reload();
    else await tab.navigate(url);
    await new Promise((resolve) => setTimeout(resolve, UNDISTURBED_MS));
    await tab.waitFor(STATS_READY);
    const stats = await tab.evaluate(STATS);
    if (warm && !(await tab.evaluate(DEMO_READ_FROM_CACHE)))
      throw new Error('the reload did not read the model from the cache');
    await tab.waitFor(DEMO_GENERATION_DONE, { timeoutMs: 600_000 });
    stats.runtime = await tab.evaluate(text('status-text'));
    out.push(stats);
  }
  await tab.close();
  return out;
}

/** A Playwright page with loadTwice's tab interface. */
async function playwrightTab() {
  const context = await (await playwright()).newContext();
  const page = await context.newPage();
  return {
    navigate: (url) => page.goto(url, { waitUntil: 'commit' }),
    reload: () => page.reload({ waitUntil: 'commit' }),
    evaluate: (expression) => page.evaluate(expression),
    waitFor: (expression, { timeoutMs = 120_000 } = {}) => page.waitForFunction(expression, null, { timeout: timeoutMs }),
    close: () => context.close(),
  };
}

const span = (list, name) => {
  const s = list.map((r) => r.phases[name]).filter(Boolean);
  return s.length ? `${median(s.map((p) => p.start)).toFixed(0)}–${median(s.map((p) => p.end)).toFixed(0)}` : '—';
};

if (!args.includes('--playwright')) piped = await launchPiped(CHROMIUM_ARGS);
// one load of each first, not counted: the server compresses each file on its first request
for (const tree of trees) for (const mode of ['isolated', 'plain']) await loadTwice(tree.servers[mode]);
const runs = new Map(); // `${tree}/${mode}/${cold|warm}` → [stats]
for (let r = 0; r < RUNS; r++) {
  const order = r % 2 ? [...trees].reverse() : trees; // alternate which tree goes first
  for (const tree of order)
    for (const mode of ['isolated', 'plain']) {
      const [cold, warm] = await loadTwice(tree.servers[mode]);
      for (const [k, v] of [['cold', cold], ['warm', warm]]) {
        const key = `${tree.name}/${mode}/${k}`;
        if (!runs.has(key)) runs.set(key, []);
        runs.get(key).push(v);
      }
    }
}
for (const tree of trees) {
  const columns = ['isolated/cold', 'isolated/warm', 'plain/cold', 'plain/warm'].map((c) => [c, runs.get(`${tree.name}/${c}`)]);
  results.firstToken[tree.name] = Object.fromEntries(columns.map(([c, list]) => [c, {
    firstTokenMs: list.map((x) => x.firstToken), paintedMs: list.map((x) => x.painted),
    phases: Object.fromEntries(PHASES.map(([name]) => [name, span(list, name)])), runtime: list[0].runtime,
  }]));
  log(`\nnavigation → first token, ${tree.name} (${path.relative(root, A.file)}; ms since navigation; best / median of ${RUNS}):`);
  log(`| | ${columns.map(([c]) => c).join(' | ')} |`);
  log(`|---|${columns.map(() => '---').join('|')}|`);
  log(`| **first token (page has it)** | ${columns.map(([, l]) => cell(l.map((x) => x.firstToken))).join(' | ')} |`);
  log(`| **first token drawn** | ${columns.map(([, l]) => cell(l.map((x) => x.painted).filter((x) => x !== null))).join(' | ')} |`);
  log('\nphases (median start–end, ms since navigation):');
  log(`| phase | ${columns.map(([c]) => c).join(' | ')} |`);
  log(`|---|${columns.map(() => '---').join('|')}|`);
  for (const [name, what] of PHASES) log(`| ${what} | ${columns.map(([, l]) => span(l, name)).join(' | ')} |`);
  log(`runtimes: ${columns.map(([c, l]) => `${c}: ${l[0].runtime.replace(/ — .*/, '').replace(/^Runtime: /, '')}`).join('; ')}`);
}
if (against) {
  // Paired by round (both trees loaded back to back): the load of the moment cancels out of each
  // difference, where it moves the medians of a busy machine by tens of ms.
  const [mine, other] = trees.map((t) => t.name);
  results.paired = {};
  log(`
first token drawn, ${mine} − ${other}, paired by round (median difference; rounds where ${mine} was faster):`);
  for (const c of ['isolated/cold', 'isolated/warm', 'plain/cold', 'plain/warm']) {
    const a = runs.get(`${mine}/${c}`);
    const b = runs.get(`${other}/${c}`);
    // (a page without the paint mark: its first token's time)
    const d = a.map((x, i) => (x.painted ?? x.firstToken) - (b[i].painted ?? b[i].firstToken));
    const m = median(d);
    results.paired[c] = { medianMs: m, faster: d.filter((x) => x < 0).length, rounds: d.length };
    log(`| ${c} | ${m > 0 ? '+' : ''}${m.toFixed(0)} ms | ${d.filter((x) => x < 0).length} of ${d.length} |`);
  }
}
await piped?.close();
piped = null;
if (args.includes('--first-token')) {
  await closeBrowsers();
  for (const tree of trees) for (const s of Object.values(tree.servers)) await s.close();
  if (asJson) console.log(JSON.stringify(results, null, 2));
  process.exit(0);
}

// 2. the views' drawing time while tokens stream (GPT-2 small's shape)
{
  const context = await (await playwright()).newContext({ viewport: { width: 1400, height: 1100 } });
  const page = await context.newPage();
  const prompt = 'az'.repeat(200); // the synthetic vocabulary has one token per "az"
  const modelUrl = `/${path.relative(root, large)}`;
  await page.goto(`${servers.isolated.url}/web/?model=${modelUrl}&prompt=${prompt}&max=128&seed=1&run`);
  await done(page);
  const r = await page.evaluate(() => ({
    frames: window.saccadeDemo.stats.renderMs,
    prompt: window.saccadeDemo.state.store.tokens.filter((t) => !t.generated).length,
    info: window.saccadeDemo.state.model.info,
    speed: document.getElementById('speed').textContent,
    runtime: document.getElementById('status-text').textContent,
  }));
  const drawn = r.frames.filter((f) => f.streaming).slice(1);
  const ms = drawn.map((f) => f.ms);
  const tokensPerDrawing = drawn.length > 1 ? (drawn.at(-1).context - drawn[0].context) / (drawn.length - 1) : NaN;
  // switching the view at the final context: full re-pool (and rollout for every row)
  const switches = {};
  for (const head of ['1', 'mean', 'rollout']) {
    const before = await page.evaluate(() => window.saccadeDemo.stats.renderMs.length);
    await page.selectOption('#head', head);
    await page.waitForFunction((n) => window.saccadeDemo.stats.renderMs.length > n, before);
    switches[head] = await page.evaluate(() => window.saccadeDemo.stats.renderMs.at(-1).ms);
  }
  results.render = {
    model: `${path.relative(root, large)} (${r.info.layers} layers × ${r.info.heads} heads)`,
    promptTokens: r.prompt,
    contextAtEnd: r.frames.at(-1).context,
    viewsMsMedianStreaming: median(ms),
    viewsMsP95Streaming: pct(ms, 0.95),
    viewsDrawnStreaming: ms.length,
    tokensPerDrawing,
    switchViewMs: switches,
    speed: r.speed,
  };
  log(ms.length ? `views drawn while streaming (${r.info.layers}×${r.info.heads} heads, prompt ${r.prompt}, after the first ` +
    `drawing): median ${median(ms).toFixed(1)} ms, p95 ${pct(ms, 0.95).toFixed(1)} ms over ${ms.length} drawings ` +
    `(${tokensPerDrawing.toFixed(1)} tokens each; ${r.speed})` : `no drawing of the views while streaming after the first (${r.speed})`);
  log(`switching the view at ${r.frames.at(-1).context} tokens: head ${switches['1'].toFixed(1)} ms, ` +
    `mean over heads ${switches.mean.toFixed(1)} ms, rollout ${switches.rollout.toFixed(1)} ms`);
  await context.close();
}

await closeBrowsers();
for (const tree of trees) for (const s of Object.values(tree.servers)) await s.close();
if (asJson) console.log(JSON.stringify(results, null, 2));
