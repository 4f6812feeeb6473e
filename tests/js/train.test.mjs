// train(): the trainer's wasm module against the native tool (the same losses bit for bit),
// learning (reversal's loss falls), export → loadModel → generate, probes, pause/resume,
// stop and abort, and the option checks.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { loadModel } from '../../src/js/index.mjs';
import { train, trainOptions } from '../../src/js/train.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const trainTask = path.join(root, 'build/tools/train_task');
if (!existsSync(trainTask)) throw new Error(`${trainTask} is missing: run \`make build/tools/train_task\``);

// A reversal model that learns in a couple of hundred steps: strings of 6 letters, one block each side.
const SMALL = { model: { layers: 1, embd: 32, heads: 4 }, optimizer: { batch: 16, lr: 3e-3 },
  data: { minLen: 6, maxLen: 6, valN: 64 } };
const SMALL_ARGS = ['--layers', 1, '--embd', 32, '--heads', 4, '--batch', 16, '--lr', 3e-3, '--min-len', 6,
  '--max-len', 6, '--val-n', 64];

/** The native tool's losses as float32 bit patterns, one per step. */
function nativeLosses(task, steps, args) {
  const out = execFileSync(trainTask, ['--task', task, '--steps', steps, '--print-every', 1, ...args].map(String),
    { encoding: 'utf8' });
  return out.split('\n').filter((l) => /^\d+,/.test(l)).map((l) => l.split(',')[2]);
}

const bits = (x) => {
  const f = new Float32Array([x]);
  return new Uint32Array(f.buffer)[0].toString(16).padStart(8, '0');
};

async function wasmLosses(options) {
  const losses = [];
  const run = await train({ evalEvery: 0, ...options, onStep: ({ loss }) => losses.push(bits(loss)) });
  await run.done;
  run.dispose();
  return losses;
}

