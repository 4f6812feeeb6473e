// The library in headless Chromium: on a cross-origin isolated page (threads), on a plain
// page (single-threaded), and inside a module Web Worker on each.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { DEMO_PATHS, serve } from '../../web/serve.mjs';
import { loadModel } from '../../src/js/index.mjs';
import { fixture, native, relativeError, root } from './helpers.mjs';

const prompt = [11, 22, 33, 44];
const modelName = 'llama-q8_0';
let browser;
let servers;
let reference; // logits and greedy tokens computed in Node

before(async () => {
  const file = fixture(modelName);
  const m = await loadModel(file, { threads: 2 });
  reference = {
    logits: Array.from(m.forward(prompt)),
    ids: native('generate', file, '--tokens', prompt.join(','), '-n', 12, '--temp', 0, '--ignore-eos').tokens,
  };
  m.dispose();
  const allow = [...DEMO_PATHS, '/tests/js/browser/', '/build/js-fixtures/'];
  servers = { isolated: await serve({ root, isolated: true, allow }), plain: await serve({ root, isolated: false, allow }) };
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--headless'],
  });
});

after(async () => {
  await browser?.close();
  await servers?.isolated.close();
  await servers?.plain.close();
});

async function openPage(kind) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${servers[kind].url}/tests/js/browser/index.html`);
  return { page, errors };
}

const modelUrl = `/build/js-fixtures/${modelName}.gguf`;

/** On the page itself: load from a URL, forward, generate. */
function onPage(page, options) {
  return page.evaluate(async ({ url, prompt, options }) => {
    const { loadModel } = await import('/src/js/index.mjs');
    try {
      const model = await loadModel(url, options);
      const ids = [];
      for await (const s of model.generate(prompt, { maxTokens: 12, temperature: 0, ignoreEos: true })) ids.push(s.id);
      const out = { runtime: { ...model.runtime }, logits: Array.from(model.forward(prompt)), ids };
      model.dispose();
      return out;
    } catch (e) {
      return { error: `${e.name}: ${e.message}` };
    }
  }, { url: modelUrl, prompt, options });
}

/** In a module worker started by the page. */
function inWorker(page, threads) {
  return page.evaluate(({ url, prompt, threads }) => new Promise((resolve) => {
    const worker = new Worker('/tests/js/browser/worker.mjs', { type: 'module' });
    worker.onmessage = ({ data }) => {
      worker.terminate();
      resolve(data);
    };
    worker.onerror = (e) => resolve({ error: e.message ?? 'worker error' });
    worker.postMessage({ url, prompt, threads, maxTokens: 12 });
  }), { url: modelUrl, prompt, threads });
}

describe('cross-origin isolated page (COOP + COEP)', () => {
  test('the page runs the threaded build; logits and tokens match Node', async () => {
    const { page, errors } = await openPage('isolated');
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    const r = await onPage(page, {});
    assert.equal(r.error, undefined, r.error);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    assert.equal(r.runtime.variant, Math.min(8, cores) > 1 ? 'mt' : 'st');
    assert.equal(r.runtime.threads, Math.min(8, cores));
    assert.equal(r.runtime.isolated, true);
    assert.ok(relativeError(r.logits, reference.logits) <= 1e-6);
    assert.deepEqual(r.ids, reference.ids);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a module Web Worker runs the threaded build, streams with progress, and aborts', async () => {
    const { page, errors } = await openPage('isolated');
    const r = await inWorker(page, 2);
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.isolated, true);
    assert.equal(r.runtime.variant, 'mt');
    assert.equal(r.runtime.threads, 2);
    assert.deepEqual(r.ids, reference.ids, 'stopped by the AbortSignal after 12 tokens');
    assert.equal(r.aborted, true);
    assert.ok(relativeError(r.logits, reference.logits) <= 1e-6);
    assert.ok(r.reports >= 2);
    assert.equal(r.progress.loaded, r.progress.total);
    assert.deepEqual(r.attention, { finishReason: 'maxTokens', rows: r.attention.rows, rowsMatch: true,
      floats: r.attention.end, end: r.attention.end });
    assert.ok(r.attention.rows >= 3 && r.attention.floats > 0, JSON.stringify(r.attention));
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('page without cross-origin isolation', () => {
  test('the page falls back to the single-threaded build and says why', async () => {
    const { page } = await openPage('plain');
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    const r = await onPage(page, { threads: 4 });
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.runtime.variant, 'st');
    assert.equal(r.runtime.threads, 1);
    assert.equal(r.runtime.isolated, false);
    assert.match(r.runtime.reason, /not cross-origin isolated.*Cross-Origin-Opener-Policy/);
    assert.ok(relativeError(r.logits, reference.logits) <= 1e-6);
    assert.deepEqual(r.ids, reference.ids);
    const forced = await onPage(page, { variant: 'mt' });
    assert.match(forced.error, /SaccadeError: the threaded build cannot run here: the page is not cross-origin isolated/);
    await page.close();
  });

  test('a module Web Worker there runs single-threaded', async () => {
    const { page } = await openPage('plain');
    const r = await inWorker(page, 2);
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.isolated, false);
    assert.equal(r.runtime.variant, 'st');
    assert.deepEqual(r.ids, reference.ids);
    assert.equal(r.attention.finishReason, 'maxTokens');
    assert.equal(r.attention.rowsMatch, true);
    await page.close();
  });
});
