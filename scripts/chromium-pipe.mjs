// Headless Chromium driven over its DevTools pipe (--remote-debugging-pipe) with the few commands
// a timing needs: a tab in a fresh browser context, navigate, reload, evaluate, and Chromium's own
// tracing of every process (scripts/trace-web.mjs). Nothing else is
// enabled, unlike Playwright, which turns on the Network domain in the page and in each worker
// (DevTools then keeps a copy of every response body: a 3.4 MB model's body took 90-108 ms to
// read in a page instead of 45-54) and holds each new worker until it has instrumented it. A
// visitor's browser does neither, so the page's start-up is timed this way (scripts/bench-web.mjs:
// Playwright's instrumentation added 40-75 ms to the demo's warm first token).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const COMMAND_MS = 120_000; // a command unanswered this long: the browser or its page hangs
// A tab's first navigation has Chromium build the tab's omnibox popup, a WebUI page in a renderer
// of its own (chrome://omnibox-popup.top-chrome), which here took 127-151 ms of CPU while the
// page loaded; a visitor's tab built it long before. Without it, the demo's cold first token came
// 84-106 ms sooner (medians of 8 interleaved rounds on a 2-core VM, isolated 630 → 546 ms, plain
// 533 → 427; the warm reload did not move). (Having the tab show another page first did not
// help: its navigation to the demo then lacked a spare renderer process and came 130-160 ms later.)
const VISITOR_FEATURES_OFF = 'WebUIOmniboxPopup';

/** `args` with VISITOR_FEATURES_OFF disabled: added to their --disable-features (Chromium reads only the last one), or as one. */
function withVisitorArgs(args) {
  const at = args.findLastIndex((a) => a.startsWith('--disable-features='));
  if (at < 0) return [...args, `--disable-features=${VISITOR_FEATURES_OFF}`];
  return args.map((a, i) => (i === at ? `${a},${VISITOR_FEATURES_OFF}` : a));
}

