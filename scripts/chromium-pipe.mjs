// Headless Chromium driven over its DevTools pipe (--remote-debugging-pipe) with the few commands
// a timing needs: a tab in a fresh browser context, navigate, reload, evaluate. Nothing else is
// enabled, unlike Playwright, which turns on the Network domain in the page and in each worker
// (DevTools then keeps a copy of every response body: a 3.4 MB model's body took 90-108 ms to
// read in a page instead of 45-54) and holds each new worker until it has instrumented it. A
// visitor's browser does neither, so the page's start-up is timed this way (scripts/bench-web.mjs;
// Playwright's added 40-55 ms to the demo's warm first token).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts /usr/bin/chromium with `args`; resolves to { newTab(), close() }. */
export async function launchPiped(args) {
  const profile = mkdtempSync(path.join(tmpdir(), 'saccade-chromium-'));
  const child = spawn('/usr/bin/chromium', [...args, '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank'],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
  const [toBrowser, fromBrowser] = [child.stdio[3], child.stdio[4]];
  const pending = new Map();
  let nextId = 0;
  let received = '';
  let exited = null;
  const failAll = (why) => {
    for (const { reject } of pending.values()) reject(new Error(why));
    pending.clear();
  };
  child.on('exit', (code, signal) => {
    exited = `chromium exited (${signal ?? code})`;
    failAll(exited);
  });
  fromBrowser.on('data', (data) => {
    received += data;
    for (let end; (end = received.indexOf('\0')) >= 0;) {
      const message = JSON.parse(received.slice(0, end));
      received = received.slice(end + 1);
      const waiter = message.id !== undefined && pending.get(message.id);
      if (!waiter) continue; // an event: none is enabled, but the browser target sends a few
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message}`));
      else waiter.resolve(message.result);
    }
  });
  /** One DevTools command (in a tab's session when `sessionId` is given). */
  const send = (method, params = {}, sessionId = undefined) => new Promise((resolve, reject) => {
    if (exited) return reject(new Error(exited));
    const id = ++nextId;
    pending.set(id, { resolve, reject, method });
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
      navigate: (url) => send('Page.navigate', { url }, sessionId),
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
    rmSync(profile, { recursive: true, force: true });
  }
  return { newTab, close };
}
