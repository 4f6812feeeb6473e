// The docs-site embed (web/embed.mjs, <saccade-attention>) on its example page, with and
// without cross-origin isolation: it loads, generates, draws its heatmap, and highlights on hover;
// then, on pages of their own, its lifecycle (taken off, moved) and the srcs and settings that fail.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import path from 'node:path';

import { DEFAULT_MODEL } from '../../web/config.mjs';
import { devModel } from './dev-models.mjs';
import { canvasStats, frames, modelA, root, screenshot, watchErrors, useBrowser, withPage } from './helpers.mjs';

const A = modelA();
const slow = devModel('gpt2-small-q8_0'); // (GPT-2 small's shape: a generation long enough to interrupt)
const env = useBrowser();


const status = (page, id) => page.$eval(id, (el) => el.shadowRoot.querySelector('.status').textContent);
const inShadow = (page, id, selector, fn) => page.$eval(id, (el, [s, f]) => new Function('els', `return (${f})(els)`)(
  [...el.shadowRoot.querySelectorAll(s)]), [selector, fn.toString()]);

for (const mode of ['isolated', 'plain']) {
  test(`the embed example renders (${mode === 'isolated' ? 'cross-origin isolated' : 'without COOP/COEP'})`, async () => {
    const context = await env.browser.newContext({ viewport: { width: 1100, height: 1100 } });
    if (A.query) {
      // the default model is missing: point the widgets at the generated stand-in
      const src = new URLSearchParams(A.query).get('model');
      await context.addInitScript((src) => {
        new MutationObserver((records) => {
          for (const r of records) for (const n of r.addedNodes) if (n.localName === 'saccade-attention') n.setAttribute('src', src);
        }).observe(document, { subtree: true, childList: true });
      }, src);
    }
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${env.srv[mode].url}/web/embed-example.html`);

    // the first widget generates on its own (autoplay, 24 tokens)
    await page.waitForFunction(() => / · [a-z ]+$/.test(document.querySelector('#first').shadowRoot.querySelector('.status').textContent)
      && document.querySelector('#first').shadowRoot.querySelectorAll('.tok.gen').length > 0, null, { timeout: 30_000 });
    await frames(page);
    const first = await status(page, '#first');
    assert.match(first, new RegExp(`· ${mode === 'isolated' ? '\\d+ threads' : '1 thread \\(page not cross-origin isolated\\)'} · relaxed SIMD · 24 tokens · \\d+ tokens/s · max tokens$`));
    assert.equal(await inShadow(page, '#first', '.tok.gen', (els) => els.length), 24);
    const map = await canvasStats(page, 'canvas', '#first');
    assert.ok(map.colored > 0.05, `the widget's heatmap is mostly blank: ${map.colored}`);
    assert.equal(await page.$eval('#first', (el) => el.shadowRoot.querySelector('[name=head]').value), 'mean');
    // the page's convention: row q sits at token q and wrote token q + 1 ("ROMEO:" → "R→O")
    assert.equal(await page.$eval('#first', (el) => el.mapLabels.rows[0]), 'R→O');

    // hover: the tokens a token attends to light up, and the map marks its row
    await page.locator('#first').locator('.tok[data-i="8"]').hover();
    const lit = await inShadow(page, '#first', '.tok', (els) => els.filter((s) => Number(s.style.getPropertyValue('--to')) > 0).length);
    assert.ok(lit > 0);
    const overlay = await page.$eval('#first', (el) => {
      const c = el.shadowRoot.querySelectorAll('.map canvas')[1];
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
      return n;
    });
    assert.ok(overlay > 0);

    // the second widget waits for its button
    assert.equal(await inShadow(page, '#second', '.tok', (els) => els.length), 0);
    await page.locator('#second').getByRole('button', { name: 'Generate' }).click();
    await page.waitForFunction(() => / · [a-z ]+$/.test(document.querySelector('#second').shadowRoot.querySelector('.status').textContent),
      null, { timeout: 30_000 });
    await frames(page);
    assert.equal(await inShadow(page, '#second', '.tok.gen', (els) => els.length), 24);
    const rollout = await canvasStats(page, 'canvas', '#second');
    assert.ok(rollout.colored > 0.05);
    assert.notEqual(rollout.hash, map.hash);
    await screenshot(page, `embed-${mode}`);
    assert.deepEqual(errors, []);
    // a src that fails: the status says why and the progress bar goes (it stayed, as if loading)
    await page.$eval('#second', (el) => el.setAttribute('src', '/no/such/model.gguf'));
    await page.waitForFunction(() => /^could not load /.test(document.querySelector('#second').shadowRoot.querySelector('.status').textContent),
      null, { timeout: 30_000 });
    assert.equal(await page.$eval('#second', (el) => el.shadowRoot.querySelector('progress').hidden), true);
    await context.close();
  });
}

