#!/usr/bin/env node
// Where the CPU goes while the demo page starts (not a test): cold loads of the page with Model A
// in headless Chromium on localhost, each in a new tab traced with Chromium's own tracing of every
// process, from navigation to the first token the page has. For each
// load it prints each thread's busy time in that window (top-level tasks: the page's main thread,
// the model worker, the pool's worker, V8's and Blink's background threads, the browser and
// network processes), a few activities summed over the renderer (V8 isolates started for workers,
// script compiles, wasm compiled lazily by Liftoff on first call and again by TurboFan once hot,
// garbage collection, style and layout, paint and raster), and the longest tasks of the page's
// and the workers' threads with what they spent their time in. Each figure twice: the tasks' time
// on the clock (a thread waiting for a core counts) and their threads' CPU time (the trace's
// thread clock), against the CPU two cores give. make bench-web says how long each phase took;
// this says what the cores did meanwhile. Chromium is driven over its DevTools pipe with nothing
// but tracing enabled (scripts/chromium-pipe.mjs), as make bench-web's is.
//
//   node scripts/trace-web.mjs [--runs 2] [--mode isolated|plain|both] [--warm] [--tasks 8] [--keep DIR]
//
// --warm: trace the reload instead (the page loaded once untraced, then reloaded: the wasm and the
// scripts revalidated from the browser's cache, the model read from the Cache API), as make
// bench-web's warm column;
// --tasks N: the N longest tasks of each page thread (default 8); --keep DIR: write each trace
// there (open it in chrome://tracing or https://ui.perfetto.dev).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { launchPiped } from './chromium-pipe.mjs';
import { serve } from '../web/serve.mjs';
import { CHROMIUM_ARGS, DEMO_GENERATION_DONE, DEMO_READ_FROM_CACHE, modelA } from '../tests/web/helpers.mjs';
import { root } from '../tests/web/dev-models.mjs';

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const RUNS = Number(option('--runs')) || 2;
const MODES = (option('--mode') ?? 'both') === 'both' ? ['isolated', 'plain'] : [option('--mode')];
const TASKS = Number(option('--tasks') ?? 8);
const keep = option('--keep');
const WARM = args.includes('--warm');
for (const m of MODES) if (!['isolated', 'plain'].includes(m)) throw new Error(`--mode: isolated, plain or both, not '${m}'`);

const CATEGORIES = ['toplevel', 'blink.user_timing', 'devtools.timeline', 'disabled-by-default-devtools.timeline',
  'v8', 'v8.wasm', 'disabled-by-default-v8.compile', 'disabled-by-default-v8.gc', 'blink', 'loading', 'cc'];
// Wrappers that say nothing of what a task did: a task's label is its longest descendant named otherwise.
const GENERIC = /^(RunTask|ThreadControllerImpl::RunTask|ThreadPool_RunTask|SimpleWatcher::OnHandleReady|Receive mojo (message|reply)|v8\.callFunction|FunctionCall|HandlePostMessage|MessagePort::Accept|AsyncTask Run|EventDispatch|TimerFire|V8\.Execute|v8\.run|RunMicrotasks|BlinkScheduler_PerformMicrotaskCheckpoint|ResourceRequestSender::OnRequestComplete|URLLoader::Context::OnCompletedRequest|ResponseBodyLoader::OnStateChange)$/;
// Activities summed over the renderer's threads (the outermost matching events of each thread);
// in the traces looked at, no event of one activity fell inside another's.
const ACTIVITIES = [
  ['V8 isolate started (a worker)', /^V8PerIsolateData::Initialize$/],
  ['JS compile (main thread, workers)', /^(v8\.compileModule|v8\.compile|V8\.CompileLazy|V8\.CompileCode)$/],
  ['JS parse in the background', /^v8\.parseOnBackground$/],
  ['wasm compiled lazily (Liftoff, first call)', /^wasm\.CompileLazy$/],
  ['wasm compiled again once hot (TurboFan)', /^wasm\.TopTierCompilation$/],
  ['wasm streaming compile (consume, validate)', /^(v8\.wasm\.compileConsume|wasm\.ValidateFunctionsStreaming)$/],
  ['garbage collection', /^(MinorGC|MajorGC|V8\.GC_SCAVENGER|V8\.GC_MARK_COMPACTOR|V8\.GCScavenger|V8\.GCCompactor)$/],
  ['style and layout', /^(UpdateLayoutTree|Layout|Document::UpdateStyleAndLayout|LocalFrameView::UpdateStyleAndLayout)$/],
  ['paint and raster', /^(Paint|PaintImage|RasterTask)$/],
];