/** Starts /usr/bin/chromium with `args` (a --disable-features among them gets this one's too); resolves to { newTab(), startTracing(categories), stopTracing(), close() }. */
export async function launchPiped(args) {
  const profile = mkdtempSync(path.join(tmpdir(), 'saccade-chromium-'));
  // its own process group: one signal ends the browser and the helper processes it starts
  const child = spawn('/usr/bin/chromium', [...withVisitorArgs(args), '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
  // Whatever ends this process (an error thrown mid-run, process.exit, Ctrl-C), the browser and
  // its profile go with it; close() does the same in order.
  const cleanUp = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  };
  const onSignal = (signal) => {
    cleanUp();
    process.kill(process.pid, signal); // (this handler is gone: the signal's own action follows)
  };
  process.once('exit', cleanUp).once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const [toBrowser, fromBrowser] = [child.stdio[3], child.stdio[4]];
  let stderr = ''; // its tail, for the message when it fails
  child.stderr.setEncoding('utf8').on('data', (s) => (stderr = (stderr + s).slice(-2000)));
  const pending = new Map();
  const awaited = new Map(); // event name → the resolvers waiting for its next occurrence
  let nextId = 0;
  let received = '';
  let exited = null;
  const failAll = (why) => {
    for (const { reject, timer } of [...pending.values(), ...[...awaited.values()].flat()]) {
      clearTimeout(timer);
      reject(new Error(why));
    }
    pending.clear();
    awaited.clear();
  };
  const ended = (why) => {
    exited ??= `${why}${stderr.trim() ? `; its last output: ${stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`;
    failAll(exited);
  };
  child.on('error', (e) => ended(`chromium did not start: ${e.message}`));
  child.on('exit', (code, signal) => ended(`chromium exited (${signal ?? code})`));
  toBrowser.on('error', (e) => ended(`the pipe to chromium failed: ${e.message}`)); // (EPIPE while it dies)
  fromBrowser.setEncoding('utf8').on('data', (data) => {
    received += data;
    for (let end; (end = received.indexOf('\0')) >= 0;) {
      const message = JSON.parse(received.slice(0, end));
      received = received.slice(end + 1);
      if (message.id === undefined) { // an event: only tracing's are awaited (the browser target sends a few others)
        for (const { resolve, timer } of awaited.get(message.method) ?? []) {
          clearTimeout(timer);
          resolve(message.params);
        }
        awaited.delete(message.method);
        continue;
      }
      const waiter = pending.get(message.id);
      if (!waiter) continue;
      pending.delete(message.id);
      clearTimeout(waiter.timer);
      if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message}`));
      else waiter.resolve(message.result);
    }
  });
  /** One DevTools command (in a tab's session when `sessionId` is given). */
  const send = (method, params = {}, sessionId = undefined) => new Promise((resolve, reject) => {
    if (exited) return reject(new Error(exited));
    const id = ++nextId;
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error(`${method}: no answer from chromium within ${COMMAND_MS / 1000} s`));
    }, COMMAND_MS);
    pending.set(id, { resolve, reject, method, timer });
    toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
  });
  /** The parameters of the next `method` event. */
  const nextEvent = (method) => new Promise((resolve, reject) => {
    if (exited) return reject(new Error(exited));
    const waiter = { resolve, reject };
    waiter.timer = setTimeout(() => {
      awaited.set(method, (awaited.get(method) ?? []).filter((w) => w !== waiter));
      reject(new Error(`no ${method} from chromium within ${COMMAND_MS / 1000} s`));
    }, COMMAND_MS);
    awaited.set(method, [...(awaited.get(method) ?? []), waiter]);
  });
  await send('Browser.getVersion'); // the pipe answers once the browser is up

  /** Starts tracing every process of the browser with these trace categories. */
  const startTracing = (categories) => send('Tracing.start', {
    transferMode: 'ReturnAsStream', traceConfig: { includedCategories: categories, recordMode: 'recordAsMuchAsPossible' },
  });

  /** Ends the tracing; resolves to the trace (JSON text: { traceEvents }); throws when events were lost. */
  async function stopTracing() {
    // (the event's waiter first: the event may come before the command's answer)
    const [{ stream, dataLossOccurred }] = await Promise.all([nextEvent('Tracing.tracingComplete'), send('Tracing.end')]);
    const chunks = [];
    try {
      for (;;) {
        const { data, eof, base64Encoded } = await send('IO.read', { handle: stream, size: 1 << 20 });
        chunks.push(Buffer.from(data, base64Encoded ? 'base64' : 'utf8'));
        if (eof) break;
      }
    } finally {
      await send('IO.close', { handle: stream }).catch(() => {});
    }
    // a trace with holes would undercount every thread's time
    if (dataLossOccurred) throw new Error("the trace lost events (Chromium's trace buffer filled): trace fewer categories");
    return Buffer.concat(chunks).toString('utf8');
  }

  /** A tab of its own browser context (an empty cache), on about:blank. */
  async function newTab() {
    const { browserContextId } = await send('Target.createBrowserContext');
    const { targetId } = await send('Target.createTarget', { url: 'about:blank', browserContextId });
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    /** The value of `expression` (a JSON-serializable result), evaluated in the page. */
    const evaluate = async (expression) => {
      const { result, exceptionDetails } = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
      if (exceptionDetails) throw new Error(`in the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
      return result.value;
    };
    return {
      /** Resolves once the navigation has committed; throws when it failed (errorText). */
      async navigate(url) {
        const { errorText } = await send('Page.navigate', { url }, sessionId);
        if (errorText) throw new Error(`cannot open ${url}: ${errorText}`);
      },
      /** Resolves at once; the next evaluate is answered by the new document. */
      reload: () => send('Page.reload', {}, sessionId),
      evaluate,
      /** Polls `expression` every `everyMs` until it is truthy; resolves to its value. */
      async waitFor(expression, { everyMs = 100, timeoutMs = 120_000 } = {}) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const value = await evaluate(expression);
          if (value) return value;
          if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${expression}`);
          await sleep(everyMs);
        }
      },
      async close() {
        await send('Target.closeTarget', { targetId });
        await send('Target.disposeBrowserContext', { browserContextId });
      },
    };
  }

  async function close() {
    if (!exited) {
      await send('Browser.close').catch(() => {});
      await new Promise((resolve) => (exited ? resolve() : child.once('exit', resolve)));
    }
    process.off('exit', cleanUp).off('SIGINT', onSignal).off('SIGTERM', onSignal);
    rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  }
  return { newTab, startTracing, stopTracing, close };
}
