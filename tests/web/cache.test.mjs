// The library's download cache in Chromium (the real Cache API): a URL is cached once the
// engine has parsed it, a reload reads it without downloading, `cache: false` and named caches,
// split models cached and cleared shard by shard, and nothing cached from a truncated, aborted
// or refused download; a cached copy of the wrong length, or one the server has changed, is
// downloaded again.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { DEMO_PATHS, serve, staticHandler } from '../../web/serve.mjs';
import { splitGguf } from '../js/gguf.mjs';
import { fixture, fixtureDir } from '../js/helpers.mjs';
import { cutOnce, launch, root } from './helpers.mjs';

const dirName = `cache-${process.pid}`;
const dir = path.join(fixtureDir, dirName);
const rel = (name) => `/build/js-fixtures/${dirName}/${name}`;
let browser;
let server;

before(async () => {
  mkdirSync(dir, { recursive: true });
  const bytes = readFileSync(fixture('gpt2-q8_0-char'));
  writeFileSync(path.join(dir, 'model.gguf'), bytes);
  writeFileSync(path.join(dir, 'changing.gguf'), bytes);
  writeFileSync(path.join(dir, 'broken.gguf'), bytes.subarray(0, bytes.length >> 1)); // a whole response, a broken file
  const nTensors = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(8, true));
  splitGguf(bytes, [0, 3, 7, nTensors]).forEach((b, i) => writeFileSync(path.join(dir, `split-0000${i + 1}-of-00003.gguf`), b));
  const files = staticHandler(root, { isolated: false, allow: [...DEMO_PATHS, '/tests/js/browser/', '/build/js-fixtures/'] });
  server = await serve({ handler: cutOnce(files, root) });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh page of the test server (an empty cache) and the model GETs it makes. */
async function openPage() {
  const context = await browser.newContext();
  const page = await context.newPage();
  const downloads = [];
  context.on('request', (r) => {
    if (r.method() === 'GET' && /\.gguf$/.test(r.url())) downloads.push(new URL(r.url()).pathname);
  });
  await page.goto(`${server.url}/tests/js/browser/index.html`);
  return { context, page, downloads };
}

/**
 * Loads `url` in the page with `options`; returns { sourceInfo (once model.cached has settled),
 * atLoad (sourceInfo.cache.status as loadModel resolved), architecture } or { error }.
 */
const load = (page, url, options = {}) => page.evaluate(async ({ url, options }) => {
  const { loadModel } = await import('/src/js/index.mjs');
  try {
    const model = await loadModel(url, { threads: 1, ...options });
    const atLoad = model.sourceInfo.cache.status;
    const final = await model.cached;
    if (final !== model.sourceInfo.cache) throw new Error('model.cached is not the final sourceInfo.cache');
    const out = { sourceInfo: JSON.parse(JSON.stringify(model.sourceInfo)), atLoad, architecture: model.info.architecture };
    model.dispose();
    return out;
  } catch (e) {
    return { error: `${e.name}: ${e.message}` };
  }
}, { url, options });

const list = (page, options) => page.evaluate(async (options) => {
  const { listCachedModels } = await import('/src/js/index.mjs');
  return (await listCachedModels(options)).map(({ url, bytes, stored }) => ({ path: new URL(url).pathname, bytes,
    stored: stored instanceof Date }));
}, options);

const clear = (page, urls, options) => page.evaluate(async ({ urls, options }) => {
  const { clearCachedModels } = await import('/src/js/index.mjs');
  return clearCachedModels(urls ?? undefined, options);
}, { urls: urls ?? null, options });

const size = (name) => readFileSync(path.join(dir, name)).length;

describe('download cache (Cache API)', () => {
  test('a URL is cached once loaded; the next load reads the cache without downloading', async () => {
    const { context, page, downloads } = await openPage();
    const first = await load(page, rel('model.gguf'));
    assert.equal(first.error, undefined, first.error);
    assert.deepEqual(first.sourceInfo, { from: 'network', bytes: size('model.gguf'), shards: 1,
      urls: [`${server.url}${rel('model.gguf')}`], cache: { status: 'stored', message: 'saved in the browser cache' } });
    assert.equal(first.atLoad, 'pending', 'loadModel does not wait for the cache write');
    assert.deepEqual(await list(page), [{ path: rel('model.gguf'), bytes: size('model.gguf'), stored: true }]);
    assert.deepEqual(downloads, [rel('model.gguf')]);
    const again = await load(page, rel('model.gguf'));
    assert.deepEqual({ from: again.sourceInfo.from, cache: again.sourceInfo.cache, atLoad: again.atLoad },
      { from: 'cache', cache: { status: 'hit', message: 'read from the browser cache' }, atLoad: 'hit' });
    assert.deepEqual(downloads, [rel('model.gguf')], 'no second download');
    await context.close();
  });

  test('cache: false leaves the cache alone; a named cache is a cache of its own', async () => {
    const { context, page } = await openPage();
    const off = await load(page, rel('model.gguf'), { cache: false });
    assert.deepEqual(off.sourceInfo.cache, { status: 'off', message: 'not cached (cache: false)' });
    assert.equal(off.atLoad, 'off', 'nothing to write: final at once');
    assert.deepEqual(await list(page), []);
    const named = await load(page, rel('model.gguf'), { cache: 'my-models' });
    assert.equal(named.sourceInfo.cache.status, 'stored');
    assert.deepEqual(await list(page), []);
    assert.equal((await list(page, { cache: 'my-models' })).length, 1);
    assert.equal(await clear(page, null, { cache: 'my-models' }), 1);
    assert.deepEqual(await list(page, { cache: 'my-models' }), []);
    assert.match((await load(page, rel('model.gguf'), { cache: '' })).error, /^SaccadeError: cache must be true, false or a cache name/);
    await context.close();
  });

  test('the cache cleared while a model downloads: its copy is reported not cached (it said "saved")', async () => {
    const { context, page } = await openPage();
    const cache = await page.evaluate(async (url) => {
      const { loadModel, clearCachedModels } = await import('/src/js/index.mjs');
      let clearing = null;
      const model = await loadModel(url, { threads: 1, onProgress: () => (clearing ??= clearCachedModels()) });
      await clearing;
      const final = await model.cached;
      model.dispose();
      return final;
    }, rel('model.gguf'));
    assert.deepEqual(cache, { status: 'failed', message: 'not cached: the cache was cleared while the model downloaded' });
    assert.deepEqual(await list(page), []);
    await context.close();
  });

  test('a split model caches every shard; clearing its first shard\'s URL clears them all', async () => {
    const { context, page, downloads } = await openPage();
    const shards = [1, 2, 3].map((i) => rel(`split-0000${i}-of-00003.gguf`));
    const r = await load(page, shards[0]);
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual({ shards: r.sourceInfo.shards, cache: r.sourceInfo.cache.status }, { shards: 3, cache: 'stored' });
    assert.deepEqual((await list(page)).map((e) => e.path).sort(), shards);
    const again = await load(page, shards[0]);
    assert.equal(again.sourceInfo.from, 'cache');
    assert.deepEqual(downloads.sort(), shards, 'each shard downloaded once');
    assert.equal(await clear(page, shards[0]), 3);
    assert.deepEqual(await list(page), []);
    await context.close();
  });

  test('never cached: a truncated download, an aborted one, one the engine refuses', async () => {
    const { context, page } = await openPage();
    const truncated = await load(page, `/flaky${rel('model.gguf')}`);
    assert.match(truncated.error, /^(SaccadeError|TypeError): /);
    const aborted = await page.evaluate(async (url) => {
      const { loadModel } = await import('/src/js/index.mjs');
      const controller = new AbortController();
      try {
        await loadModel(url, { threads: 1, signal: controller.signal, onProgress: ({ loaded }) => loaded > 0 && controller.abort() });
        return 'loaded';
      } catch (e) {
        return e.name;
      }
    }, rel('model.gguf'));
    assert.equal(aborted, 'AbortError');
    const refused = await load(page, rel('broken.gguf'));
    assert.match(refused.error, /^SaccadeError: /);
    await page.waitForTimeout(300); // a cache copy would settle right after the download
    assert.deepEqual(await list(page), []);
    // the next load of the cut URL downloads it whole, and caches it
    const whole = await load(page, `/flaky${rel('model.gguf')}`);
    assert.equal(whole.sourceInfo.cache.status, 'stored');
    await context.close();
  });

  test('a cached copy of the wrong length, or one the server has changed, is downloaded again', async () => {
    const { context, page, downloads } = await openPage();
    assert.equal((await load(page, rel('model.gguf'))).sourceInfo.cache.status, 'stored');
    // the stored copy loses its end (the recorded length stays)
    await page.evaluate(async (url) => {
      const cache = await caches.open('saccade-models-v1');
      const old = await cache.match(url);
      const bytes = new Uint8Array(await old.arrayBuffer());
      await cache.put(url, new Response(bytes.subarray(0, 100), { headers: old.headers }));
    }, `${server.url}${rel('model.gguf')}`);
    const reread = await load(page, rel('model.gguf'));
    assert.equal(reread.error, undefined, reread.error);
    assert.deepEqual([reread.sourceInfo.from, reread.sourceInfo.cache.status], ['network', 'stored']);
    assert.equal(downloads.filter((d) => d === rel('model.gguf')).length, 2);
    // a model rebuilt at the same URL (a new ETag)
    assert.equal((await load(page, rel('changing.gguf'))).architecture, 'gpt2');
    writeFileSync(path.join(dir, 'changing.gguf'), readFileSync(fixture('llama-q8_0-char')));
    const changed = await load(page, rel('changing.gguf'));
    assert.deepEqual([changed.architecture, changed.sourceInfo.from], ['llama', 'network']);
    await context.close();
  });

  test('the cache write is off the load\'s path: a slow put, a failing put, dispose while it is written', async () => {
    const { context, page } = await openPage();
    const out = await page.evaluate(async (url) => {
      const { loadModel } = await import('/src/js/index.mjs');
      const unhandled = [];
      addEventListener('unhandledrejection', (e) => unhandled.push(String(e.reason)));
      const put = Cache.prototype.put;
      const timeout = (ms) => new Promise((resolve) => setTimeout(() => resolve('timed out'), ms));
      // 1. a put that waits for the test: loadModel resolves meanwhile, with a usable model
      let open;
      const gate = new Promise((resolve) => (open = resolve));
      Cache.prototype.put = function (...args) {
        return gate.then(() => put.apply(this, args));
      };
      const slow = await Promise.race([loadModel(url, { threads: 1 }), timeout(10_000)]);
      if (slow === 'timed out') return { slow };
      const pending = { ...slow.sourceInfo.cache };
      const ids = slow.tokenize('ab');
      const before = await Promise.race([slow.cached.then(() => 'settled'), timeout(100)]);
      open();
      const stored = await slow.cached;
      const result = { pending, ids: ids.length, before, stored: { ...stored }, after: slow.sourceInfo.cache.status,
        listed: (await (await caches.open('saccade-models-v1')).keys()).length };
      slow.dispose();
      await caches.delete('saccade-models-v1');
      // 2. dispose() while the copy is being written: the write still completes
      let open2;
      const gate2 = new Promise((resolve) => (open2 = resolve));
      Cache.prototype.put = function (...args) {
        return gate2.then(() => put.apply(this, args));
      };
      const early = await loadModel(url, { threads: 1 });
      early.dispose();
      open2();
      result.afterDispose = (await early.cached).status;
      await caches.delete('saccade-models-v1');
      // 3. a put that fails: a 'failed' report with the reason, loadModel unaffected
      Cache.prototype.put = () => Promise.reject(new DOMException('the quota is used up (test)', 'QuotaExceededError'));
      const failing = await loadModel(url, { threads: 1 });
      result.failing = { atLoad: failing.sourceInfo.cache.status, final: { ...(await failing.cached) } };
      failing.dispose();
      Cache.prototype.put = put;
      await new Promise((resolve) => setTimeout(resolve, 100)); // (unhandled rejections are reported after a task)
      result.unhandled = unhandled;
      return result;
    }, rel('model.gguf'));
    assert.notEqual(out.slow, 'timed out', 'loadModel waited for the cache write');
    assert.deepEqual(out.pending, { status: 'pending', message: 'being saved in the browser cache' });
    assert.ok(out.ids > 0);
    assert.equal(out.before, 'timed out', 'model.cached settles only once the copy is written');
    assert.deepEqual(out.stored, { status: 'stored', message: 'saved in the browser cache' });
    assert.equal(out.after, 'stored', 'sourceInfo is replaced by the final one');
    assert.equal(out.listed, 1);
    assert.equal(out.afterDispose, 'stored');
    assert.deepEqual(out.failing, { atLoad: 'pending',
      final: { status: 'failed', message: 'not cached: the quota is used up (test)' } });
    assert.deepEqual(out.unhandled, []);
    await context.close();
  });
});