const A = modelA();
const browser = await launchPiped(CHROMIUM_ARGS);
const servers = Object.fromEntries(await Promise.all(MODES.map(async (m) => [m, await serve({ root, isolated: m === 'isolated' })])));
const pageUrl = (server) => `${server.url}/web/?${A.query ? `${A.query}&` : ''}run&max=8&seed=1`;

const FIRST_TOKEN = 'window.saccadeDemo?.stats.navigationToFirstToken';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Loads the page in `tab`, untraced, and waits until its generation has ended. */
async function loadUntilDone(tab, server) {
  await tab.navigate(pageUrl(server));
  await tab.waitFor(FIRST_TOKEN); // (then the page's elements are there for DEMO_GENERATION_DONE)
  await tab.waitFor(DEMO_GENERATION_DONE, { timeoutMs: 600_000 });
}

/** One load in a new tab (cold, or with --warm its reload), traced: { trace, events, firstToken (ms since navigation) }. */
async function tracedLoad(server) {
  const tab = await browser.newTab();
  await sleep(1000); // a new tab is still being set up (bench-web.mjs)
  if (WARM) await loadUntilDone(tab, server);
  await browser.startTracing(CATEGORIES);
  if (WARM) await tab.reload();
  else await tab.navigate(pageUrl(server));
  await sleep(1500); // nothing evaluated in the page meanwhile
  const firstToken = await tab.waitFor(FIRST_TOKEN);
  const trace = await browser.stopTracing();
  if (WARM && !(await tab.evaluate(DEMO_READ_FROM_CACHE)))
    throw new Error('the reload did not read the model from the cache');
  await tab.close();
  return { trace, events: JSON.parse(trace).traceEvents, firstToken };
}

/** The trace's process names (by pid) and thread names (by 'pid/tid'). */
function threadsOf(events) {
  const processes = new Map(), thread = new Map();
  for (const e of events) {
    if (e.name === 'process_name') processes.set(e.pid, e.args.name);
    if (e.name === 'thread_name') thread.set(`${e.pid}/${e.tid}`, e.args.name);
  }
  return { processes, thread };
}

/** The page's navigationStart mark (its ts: the page's time origin, trace µs; its pid: the page's renderer). */
function navigationStart(events) {
  const mark = events.find((e) => e.name === 'navigationStart' && e.cat?.includes('blink.user_timing') &&
    String(e.args?.data?.documentLoaderURL ?? '').includes('/web/'));
  if (!mark) throw new Error('no navigationStart mark of the page (/web/) in the trace');
  return mark;
}

/** Complete events per thread, sorted by start. */
function byThread(events) {
  const out = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur) continue;
    const k = `${e.pid}/${e.tid}`;
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(e);
  }
  for (const list of out.values()) list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  return out;
}

/** The outermost events of a sorted list (those inside no other kept event). */
function outermost(list) {
  const out = [];
  let end = -Infinity;
  for (const e of list) {
    if (e.ts >= end) {
      out.push(e);
      end = e.ts + e.dur;
    }
  }
  return out;
}

const clip = (e, t0, t1) => Math.max(0, Math.min(e.ts + e.dur, t1) - Math.max(e.ts, t0));
/** An event's CPU time (its thread clock's, tdur) within [t0, t1), in proportion to its clock time there. */
const cpu = (e, t0, t1) => (e.tdur ?? e.dur) * (clip(e, t0, t1) / e.dur);
const ms = (us) => (us / 1000).toFixed(1);
/** [clock, CPU] µs of `events` (outermost ones) within [t0, t1). */
const sums = (events, t0, t1) => outermost(events).reduce(([c, u], e) => [c + clip(e, t0, t1), u + cpu(e, t0, t1)], [0, 0]);

