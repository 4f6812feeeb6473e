// How a generation ends and what it returns: finishReason 'aborted' (signal or model.stop())
// on a last step without a token, complete()'s { text, tokens, finishReason, timings }, stop
// strings removed from the text (also one that spans several tokens, held back until settled),
// and Symbol.dispose.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { loadModel, Model } from '../../src/js/index.mjs';
import { StopText } from '../../src/js/stops.mjs';
import { collect, fixture, withModel } from './helpers.mjs';

const prompt = 'hello';
const greedy = { temperature: 0, ignoreEos: true };
const joined = (steps) => steps.map((s) => s.text).join('');

describe('StopText', () => {
  test('holds back a possible beginning of a stop string, releases it when it cannot be one', () => {
    const s = new StopText(['\nUser:']);
    assert.deepEqual(s.push('Hi'), { text: 'Hi', stopped: false });
    assert.deepEqual(s.push('!\n'), { text: '!', stopped: false }); // '\n' may begin '\nUser:'
    assert.deepEqual(s.push('Us'), { text: '', stopped: false });
    assert.deepEqual(s.push('ed'), { text: '\nUsed', stopped: false }); // it did not
    assert.deepEqual(s.push('\nU'), { text: '', stopped: false });
    assert.deepEqual(s.push('ser: more'), { text: '', stopped: true }); // dropped with what follows
    assert.equal(s.end(), '');
  });

  test('the earliest stop string wins; end() releases what is held back', () => {
    const s = new StopText(['cd', 'bcx', 'zz']);
    assert.deepEqual(s.push('abc'), { text: 'a', stopped: false }); // 'bc' may begin 'bcx'
    assert.deepEqual(s.push('d'), { text: 'b', stopped: true }); // 'cd' completes first
    const t = new StopText(['zz']);
    assert.deepEqual(t.push('az'), { text: 'a', stopped: false });
    assert.equal(t.end(), 'z');
  });
});

describe('finishReason aborted', () => {
  test('a signal aborting between steps ends with a step that has no token', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const controller = new AbortController();
      const steps = [];
      for await (const step of m.generate(prompt, { ...greedy, maxTokens: 20, signal: controller.signal })) {
        steps.push(step);
        if (steps.length === 3) controller.abort();
      }
      assert.equal(steps.length, 4);
      assert.deepEqual(steps.slice(0, 3).map((s) => s.finishReason), [null, null, null]);
      assert.deepEqual(steps[3], { id: null, text: '', attention: undefined, cross: undefined, finishReason: 'aborted' });
      // the model is free again
      assert.equal((await collect(m.generate(prompt, { ...greedy, maxTokens: 4 }))).length, 4);
    });
  });

  test('an already aborted signal: one aborted step, nothing evaluated', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const steps = await collect(m.generate(prompt, { signal: AbortSignal.abort() }));
      assert.deepEqual(steps.map((s) => [s.id, s.finishReason]), [[null, 'aborted']]);
      const r = await m.complete(prompt, { signal: AbortSignal.abort() });
      assert.deepEqual({ ...r, timings: undefined }, { text: '', tokens: [], finishReason: 'aborted', timings: undefined });
    });
  });

  test('model.stop() aborts: the next step is the aborted one, then the iterator is done', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const steps = m.generate(prompt, { ...greedy, maxTokens: 10, attention: true });
      assert.equal((await steps.next()).value.finishReason, null);
      assert.equal(m.stop(), true);
      const last = await steps.next();
      assert.equal(last.value.finishReason, 'aborted');
      assert.equal(last.value.id, null);
      assert.deepEqual(await steps.next(), { done: true, value: undefined });
    });
  });

  test('text held back for a stop string comes with the aborted step', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const text = joined(await collect(m.generate(prompt, { ...greedy, maxTokens: 6 })));
      // a stop string that begins with the 3rd generated character but never completes
      const stop = `${text[2]}\u0001`;
      const controller = new AbortController();
      const steps = [];
      for await (const step of m.generate(prompt, { ...greedy, maxTokens: 6, stop, signal: controller.signal })) {
        steps.push(step);
        if (steps.length === 3) controller.abort();
      }
      assert.equal(steps.at(-1).finishReason, 'aborted');
      assert.equal(joined(steps), text.slice(0, 3));
      assert.equal(steps.at(-1).text, text[2]);
    });
  });
});

