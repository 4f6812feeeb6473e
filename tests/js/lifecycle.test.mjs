// Aborting generations, disposing models, and leaving nothing behind: memory after 200
// load/dispose cycles, and Node processes that exit by themselves.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

import { loadModel } from '../../src/js/index.mjs';
import { collect, fixture } from './helpers.mjs';

const run = promisify(execFile);
const indexUrl = new URL('../../src/js/index.mjs', import.meta.url).href;

describe('AbortSignal', () => {
  for (const variant of ['st', 'mt']) {
    test(`${variant}: aborting between steps stops before the next token`, async () => {
      const m = await loadModel(fixture('llama-f32'), { variant, threads: 2 });
      try {
        const controller = new AbortController();
        const seen = [];
        for await (const step of m.generate([1, 2, 3], { maxTokens: 40, signal: controller.signal })) {
          seen.push(step.id);
          if (seen.length === 3) controller.abort();
        }
        assert.equal(seen.length, 4);
        assert.equal(seen[3], null, 'the last step, finishReason aborted, has no token');
        // the model is free again
        assert.equal((await collect(m.generate([1, 2, 3], { maxTokens: 4 }))).length, 4);
      } finally {
        m.dispose();
      }
    });

    test(`${variant}: an abort from a timer is seen within one token`, async () => {
      // a long context (RoPE models take any length) so that the generation outlasts the timer
      const m = await loadModel(fixture('llama-f32'), { variant, threads: 2, contextLength: 20000 });
      try {
        const controller = new AbortController();
        const reason = new Error('user pressed stop');
        let afterAbort = 0;
        let before = 0;
        let last;
        for await (const step of m.generate([1, 2, 3], { maxTokens: 19000, signal: controller.signal, ignoreEos: true })) {
          last = step;
          if (step.finishReason === 'aborted') break;
          assert.equal(typeof step.id, 'number');
          if (controller.signal.aborted) afterAbort++;
          else if (++before === 10) setTimeout(() => controller.abort(reason), 5); // fires while a token is computed
        }
        assert.equal(last.finishReason, 'aborted');
        assert.ok(before < 19000 - 3, 'the timer fired during the generation');
        assert.ok(afterAbort <= 1, `${afterAbort} tokens came after the abort`);
      } finally {
        m.dispose();
      }
    });
  }

  test('an already aborted signal stops generate and loadModel at once', async () => {
    const reason = new Error('too late');
    const signal = AbortSignal.abort(reason);
    await assert.rejects(() => loadModel(fixture('gpt2-f32'), { signal }), (e) => e === reason);
    const m = await loadModel(fixture('gpt2-f32'), { threads: 1 });
    assert.deepEqual((await collect(m.generate([1], { signal }))).map((s) => [s.id, s.finishReason]), [[null, 'aborted']]);
    m.dispose();
  });

  test('aborting a load mid-stream rejects and loads nothing', async () => {
    const controller = new AbortController();
    const bytes = new Uint8Array(await (await import('node:fs/promises')).readFile(fixture('gpt2-f32')));
    // a stream of small chunks: abort after the first progress report past 0
    let sent = 0;
    const body = new ReadableStream({
      pull(c) {
        if (sent >= bytes.length) return c.close();
        c.enqueue(bytes.slice(sent, sent + 4096));
        sent += 4096;
      },
    });
    const response = new Response(body, { headers: { 'content-length': String(bytes.length) } });
    await assert.rejects(() => loadModel(response, {
      threads: 1, signal: controller.signal, onProgress: ({ loaded }) => loaded > 0 && controller.abort(),
    }), { name: 'AbortError' });
    assert.ok(sent < bytes.length);
  });

  test('an abort after the model is read, while the wasm instance may still start: the load rejects with the reason', async () => {
    const bytes = new Uint8Array(await (await import('node:fs/promises')).readFile(fixture('gpt2-f32')));
    // a pool size no other test here uses, so the instance is new (its workers take tens of ms to start)
    const runtime = { variant: 'mt', threads: 5 };
    for (let i = 0; i < 3; i++) { // aborted in quick succession
      const controller = new AbortController();
      const reason = new Error('the user picked another model');
      const loading = loadModel(bytes, {
        ...runtime, signal: controller.signal,
        onProgress: ({ loaded, total }) => loaded === total && setTimeout(() => controller.abort(reason), 0),
      });
      await assert.rejects(loading, (e) => e === reason); // it resolved with a model nobody would dispose
    }
    const m = await loadModel(bytes, runtime);
    assert.equal(m.runtime.threads, 5);
    assert.equal((await collect(m.generate([1, 2], { maxTokens: 2, ignoreEos: true }))).length, 2);
    m.dispose();
  });
});

