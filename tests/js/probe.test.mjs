// Inside attention through the library: captured pre-softmax scores (their softmax is the
// captured probabilities bit for bit), q and k vectors that give the scores back, the row
// softmax at a temperature, and head ablation matching the native CLI's --ablate.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';

import { collect, fixture, native, relativeError, root, withModel } from './helpers.mjs';

const ids = [3, 14, 15, 92, 65, 35, 8, 9, 79, 32, 38];
const RUNTIMES = [{ variant: 'st' }, { variant: 'mt', threads: 2 }];

describe('scores', () => {
  for (const arch of ['gpt2', 'llama']) {
    test(`${arch}: softmax of the captured scores is the captured probabilities; q·k·scale gives the scores`, async () => {
      const results = [];
      for (const r of RUNTIMES) {
        await withModel(fixture(`${arch}-f32`), { ...r, scores: true, qk: true }, (m) => {
          m.forward(ids, { attention: true });
          const s = m.attentionScores('self');
          const p = m.attentionRows('self');
          assert.equal(s.data.length, p.data.length);
          assert.equal(s.scale, Math.fround(1 / Math.sqrt(m.info.headDim)));
          assert.equal(m.attentionScale, s.scale);
          const { layers, heads } = s;
          for (let q = 0; q < ids.length; q++)
            for (let lh = 0; lh < layers * heads; lh++) {
              const at = s.offsets[q] + lh * (q + 1);
              const row = s.data.subarray(at, at + q + 1);
              assert.deepEqual(m.softmaxRow(row, 1), p.data.subarray(at, at + q + 1), `row ${q}, head ${lh}`);
            }
          let worst = 0;
          for (let l = 0; l < layers; l++)
            for (let h = 0; h < heads; h++) {
              const qk = m.queryKeys(l, h);
              assert.deepEqual([qk.queries, qk.keys, qk.headDim], [ids.length, ids.length, m.info.headDim]);
              for (let q = 0; q < ids.length; q++)
                for (let j = 0; j <= q; j++) {
                  let dot = 0;
                  for (let d = 0; d < qk.headDim; d++) dot += qk.q[q * qk.headDim + d] * qk.k[j * qk.headDim + d];
                  worst = Math.max(worst, Math.abs(dot * qk.scale - s.data[s.offsets[q] + (l * heads + h) * (q + 1) + j]));
                }
            }
          assert.ok(worst < 1e-4, `q·k·scale differs from the score by ${worst}`);
          results.push(s.data);
        });
      }
      assert.deepEqual(results[1], results[0], 'scores are the same single- and multi-threaded');
    });
  }

  test('temperature, masks and refusals of softmaxRow; scores need { scores: true }', async () => {
    await withModel(fixture('gpt2-f32'), { variant: 'st' }, (m) => {
      const p = m.softmaxRow([1, -Infinity, 3, 2], 2);
      assert.equal(p[1], 0);
      assert.ok(Math.abs(p[2] / p[3] - Math.exp(0.5)) < 1e-5);
      assert.throws(() => m.softmaxRow([-Infinity], 1), /no finite value/);
      assert.throws(() => m.softmaxRow([1, 2], 0), /temperature must be a finite number > 0/);
      assert.throws(() => m.softmaxRow([0.5, 1], 1e-40), /temperature must be .*inverse is a finite float/);
      m.forward(ids, { attention: true });
      // the refusals name the library's switches, not the C core's
      assert.throws(() => m.attentionScores('self'), (e) => e.code === 'SAC_ERR_STATE'
        && /\{ scores: true \} or call model\.captureScores\(true\)/.test(e.message) && !/sac_/.test(e.message));
      assert.throws(() => m.queryKeys(0, 0), (e) => e.code === 'SAC_ERR_STATE'
        && /\{ qk: true \} or call model\.captureQueryKeys\(true\)/.test(e.message) && !/sac_/.test(e.message));
      assert.throws(() => m.queryKeys(2, 0), /layer must be an integer in \[0, 2\)/);
      m.captureScores(true); // after the rows: they were not captured with scores
      assert.throws(() => m.attentionScores('self'), /captured before score capture began/);
      m.forward(ids, { attention: true });
      const late = m.attentionScores('self');
      const probs = m.attentionRows('self');
      assert.deepEqual(m.softmaxRow(late.data.subarray(late.offsets[3], late.offsets[3] + 4), 1),
        probs.data.subarray(probs.offsets[3], probs.offsets[3] + 4));
      m.captureQueryKeys(true); // after the tokens: they were not recorded
      assert.throws(() => m.queryKeys(0, 0), /evaluated before q\/k capture began/);
      m.forward(ids, { attention: true });
      const qk = m.queryKeys(1, 3);
      assert.deepEqual([qk.queries, qk.keys, qk.q.length], [ids.length, ids.length, ids.length * m.info.headDim]);
    });
  });
});

describe('ablation', () => {
  for (const arch of ['gpt2', 'llama']) {
    test(`${arch}: logits and generated tokens equal the native CLI's --ablate`, async () => {
      const file = fixture(`${arch}-f32`);
      const spec = '0:1,1:3';
      const ref = native('logits', file, '--tokens', ids.join(','), '--all', '--ablate', spec).logits.flat();
      const plain = native('logits', file, '--tokens', ids.join(','), '--all').logits.flat();
      assert.ok(relativeError(plain, ref) > 1e-3, 'ablation changes the logits');
      const gen = native('generate', file, '--tokens', ids.join(','), '-n', 12, '--seed', 7, '--temp', 1, '--ignore-eos',
        '--ablate', spec).tokens;
      for (const r of RUNTIMES) {
        for (const ablate of [[[0, 1], [1, 3]], spec]) {
          await withModel(file, { ...r, ablate }, async (m) => {
            assert.deepEqual(m.ablation(), [[0, 1], [1, 3]]);
            assert.ok(relativeError(m.forward(ids, { allLogits: true }), ref) <= 1e-5);
            const steps = await collect(m.generate(ids, { maxTokens: 12, seed: 7, temperature: 1, ignoreEos: true }));
            assert.deepEqual(steps.map((s) => s.id), gen);
            m.setAblation([]);
            assert.deepEqual(m.ablation(), []);
            assert.ok(relativeError(m.forward(ids, { allLogits: true }), plain) <= 1e-5);
            m.setAblation([[0, 1], [1, 3]]);
            assert.ok(relativeError(m.forward(ids, { allLogits: true }), ref) <= 1e-5);
          });
        }
      }
    });
  }

  test('bad heads are refused with the same message by the library, the native CLI and the Node CLI', async () => {
    const file = fixture('gpt2-f32');
    const cli = (bin, args) => {
      try {
        execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        return '';
      } catch (e) {
        return e.stderr;
      }
    };
    for (const [spec, msg] of [['0:9', /ablated head 0:9 is out of range \(2 layers x 4 heads\)/], ['1-2', /not a list of layer:head pairs/]]) {
      const args = ['logits', file, '--tokens', '1,2', '--ablate', spec];
      assert.match(cli(path.join(root, 'build/saccade'), args), msg);
      assert.match(cli(process.execPath, [path.join(root, 'src/js/cli.mjs'), ...args]), msg);
      await assert.rejects(withModel(file, { variant: 'st', ablate: spec }, () => {}), msg);
    }
    await withModel(file, { variant: 'st' }, (m) => {
      assert.throws(() => m.setAblation([[0, 4]]), /ablate\[0\] is \[0, 4\]: the self attention has 2 layers of 4 heads/);
      assert.throws(() => m.setAblation([[0, 1]], { kind: 'cross' }), /encoder-decoder/);
    });
  });
});