describe('stop strings are removed', () => {
  test('one that spans several tokens: nothing of it reaches the output', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const full = await collect(m.generate(prompt, { ...greedy, maxTokens: 16 }));
      const text = joined(full);
      assert.equal(text.length, 16, 'one character per token');
      const stop = text.slice(8, 11); // three tokens
      const at = text.indexOf(stop);
      const steps = await collect(m.generate(prompt, { ...greedy, maxTokens: 16, stop: ['\u0001\u0002', stop] }));
      assert.equal(steps.length, at + 3, 'the generation ends with the token that completes it');
      assert.equal(steps.at(-1).finishReason, 'stop');
      assert.equal(joined(steps), text.slice(0, at));
      assert.deepEqual(steps.map((s) => s.id), full.slice(0, at + 3).map((s) => s.id));
      const r = await m.complete(prompt, { ...greedy, maxTokens: 16, stop });
      assert.equal(r.text, text.slice(0, at));
      assert.equal(r.finishReason, 'stop');
    });
  });

  test('a held-back prefix that does not complete is released, in order', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const text = joined(await collect(m.generate(prompt, { ...greedy, maxTokens: 12 })));
      const stop = `${text.slice(4, 6)}\u0001`;
      const steps = await collect(m.generate(prompt, { ...greedy, maxTokens: 12, stop }));
      assert.equal(steps.at(-1).finishReason, 'maxTokens');
      assert.equal(joined(steps), text);
      assert.ok(steps.some((s) => s.text.length > 1), 'some step released held-back text');
      assert.ok(steps.some((s) => s.text === ''), 'some step held its text back');
    });
  });

  test('a stop id ends the text before its own piece', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const full = await collect(m.generate(prompt, { ...greedy, maxTokens: 12 }));
      const i = 5;
      const first = full.findIndex((s) => s.id === full[i].id);
      const r = await m.complete(prompt, { ...greedy, maxTokens: 12, stop: full[i].id });
      assert.equal(r.finishReason, 'stop');
      assert.deepEqual(r.tokens, full.slice(0, first + 1).map((s) => s.id));
      assert.equal(r.text, joined(full.slice(0, first)));
    });
  });
});

describe('complete', () => {
  test('returns the whole text, the ids, why it ended and the timings', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      const steps = await collect(m.generate(prompt, { ...greedy, maxTokens: 7 }));
      const r = await m.complete(prompt, { ...greedy, maxTokens: 7 });
      assert.equal(r.text, joined(steps));
      assert.deepEqual(r.tokens, steps.map((s) => s.id));
      assert.equal(r.finishReason, 'maxTokens');
      assert.deepEqual(Object.keys(r.timings), ['promptTokens', 'reusedTokens', 'promptMs', 'generatedTokens', 'generateMs', 'totalMs']);
      // generate left the prompt in the context: all of it but the last token is kept
      const n = m.tokenize(prompt, { bos: m.info.addBos }).length;
      assert.deepEqual([r.timings.promptTokens, r.timings.reusedTokens], [1, n - 1]);
      const fresh = await m.complete(prompt, { ...greedy, maxTokens: 7, reuse: false });
      assert.deepEqual([fresh.timings.promptTokens, fresh.timings.reusedTokens, fresh.tokens], [n, 0, r.tokens]);
      assert.equal(r.timings.generatedTokens, 7);
      for (const k of ['promptMs', 'generateMs', 'totalMs']) assert.ok(r.timings[k] >= 0, k);
      assert.ok(r.timings.totalMs >= r.timings.promptMs + r.timings.generateMs);
      assert.deepEqual(await m.complete(prompt, { maxTokens: 0 }).then((x) => [x.text, x.tokens, x.finishReason]),
        ['', [], 'maxTokens']);
    });
  });

  test('bad options reject with the known names', async () => {
    await withModel(fixture('gpt2-f32-char'), { threads: 1 }, async (m) => {
      await assert.rejects(() => m.complete(prompt, { max_tokens: 3 }), /^SaccadeError: unknown option 'max_tokens' for complete; the options are: maxTokens/);
    });
  });
});

describe('Symbol.dispose', () => {
  test('Model[Symbol.dispose] disposes of the model (what `using` calls)', async () => {
    assert.equal(typeof Model.prototype[Symbol.dispose], 'function');
    const m = await loadModel(fixture('gpt2-f32'), { threads: 1 });
    m[Symbol.dispose]();
    assert.equal(m.disposed, true);
    m[Symbol.dispose](); // twice is harmless, as dispose() is
  });
});