describe('train', () => {
  test('reversal: 100 steps in wasm give the native losses bit for bit (1 thread st, 2 threads mt)', async () => {
    const ref = nativeLosses('reverse', 100, SMALL_ARGS);
    assert.equal(ref.length, 100);
    for (const runtime of [{ variant: 'st' }, { variant: 'mt', threads: 2 }]) {
      const got = await wasmLosses({ task: 'reverse', steps: 100, ...SMALL, ...runtime });
      assert.deepEqual(got, ref, `${runtime.variant}: losses differ from the native tool's`);
    }
  });

  test('dates and text: 10 steps in wasm give the native losses bit for bit', async () => {
    const dates = ['--layers', 1, '--embd', 32, '--batch', 8, '--val-n', 16];
    assert.deepEqual(await wasmLosses({ task: 'dates', steps: 10, model: { layers: 1, embd: 32 },
      optimizer: { batch: 8 }, data: { valN: 16 }, variant: 'st' }), nativeLosses('dates', 10, dates));
    const text = 'It is a truth universally acknowledged, that a single man in possession of a good fortune, ' +
      'must be in want of a wife. '.repeat(20);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'saccade-train-')), 'text.txt');
    writeFileSync(file, text);
    const args = ['--text', file, '--layers', 1, '--embd', 32, '--ctx', 16, '--batch', 4, '--val-n', 4];
    assert.deepEqual(await wasmLosses({ task: 'text', text, steps: 10, model: { layers: 1, embd: 32, ctx: 16 },
      optimizer: { batch: 4 }, data: { valN: 4 }, variant: 'st' }), nativeLosses('text', 10, args));
  });

  test('reversal learns in 200 steps; the exported model loads and generates the reversal', async () => {
    const records = [];
    const run = await train({ task: 'reverse', steps: 200, evalEvery: 100, threads: 2, ...SMALL,
      onStep: (r) => records.push(r) });
    const { steps, history } = await run.done;
    assert.equal(steps, 200);
    assert.equal(history.length, 200);
    const mean = (rs) => rs.reduce((s, r) => s + r.loss, 0) / rs.length;
    const first = mean(records.slice(0, 10)), last = mean(records.slice(-10));
    assert.ok(first > 2.5 && last < 0.5, `loss ${first} → ${last}`);
    assert.ok(records.every((r) => r.tokensPerSecond > 0 && r.lr > 0));
    assert.equal(records[99].valLoss !== undefined && records[199].exact !== undefined, true);
    assert.ok(records[199].exact > 0.3, `held-out exact match ${records[199].exact}`);

    const probe = run.probe('abcdef');
    assert.equal(probe.kind, 'cross');
    assert.deepEqual(probe.keys, ['a', 'b', 'c', 'd', 'e', 'f']);
    assert.equal(probe.queries.length, probe.output.length + 1); // + <eos>
    const { queries, keys, data } = probe.attention(0, 0);
    assert.equal(data.length, queries * keys);
    for (let q = 0; q < queries; q++) {
      const sum = data.subarray(q * keys, (q + 1) * keys).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-5);
    }
    assert.throws(() => probe.attention(1, 0), /layer must be 0\.\.0/);

    for (const type of ['f32', 'q8_0']) {
      const bytes = run.exportGGUF({ type, name: 'reversal test' });
      const model = await loadModel(bytes, { threads: 1 });
      try {
        assert.equal(model.info.architecture, 'encdec');
        let text = '';
        for await (const s of model.generate('abcdef', { maxTokens: 10, temperature: 0 })) text += s.text;
        assert.equal(text, probe.output, `${type}: the engine decodes what the trainer decodes`);
      } finally {
        model.dispose();
      }
    }
    assert.throws(() => run.exportGGUF({ type: 'q9' }), /unknown weight type 'q9'/);
    run.dispose();
    assert.throws(() => run.probe('abc'), /disposed/);
  });

  test('text: the exported character model predicts in the engine what the trainer predicts', async () => {
    const text = 'To be, or not to be, that is the question: whether tis nobler in the mind to suffer. '.repeat(30);
    const run = await train({ task: 'text', text, steps: 40, model: { layers: 1, embd: 32, ctx: 32 },
      optimizer: { batch: 8, lr: 3e-3 }, data: { valN: 4 }, variant: 'st', evalEvery: 0 });
    await run.done;
    const probe = run.probe('To be, or not to b');
    assert.equal(probe.kind, 'self');
    assert.equal(probe.queries.length, 18);
    assert.deepEqual(probe.queries, probe.keys);
    const model = await loadModel(run.exportGGUF({ type: 'f32' }), { threads: 1 });
    try {
      assert.equal(model.info.architecture, 'gpt2');
      let first = '';
      for await (const s of model.generate('To be, or not to b', { maxTokens: 1, temperature: 0 })) first += s.text;
      assert.equal(first, probe.output);
    } finally {
      model.dispose();
      run.dispose();
    }
  });

  test('pause, resume and stop', async () => {
    let seen = 0;
    let afterPause;
    const run = await train({ task: 'copy', steps: 1000, ...SMALL, variant: 'st', evalEvery: 0,
      onStep: ({ step }) => {
        seen = step;
        if (step === 5) {
          run.pause();
          afterPause = [run.state, run.paused]; // asserted below: a throw here would fail the run, not the test
        }
      } });
    while (!run.paused && run.state !== 'failed') await new Promise((r) => setTimeout(r, 5));
    // the state follows the call at once, not at the loop's next turn
    assert.deepEqual(afterPause, ['paused', true]);
    const at = seen;
    assert.equal(at, 5);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(seen, at, 'no step runs while paused');
    const probe = run.probe(); // the weights can be probed while paused
    assert.equal(probe.kind, 'cross');
    run.resume();
    assert.equal(run.state, 'training');
    assert.equal(run.paused, false);
    while (seen < at + 3) await new Promise((r) => setTimeout(r, 5));
    run.stop();
    const { steps } = await run.done;
    assert.ok(steps >= at + 3 && steps < 1000);
    assert.equal(run.state, 'stopped');
    assert.ok(run.exportGGUF().length > 0, 'a stopped run exports');
    run.dispose();
  });

  test('abort: done rejects with the reason, also while paused', async () => {
    const controller = new AbortController();
    const run = await train({ task: 'reverse', steps: 1000, ...SMALL, variant: 'st', signal: controller.signal,
      onStep: ({ step }) => step === 3 && controller.abort(new Error('enough')) });
    await assert.rejects(run.done, /enough/);
    assert.equal(run.state, 'failed');
    run.dispose();

    const c2 = new AbortController();
    const paused = await train({ task: 'reverse', steps: 1000, ...SMALL, variant: 'st', signal: c2.signal, paused: true });
    assert.equal(paused.state, 'paused', 'a run started paused says so from the start');
    assert.equal(paused.paused, true);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(paused.step, 0);
    c2.abort();
    await assert.rejects(paused.done, { name: 'AbortError' });
    paused.dispose();

    // a signal that outlives its run (one controller for several): aborting after dispose() is quiet
    const c3 = new AbortController();
    const gone = await train({ task: 'reverse', steps: 1000, ...SMALL, variant: 'st', signal: c3.signal, paused: true });
    gone.dispose();
    await assert.rejects(gone.done, /disposed/);
    c3.abort(); // threw from the listener (an uncaught error) before

    // a run that ends lets go of the signal: one signal shared by many runs keeps none of them alive
    const shared = new AbortController();
    const { getEventListeners } = await import('node:events');
    for (let i = 0; i < 3; i++) {
      const r = await train({ task: 'reverse', steps: 2, ...SMALL, variant: 'st', signal: shared.signal });
      await r.done;
      r.dispose();
    }
    const disposed = await train({ task: 'reverse', steps: 1000, ...SMALL, variant: 'st', signal: shared.signal, paused: true });
    disposed.dispose();
    await assert.rejects(disposed.done, /disposed/);
    assert.equal(getEventListeners(shared.signal, 'abort').length, 0);

    await assert.rejects(train({ task: 'reverse', signal: AbortSignal.abort() }), { name: 'AbortError' });
  });

  test('options are checked before training, with the same messages as the native tool', async () => {
    assert.throws(() => trainOptions({ task: 'juggle' }), /unknown task 'juggle'/);
    assert.throws(() => trainOptions({ task: 'reverse', model: { layerz: 2 } }), /unknown model option 'layerz'/);
    assert.throws(() => trainOptions({ task: 'reverse', steps: 0 }), /steps must be a positive integer/);
    assert.throws(() => trainOptions({ task: 'text' }), /needs a text/);
    assert.throws(() => trainOptions({ task: 'reverse', preset: 'huge' }), /unknown preset 'huge'/);
    assert.throws(() => trainOptions({ task: 'reverse', colour: 1 }), /unknown option 'colour'/);
    // as every other call's: a boolean is a boolean, a signal an AbortSignal
    assert.throws(() => trainOptions({ task: 'reverse', paused: 'yes' }), { code: 'SAC_ERR_ARG', message: /^paused must be true or false/ });
    assert.throws(() => trainOptions({ task: 'reverse', signal: { aborted: false } }), { code: 'SAC_ERR_ARG', message: /^signal must be an AbortSignal/ });
    assert.throws(() => trainOptions({ task: 'reverse', signal: { aborted: false, throwIfAborted() {}, addEventListener() {} } }),
      { message: /^signal must be an AbortSignal/ });
    await assert.rejects(train({ task: 'reverse', model: { heads: 2.5 }, variant: 'st' }),
      { code: 'SAC_ERR_ARG', message: 'heads must be an integer from 1 to 256, got 2.5' });
    assert.throws(() => execFileSync(trainTask, ['--task', 'reverse', '--heads', '2.5'], { stdio: 'pipe' }),
      (e) => e.stderr.toString().includes('heads must be an integer from 1 to 256, got 2.5'));
    await assert.rejects(train({ task: 'reverse', model: { embd: 30, heads: 4 }, variant: 'st' }),
      /embd 30 must be even and a multiple of heads 4/);
  });
});
