// Start-up: loadModel reads the model while its wasm instance (compile, thread pool) starts, and
// warmUp starts an instance before any load, which the next load of that runtime takes — still
// starting or parked. Internal, so tested through the modules.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { instantiate, poolReady, poolStarted, release, terminate, warmUp } from '../../src/js/instantiate.mjs';
import { chooseRuntime } from '../../src/js/runtime.mjs';
import { collect, fixture } from './helpers.mjs';

/** Counts the main instances made (WebAssembly.instantiate calls on this thread) while `fn` runs. */
async function countInstances(fn) {
  const original = WebAssembly.instantiate;
  let n = 0;
  WebAssembly.instantiate = (...args) => {
    n++;
    return original.apply(WebAssembly, args);
  };
  try {
    return { value: await fn(), n };
  } finally {
    WebAssembly.instantiate = original;
  }
}

for (const variant of ['st', 'mt']) {
  test(`${variant}: a load takes the instance warmUp started, while it starts and once it is parked`, async () => {
    const runtime = chooseRuntime({ variant, threads: 2 });
    await instantiate(runtime).then(release); // compiled once beforehand: only instances are counted
    const taken = await instantiate(runtime); // (and none parked)
    const starting = await countInstances(async () => {
      warmUp(runtime);
      return instantiate(runtime);
    });
    assert.equal(starting.n, 1, 'the load took the instance warmUp was starting');
    const parked = await countInstances(async () => {
      warmUp(runtime);
      warmUp(runtime); // one at a time
      for (let i = 0; i < 200 && starting.n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      return instantiate(runtime);
    });
    assert.equal(parked.n, 1, 'one instance for two warmUp calls and the load');
    for (const M of [taken, starting.value, parked.value]) release(M);
  });
}

test('waitForThreads: false hands over the instance before its pool has started; the threads join later with the same tokens', async () => {
  // 3 threads: an instance of its own (none parked for this pool size by the other tests)
  const runtime = chooseRuntime({ variant: 'mt', threads: 3 });
  const early = await instantiate(runtime, 'saccade', { waitForThreads: false });
  // (the workers' 'loaded' messages need a turn of the event loop, which has not come yet)
  assert.equal(poolReady(early), false, 'handed over before the pool started');
  await poolStarted(early);
  assert.equal(poolReady(early), true);
  release(early); // parked: a started pool, taken by the load below
  const bytes = readFileSync(fixture('gpt2-q8_0-char'));
  const options = { maxTokens: 24, temperature: 0 };
  const reference = await loadModel(bytes, { threads: 1 });
  const want = (await collect(reference.generate('ab', options))).map((s) => s.id);
  reference.dispose();
  for (const threads of [3, 4]) { // parked (started) and new (starting) pools
    const model = await loadModel(bytes, { threads, waitForThreads: false });
    assert.equal(model.runtime.threads, threads, 'the threads it is starting');
    const ids = [];
    for await (const step of model.generate('ab', options)) {
      ids.push(step.id);
      await new Promise((resolve) => setTimeout(resolve, 5)); // turns in which the pool may start and join
    }
    assert.deepEqual(ids, want, `${threads} threads`);
    assert.equal(await model.threadsReady, threads);
    assert.equal(model.runtime.threads, threads);
    assert.deepEqual((await collect(model.generate('ab', options))).map((s) => s.id), want);
    model.dispose();
  }
  const waited = await loadModel(bytes, { threads: 2 });
  assert.equal(await waited.threadsReady, 2, 'resolved at once when loadModel waited');
  waited.dispose();
  await assert.rejects(loadModel(bytes, { waitForThreads: 1 }), /waitForThreads must be true or false/);
});

test('an instance terminated before its pool started settles the pool at once', async () => {
  const M = await instantiate(chooseRuntime({ variant: 'mt', threads: 5 }), 'saccade', { waitForThreads: false });
  assert.equal(poolReady(M), false);
  const t0 = performance.now();
  terminate(M);
  await assert.rejects(poolStarted(M), /terminated before its threads started/);
  assert.ok(performance.now() - t0 < 5000, 'not at the 30 s deadline');
});

test('sac_context_set_threads with a fixed set of workers: the old pool lends them back (3 → 2 → 3 → 1 → 3)', async () => {
  const M = await instantiate(chooseRuntime({ variant: 'mt', threads: 3 })); // 2 workers, no more
  const bytes = readFileSync(fixture('gpt2-q8_0-char'));
  const data = M._malloc(bytes.length);
  M.HEAPU8.set(bytes, data);
  const out = M._malloc(256);
  try {
    assert.equal(M._sac_model_load(data, bytes.length, 1, out), 0); // SAC_LOAD_TAKE_OWNERSHIP
    const model = M.HEAPU32[out >> 2];
    M._sac_context_default_params(out + 8);
    M.HEAP32[(out + 8 + 8) >> 2] = 3; // n_threads (after n_ctx, n_batch)
    assert.equal(M._sac_context_new(model, out + 8, out + 4), 0);
    const ctx = M.HEAPU32[(out + 4) >> 2];
    const seen = [M._sac_context_n_threads(ctx)];
    for (const n of [2, 3, 1, 3]) {
      assert.equal(M._sac_context_set_threads(ctx, n), 0);
      seen.push(M._sac_context_n_threads(ctx));
    }
    assert.deepEqual(seen, [3, 2, 3, 1, 3]);
    M._sac_context_free(ctx);
    M._sac_model_free(model);
  } finally {
    M._free(out);
    release(M);
  }
});

test('chunks that arrive before the instance is ready load the same model', async () => {
  const bytes = readFileSync(fixture('gpt2-q8_0-char'));
  // chunks from one buffer the stream refills on each read (as a file source does), all at once:
  // those read before the heap exists must be copied, not kept as views
  const buffer = new Uint8Array(1000);
  let at = 0;
  const stream = new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      const n = Math.min(buffer.length, bytes.length - at);
      buffer.set(bytes.subarray(at, at + n));
      controller.enqueue(buffer.subarray(0, n));
      at += n;
    },
  }, { highWaterMark: 0 }); // (filled only when read)
  const options = { maxTokens: 8, seed: 3 };
  const held = await instantiate(chooseRuntime({ threads: 1 })); // none parked: the load starts its own
  const streamed = await loadModel(new Response(stream, { headers: { 'content-length': String(bytes.length) } }), { threads: 1 });
  const reference = await loadModel(bytes, { threads: 1 });
  try {
    assert.equal(streamed.sourceInfo.bytes, bytes.length);
    const a = (await collect(streamed.generate('ab', options))).map((s) => s.id);
    const b = (await collect(reference.generate('ab', options))).map((s) => s.id);
    assert.deepEqual(a, b);
  } finally {
    streamed.dispose();
    reference.dispose();
    release(held);
  }
});

