// The page users get runs bundles (web/bundle/, scripts/bundle-web.mjs): the bundles on disk are
// what the sources build now, make rebuilds them when any module they hold changes, and the page
// reaches its first token without requesting a single module of web/ or src/js/ — isolated,
// plain and under the service worker shim.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { buildInMemory } from '../../scripts/bundle-web.mjs';
import { MODELS } from '../../web/config.mjs';
import { modelA, root, useBrowser, withPage } from './helpers.mjs';

const env = useBrowser();
const A = modelA();

describe('the bundles', () => {
  test('on disk, they are what the sources build now', async () => {
    const built = await buildInMemory();
    assert.deepEqual(built.map((f) => path.relative(root, f.path)).sort(),
      ['web/bundle/app.mjs', 'web/bundle/app.mjs.map', 'web/bundle/worker.mjs', 'web/bundle/worker.mjs.map']);
    for (const file of built) {
      const name = path.relative(root, file.path);
      let onDisk;
      try {
        onDisk = readFileSync(file.path);
      } catch {
        assert.fail(`${name} is missing: make web-bundle`);
      }
      assert.ok(onDisk.equals(Buffer.from(file.contents)), `${name} is stale: make web-bundle`);
    }
  });

  test('make rebuilds them when a module they hold changes', () => {
    // (-W: as if the file had just been edited; -n: only print what would run)
    const rebuilds = (file) => execFileSync('make', ['-n', '-W', file, 'web-bundle'], { cwd: root, encoding: 'utf8' })
      .includes('node scripts/bundle-web.mjs');
    for (const file of ['web/app.mjs', 'web/views/heatmap.mjs', 'web/worker.mjs', 'web/protocol.mjs', 'src/js/generate.mjs',
      'src/js/instantiate.mjs', 'web/train/section.mjs', 'scripts/bundle-web.mjs']) assert.ok(rebuilds(file), file);
    assert.equal(rebuilds('src/js/cli.mjs'), false, 'the CLI is in no bundle');
  });

  test("the page's inline script starts the bundled worker, warming up and opening config.mjs's Model A", () => {
    const html = readFileSync(path.join(root, 'web/index.html'), 'utf8');
    assert.match(html, /new URL\(`\$\{mounted\}bundle\/worker\.mjs`/);
    assert.match(html, /url\.searchParams\.set\('prepare', /);
    // the model app.mjs opens by default (MODELS.a, a path relative to web/ as the page is)
    assert.ok(html.includes(`url.searchParams.set('open', new URL('${MODELS.a.url}', location.href).href)`), MODELS.a.url);
    const worker = readFileSync(path.join(root, 'web/worker.mjs'), 'utf8');
    assert.match(worker, /startup\.has\('prepare'\)/);
    assert.match(worker, /startup\.get\('open'\)/);
  });
});

describe('the page runs its bundles only', () => {
  /** The page's requests of web/ and src/js/ modules until its first token is drawn, and whether its bundles were among them. */
  async function moduleRequests(page, url) {
    const requested = [];
    page.context().on('request', (r) => requested.push(new URL(r.url()).pathname));
    await page.goto(url);
    await page.waitForFunction(() => window.saccadeDemo?.stats.firstTokenPainted, null, { timeout: 60_000 });
    const seen = [...requested];
    const real = (p) => p.replace(/^\/web\/__root__\//, '/'); // the shim's mount serves the folder above web/
    return {
      modules: seen.filter((p) => /^\/(web\/(?!bundle\/)|src\/js\/).*\.m?js$/.test(real(p)) && !p.endsWith('/coi-serviceworker.js')),
      bundles: seen.filter((p) => /\/web\/bundle\/(app|worker)\.mjs$/.test(p)).sort(),
      wasm: seen.some((p) => /\/dist\/saccade-(relaxed-)?(mt|st)\.wasm$/.test(p)),
    };
  }

  for (const mode of ['isolated', 'plain']) {
    test(`${mode}: no module of web/ or src/js/ on the way to the first token`, async () => {
      await withPage(env, async ({ page, errors }) => {
        const r = await moduleRequests(page, `${env.srv[mode].url}/web/?${A.query ? `${A.query}&` : ''}run&max=2&seed=1`);
        assert.deepEqual(r.modules, []);
        assert.deepEqual(r.bundles, ['/web/bundle/app.mjs', '/web/bundle/worker.mjs']);
        assert.ok(r.wasm, "the worker's requests are seen");
        const runtime = await page.textContent('#status-text');
        assert.match(runtime, mode === 'isolated' ? /threaded build/ : /single-threaded build/);
        await page.waitForFunction(() => document.getElementById('stop').disabled);
        assert.deepEqual(errors, []);
      });
    });
  }

  test('under the service worker shim: the bundled worker runs from its mount, threaded', async () => {
    await withPage(env, async ({ page, errors }) => {
      const base = `${env.srv.plain.url}/web/`;
      await page.goto(`${base}?${A.query}`);
      await page.evaluate(() => navigator.serviceWorker.register('coi-serviceworker.js', { scope: './' })
        .then(() => navigator.serviceWorker.ready));
      const r = await moduleRequests(page, `${base}?${A.query ? `${A.query}&` : ''}run&max=2&seed=1`);
      assert.deepEqual(r.modules, []);
      // (the shim's own fetches are among the requests: the mount's file from its real place)
      assert.ok(r.bundles.includes('/web/__root__/web/bundle/worker.mjs'), r.bundles.join(', '));
      assert.match(await page.textContent('#status-text'), /threaded build.*by the service worker shim/);
      await page.waitForFunction(() => document.getElementById('stop').disabled);
      assert.deepEqual(errors, []);
    });
  });
});
