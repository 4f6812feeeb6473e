// A generation keeps the tokens the previous one left in the context when its prompt starts
// with them (GenerateOptions.reuse, sac_context_truncate): the steps — ids, text, attention
// rows — are the same as from a fresh context, to the bit; what else uses the context forgets
// them; a run that captures attention keeps only tokens whose attention was captured.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { chatModel, FAMILY_TOKENS, TEMPLATES } from './chat-models.mjs';
import { collect, fixture, withModel } from './helpers.mjs';

const greedy = { temperature: 0, ignoreEos: true };
const first = [5, 17, 42, 3, 8, 61, 9];

/** The steps' ids, texts and attention rows (bytes), and the run's timings. */
async function run(m, prompt, options) {
  const steps = await collect(m.generate(prompt, { ...greedy, ...options }));
  return steps.map((s) => [s.id, s.text, s.attention && Buffer.from(s.attention.data.buffer).toString('base64')]);
}

async function timed(m, prompt, options) {
  return (await m.complete(prompt, { ...greedy, ...options })).timings;
}

describe('reuse', () => {
  for (const [name, kvType] of [['gpt2-q8_0', 'f32'], ['llama-q4_0', 'bf16'], ['llama-f32', 'q8']])
    test(`${name}, ${kvType} KV cache: the context cut back to the shared tokens gives a fresh context's steps, attention to the bit`, async () => {
      await withModel(fixture(name), { threads: 2, kvType }, async (m) => {
        const o = { maxTokens: 5, attention: true };
        const a = await m.complete(first, { ...greedy, ...o, maxTokens: 6 });
        assert.equal(a.timings.reusedTokens, 0);
        // the context holds `first` and five generated tokens; the next prompt shares `first` and three
        const next = [...first, ...a.tokens.slice(0, 3), 30, 31];
        const kept = await run(m, next, o);
        const fresh = await run(m, next, { ...o, reuse: false });
        assert.deepEqual(kept, fresh);
        // the same state again: how many were kept
        await m.complete(first, { ...greedy, ...o, maxTokens: 6 });
        const t = await timed(m, next, o);
        assert.deepEqual([t.promptTokens, t.reusedTokens], [2, first.length + 3]);
        const f = await timed(m, [...next, 40], { ...o, reuse: false });
        assert.deepEqual([f.promptTokens, f.reusedTokens], [next.length + 1, 0]);
      });
    });

  test('attention: rows of kept tokens are the captured ones; uncaptured tokens are not kept', async () => {
    await withModel(fixture('llama-q8_0-char'), { threads: 1 }, async (m) => {
      const prompt = m.tokenize('to be or not');
      const longer = [...prompt, ...m.tokenize(' to be')];
      await run(m, prompt, { maxTokens: 3, attention: true });
      const keptRows = await run(m, longer, { maxTokens: 4, attention: true });
      assert.ok(keptRows.every(([, , rows]) => rows));
      const whole = m.attention(0, 1); // every query row, the kept ones among them
      const fresh = await run(m, longer, { maxTokens: 4, attention: true, reuse: false });
      assert.deepEqual(keptRows, fresh);
      assert.deepEqual(m.attention(0, 1), whole);
      // captured now, not before: nothing is kept
      await run(m, prompt, { maxTokens: 3 });
      const t = await timed(m, longer, { maxTokens: 2, attention: true });
      assert.equal(t.reusedTokens, 0);
      // not captured now, captured before: kept
      assert.ok((await timed(m, longer, { maxTokens: 2 })).reusedTokens > 0);
    });
  });

  test('forward, bench, setAblation, captureScores and captureQueryKeys forget the tokens', async () => {
    await withModel(fixture('gpt2-q8_0'), { threads: 1 }, async (m) => {
      const uses = [
        () => m.forward([1, 2, 3]),
        () => m.bench({ promptTokens: 4, decodeTokens: 2, repeat: 1 }),
        () => m.setAblation([]),
        () => m.captureScores(false),
        () => m.captureQueryKeys(false),
      ];
      for (const use of uses) {
        await timed(m, first, { maxTokens: 3 });
        assert.ok((await timed(m, first, { maxTokens: 1 })).reusedTokens > 0);
        use();
        assert.equal((await timed(m, first, { maxTokens: 1 })).reusedTokens, 0, String(use));
      }
    });
  });

  test('an aborted generation leaves the tokens it evaluated; the prompt always keeps its last token to evaluate', async () => {
    await withModel(fixture('gpt2-q8_0'), { threads: 1 }, async (m) => {
      const controller = new AbortController();
      const ids = [];
      for await (const step of m.generate(first, { ...greedy, maxTokens: 20, signal: controller.signal })) {
        if (step.id !== null) ids.push(step.id);
        if (ids.length === 4) controller.abort();
      }
      // the context holds `first` and the first three generated ids
      const t = await timed(m, [...first, ...ids], { maxTokens: 1 });
      assert.deepEqual([t.promptTokens, t.reusedTokens], [1, first.length + 3]);
      const same = await timed(m, [...first, ...ids], { maxTokens: 1 });
      assert.deepEqual([same.promptTokens, same.reusedTokens], [1, first.length + 3]);
      assert.equal((await timed(m, [first[0]], { maxTokens: 1 })).reusedTokens, 0);
      await assert.rejects(() => m.complete(first, { reuse: 1 }), /^SaccadeError: reuse must be true or false/);
    });
  });

  test('a prompt longer than the context is refused counting all its tokens, not only those after the kept ones', async () => {
    await withModel(fixture('gpt2-q8_0'), { threads: 1, contextLength: 32 }, async (m) => {
      await m.complete(first, { ...greedy, maxTokens: 2 });
      const long = [...first, ...Array.from({ length: 40 }, (_, i) => 10 + i)];
      await assert.rejects(() => m.complete(long, greedy),
        /^SaccadeError: 47 tokens do not fit in the context: it holds 32 tokens and already has 0$/); // ("40 … already has 7")
      // the context still takes a prompt that fits
      assert.equal((await m.complete(first, { ...greedy, maxTokens: 1 })).timings.promptTokens, first.length);
    });
  });

  test('chat: the next turn keeps the conversation so far and streams what a fresh context would', async () => {
    const file = chatModel({ name: 'chatml', template: TEMPLATES.chatml, ...FAMILY_TOKENS.chatml });
    await withModel(file, {}, async (m) => {
      const conversation = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }];
      const options = { temperature: 0, maxTokens: 6 };
      const turn = async (messages, o = options) => collect(m.chat(messages, o));
      const reply = (await turn(conversation)).map((s) => s.text).join('');
      const second = [...conversation, { role: 'assistant', content: reply }, { role: 'user', content: 'Again' }];
      const kept = await turn(second);
      const fresh = await turn(second, { ...options, reuse: false });
      assert.deepEqual(kept.map((s) => [s.id, s.text]), fresh.map((s) => [s.id, s.text]));
      // the first turn again, then the second turn's ids: the first turn's prompt at least is kept
      const firstIds = (await turn(conversation))[0].prompt.ids;
      const t = (await m.complete(fresh[0].prompt.ids, options)).timings;
      assert.ok(t.reusedTokens >= firstIds.length, `${t.reusedTokens} kept, the first turn's prompt has ${firstIds.length}`);
    });
  });

  test('a generation without capture after one with it leaves no attention rows, as a fresh context', async () => {
    await withModel(fixture('gpt2-q8_0'), { threads: 1 }, async (m) => {
      await run(m, first, { maxTokens: 4, attention: true });
      assert.equal(m.capturedRows(), first.length + 3);
      const t = await timed(m, first, { maxTokens: 2 });
      assert.equal(t.reusedTokens, first.length - 1);
      assert.equal(m.capturedRows(), 0);
      assert.throws(() => m.attention(0, 0));
      // the same when the next prompt starts with every token the context holds
      const b = await m.complete(first, { ...greedy, maxTokens: 4, attention: true });
      const whole = await timed(m, [...first, ...b.tokens], { maxTokens: 2 });
      assert.equal(whole.reusedTokens, first.length + 3);
      assert.equal(m.capturedRows(), 0);
    });
  });

  test('score and q/k capture turned on during a generation, or before its first step: the next starts fresh and has them', async () => {
    await withModel(fixture('gpt2-q8_0'), { threads: 1 }, async (m) => {
      // during a generation: it stops recording what it holds
      const steps = m.generate(first, { ...greedy, maxTokens: 4, attention: true });
      await steps.next();
      m.captureScores(true);
      await collect(steps);
      const t = await timed(m, first, { maxTokens: 2, attention: true });
      assert.equal(t.reusedTokens, 0);
      assert.equal(m.attentionScores('self').to, first.length + 1);
      // between generate() and its first step
      await run(m, first, { maxTokens: 3 });
      const late = m.generate(first, { ...greedy, maxTokens: 2 });
      m.captureQueryKeys(true);
      await collect(late);
      assert.equal(m.queryKeys(0, 0).queries, first.length + 1);
    });
  });
});