describe('dispose', () => {
  test('later calls throw; dispose twice is harmless', async () => {
    const m = await loadModel(fixture('gpt2-f32-char'), { threads: 2 });
    m.dispose();
    assert.equal(m.disposed, true);
    for (const call of [() => m.forward([1]), () => m.generate([1]), () => m.tokenize('a'), () => m.detokenize([5]),
      () => m.attention(0, 0), () => m.bench()])
      assert.throws(call, { name: 'SaccadeError', message: 'the model was disposed' });
    m.dispose();
    assert.equal(m.info.layers, 2, 'info stays readable');
  });

  test('disposing during a generation ends it with an error at the next step', async () => {
    const m = await loadModel(fixture('gpt2-f32'), { threads: 2 });
    const steps = m.generate([1, 2], { maxTokens: 10 });
    await steps.next();
    m.dispose();
    await assert.rejects(() => steps.next(), { message: 'the model was disposed' });
  });

  test('breaking out of the loop frees the model for the next generation', async () => {
    const m = await loadModel(fixture('gpt2-f32'), { threads: 1 });
    for await (const step of m.generate([1, 2], { maxTokens: 10 })) if (step) break;
    assert.equal((await collect(m.generate([1, 2], { maxTokens: 3 }))).length, 3);
    m.dispose();
  });

  test('an abandoned generator does not lock the model: the next generate or forward takes over', async () => {
    const m = await loadModel(fixture('gpt2-f32-char'), { threads: 1 });
    try {
      const reference = m.forward([1, 2]);
      const dropped = m.generate('ab', { maxTokens: 10 });
      await dropped.next(); // then never resumed, never returned
      assert.deepEqual(m.forward([1, 2]), reference);
      const again = m.generate('ab', { maxTokens: 10 });
      await again.next();
      assert.equal((await collect(m.generate([1, 2], { maxTokens: 3, ignoreEos: true }))).length, 3);
      await assert.rejects(() => again.next(), { code: 'SAC_ERR_STATE', message: /this generation was stopped/ });
    } finally {
      m.dispose();
    }
  });

  test('model.stop() ends the running generation: its next step is the last, finishReason aborted', async () => {
    const m = await loadModel(fixture('llama-f32'), { threads: 2 });
    try {
      assert.equal(m.stop(), false, 'nothing to stop');
      const steps = m.generate([1, 2, 3], { maxTokens: 10, attention: true });
      await steps.next();
      assert.equal(m.stop(), true);
      assert.equal(m.stop(), false);
      assert.deepEqual((await steps.next()).value, { id: null, text: '', attention: undefined, cross: undefined, finishReason: 'aborted' });
      assert.deepEqual(await steps.next(), { done: true, value: undefined });
      // capture is back to the load setting (off): nothing is captured by a forward
      m.forward([1, 2]);
      assert.throws(() => m.attention(0, 0), /no captured attention/);
      // stopped while a newer generation already holds the context: it ends without touching it
      const more = m.generate([1, 2, 3], { maxTokens: 10 });
      await more.next();
      m.stop();
      const newer = m.generate([1, 2, 3], { maxTokens: 2, ignoreEos: true });
      assert.equal((await more.next()).value.finishReason, 'aborted');
      assert.equal((await collect(newer)).length, 2);
      assert.equal((await collect(m.generate([1, 2, 3], { maxTokens: 4, ignoreEos: true }))).length, 4);
    } finally {
      m.dispose();
    }
  });

  // Each cycle instantiates a wasm module (16 MB of memory or more), so leaked modules would
  // show as gigabytes; run in child processes to measure with a forced GC.
  for (const variant of ['st', 'mt']) {
    test(`${variant}: load/dispose 200 times, the memory does not grow`, { timeout: 180_000 }, async () => {
      const script = `
        import { loadModel } from ${JSON.stringify(indexUrl)};
        const mb = () => (gc(), gc(), process.memoryUsage().rss / 2 ** 20);
        let base;
        for (let i = 0; i < 200; i++) {
          const m = await loadModel(${JSON.stringify(fixture('gpt2-f32'))}, { variant: '${variant}', threads: 2 });
          m.forward([1, 2, 3]);
          m.dispose();
          if (i === 19) base = mb();
        }
        console.log(JSON.stringify({ base, end: mb() }));`;
      const { stdout } = await run(process.execPath, ['--expose-gc', '--input-type=module', '-e', script]);
      const { base, end } = JSON.parse(stdout);
      assert.ok(end - base < 48, `RSS grew from ${base.toFixed(1)} MB to ${end.toFixed(1)} MB`);
    });
  }
});