test('on a 320 px phone the example page is no wider than the screen', async () => {
  await withPage(env, async ({ page, errors }) => {
    await page.goto(`${env.srv.isolated.url}/web/embed-example.html`);
    await page.evaluate(() => customElements.whenDefined('saccade-attention'));
    await frames(page);
    const right = await page.$$eval('saccade-attention', (els) => Math.max(...els.map((el) => el.getBoundingClientRect().right)));
    assert.ok(right <= 320, `a widget reaches ${right} px`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 320, 'the page scrolls sideways');
    assert.deepEqual(errors, []);
  }, { viewport: { width: 320, height: 700 } });
});

test('a widget taken off the page while it generates, and put back, generates again', async () => {
  await withPage(env, async ({ page, errors }) => {
    const url = `${env.srv.plain.url}/web/embed-lifecycle.html`;
    await page.route(url, (route) => route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><script type="module" src="/web/embed.mjs"></script>
        <saccade-attention src="/${path.relative(root, slow).split(path.sep).join('/')}" prompt="az" max-tokens="100" seed="1" autoplay></saccade-attention>`,
    }));
    await page.goto(url);
    const widget = page.locator('saccade-attention');
    await page.waitForFunction(() => document.querySelector('saccade-attention')?.shadowRoot, null, { timeout: 60_000 });
    // taken off while it generates the rest, for a frame (on the element: its events do not reach
    // a detached widget's document), as soon as its first token shows: waited for in the page,
    // since on a fast machine the rest was generated before a separate call from here arrived
    const off = await page.evaluate(async () => {
      const el = document.querySelector('saccade-attention');
      const $ = (s) => el.shadowRoot.querySelector(s);
      await new Promise((resolve) => {
        const poll = () => ($('.tok.gen') ? resolve() : requestAnimationFrame(poll));
        poll();
      });
      const seen = (window.seen = []);
      for (const name of ['saccade-load', 'saccade-generated', 'saccade-error'])
        el.addEventListener(name, (e) => seen.push({ name, count: e.detail?.count, message: e.detail?.message }));
      const generating = !$('[name=stop]').disabled;
      const width = $('canvas').width;
      el.remove();
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      const detached = { generating, go: $('[name=go]').disabled, stop: $('[name=stop]').disabled, model: el.model, drawn: $('canvas').width !== width };
      document.body.append(el);
      // until its model is loaded again, it offers nothing to generate with
      window.goWhileLoading = [];
      const watch = () => {
        if (seen.some((e) => e.name === 'saccade-load')) return;
        window.goWhileLoading.push(!$('[name=go]').disabled || el.model !== null);
        requestAnimationFrame(watch);
      };
      watch();
      return detached;
    });
    assert.deepEqual(off, { generating: true, go: true, stop: true, model: null, drawn: false });
    // it loads again once on screen, and (autoplay) generates to the end
    await page.waitForFunction(() => window.seen.some((e) => e.name === 'saccade-generated'), null, { timeout: 60_000 });
    const seen = await page.evaluate(() => window.seen);
    assert.deepEqual(seen.map((e) => e.name), ['saccade-error', 'saccade-load', 'saccade-generated'], JSON.stringify(seen));
    assert.equal(seen[0].message, 'the model worker was stopped');
    assert.equal(seen[2].count, 100);
    const offered = await page.evaluate(() => window.goWhileLoading);
    assert.ok(!offered.includes(true), `Generate enabled or a model held while loading: ${JSON.stringify(offered)}`);
    await widget.getByRole('button', { name: 'Generate' }).click(); // and again
    await page.waitForFunction(() => window.seen.filter((e) => e.name === 'saccade-generated').length === 2, null, { timeout: 60_000 });
    assert.match(await status(page, 'saccade-attention'), / · 100 tokens · \d+ tokens\/s · max tokens$/);
    // moved idle (off and back on in one task): it keeps its model
    const moved = await page.evaluate(() => {
      const el = document.querySelector('saccade-attention');
      el.remove();
      document.body.append(el);
      return { go: el.shadowRoot.querySelector('[name=go]').disabled, model: el.model !== null };
    });
    assert.deepEqual(moved, { go: false, model: true });
    // taken off idle (for a task): nothing to generate with until it has loaded again
    const idle = await page.evaluate(async () => {
      const el = document.querySelector('saccade-attention');
      el.remove();
      await new Promise((resolve) => setTimeout(resolve));
      const go = el.shadowRoot.querySelector('[name=go]').disabled;
      document.body.append(el);
      return { go, model: el.model };
    });
    assert.deepEqual(idle, { go: true, model: null });
    await page.waitForFunction(() => window.seen.filter((e) => e.name === 'saccade-load').length === 2, null, { timeout: 60_000 });
    assert.deepEqual(errors, []);
  });
});

/**
 * Opens a page on the plain server holding the embed's script and `body`; the widgets' events
 * (those of widgets on the page) are recorded in window.seen as { name, message, count, reason }.
 */
async function embedPage(page, body) {
  const url = `${env.srv.plain.url}/web/embed-test.html`;
  await page.route(url, (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><script>
        window.seen = [];
        for (const name of ['saccade-load', 'saccade-generated', 'saccade-error'])
          document.addEventListener(name, (e) => seen.push({ name, message: e.detail?.message, count: e.detail?.count, reason: e.detail?.reason }));
      </script><script type="module" src="/web/embed.mjs"></script>${body}`,
  }));
  await page.goto(url);
}

const modelPath = (file) => `/${path.relative(root, file).split(path.sep).join('/')}`;
const seenNames = (page) => page.evaluate(() => window.seen.map((e) => e.name));
const shadow = (page, fn) => page.$eval('saccade-attention', (el, f) => new Function('el', `return (${f})(el)`)(el), fn.toString());

test('an src that is no URL fails as any other src: the status says why, saccade-error, no progress bar', async () => {
  await withPage(env, async ({ page, errors }) => {
    // (it threw outside the load's try: an uncaught error, no event, and a progress bar left as if loading)
    await embedPage(page, '<saccade-attention src="http://[bad" prompt="ROMEO:" autoplay></saccade-attention>');
    await page.waitForFunction(() => window.seen.length > 0, null, { timeout: 10_000 }); // (it fails at once)
    assert.deepEqual(await seenNames(page), ['saccade-error']);
    assert.equal(await status(page, 'saccade-attention'), 'could not load http://[bad: src is not a valid URL');
    assert.deepEqual(await shadow(page, (el) => ({ progress: el.shadowRoot.querySelector('progress').hidden,
      go: el.shadowRoot.querySelector('[name=go]').disabled, model: el.model })), { progress: true, go: true, model: null });
    assert.deepEqual(errors, []);
  });
});

test('an empty src loads the default model, as no src does (not the page or the script)', async () => {
  await withPage(env, async ({ page, errors }) => {
    // the default model's URL (web/config.mjs), served Model A (its stand-in when the shipped one is missing)
    const gets = [];
    await page.route(new URL(DEFAULT_MODEL, `${env.srv.plain.url}/web/`).href, (route) => {
      if (route.request().method() === 'GET') gets.push(route.request().url());
      return route.fulfill({ path: A.file, headers: { 'content-type': 'application/octet-stream' } });
    });
    await embedPage(page, '<saccade-attention src="" prompt="ROMEO:" max-tokens="4" seed="1" autoplay></saccade-attention>');
    await page.waitForFunction(() => window.seen.length > 1 || window.seen.some((e) => e.name === 'saccade-error'), null, { timeout: 60_000 });
    const seen = await page.evaluate(() => window.seen);
    assert.deepEqual(seen.map((e) => e.name), ['saccade-load', 'saccade-generated'], JSON.stringify(seen));
    assert.equal(gets.length, 1);
    assert.deepEqual(errors, []);
  });
});

test('a src change that fails drops the old model and its output, and Generate stays off', async () => {
  await withPage(env, async ({ page, errors }) => {
    await embedPage(page, `<saccade-attention src="${modelPath(A.file)}" prompt="ROMEO:" max-tokens="8" seed="1" autoplay></saccade-attention>`);
    await page.waitForFunction(() => window.seen.some((e) => e.name === 'saccade-generated'), null, { timeout: 60_000 });
    assert.ok((await shadow(page, (el) => el.shadowRoot.querySelector('.output').textContent)).length > 0);
    await page.$eval('saccade-attention', (el) => el.setAttribute('src', '/web/index.html')); // not a GGUF file
    await page.waitForFunction(() => window.seen.some((e) => e.name === 'saccade-error'), null, { timeout: 30_000 });
    await frames(page);
    const after = () => shadow(page, (el) => ({ output: el.shadowRoot.querySelector('.output').textContent, rows: el.mapLabels?.rows.length ?? 0,
      model: el.model, go: el.shadowRoot.querySelector('[name=go]').disabled, status: el.shadowRoot.querySelector('.status').textContent }));
    const failed = await after();
    assert.match(failed.status, /^could not load .*\/web\/index\.html: /);
    assert.deepEqual({ ...failed, status: undefined }, { output: '', rows: 0, model: null, go: true, status: undefined });
    // generating has nothing to run: it neither fails in the worker nor turns Generate back on
    await page.$eval('saccade-attention', (el) => el.generate());
    await frames(page);
    assert.deepEqual(await after(), failed);
    assert.deepEqual(await seenNames(page), ['saccade-load', 'saccade-generated', 'saccade-error']);
    assert.deepEqual(errors, []);
  });
});

test('a widget moved while its model loads goes on loading it: no error, no second download', async () => {
  await withPage(env, async ({ page, errors }) => {
    // the model, held back a second: the move lands while it downloads
    const gets = [];
    await page.route('**/slow/model.gguf', async (route) => {
      if (route.request().method() === 'GET') gets.push(route.request().url());
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await route.fulfill({ path: A.file, headers: { 'content-type': 'application/octet-stream' } }).catch(() => {});
    });
    await embedPage(page, `<div id="a"><saccade-attention src="/slow/model.gguf" prompt="ROMEO:" max-tokens="4" seed="1" autoplay>
      </saccade-attention></div><div id="b"></div>`);
    await page.waitForFunction(() => /^load/.test(document.querySelector('saccade-attention').shadowRoot.querySelector('.status').textContent));
    while (gets.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await page.evaluate(() => document.querySelector('#b').append(document.querySelector('saccade-attention')));
    await page.waitForFunction(() => window.seen.some((e) => e.name !== 'saccade-load'), null, { timeout: 60_000 });
    const seen = await page.evaluate(() => window.seen);
    assert.deepEqual(seen.map((e) => e.name), ['saccade-load', 'saccade-generated'], JSON.stringify(seen));
    assert.equal(seen[1].count, 4);
    assert.equal(gets.length, 1, `downloaded ${gets.length} times`);
    assert.deepEqual(errors, []);
  });
});

test('max-tokens 0 is refused with a clear message (it ended with no reason: "undefined")', async () => {
  await withPage(env, async ({ page, errors }) => {
    await embedPage(page, `<saccade-attention src="${modelPath(A.file)}" prompt="ROMEO:" max-tokens="0" seed="1" autoplay></saccade-attention>`);
    await page.waitForFunction(() => window.seen.length > 1, null, { timeout: 60_000 });
    const seen = await page.evaluate(() => window.seen);
    assert.deepEqual(seen.map((e) => e.name), ['saccade-load', 'saccade-error'], JSON.stringify(seen));
    assert.match(seen[1].message, /^max-tokens is 0/);
    assert.equal(await status(page, 'saccade-attention'), `error: ${seen[1].message}`);
    // the widget can still generate, with a count that gives tokens
    await page.$eval('saccade-attention', (el) => el.setAttribute('max-tokens', '3'));
    await page.locator('saccade-attention').getByRole('button', { name: 'Generate' }).click();
    await page.waitForFunction(() => window.seen.some((e) => e.name === 'saccade-generated'), null, { timeout: 60_000 });
    const { name, count, reason } = await page.evaluate(() => window.seen.at(-1));
    assert.deepEqual({ name, count, reason }, { name: 'saccade-generated', count: 3, reason: 'maxTokens' });
    assert.match(await status(page, 'saccade-attention'), / · 3 tokens · \d+ tokens\/s · max tokens$/);
    assert.deepEqual(errors, []);
  });
});
