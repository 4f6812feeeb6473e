// A pthread worker that cannot start rejects loadModel with that worker's error, in bounded
// time, instead of leaving it pending forever: the worker script missing (404), not JavaScript
// (SyntaxError), blocked by the page's Content-Security-Policy, and the glue the worker imports
// missing. The page is cross-origin isolated and asks for 2 threads. With waitForThreads: false
// (the demo's worker) the load does not wait for them: the model runs on one thread, and the
// worker's failure is in model.runtime.reason once model.threadsReady resolves.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { useBrowser } from './helpers.mjs';

const env = useBrowser();

const PAGE = `<!doctype html><meta charset="utf-8"><title>threads</title><script type="module">
  import { loadModel } from '/src/js/index.mjs';
  const t0 = performance.now();
  loadModel('/models/shakespeare-char-q8_0.gguf', { threads: 2 }).then(
    (m) => { window.result = { ok: true, variant: m.runtime.variant, threads: m.runtime.threads }; m.dispose(); },
    (e) => { window.result = { name: e.name, code: e.code, message: e.message, ms: performance.now() - t0 }; });
</script>`;

const NO_WAIT_PAGE = `<!doctype html><meta charset="utf-8"><title>threads</title><script type="module">
  import { loadModel } from '/src/js/index.mjs';
  try {
    const m = await loadModel('/models/shakespeare-char-q8_0.gguf', { threads: 2, waitForThreads: false });
    const planned = m.runtime.threads;
    const { text } = await m.complete('ROMEO:', { maxTokens: 12, temperature: 0 });
    const threads = await m.threadsReady;
    const after = await m.complete('ROMEO:', { maxTokens: 12, temperature: 0 });
    window.result = { ok: true, planned, threads, runtime: m.runtime.threads, reason: m.runtime.reason, same: after.text === text, text };
    m.dispose();
  } catch (e) {
    window.result = { name: e.name, code: e.code, message: e.message };
  }
</script>`;

/** Opens the test page on the isolated server, with `routes` (glob → handler) and `headers` added to the page. */
async function run(routes = {}, headers = {}, body = PAGE) {
  const page = await env.browser.newPage();
  try {
    const origin = env.srv.isolated.url;
    await page.route(`${origin}/web/threads-test.html`, (route) => route.fulfill({
      status: 200, body,
      headers: { 'content-type': 'text/html', 'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp', ...headers },
    }));
    for (const [glob, handler] of Object.entries(routes)) await page.route(`${origin}${glob}`, handler);
    await page.goto(`${origin}/web/threads-test.html`);
    // bounded: the library's own deadline is 30 s; a hang fails here
    await page.waitForFunction(() => window.result, null, { timeout: 45_000 });
    return await page.evaluate(() => window.result);
  } finally {
    await page.close();
  }
}

const js = { 'content-type': 'text/javascript', 'cross-origin-resource-policy': 'cross-origin',
  'cross-origin-embedder-policy': 'require-corp' };

test('the page loads the threaded build with 2 threads when nothing is in the way', async () => {
  assert.deepEqual(await run(), { ok: true, variant: 'mt', threads: 2 });
});

test('a worker script that is missing (404) rejects loadModel with the worker error', async () => {
  const r = await run({ '/dist/saccade-*mt.worker.mjs': (route) => route.fulfill({ status: 404, body: 'not found', headers: js }) });
  assert.equal(r.code, 'SAC_ERR_STATE', JSON.stringify(r));
  assert.match(r.message, /thread worker \(http:\/\/[^)]+\/dist\/saccade-(relaxed-)?mt\.worker\.mjs\) failed to start: HTTP 404/);
});

// (Chromium reports a module worker's SyntaxError as a bare event: the reason names the likely causes)
test('a worker script that is not JavaScript rejects loadModel, naming a SyntaxError', async () => {
  const r = await run({ '/dist/saccade-*mt.worker.mjs': (route) => route.fulfill({ status: 200, body: 'this is not ( javascript', headers: js }) });
  assert.equal(r.code, 'SAC_ERR_STATE', JSON.stringify(r));
  assert.match(r.message, /failed to start: the browser gives no reason: the script may not be JavaScript \(a SyntaxError/);
});

test("a Content-Security-Policy that forbids workers rejects loadModel with the browser's reason", async () => {
  const r = await run({}, { 'content-security-policy': "worker-src 'none'" });
  assert.equal(r.code, 'SAC_ERR_STATE', JSON.stringify(r));
  assert.match(r.message, /failed to start: blocked by the Content-Security-Policy directive "worker-src"/);
});

test('a worker that cannot import the glue rejects loadModel with the import error', async () => {
  let glue = 0;
  const r = await run({ '/dist/saccade-*mt.mjs': (route) => (++glue === 1 ? route.continue()
    : route.fulfill({ status: 404, body: 'not found', headers: js })) });
  assert.ok(glue >= 2, 'the worker did not request the glue');
  assert.equal(r.code, 'SAC_ERR_STATE', JSON.stringify(r));
  assert.match(r.message, /failed to start: .*(dynamically imported module|Failed to fetch)/);
});

test('waitForThreads: false: the model runs on one thread when its worker is missing, and says why', async () => {
  const r = await run({ '/dist/saccade-*mt.worker.mjs': (route) => route.fulfill({ status: 404, body: 'not found', headers: js }) },
    {}, NO_WAIT_PAGE);
  assert.equal(r.ok, true, JSON.stringify(r));
  // (runtime.threads is 2 until the failure is known, which may be before loadModel resolves)
  assert.equal(r.threads, 1);
  assert.equal(r.runtime, 1);
  assert.match(r.reason, /running on 1 thread: a thread worker \(http:[^)]+\) failed to start: HTTP 404/);
  assert.equal(r.same, true);
  assert.ok(r.text.length > 0);
});

test('waitForThreads: false: the threads join once started, with the same text as a load that waited', async () => {
  const r = await run({}, {}, NO_WAIT_PAGE);
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.deepEqual([r.planned, r.threads, r.runtime, r.same], [2, 2, 2, true]);
});
