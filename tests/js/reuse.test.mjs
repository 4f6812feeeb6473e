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
    test(`${name}, ${kvType} KV cache: the next prompt's shared tokens are kept, with the same steps as a fresh context`, async () => {
      await withModel(fixture(name), { threads: 2, kvType }, async (m) => {
        const a = await m.complete(first, { ...greedy, maxTokens: 6 });
        assert.equal(a.timings.reusedTokens, 0);
        // the context holds `first` and the first five generated tokens (the sixth was not evaluated)
        const next = [...first, ...a.tokens, 30, 31];
        const kept = await run(m, next, { maxTokens: 5, attention: false });
        const timings = await timed(m, [...next, 40], { maxTokens: 1, reuse: false });
        assert.deepEqual([timings.promptTokens, timings.reusedTokens], [next.length + 1, 0]);
        const fresh = await run(m, next, { maxTokens: 5, reuse: false });
        assert.deepEqual(kept, fresh);
        // `first` again (all but its last token kept), then `next`: `first` and five generated tokens kept
        assert.equal((await timed(m, first, { maxTokens: 6 })).reusedTokens, first.length - 1);
        const t = await timed(m, next, { maxTokens: 2 });
        assert.deepEqual([t.promptTokens, t.reusedTokens], [next.length - first.length - 5, first.length + 5]);
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

  test('chat: the next turn keeps the conversation so far and streams what a fresh context would', async () => {
    const file = chatModel({ name: 'chatml', template: TEMPLATES.chatml, ...FAMILY_TOKENS.chatml });
    await withModel(file, {}, async (m) => {
      const conversation = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }];
      const options = { temperature: 0, maxTokens: 6 };
      let reply = '';
      for await (const step of m.chat(conversation, options)) reply += step.text;
      conversation.push({ role: 'assistant', content: reply }, { role: 'user', content: 'Again' });
      const kept = await collect(m.chat(conversation, options));
      const fresh = await collect(m.chat(conversation, { ...options, reuse: false }));
      assert.deepEqual(kept.map((s) => [s.id, s.text]), fresh.map((s) => [s.id, s.text]));
      const { ids } = kept[0].prompt;
      const again = await m.complete(ids, options);
      assert.ok(again.timings.reusedTokens === ids.length - 1, `${again.timings.reusedTokens} of ${ids.length}`);
    });
  });
});
