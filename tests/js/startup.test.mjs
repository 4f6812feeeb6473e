// Start-up: loadModel reads the model while its wasm instance (compile, thread pool) starts, and
// warmUp starts an instance before any load, which the next load of that runtime takes — still
// starting or parked. Internal, so tested through the modules.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { instantiate, release, warmUp } from '../../src/js/instantiate.mjs';
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
