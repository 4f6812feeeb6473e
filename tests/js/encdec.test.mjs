// Encoder–decoder models ("encdec"): the source is encoded once, the decoder generates from
// BOS (or decoderStart), and every step can carry its self- and cross-attention rows.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { collect, fixture, native, relativeError, withModel } from './helpers.mjs';

const source = [12, 40, 7, 7, 81, 3, 60, 22, 95, 1, 33];
const RUNTIMES = [{ variant: 'st' }, { variant: 'mt', threads: 2 }, { variant: 'mt', threads: 3 }];

const argmax = (row) => row.reduce((best, x, i) => (x > row[best] ? i : best), 0);

describe('encoder–decoder', () => {
  test('info matches the native CLI', async () => {
    const file = fixture('encdec-q8_0');
    const ref = native('info', file);
    await withModel(file, { threads: 1 }, (m) => {
      assert.equal(m.info.architecture, 'encdec');
      assert.equal(m.info.encoderLayers, ref.n_encoder_layer);
      assert.equal(m.info.layers, ref.n_layer);
      assert.equal(m.info.parameters, ref.n_params);
      assert.equal(m.sourceIds, null);
    });
  });

  for (const type of ['f32', 'q8_0']) {
    test(`${type}: greedy generation is the argmax of a batched forward, identical across runtimes`, async () => {
      const file = fixture(`encdec-${type}`);
      let first;
      for (const r of RUNTIMES) {
        await withModel(file, r, async (m) => {
          const steps = await collect(m.generate(source, { maxTokens: 12, temperature: 0, ignoreEos: true, decoderStart: [2] }));
          const ids = steps.map((s) => s.id);
          assert.deepEqual(m.sourceIds, source);
          const decoderIds = [2, ...ids.slice(0, -1)];
          const logits = m.forward(decoderIds, { allLogits: true, source });
          const V = m.info.vocabSize;
          decoderIds.forEach((_, t) => assert.equal(argmax(logits.subarray(t * V, (t + 1) * V)), ids[t], `step ${t}`));
          // without `source`, forward decodes against the last encoded source
          assert.deepEqual(m.forward(decoderIds, { allLogits: true }), logits);
          first ??= { ids, logits };
          assert.deepEqual(ids, first.ids);
          assert.ok(relativeError(logits, first.logits) === 0, 'threads give identical logits');
        });
      }
    });
  }

  test('attention: self, cross and encoder maps; steps carry self and cross rows', async () => {
    await withModel(fixture('encdec-f32-char'), { threads: 2 }, async (m) => {
      const { layers, encoderLayers, heads, bosId } = m.info;
      const text = 'March 5, 2021';
      const steps = await collect(m.generate(text, { maxTokens: 6, temperature: 0, ignoreEos: true, attention: true }));
      const src = m.tokenize(text, { bos: m.info.addBos });
      assert.deepEqual(m.sourceIds, src);
      const S = src.length;
      const n = steps.length; // decoder positions: BOS + all generated tokens but the last
      steps.forEach((s, i) => {
        assert.equal(s.attention.query, i);
        assert.equal(s.cross.query, i);
        assert.equal(s.cross.keys, S);
        assert.equal(s.cross.data.length, layers * heads * S);
        for (let lh = 0; lh < layers * heads; lh++) {
          const row = s.cross.data.subarray(lh * S, (lh + 1) * S);
          assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
        }
      });
      assert.equal(steps[0].attention.data.every((p) => p === 1), true, 'BOS attends only to itself');
      for (let l = 0; l < layers; l++)
        for (let h = 0; h < heads; h++) {
          const cross = m.attention(l, h, { kind: 'cross' });
          assert.deepEqual([cross.queries, cross.keys], [n, S]);
          steps.forEach((s, q) =>
            assert.deepEqual(cross.data.subarray(q * S, (q + 1) * S), s.cross.data.subarray((l * heads + h) * S, (l * heads + h + 1) * S)));
          const self = m.attention(l, h);
          assert.deepEqual([self.queries, self.keys], [n, n]);
        }
      for (let l = 0; l < encoderLayers; l++) {
        const enc = m.attention(l, 0, { kind: 'encoder' });
        assert.deepEqual([enc.queries, enc.keys], [S, S]);
        for (let q = 0; q < S; q++) {
          const row = enc.data.subarray(q * S, (q + 1) * S);
          assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5, 'the encoder sees the whole source');
          assert.ok(row[S - 1] > 0);
        }
      }
      // the same maps in bulk, in the one row layout: cross rows have S keys, encoder rows too
      const cross = m.attentionRows('cross');
      assert.deepEqual([cross.layers, cross.heads, cross.from, cross.to, [...cross.keys]], [layers, heads, 0, n, Array(n).fill(S)]);
      steps.forEach((s, q) => assert.deepEqual(cross.data.subarray(cross.offsets[q], cross.offsets[q + 1]), s.cross.data));
      const enc = m.attentionRows('encoder');
      assert.deepEqual([enc.layers, enc.to, enc.offsets[1]], [encoderLayers, S, encoderLayers * heads * S]);
      for (let l = 0; l < encoderLayers; l++)
        for (let h = 0; h < heads; h++) {
          const matrix = m.attention(l, h, { kind: 'encoder' }).data;
          for (let q = 0; q < S; q++) {
            const at = enc.offsets[q] + (l * heads + h) * S;
            assert.deepEqual(enc.data.subarray(at, at + S), matrix.subarray(q * S, (q + 1) * S));
          }
        }
      assert.equal(m.capturedRows('encoder'), S);
      assert.throws(() => m.attention(encoderLayers, 0, { kind: 'encoder' }), /layer must be an integer in \[0, 2\)/);
      assert.throws(() => m.attention(0, 0, { kind: 'sideways' }), /kind must be 'self', 'cross' or 'encoder'/);
      assert.equal(bosId, 1);
    });
  });

  test('errors: no BOS to start from, a source for a decoder-only model, bad source ids', async () => {
    await withModel(fixture('encdec-f32'), { threads: 1 }, async (m) => {
      assert.equal(m.info.bosId, -1);
      assert.throws(() => m.generate(source), /no BOS token to start the decoder with: pass options.decoderStart/);
      assert.throws(() => m.generate(source, { decoderStart: [] }), /decoderStart is empty/);
      await assert.rejects(() => collect(m.generate([1, 500], { decoderStart: [2] })), /out of range/);
      assert.throws(() => m.forward([1], { source: 'abc' }), /source must be an array of token ids/);
      assert.equal((await collect(m.generate(source, { decoderStart: [2], maxTokens: 2, ignoreEos: true }))).length, 2);
      // a source longer than the context, with attention: said so, not the size its capture would have
      const long = Array.from({ length: 20000 }, (_, i) => 1 + (i % 5));
      await assert.rejects(() => collect(m.generate(long, { decoderStart: [2], attention: true })),
        { code: 'SAC_ERR_CONTEXT', message: `the source has 20000 tokens, the context holds ${m.runtime.contextLength}` });
    });
    await withModel(fixture('gpt2-f32'), { threads: 1 }, (m) => {
      assert.throws(() => m.forward([1], { source: [1] }), /only encoder–decoder models take a source; this model is gpt2/);
    });
  });
});
