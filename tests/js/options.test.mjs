// Every option is checked before it reaches C: integers beyond int32 (which C would wrap),
// negative or fractional ones, values of the wrong type, signals that are not AbortSignals, and
// option names a call does not know, which fail with the list of those it does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { loadModel, SaccadeError } from '../../src/js/index.mjs';
import { collect, fixture } from './helpers.mjs';

async function rejects(fn, pattern) {
  await assert.rejects(async () => fn(), (e) => {
    assert.ok(e instanceof SaccadeError, `expected a SaccadeError, got ${e?.name}: ${e?.message}`);
    assert.match(e.message, pattern);
    assert.equal(e.code, 'SAC_ERR_ARG');
    return true;
  });
}

describe('loadModel options', () => {
  const file = fixture('llama-f32');
  test('integers that int32 would wrap, negative or fractional', async () => {
    // 2^32 + 5 used to become a 5-token context
    for (const contextLength of [2 ** 32 + 5, 2 ** 31, -1, 1.5, '48', NaN])
      await rejects(() => loadModel(file, { threads: 1, contextLength }),
        /^contextLength must be an integer >= 0 and <= 2147483647 \(0: the default\), got /);
    for (const batchSize of [2 ** 32, 2 ** 32 + 8, -8, 0.5])
      await rejects(() => loadModel(file, { threads: 1, batchSize }), /^batchSize must be an integer >= 0 and <= 2147483647/);
  });

  test('booleans, signals and unknown names', async () => {
    await rejects(() => loadModel(file, { attention: 'yes' }), /^attention must be true or false, got 'yes'/);
    await rejects(() => loadModel(file, { vocabOnly: 1 }), /^vocabOnly must be true or false, got 1/);
    await rejects(() => loadModel(file, { signal: { aborted: false } }), /^signal must be an AbortSignal .*got an object/);
    await rejects(() => loadModel(file, { context_length: 8 }),
      /^unknown option 'context_length' for loadModel; the options are: threads, variant, onProgress, signal, contextLength, batchSize, attention, vocabOnly, noPositions, cache, scores, qk, ablate, kvType, simd, waitForThreads$/);
    await rejects(() => loadModel(file, { kvType: 'f16' }), /^kvType must be one of 'f32', 'bf16', 'q8', got 'f16'$/);
    await rejects(() => loadModel(file, 'fast'), /^the options of loadModel must be an object, got string/);
  });
});

describe('call options', () => {
  let m;
  before(async () => {
    m = await loadModel(fixture('llama-f32-char'), { threads: 1 });
  });
  after(() => m.dispose());

  test('generate: { max_tokens: 5 } is an error listing the options, not 64 tokens', async () => {
    await rejects(() => m.generate([1, 2], { max_tokens: 5 }),
      /^unknown option 'max_tokens' for generate; the options are: maxTokens, temperature, topK, topP, repeatPenalty, repeatLastN, seed, stop, signal, attention, ignoreEos, decoderStart, reuse$/);
    assert.equal((await collect(m.generate([1, 2], { maxTokens: 5, ignoreEos: true }))).length, 5);
  });

  test('generate: integers beyond int32, and values of the wrong type', async () => {
    for (const topK of [2 ** 32 + 1, 2 ** 31, -1, 2.5])
      await rejects(() => m.generate([1], { topK }), /^topK must be an integer >= 0 and <= 2147483647 \(0: off\)/);
    for (const repeatLastN of [2 ** 32, 2 ** 31, -2])
      await rejects(() => m.generate([1], { repeatLastN }), /^repeatLastN must be an integer >= -1 and <= 2147483647/);
    for (const maxTokens of [2 ** 32, -1, Infinity])
      await rejects(() => m.generate([1], { maxTokens }), /^maxTokens must be an integer >= 0 and <= 2147483647/);
    await rejects(() => m.generate([1], { seed: '7' }), /^seed must be an integer in \[0, 2\^64\), got '7'/);
    await rejects(() => m.generate([1], { seed: 1.5 }), /^seed must be an integer/);
    await rejects(() => m.generate([1], { ignoreEos: 'no' }), /^ignoreEos must be true or false/);
    await rejects(() => m.generate([1], { attention: 1 }), /^attention must be true or false/);
    await rejects(() => m.generate([1], { stop: [2 ** 32] }), /^stop must be a non-empty string, a token id/);
    await rejects(() => m.generate([1], { decoderStart: [1] }), /^decoderStart is for encoder–decoder models; this model is llama/);
    await rejects(() => m.generate([1], null), /^the options of generate must be an object, got null/);
  });

  test('generate: signal must be a real AbortSignal', async () => {
    // used to pass the check and fail later with a TypeError
    await rejects(() => m.generate([1], { signal: { aborted: false } }), /^signal must be an AbortSignal/);
    await rejects(() => m.generate([1], { signal: new EventTarget() }), /^signal must be an AbortSignal/);
    const steps = await collect(m.generate([1], { maxTokens: 2, ignoreEos: true, signal: new AbortController().signal }));
    assert.equal(steps.length, 2);
  });

  test('forward, tokenize, attention, attentionRows, bench: unknown names and wrong types', async () => {
    await rejects(() => m.forward([1], { all_logits: true }), /^unknown option 'all_logits' for forward; the options are: allLogits, attention, source$/);
    await rejects(() => m.forward([1], { allLogits: 'yes' }), /^allLogits must be true or false/);
    await rejects(() => m.tokenize('ab', { BOS: true }), /^unknown option 'BOS' for tokenize; the options are: bos, eos, special$/);
    await rejects(() => m.tokenize('ab', { bos: 1 }), /^bos must be true or false/);
    await rejects(() => m.attention(0, 0, { type: 'cross' }), /^unknown option 'type' for attention; the options are: kind$/);
    await rejects(() => m.attentionRows('self', 0, 1, { copy: false }), /^unknown option 'copy' for attentionRows; the options are: view$/);
    await rejects(() => m.bench({ prompt_tokens: 4 }), /^unknown option 'prompt_tokens' for bench; the options are: promptTokens, decodeTokens, decodeDepth, repeat, attentionCost$/);
    await rejects(() => m.bench({ promptTokens: 2 ** 32 + 4 }), /^promptTokens must be an integer >= 1 and <= 2147483647/);
    assert.equal(m.forward([1, 2]).length, m.info.vocabSize);
  });
});
