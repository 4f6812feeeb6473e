// The page's way to the first token (web/boot.mjs, web/app.mjs, web/worker.mjs): the worker
// started before the page's modules and warmed up, every phase recorded for the benchmark
// (stats.phases, in order on one timeline), the first token's text drawn before the views, and
// "Watch it learn" imported only after the first token — isolated (threads) and not.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { modelA, useBrowser, withPage } from './helpers.mjs';

const env = useBrowser();
const A = modelA();

/** The phases every first token goes through; the library's own are named 'saccade:…' measures. */
const PAGE = ['page-worker', 'page-boot', 'page-modules', 'page-setup', 'worker-script', 'library-import', 'await-library',
  'loaded-message', 'tokenize', 'first-eval', 'first-token-message', 'first-token-render'];
const LIBRARY = ['wasm-compile', 'glue-import', 'wasm-instantiate', 'model-open', 'model-read', 'model-parse', 'context'];

describe('start-up', () => {
  for (const mode of ['isolated', 'plain']) {
    test(`${mode}: every phase on one timeline, the text first, "Watch it learn" after`, async () => {
      await withPage(env, async ({ page, errors }) => {
        await page.goto(`${env.srv[mode].url}/web/?${A.query ? `${A.query}&` : ''}run&max=4&seed=1`);
        await page.waitForFunction(() => window.saccadeDemo?.stats.firstTokenPainted, null, { timeout: 60_000 });
        const s = await page.evaluate(() => ({
          ...window.saccadeDemo.stats,
          views: window.saccadeDemo.stats.renderMs.length,
          section: document.getElementById('watch-it-learn').childElementCount,
          text: document.getElementById('output').textContent,
        }));
        const names = [...PAGE, ...LIBRARY];
        for (const name of names) {
          const p = s.phases[name];
          assert.ok(p, `no phase ${name}: ${Object.keys(s.phases)}`);
          assert.ok(p.start >= 0 && p.start <= p.end && p.end <= s.firstTokenPainted + 1, `${name}: ${JSON.stringify(p)}`);
        }
        if (mode === 'plain') assert.equal(s.phases['thread-pool'], undefined, 'no pool single-threaded');
        else {
          // the pool starts beside the load, which does not wait for it; its phase follows 'loaded'
          await page.waitForFunction(() => window.saccadeDemo.stats.phases['thread-pool'], null, { timeout: 30_000 });
          const pool = await page.evaluate(() => window.saccadeDemo.stats.phases['thread-pool']);
          assert.ok(pool.start >= s.phases['wasm-instantiate'].start && pool.start <= pool.end, JSON.stringify(pool));
        }
        // the worker's times are placed on the page's timeline: causes come before their effects.
        // (The worker itself may start before boot.mjs runs: index.html's inline script starts it.
        // The model's open answers the load message, which app.mjs sends after boot.mjs ran; 1 ms
        // allows for the two clocks' rounding.)
        assert.ok(s.phases['page-boot'].end <= s.phases['model-open'].start + 1,
          `page-boot ${JSON.stringify(s.phases['page-boot'])}, model-open ${JSON.stringify(s.phases['model-open'])}`);
        assert.ok(s.phases['page-worker'].end <= s.phases['page-boot'].end, 'index.html starts the worker before the bundle runs');
        assert.ok(s.phases['library-import'].end <= s.phases['model-open'].end);
        // the wasm is on its way, and the page's default model opened, before the worker takes the load
        // message: the worker's URL asks for both (index.html)
        assert.ok(s.phases['wasm-compile'].start < s.phases['await-library'].start,
          `wasm-compile ${JSON.stringify(s.phases['wasm-compile'])}, await-library ${JSON.stringify(s.phases['await-library'])}`);
        if (!A.query) assert.ok(s.phases['model-preopen'].start < s.phases['await-library'].start,
          `model-preopen ${JSON.stringify(s.phases['model-preopen'])}, await-library ${JSON.stringify(s.phases['await-library'])}`);
        assert.ok(s.phases['model-read'].end <= s.phases['model-parse'].start);
        assert.ok(s.phases.context.end <= s.phases['loaded-message'].end);
        assert.ok(s.phases['first-eval'].end <= s.phases['first-token-message'].end);
        assert.ok(s.navigationToFirstToken <= s.firstTokenPainted);
        // the text was drawn alone; the views follow
        assert.ok(s.text.length > 0);
        await page.waitForFunction(() => window.saccadeDemo.stats.renderMs.length > 0);
        await page.waitForFunction(() => document.getElementById('train-task'), null, { timeout: 30_000 });
        await page.waitForFunction(() => document.getElementById('stop').disabled);
        assert.deepEqual(errors, []);
      });
    });
  }

  test('a worker that the page could not start early is started by boot.mjs', async () => {
    await withPage(env, async ({ page, errors }) => {
      // index.html's inline start throws (a Worker constructor that refuses): boot.mjs starts it itself
      await page.addInitScript(() => {
        const Original = Worker;
        let first = true;
        globalThis.Worker = function Worker(...args) {
          if (first) {
            first = false;
            throw new DOMException('refused', 'SecurityError');
          }
          return new Original(...args);
        };
      });
      await page.goto(`${env.srv.isolated.url}/web/?${A.query ? `${A.query}&` : ''}run&max=2&seed=1`);
      await page.waitForFunction(() => window.saccadeDemo?.stats.firstTokenPainted, null, { timeout: 60_000 });
      await page.waitForFunction(() => document.getElementById('stop').disabled);
      assert.deepEqual(errors, []);
    });
  });
});
