// The embed as a docs site uses it: the packed package (`npm pack`, unpacked) served on one
// origin (127.0.0.1:A, with CORS headers, as a CDN serves it), a docs page on another
// (localhost:B) with one script tag and <saccade-attention> elements — isolated (COOP/COEP) and
// not. On the isolated page the model runs on 2 threads (its workers start from same-origin
// blobs); without a threads attribute the runtime's reason never claims a thread count was
// requested; the namespaced events bubble out of the shadow root to the document.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { ISOLATION_HEADERS, serve } from '../../web/serve.mjs';
import { launch, root, watchErrors } from './helpers.mjs';

const exec = promisify(execFile);

let dir;
let cdn;
let browser;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'saccade-embed-'));
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', dir, '--loglevel=error'], { cwd: root });
  const tarball = path.join(dir, JSON.parse(stdout.slice(stdout.indexOf('[')))[0].filename);
  await exec('tar', ['xzf', tarball, '-C', dir]); // → dir/package
  cdn = await serve({ root: path.join(dir, 'package'), isolated: false, allow: ['/'] });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await cdn?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A docs page on localhost (another origin than the package's 127.0.0.1), isolated or not. */
async function docsSite(isolated, body = null) {
  const page = body ?? `<!doctype html><meta charset="utf-8"><title>docs</title><link rel="icon" href="data:,">
    <script>
      window.events = [];
      for (const name of ['saccade-load', 'saccade-generated', 'saccade-error'])
        document.addEventListener(name, (e) => events.push({ name, id: e.target.id, composed: e.composed,
          detail: name === 'saccade-error' ? String(e.detail?.message) : name === 'saccade-load' ? { runtime: e.detail.runtime } : e.detail }));
    </script>
    <script type="module" src="${cdn.url}/web/embed.mjs"></script>
    <saccade-attention id="two" prompt="ROMEO:" max-tokens="8" seed="1" threads="2" autoplay></saccade-attention>
    <saccade-attention id="default" prompt="ROMEO:" max-tokens="8" seed="1" autoplay></saccade-attention>`;
  const server = createServer((req, res) => {
    if (req.url !== '/docs.html') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(isolated ? ISOLATION_HEADERS : {}) }).end(page);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://localhost:${server.address().port}/docs.html`, close: () => new Promise((r) => server.close(r)) };
}

for (const isolated of [true, false]) {
  test(`the packed embed runs on a docs page of another origin (${isolated ? 'isolated: threads' : 'not isolated: 1 thread'})`, async () => {
    const site = await docsSite(isolated);
    const page = await browser.newPage({ viewport: { width: 1000, height: 1400 } });
    try {
      const errors = watchErrors(page);
      await page.goto(site.url);
      await page.waitForFunction(() => events.filter((e) => e.name !== 'saccade-load').length >= 2, null, { timeout: 60_000 });
      const events = await page.evaluate(() => window.events);
      assert.deepEqual(events.filter((e) => e.name === 'saccade-error'), []);
      const loaded = Object.fromEntries(events.filter((e) => e.name === 'saccade-load').map((e) => [e.id, e.detail.runtime]));
      const cores = await page.evaluate(() => navigator.hardwareConcurrency);
      if (isolated) {
        assert.deepEqual([loaded.two.variant, loaded.two.threads], ['mt', 2], loaded.two.reason);
        const expected = Math.min(8, cores);
        assert.equal(loaded.default.threads, expected, loaded.default.reason);
        assert.equal(loaded.default.variant, expected > 1 ? 'mt' : 'st');
      } else {
        for (const id of ['two', 'default']) {
          assert.deepEqual([loaded[id].variant, loaded[id].threads], ['st', 1]);
          assert.match(loaded[id].reason, /not cross-origin isolated/);
        }
      }
      assert.doesNotMatch(loaded.default.reason, /requested/);
      for (const e of events) assert.equal(e.composed, true);
      const generated = events.filter((e) => e.name === 'saccade-generated');
      assert.deepEqual(generated.map((e) => e.detail.count), [8, 8]);
      const status = await page.$eval('#two', (el) => el.shadowRoot.querySelector('.status').textContent);
      assert.match(status, isolated ? / · 2 threads · / : / · 1 thread \(page not cross-origin isolated\) · /);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
      await site.close();
    }
  });
}

for (const isolated of [true, false]) {
  test(`the packed <saccade-train> trains on a docs page of another origin (${isolated ? 'isolated' : 'not isolated'})`, async () => {
    // its worker starts from a same-origin blob, as the model widget's does (a Worker on the
    // package's origin cannot be constructed there)
    const site = await docsSite(isolated, `<!doctype html><meta charset="utf-8"><title>docs</title><link rel="icon" href="data:,">
      <script>window.trained = null; document.addEventListener('trained', (e) => (trained = e.detail.file.size), true);</script>
      <script type="module" src="${cdn.url}/web/train/element.mjs"></script>
      <saccade-train id="t" task="reverse" preset="tiny" steps="20" autostart></saccade-train>`);
    const page = await browser.newPage();
    try {
      const errors = watchErrors(page);
      await page.goto(site.url);
      await page.waitForFunction(() => window.trained > 0, null, { timeout: 60_000 });
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
      await site.close();
    }
  });
}