function report(mode, run, { events, firstToken }) {
  const { processes, thread } = threadsOf(events);
  const mark = navigationStart(events);
  const t0 = mark.ts;
  const t1 = t0 + firstToken * 1000;
  const threads = byThread(events);
  const pagePid = mark.pid;
  // the page's workers, told apart by the script each compiles: the model worker's bundle, the
  // pool's Emscripten worker script
  const compiles = (k, re) => threads.get(k).some((e) => e.name === 'v8.compileModule' && re.test(String(e.args?.data?.url ?? e.args?.url ?? '')));
  const role = (k) => {
    const [pid] = k.split('/');
    const name = thread.get(k) ?? '?';
    if (Number(pid) !== pagePid) return `${processes.get(Number(pid)) ?? pid} / ${name}`;
    if (name === 'CrRendererMain') return 'page: main thread';
    if (/DedicatedWorker/.test(name) && compiles(k, /\/web\/(bundle\/)?worker\.mjs/)) return 'page: model worker';
    if (/DedicatedWorker/.test(name) && compiles(k, /saccade-[a-z-]+\.worker\.mjs/)) return 'page: pool worker';
    return `page: ${name}`;
  };
  console.log(`\n## ${mode} ${WARM ? 'warm' : 'cold'} load ${run}: first token at ${firstToken.toFixed(0)} ms\n`);
  console.log('| thread, its tasks before the first token | clock ms | CPU ms |');
  console.log('|---|---|---|');
  // threads of one role (a thread pool's, a process's of one name) are summed
  const roles = new Map([...threads.keys()].map((k) => [k, role(k)])); // (role scans a worker's events)
  const merged = new Map();
  for (const [k, list] of threads) {
    const [c, u] = sums(list.filter((e) => /^(ThreadControllerImpl::RunTask|RunTask|ThreadPool_RunTask)$/.test(e.name)), t0, t1);
    const [c0, u0] = merged.get(roles.get(k)) ?? [0, 0];
    merged.set(roles.get(k), [c0 + c, u0 + u]);
  }
  const shown = [...merged].filter(([, [c]]) => c >= 2000).sort((a, b) => b[1][1] - a[1][1]);
  for (const [r, [c, u]] of shown) console.log(`| ${r} | ${ms(c)} | ${ms(u)} |`);
  const total = [...merged.values()].reduce(([c, u], [c1, u1]) => [c + c1, u + u1], [0, 0]);
  console.log(`| all threads (two cores give ${(2 * firstToken).toFixed(0)} ms) | ${ms(total[0])} | ${ms(total[1])} |`);

  console.log('\n| activity (the page\'s renderer, all threads) | clock ms | CPU ms |');
  console.log('|---|---|---|');
  const pageEvents = [...threads].filter(([k]) => k.startsWith(`${pagePid}/`));
  for (const [label, re] of ACTIVITIES) {
    let c = 0, u = 0;
    for (const [, list] of pageEvents) {
      const [c1, u1] = sums(list.filter((e) => re.test(e.name)), t0, t1);
      c += c1;
      u += u1;
    }
    console.log(`| ${label} | ${ms(c)} | ${ms(u)} |`);
  }

  for (const [k, list] of pageEvents) {
    const r = roles.get(k);
    if (!/^page: (main thread|model worker|pool worker)$/.test(r)) continue;
    const tasks = outermost(list.filter((e) => /^(ThreadControllerImpl::RunTask|RunTask)$/.test(e.name)))
      .filter((e) => clip(e, t0, t1) > 0).sort((a, b) => b.dur - a.dur).slice(0, TASKS).sort((a, b) => a.ts - b.ts);
    console.log(`\n${r}, its ${tasks.length} longest tasks (start ms since navigation + clock ms (CPU ms): what took longest inside):`);
    for (const task of tasks) {
      const inside = list.filter((e) => e !== task && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur && !GENERIC.test(e.name))
        .sort((a, b) => b.dur - a.dur).slice(0, 3);
      const what = inside.map((e) => {
        const url = e.args?.data?.url ?? e.args?.url;
        return `${e.name}${url ? ` (${String(url).split('/').pop().split('?')[0]})` : ''} ${ms(e.dur)}`;
      }).join('; ');
      console.log(`  ${((task.ts - t0) / 1000).toFixed(0)} + ${ms(task.dur)} (${ms(task.tdur ?? task.dur)}): ${what || '(no named work inside)'}`);
    }
  }
}

// one load of each first, not counted: the server compresses each file on its first request
for (const m of MODES) {
  const tab = await browser.newTab();
  await loadUntilDone(tab, servers[m]);
  await tab.close();
}
console.log(`${path.relative(root, A.file)}: ${WARM ? 'reloads' : 'cold loads'} traced (tracing itself slows the page: compare phases with make bench-web)`);
for (let r = 1; r <= RUNS; r++)
  for (const m of MODES) {
    const load = await tracedLoad(servers[m]);
    if (keep) {
      mkdirSync(keep, { recursive: true });
      writeFileSync(path.join(keep, `${m}-${r}.json`), load.trace);
    }
    report(m, r, load);
  }
await browser.close();
for (const s of Object.values(servers)) await s.close();