test('preopen: loadModel takes the source opened early for its URL and cache option, once', async () => {
  const { createServer } = await import('node:http');
  const { preopen, takePreopened } = await import('../../src/js/preopen.mjs');
  const bytes = readFileSync(fixture('gpt2-q8_0-char'));
  let gets = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') gets++;
    res.writeHead(200, { 'content-length': bytes.length }).end(req.method === 'GET' ? bytes : undefined);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/model.gguf`;
  try {
    preopen(url, { cache: true });
    assert.equal(gets <= 1, true);
    const model = await loadModel(url, { threads: 1 });
    assert.equal(gets, 1, 'one request: the early one');
    assert.equal(model.sourceInfo.bytes, bytes.length);
    model.dispose();
    // another cache option is another load's: not taken
    preopen(url, { cache: false });
    (await loadModel(url, { threads: 1 })).dispose();
    assert.equal(gets, 3);
    const left = takePreopened(url, null);
    assert.ok(left, 'the cache: false one is still there');
    (await left).cancel();
    assert.equal(takePreopened(url, null), undefined, 'taken once');
    // a load aborted while the early open is pending rejects at once with the signal's reason
    preopen(url, { cache: true });
    const controller = new AbortController();
    const loading = loadModel(url, { threads: 1, signal: controller.signal });
    controller.abort(new Error('stop here'));
    await assert.rejects(loading, /stop here/);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
