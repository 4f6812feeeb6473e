// bench's attentionCost: capture really turns on and off by turns (the captured rows show which
// tokens ran with it), both speeds come back, and misuse is refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { fixture, withModel } from './helpers.mjs';

/** Σ of layer 0, head 0's probabilities in each captured row (1 when captured, 0 when cleared). */
function firstHeadSums(rows) {
  const sums = [];
  for (let i = 0; i < rows.to - rows.from; i++) {
    let s = 0;
    for (let j = 0; j < rows.keys[i]; j++) s += rows.data[rows.offsets[i] + j];
    sums.push(Math.round(s * 1e4) / 1e4);
  }
  return sums;
}

describe('bench with attentionCost', () => {
  for (const threads of [1, 2])
    test(`decode tokens take capture by turns; both speeds are reported (${threads} thread(s))`, async () => {
      await withModel(fixture('gpt2-f32'), { contextLength: 32, threads }, (m) => {
        const r = m.bench({ promptTokens: 4, decodeTokens: 4, repeat: 1, attentionCost: true });
        for (const v of [r.decodeTokensPerSecond, r.decodeCaptureTokensPerSecond, r.prefillTokensPerSecond])
          assert.ok(Number.isFinite(v) && v > 0, JSON.stringify(r));
        // rows 0-3: the prefill, captured; decode tokens 0 and 2 (rows 4 and 6) captured, row 5
        // cleared when token 2 turned capture on again; token 3 (row 7) ran without: no row
        assert.equal(m.capturedRows(), 7);
        assert.deepEqual(firstHeadSums(m.attentionRows('self', 0, 7)), [1, 1, 1, 1, 1, 0, 1]);
        // more rounds: the first is not counted, the others start their turns at the other token
        const r3 = m.bench({ promptTokens: 4, decodeTokens: 3, repeat: 3, attentionCost: true });
        assert.ok(r3.decodeCaptureTokensPerSecond > 0 && r3.decodeTokensPerSecond > 0, JSON.stringify(r3));
        // the last round started with capture on: decode tokens 0 and 2 (rows 4 and 6) captured
        assert.equal(m.capturedRows(), 7);
        assert.deepEqual(firstHeadSums(m.attentionRows('self', 0, 7)), [1, 1, 1, 1, 1, 0, 1]);
        const plain = m.bench({ promptTokens: 4, decodeTokens: 2, repeat: 1 });
        assert.equal(plain.decodeCaptureTokensPerSecond, undefined);
        assert.equal(m.capturedRows(), 0, 'a plain bench does not capture');
      });
    });

  test('decodeDepth: decode starts with that many tokens in the context (the captured rows show it)', async () => {
    await withModel(fixture('gpt2-f32'), { contextLength: 32, threads: 2 }, (m) => {
      const deeper = m.bench({ promptTokens: 4, decodeDepth: 6, decodeTokens: 4, repeat: 1, attentionCost: true });
      assert.equal(deeper.decodeDepth, 6);
      assert.ok(deeper.prefillTokensPerSecond > 0 && deeper.decodeCaptureTokensPerSecond > 0, JSON.stringify(deeper));
      // rows 0-5: the context's six ids (captured); decode tokens 0 and 2 (rows 6, 8) captured
      assert.equal(m.capturedRows(), 9);
      assert.deepEqual(firstHeadSums(m.attentionRows('self', 0, 9)), [1, 1, 1, 1, 1, 1, 1, 0, 1]);
      const empty = m.bench({ promptTokens: 8, decodeDepth: 0, decodeTokens: 4, repeat: 1, attentionCost: true });
      assert.equal(empty.decodeDepth, 0);
      assert.equal(m.capturedRows(), 3); // decode from an empty context: rows 0 and 2 captured
      assert.deepEqual(firstHeadSums(m.attentionRows('self', 0, 3)), [1, 0, 1]);
      assert.equal(m.bench({ promptTokens: 4, decodeTokens: 2, repeat: 1 }).decodeDepth, 4, 'by default decode follows the prompt');
      // the defaults, 128 and 32, fit a shorter context: a quarter decoded, the prompt the rest
      const fitted = m.bench({ repeat: 1 });
      assert.deepEqual([fitted.promptTokens, fitted.decodeTokens, fitted.decodeDepth], [24, 8, 24]);
      const given = m.bench({ decodeTokens: 20, repeat: 1 });
      assert.deepEqual([given.promptTokens, given.decodeTokens], [12, 20]);
      const deep = m.bench({ decodeDepth: 4, repeat: 1 });
      assert.deepEqual([deep.promptTokens, deep.decodeTokens], [32, 8]);
      assert.throws(() => m.bench({ promptTokens: 4, decodeDepth: 30, decodeTokens: 3 }),
        /^SaccadeError: decodeDepth \+ decodeTokens exceed the context length \(32\)$/);
      assert.throws(() => m.bench({ promptTokens: 33, decodeDepth: 0, decodeTokens: 3 }),
        /^SaccadeError: promptTokens exceeds the context length \(32\)$/);
      assert.throws(() => m.bench({ decodeDepth: -1 }), /^SaccadeError: decodeDepth must be an integer >= 0/);
    });
    await withModel(fixture('encdec-q8_0'), {}, (m) => {
      assert.throws(() => m.bench({ promptTokens: 4, decodeDepth: 0, decodeTokens: 2 }),
        /^SaccadeError: decodeDepth: an encoder-decoder model decodes from an empty decoder context; leave it out$/);
    });
  });

  test('misuse is refused', async () => {
    await withModel(fixture('gpt2-f32'), { contextLength: 32 }, (m) => {
      assert.throws(() => m.bench({ decodeTokens: 1, promptTokens: 4, attentionCost: true }),
        /^SaccadeError: attentionCost needs decodeTokens >= 2 \(tokens with capture and without, by turns\)$/);
      assert.throws(() => m.bench({ promptTokens: 4, attentionCost: 1 }), /attentionCost must be/);
    });
  });
});