describe('peak memory', () => {
  // Each threaded instance brings a wasm memory and worker isolates that Node frees only when it
  // collects them; a load → generate → dispose loop must not pile them up.
  test('100 load → generate (with attention) → dispose cycles: the threaded peak RSS stays near the single-threaded one',
    { timeout: 180_000 }, async () => {
      const script = new URL('../../scripts/memory-cycles.mjs', import.meta.url).pathname;
      const peak = async (variant) => JSON.parse((await run(process.execPath,
        [script, '--variant', variant, '--cycles', '100', '--tokens', '8'])).stdout);
      const [mt, st] = await Promise.all([peak('mt'), peak('st')]);
      assert.ok(mt.peakRssMB < 1.5 * st.peakRssMB, `peak RSS: threaded ${mt.peakRssMB} MB, single-threaded ${st.peakRssMB} MB`);
    });

  test('a disposed instance is reused by the next load of the same runtime, and its threads all start again', async () => {
    for (let i = 0; i < 4; i++) {
      const m = await loadModel(fixture('llama-q8_0'), { threads: 3 });
      assert.equal(m.runtime.threads, 3);
      assert.equal((await collect(m.generate([1, 2, 3], { maxTokens: 4, ignoreEos: true, attention: true }))).length, 4);
      m.dispose();
    }
    // two live models never share an instance
    const [a, b] = await Promise.all([loadModel(fixture('llama-q8_0'), { threads: 2 }), loadModel(fixture('gpt2-q8_0'), { threads: 2 })]);
    const ref = a.forward([1, 2, 3]);
    b.forward([4, 5, 6, 7]);
    assert.deepEqual(a.forward([1, 2, 3]), ref);
    a.dispose();
    b.dispose();
  });
});

describe('Node exits by itself', () => {
  for (const dispose of [true, false]) {
    test(`after generating with threads${dispose ? ' and dispose()' : ', even without dispose()'}`, async () => {
      const script = `
        import { loadModel } from ${JSON.stringify(indexUrl)};
        const m = await loadModel(${JSON.stringify(fixture('llama-q8_0'))}, { threads: 3 });
        if (m.runtime.variant !== 'mt' || m.runtime.threads !== 3) throw new Error('not threaded');
        let n = 0;
        for await (const step of m.generate([1, 2, 3], { maxTokens: 8 })) n++;
        ${dispose ? 'm.dispose();' : ''}
        console.log('generated', n);`;
      const t0 = performance.now();
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
      assert.equal(stdout.trim(), 'generated 8');
      assert.ok(performance.now() - t0 < 10_000);
    });
  }
});
