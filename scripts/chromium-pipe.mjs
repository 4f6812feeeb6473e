// Headless Chromium driven over its DevTools pipe (--remote-debugging-pipe) with the few commands
// a timing needs: a tab in a fresh browser context, navigate, reload, evaluate. Nothing else is
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

/** Starts /usr/bin/chromium with `args`; resolves to { newTab(), close() }. */
export async function launchPiped(args) {
  const profile = mkdtempSync(path.join(tmpdir(), 'saccade-chromium-'));
  // its own process group: one signal ends the browser and the helper processes it starts
  const child = spawn('/usr/bin/chromium', [...args, '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'],
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
  let nextId = 0;
  let received = '';
  let exited = null;
  const failAll = (why) => {
    for (const { reject } of pending.values()) reject(new Error(why));
    pending.clear();
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
      const waiter = message.id !== undefined && pending.get(message.id);
      if (!waiter) continue; // an event: none is enabled, but the browser target sends a few
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
  await send('Browser.getVersion'); // the pipe answers once the browser is up

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
  return { newTab, close };
}
