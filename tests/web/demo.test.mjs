// The demo page (web/index.html) in headless Chromium, cross-origin isolated (threads) and not
// (one thread): loading with progress, streaming tokens, the heatmap, the model view and the
// aggregates (pixel checks), hover highlights, PNG and JSON export, and no console errors.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { devModel } from './dev-models.mjs';
import { artifacts, canvasStats, cutOnce, frames, modelA, root, openPage, screenshot, watchErrors, useBrowser } from './helpers.mjs';

const A = modelA();
const N = 12; // tokens to generate
const env = useBrowser();


/** Records every state of the progress bar and its text, from the first byte of the page. */
function recordProgress() {
  window.__progress = [];
  new MutationObserver(() => {
    const bar = document.getElementById('progress');
    const text = document.getElementById('progress-text');
    if (bar && text) window.__progress.push({ value: bar.value, text: text.textContent });
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
}

const waitLoaded = (page) => page.waitForFunction(() => {
  const t = document.getElementById('progress-text').textContent;
  if (/^Could not load/.test(t)) throw new Error(t);
  return !document.getElementById('generate').disabled;
}, null, { timeout: 30_000 });

async function generate(page, { maxTokens, seed = 1, temperature = 0.8 }) {
  await page.fill('#max-tokens', String(maxTokens));
  await page.fill('#seed', String(seed));
  await page.fill('#temperature', String(temperature));
  await page.click('#generate');
  await page.waitForFunction(() => document.getElementById('stop').disabled && !document.getElementById('generate').disabled
    && /tokens? ·/.test(document.getElementById('speed').textContent) && / · [a-z ]+$/.test(document.getElementById('speed').textContent),
  null, { timeout: 30_000 });
  await frames(page);
}

/** The demo page's address on a server, with Model A's query when it is the stand-in. */
const demoUrl = (server) => `${server.url}/web/${A.query ? `?${A.query}` : ''}`;

/** A fresh browser context with the demo page loaded from `server`: { context, page, errors }. */
async function openDemo(server) {
  const opened = await openPage(env);
  await opened.page.goto(demoUrl(server));
  await waitLoaded(opened.page);
  return opened;
}

/** Indices of the output spans whose highlight variable is set. */
const lit = (page, prop) => page.$$eval('#output .tok', (spans, prop) =>
  spans.filter((s) => Number(s.style.getPropertyValue(prop)) > 0).map((s) => Number(s.dataset.i)), prop);

for (const mode of ['isolated', 'plain']) {
  describe(`demo page, ${mode === 'isolated' ? 'cross-origin isolated (threads)' : 'without COOP/COEP (one thread)'}`, () => {
    let context;
    let page;
    let errors;
    let info;

    before(async () => {
      context = await env.browser.newContext({ viewport: { width: 1280, height: 1000 }, acceptDownloads: true });
      await context.addInitScript(recordProgress);
      page = await context.newPage();
      errors = watchErrors(page);
    });
    after(() => context?.close());

    test('loads the default model: the progress bar reaches 100% and the status line shows the runtime', async () => {
      await page.goto(demoUrl(env.srv[mode]));
      await waitLoaded(page);
      const progress = await page.evaluate(() => window.__progress);
      assert.ok(progress.some((p) => /\(100%\)$/.test(p.text) && p.value === 1), `no 100% in ${JSON.stringify(progress.slice(-5))}`);
      assert.ok(progress.some((p) => /\((\d|[1-9]\d)%\)$/.test(p.text)), 'the progress started below 100%');
      assert.match(await page.textContent('#progress-text'), /^Loaded .* in \d+ ms$/);
      info = await page.evaluate(() => window.saccadeDemo.state.model.info);
      const status = await page.textContent('#status-text');
      const cores = await page.evaluate(() => navigator.hardwareConcurrency);
      if (mode === 'isolated') {
        assert.equal(await page.evaluate(() => crossOriginIsolated), true);
        const threads = Math.min(8, cores);
        assert.ok(threads > 1, 'this machine has one core: the threaded build cannot be checked');
        assert.match(status, new RegExp(`^Runtime: ${threads} threads \\(threaded build\\) · relaxed SIMD · cross-origin isolated — `));
        assert.equal(await page.isVisible('#coi-on'), false);
      } else {
        assert.equal(await page.evaluate(() => crossOriginIsolated), false);
        assert.match(status, /^Runtime: 1 thread \(single-threaded build\) · relaxed SIMD · not cross-origin isolated — the page is not cross-origin isolated \(serve it with Cross-Origin-Opener-Policy/);
        assert.equal(await page.isVisible('#coi-on'), true, 'offers the service worker shim');
      }
      assert.match(await page.textContent('#model-info'), new RegExp(`${info.layers} layers × ${info.heads} heads`));
      // empty sampling inputs show the library's defaults (sac_sampling_default_params)
      assert.deepEqual(await page.evaluate(() => ['temperature', 'top-k', 'top-p', 'max-tokens']
        .map((id) => document.getElementById(id).placeholder)), ['0.8', '40', '0.95', '64']);
    });

    test(`generating ${N} tokens shows ${N} new tokens, with tokens/s`, async () => {
      await page.evaluate(() => {
        window.__counts = [];
        new MutationObserver(() => window.__counts.push(document.querySelectorAll('#output .tok.gen').length))
          .observe(document.getElementById('output'), { childList: true });
      });
      await generate(page, { maxTokens: N });
      const generated = await page.$$eval('#output .tok.gen', (s) => s.length);
      assert.equal(generated, N);
      const speed = await page.textContent('#speed');
      assert.match(speed, new RegExp(`^${N} tokens · [\\d.]+ tokens/s · first after \\d+ ms · seed 1 · max tokens$`));
      const counts = await page.evaluate(() => window.__counts);
      assert.equal(counts.at(-1), N);
      // the same seed gives the same text
      const text = await page.textContent('#output');
      await generate(page, { maxTokens: N });
      assert.equal(await page.textContent('#output'), text);
    });

    test('the heatmap is drawn, and changes with the head (pixel checks); the model view shows every head', async () => {
      const head0 = await canvasStats(page, '#heatmap');
      assert.ok(head0.colored > 0.05, `heatmap mostly blank: ${head0.colored}`);
      await page.selectOption('#head', '1');
      await frames(page);
      const head1 = await canvasStats(page, '#heatmap');
      assert.ok(head1.colored > 0.05);
      assert.notEqual(head1.hash, head0.hash, 'head 1 draws the same pixels as head 0');
      const thumbs = await canvasStats(page, '#thumbnails');
      assert.ok(thumbs.colored > 0.2, `model view mostly blank: ${thumbs.colored}`);

      // a click on a thumbnail selects its layer and head
      const box = await page.locator('#thumbnails').boundingBox();
      const pitch = (box.width - 26) / info.heads;
      const [l, h] = [info.layers - 1, info.heads - 1];
      await page.mouse.click(box.x + 26 + (h + 0.5) * pitch - 1.5, box.y + 14 + (l + 0.5) * pitch);
      await frames(page);
      assert.equal(await page.inputValue('#layer'), String(l));
      assert.equal(await page.inputValue('#head'), String(h));
      const last = await canvasStats(page, '#heatmap');
      assert.notEqual(last.hash, head1.hash);
    });

    test('aggregates: mean and max over heads, the mean of everything, and rollout each draw their own map', async () => {
      await page.selectOption('#layer', String(info.layers - 1));
      const hashes = new Set();
      for (const v of ['0', 'mean', 'max', 'all', 'rollout']) {
        await page.selectOption('#head', v);
        await frames(page);
        const s = await canvasStats(page, '#heatmap');
        assert.ok(s.colored > 0.05, `${v}: mostly blank`);
        hashes.add(s.hash);
      }
      assert.equal(hashes.size, 5, 'two views drew identical pixels');
      // rollout through the last layer: every row is a distribution over the keys
      const sums = await page.evaluate(() => {
        const { store } = window.saccadeDemo.state;
        const m = store.matrix('self', store.layers - 1, 'rollout');
        return Array.from({ length: m.nq }, (_, q) => m.row(q).reduce((a, b) => a + b, 0));
      });
      for (const s of sums) assert.ok(Math.abs(s - 1) < 1e-3, `a rollout row sums to ${s}`);
    });

    test('hovering a token highlights what it attends to and what attends to it', async () => {
      await page.selectOption('#layer', '0');
      await page.selectOption('#head', '0');
      await frames(page);
      const nq = await page.evaluate(() => window.saccadeDemo.state.store.queries('self'));
      const i = Math.floor(nq / 2);
      await page.hover(`#output .tok[data-i="${i}"]`);
      const to = await lit(page, '--to');
      const from = await lit(page, '--from');
      // token i was written by row i - 1 (keys 0 … i - 1); a row q that attends to key i wrote token q + 1 > i
      assert.ok(to.length > 0 && to.every((k) => k <= i - 1), `attends to: ${to}`);
      assert.ok(from.length > 0 && from.every((q) => q >= i + 1), `attended by: ${from}`);
      const overlay = await canvasStats(page, '#heatmap-overlay');
      assert.ok(overlay.colored > 0.002, 'the heatmap marks the row and column');
      await screenshot(page, `hover-${mode}`);
      await page.mouse.move(2, 2);
      assert.deepEqual(await lit(page, '--to'), []);
      assert.equal((await canvasStats(page, '#heatmap-overlay')).colored, 0);

      // hovering the heatmap reads out the cell
      const box = await page.locator('#heatmap').boundingBox();
      await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.75);
      assert.match(await page.textContent('#readout'), /^row \d+: at ".*" → wrote ".*" · key #\d+ ".*": (\d\.\d{4}|— masked \(a later position\))$/);
    });

    test('export: the current view as PNG, every captured map as JSON', async () => {
      const [png] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
      const pngFile = path.join(artifacts, `web-export-${mode}.png`);
      await png.saveAs(pngFile);
      const bytes = readFileSync(pngFile);
      assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
      // the whole map, not the window of it the page shows
      const size = await page.evaluate(() => {
        const { W, H, dpr } = window.saccadeDemo.heatmap.layout;
        return [Math.round(W * dpr), Math.round(H * dpr)];
      });
      assert.deepEqual([bytes.readUInt32BE(16), bytes.readUInt32BE(20)], size);
      assert.match(png.suggestedFilename(), /^saccade-self-L0-h0\.png$/);

      const [json] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
      const jsonFile = path.join(artifacts, `web-export-${mode}.json`);
      await json.saveAs(jsonFile);
      const doc = JSON.parse(readFileSync(jsonFile, 'utf8'));
      assert.equal(doc.format, 'saccade-attention/1');
      assert.equal(doc.model.layers, info.layers);
      const self = doc.maps.self;
      assert.equal(self.data.length, info.layers);
      assert.equal(self.data[0].length, info.heads);
      assert.equal(doc.tokens.length, self.queries + 1, 'every token but the last has a query row');
      assert.equal(doc.tokens.filter((t) => t.generated).length, N);
      for (const layer of self.data)
        for (const head of layer) {
          assert.equal(head.length, self.queries);
          head.forEach((row, q) => {
            assert.equal(row.length, q + 1);
            const sum = row.reduce((a, b) => a + b, 0);
            assert.ok(Math.abs(sum - 1) < 1e-4, `row ${q} sums to ${sum}`);
          });
        }
    });

    test('Stop ends a generation', async () => {
      await page.fill('#max-tokens', '40');
      // Generate and Stop in one task: the stop reaches the worker before its first token
      await page.evaluate(() => {
        document.getElementById('generate').click();
        document.getElementById('stop').click();
      });
      await page.waitForFunction(() => / · stopped$/.test(document.getElementById('speed').textContent), null, { timeout: 30_000 });
      assert.equal(await page.isDisabled('#stop'), true);
      assert.equal(await page.isEnabled('#generate'), true);
      assert.ok(await page.$$eval('#output .tok.gen', (s) => s.length) < 40);
    });

    test('no console errors', async () => {
      await screenshot(page, `page-${mode}`);
      assert.deepEqual(errors, []);
    });
  });
}

describe('model cache', () => {
  test('a reload reads the weights from the browser cache, without downloading them again', async () => {
    const { context, page, errors } = await openDemo(env.srv.isolated);
    assert.match(await page.textContent('#progress-text'), /from the network/);
    await page.waitForFunction(() => document.getElementById('cache-note').dataset.note, null, { timeout: 10_000 });
    assert.equal(await page.getAttribute('#cache-note', 'data-note'), 'saved in the browser cache');
    const downloads = [];
    context.on('request', (r) => {
      // (the path: the worker's own URL names the model it opens in its query)
      if (new URL(r.url()).pathname.endsWith('.gguf') && r.method() === 'GET') downloads.push(r.url());
    });
    await page.reload();
    await waitLoaded(page);
    assert.match(await page.textContent('#progress-text'), /from the browser cache in \d+ ms$/);
    assert.deepEqual(downloads, []);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('a half-finished download is not cached; the next load downloads the whole file', async () => {
    // a server whose first response for each /flaky/ path stops halfway (as a dropped connection does)
    const { serve, staticHandler } = await import('../../web/serve.mjs');
    const flaky = await serve({ handler: cutOnce(staticHandler(root, { isolated: true }), root) });
    const context = await env.browser.newContext();
    const page = await context.newPage();
    const modelPath = `/flaky/${path.relative(root, A.file)}`;
    await page.goto(`${flaky.url}/web/?model=${modelPath}`);
    await page.waitForFunction(() => /^Could not load/.test(document.getElementById('progress-text').textContent), null,
      { timeout: 30_000 });
    const cached = () => page.evaluate(async (u) => {
      const response = await (await caches.open('saccade-models-v1')).match(new URL(u, location.href).href);
      return response ? (await response.blob()).size : null;
    }, modelPath);
    await page.waitForTimeout(300); // the cache copy settles (it fails) right after the download
    assert.equal(await cached(), null, 'the truncated download was cached');
    await page.reload();
    await waitLoaded(page);
    assert.match(await page.textContent('#progress-text'), /from the network/);
    await page.waitForFunction(() => document.getElementById('cache-note').dataset.note, null, { timeout: 10_000 });
    assert.equal(await cached(), readFileSync(A.file).length);
    await context.close();
    await flaky.close();
  });

  // A file that is no model, picked from disk: the page says it could not load it.
  const loadBroken = async (page) => {
    await page.setInputFiles('#model-file', { name: 'broken.gguf', mimeType: 'application/octet-stream',
      buffer: Buffer.from('GGUF and then nothing a model needs') });
    await page.waitForFunction(() => /^Could not load broken\.gguf/.test(document.getElementById('progress-text').textContent),
      null, { timeout: 30_000 });
  };
  // Whether export (JSON, PNG) and Generate are off.
  const lastRunButtons = (page) => page.evaluate(() => ['export-json', 'export-png', 'generate'].map((id) => document.getElementById(id).disabled));

  test('a model that fails to load leaves nothing to export: the buttons of the last run are off, no page error', async () => {
    const { context, page, errors } = await openDemo(env.srv.isolated);
    await page.fill('#max-tokens', '6');
    await page.click('#generate');
    await page.waitForFunction(() => !document.getElementById('export-json').disabled, null, { timeout: 30_000 });
    assert.ok(await page.$$eval('#output .tok', (s) => s.length) > 0);
    await frames(page); // (the end of a run is drawn at the frame after it: the buttons come first)
    assert.ok((await canvasStats(page, '#heatmap')).colored > 0.3, 'the heatmap is drawn');
    await loadBroken(page);
    assert.deepEqual(await lastRunButtons(page), [true, true, true]);
    assert.equal(await page.textContent('#progress-rate'), '');
    // nor the last model's run on screen: its text, its maps, its speed
    assert.equal(await page.$$eval('#output .tok', (s) => s.length), 0);
    await page.waitForTimeout(100); // (the views redraw at the next frame)
    // (an empty map is its frame: title, colour bar; ~4% of the canvas against ~40% drawn)
    assert.ok((await canvasStats(page, '#heatmap')).colored < 0.1, 'the old map is still drawn');
    assert.equal(await page.textContent('#speed'), '');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('the model view\'s keyboard cursor stays within the model shown (after one with more layers)', async () => {
    const { context, page, errors } = await openDemo(env.srv.isolated);
    await generate(page, { maxTokens: 3 });
    await page.focus('#thumbnails');
    for (const k of ['ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowRight', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(k);
    await page.focus('#prompt');
    await page.selectOption('#model-select', 'b'); // Model B: 2 decoder layers, 4 heads
    await page.waitForFunction(() => /encdec/.test(document.getElementById('model-info').textContent), null, { timeout: 30_000 });
    await waitLoaded(page);
    await generate(page, { maxTokens: 3, temperature: 0 });
    await page.selectOption('#kind', 'self');
    await page.focus('#thumbnails');
    await page.keyboard.press('Enter');
    const { layer, head, layerSelect } = await page.evaluate(() => ({ ...window.saccadeDemo.state, layerSelect: document.getElementById('layer').value }));
    assert.ok(layer <= 1 && head <= 3, `layer ${layer}, head ${head}`); // it selected layer 3 of a 2-layer model
    assert.equal(layerSelect, String(layer));
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('max tokens 0 (Ctrl+Enter skips the form\'s minimum): no tokens, and the reason is said', async () => {
    const { context, page, errors } = await openDemo(env.srv.isolated);
    await page.fill('#max-tokens', '0');
    await page.focus('#prompt');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => / · [a-z ]+$/.test(document.getElementById('speed').textContent), null, { timeout: 30_000 });
    assert.match(await page.textContent('#speed'), /^0 tokens · seed \d+ · max tokens$/); // it said "· undefined"
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('a load that stops a generation: the stopped run is not shown or offered for export when the load fails', async () => {
    const { context, page, errors } = await openDemo(env.srv.isolated);
    await page.fill('#max-tokens', '2000');
    await page.click('#generate');
    await page.waitForFunction(() => document.querySelectorAll('#output .tok.gen').length >= 3, null, { timeout: 30_000 });
    await loadBroken(page);
    await page.waitForTimeout(300); // (the stopped generation's end arrives)
    assert.deepEqual(await lastRunButtons(page), [true, true, true]);
    assert.equal(await page.$$eval('#output .tok', (s) => s.length), 0);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('any GGUF: by URL, and picked from disk (read without the network)', async () => {
    const { context, page, errors } = await openDemo(env.srv.isolated);
    const other = devModel('encdec-char-q8_0');
    await page.selectOption('#model-select', 'url');
    await page.fill('#model-url', `${env.srv.isolated.url}/${path.relative(root, other)}`);
    await page.click('#url-form button');
    await page.waitForFunction(() => /encdec/.test(document.getElementById('model-info').textContent), null, { timeout: 30_000 });
    await waitLoaded(page);
    assert.match(await page.textContent('#progress-text'), /^Loaded http:.*encdec-char-q8_0\.gguf: .* from the network in \d+ ms$/);
    await page.setInputFiles('#model-file', A.file);
    await page.waitForFunction(() => /^Loaded .* from the file in/.test(document.getElementById('progress-text').textContent),
      null, { timeout: 30_000 });
    assert.match(await page.textContent('#progress-text'), new RegExp(path.basename(A.file).replace(/\./g, '\\.')));
    await generate(page, { maxTokens: 4 });
    assert.equal(await page.$$eval('#output .tok.gen', (s) => s.length), 4);
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe('on a 320 px phone', () => {
  test('nothing is wider than the screen: the model bar with its URL form, the controls, "Watch it learn"', async () => {
    const { context, page, errors } = await openPage(env, { viewport: { width: 320, height: 700 } });
    try {
      await page.goto(demoUrl(env.srv.isolated));
      await waitLoaded(page);
      await page.selectOption('#model-select', 'url');
      await page.waitForFunction(() => document.getElementById('train-task')?.options.length > 0, null, { timeout: 30_000 });
      await frames(page);
      const right = await page.$eval('#url-form', (form) => Math.max(...[form, ...form.children].map((el) => el.getBoundingClientRect().right)));
      assert.ok(right <= 320, `the URL form reaches ${right} px`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 320, 'the page scrolls sideways');
      await screenshot(page, 'demo-phone');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});

describe('service worker shim (static hosts without headers)', () => {
  test('"Enable threads" installs it; after the reload the page is cross-origin isolated and runs threads', async () => {
    const { context, page, errors } = await openDemo(env.srv.plain);
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    await Promise.all([page.waitForNavigation({ timeout: 20_000 }), page.click('#coi-on')]);
    await waitLoaded(page);
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.match(await page.textContent('#status-text'),
      /^Runtime: \d+ threads \(threaded build\) · relaxed SIMD · cross-origin isolated \(by the service worker shim\)/);
    await generate(page, { maxTokens: 6 });
    assert.equal(await page.$$eval('#output .tok.gen', (s) => s.length), 6);
    await screenshot(page, 'service-worker-shim');
    await Promise.all([page.waitForNavigation({ timeout: 20_000 }), page.click('#coi-off')]);
    await waitLoaded(page);
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
