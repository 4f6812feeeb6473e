// loadModel does not wait for the download's cache copy: model.sourceInfo.cache is 'pending' until
// the write ends, and model.cached resolves to the final report (and replaces sourceInfo). In
// Node, over a stand-in Cache API (globalThis.caches) whose put the test holds or fails; the real
// Cache API in Chromium: tests/web/cache.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { fixture } from './helpers.mjs';

let bytes;
let server;
let url;

/** A stand-in for the Cache API: `put(request, response)` is `onPut`'s; `stored` what it kept. */
function fakeCaches(onPut) {
  const stored = new Map();
  const cache = {
    match: async (key) => stored.get(String(key)),
    delete: async (key) => stored.delete(String(key)),
    keys: async () => [...stored.keys()].map((u) => new Request(u)),
    put: (key, response) => onPut(String(key), response, stored),
  };
  return { stored, caches: { open: async () => cache, has: async () => true, delete: async () => true } };
}

/** put() that reads the whole body (erroring when the copy does) and keeps it. */
const keep = async (key, response, stored) => {
  const body = new Uint8Array(await response.arrayBuffer());
  stored.set(key, new Response(body, { headers: response.headers }));
};

const unhandled = [];
const onUnhandled = (e) => unhandled.push(e);

before(async () => {
  bytes = readFileSync(fixture('gpt2-q8_0-char'));
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-length': bytes.length, etag: '"1"' });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}/model.gguf`;
  process.on('unhandledRejection', onUnhandled);
});

after(async () => {
  delete globalThis.caches;
  process.off('unhandledRejection', onUnhandled);
  await new Promise((resolve) => server.close(resolve));
});

test('nothing to write (Node, no Cache API; bytes): the report is final as loadModel resolves', async () => {
  delete globalThis.caches;
  for (const source of [url, new Uint8Array(bytes)]) {
    const model = await loadModel(source, { threads: 1 });
    const { sourceInfo } = model;
    assert.notEqual(sourceInfo.cache.status, 'pending');
    assert.equal(await model.cached, sourceInfo.cache);
    assert.equal(model.sourceInfo, sourceInfo, 'sourceInfo stays the same object');
    model.dispose();
  }
});

/** Fake caches whose puts wait for release(). */
function holdPuts() {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const fake = fakeCaches(async (...args) => {
    await held;
    return keep(...args);
  });
  globalThis.caches = fake.caches;
  return { fake, release };
}

test('a held put: loadModel resolves with a usable model and a pending report; model.cached resolves to stored', async () => {
  const { fake, release } = holdPuts();
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(resolve, 10_000, 'timed out')));
  const model = await Promise.race([loadModel(url, { threads: 1 }), timeout]);
  clearTimeout(timer);
  assert.notEqual(model, 'timed out', 'loadModel waited for the cache write');
  const pending = model.sourceInfo;
  assert.deepEqual(pending.cache, { status: 'pending', message: 'being saved in the browser cache' });
  assert.ok(Object.isFrozen(pending) && Object.isFrozen(pending.cache));
  assert.ok(model.tokenize('ab').length > 0);
  let settled = false;
  model.cached.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(settled, false, 'model.cached waits for the write');
  release();
  const report = await model.cached;
  assert.deepEqual(report, { status: 'stored', message: 'saved in the browser cache' });
  assert.notEqual(model.sourceInfo, pending, 'sourceInfo is replaced');
  assert.equal(model.sourceInfo.cache, report);
  assert.ok(Object.isFrozen(model.sourceInfo));
  assert.deepEqual({ ...model.sourceInfo, cache: null }, { ...pending, cache: null }, 'the rest is as it was');
  assert.equal(fake.stored.size, 1);
  model.dispose();
});

test('dispose() while the copy is written: the write completes, model.cached still resolves', async () => {
  const { fake, release } = holdPuts();
  const model = await loadModel(url, { threads: 1 });
  model.dispose();
  release();
  assert.equal((await model.cached).status, 'stored');
  assert.equal(fake.stored.size, 1);
});

test('a failing put: a failed report with the reason, never a rejection', async () => {
  globalThis.caches = fakeCaches(() => Promise.reject(new Error('the quota is used up (test)'))).caches;
  const model = await loadModel(url, { threads: 1 });
  assert.equal(model.sourceInfo.cache.status, 'pending');
  assert.deepEqual(await model.cached, { status: 'failed', message: 'not cached: the quota is used up (test)' });
  assert.equal(model.sourceInfo.cache.status, 'failed');
  model.dispose();
  await new Promise((resolve) => setTimeout(resolve, 50)); // (an unhandled rejection is reported after a turn)
  assert.deepEqual(unhandled, []);
});
