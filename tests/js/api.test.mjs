// The library against the native build: model info (which also checks the wasm32 struct
// layouts), logits, greedy and sampled tokens across both variants and thread counts,
// attention capture and tokenizers.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { chatModel } from './chat-models.mjs';
import { charVocabulary, withU32 } from './gguf.mjs';
import { collect, fixture, native, relativeError, withModel } from './helpers.mjs';

// a real SentencePiece vocabulary (byte tokens), from ../shared when it is there
const stories = fileURLToPath(new URL('../../../shared/data/models/stories260K.gguf', import.meta.url));

const ARCHS = ['gpt2', 'llama'];
const TYPES = ['f32', 'f16', 'q8_0', 'q4_0'];
// st, and mt with one to three threads (the calling thread plus pool workers)
const RUNTIMES = [{ variant: 'st' }, { variant: 'mt', threads: 1 }, { variant: 'mt', threads: 2 }, { variant: 'mt', threads: 3 }];
const label = (r) => `${r.variant}${r.threads ? `×${r.threads}` : ''}`;

describe('info', () => {
  for (const name of [...ARCHS.flatMap((a) => TYPES.map((t) => `${a}-${t}`)), 'llama-f32-char-bos']) {
    test(`${name}: every field matches the native CLI`, async () => {
      const file = fixture(name);
      const ref = native('info', file);
      await withModel(file, { variant: 'st' }, (m) => {
        const i = m.info;
        assert.deepEqual(
          [i.architecture, i.name, i.ggufVersion, i.vocabSize, i.contextLength, i.embeddingSize, i.feedForwardSize,
            i.layers, i.heads, i.kvHeads, i.headDim, i.ropeDim, i.tiedOutput, i.parameters, i.tensorBytes,
            i.hasTokenizer, i.encoderLayers],
          [ref.architecture, ref.name, ref.gguf_version, ref.n_vocab, ref.n_ctx, ref.n_embd, ref.n_ff, ref.n_layer,
            ref.n_head, ref.n_head_kv, ref.head_dim, ref.rope_dim, ref.tied_output, ref.n_params, ref.n_bytes,
            ref.has_tokenizer, ref.n_encoder_layer]);
        // %g prints 6 significant digits
        assert.equal(Number(i.ropeFreqBase.toPrecision(6)), ref.rope_freq_base);
        assert.equal(Number(i.normEps.toPrecision(6)), ref.norm_eps);
        assert.deepEqual(i.tensorTypes, ref.tensor_types);
        assert.deepEqual(i.metadata, ref.metadata);
        const counted = i.tensors.reduce((n, t) => n + t.dims.reduce((a, b) => a * b, 1), 0);
        assert.equal(counted, i.parameters, 'tensor dims add up to the parameter count');
        assert.deepEqual(i.tensors.find((t) => t.name === 'token_embd.weight').dims, [i.embeddingSize, i.vocabSize]);
      });
    });
  }
});

describe('runtime', () => {
  test('samplingDefaults are what generate uses for an option left out', async () => {
    await withModel(new URL('../../models/shakespeare-char-q8_0.gguf', import.meta.url).pathname, { threads: 1 }, async (m) => {
      const d = m.samplingDefaults;
      assert.deepEqual(Object.keys(d).sort(), ['maxTokens', 'repeatLastN', 'repeatPenalty', 'temperature', 'topK', 'topP']);
      assert.ok(Object.isFrozen(d));
      assert.deepEqual(d, { maxTokens: 64, temperature: 0.8, topK: 40, topP: 0.95, repeatPenalty: 1, repeatLastN: 64 });
      const defaults = await collect(m.generate([1, 2], { seed: 5, ignoreEos: true }));
      assert.equal(defaults.length, d.maxTokens);
      assert.equal(defaults.at(-1).finishReason, 'maxTokens');
      const spelled = await collect(m.generate([1, 2], { ...d, seed: 5, ignoreEos: true }));
      assert.deepEqual(spelled.map((s) => s.id), defaults.map((s) => s.id));
      const greedy = await collect(m.generate([1, 2], { ...d, temperature: 0, seed: 5, ignoreEos: true }));
      assert.notDeepEqual(greedy.map((s) => s.id), defaults.map((s) => s.id)); // the comparison can fail
    });
  });

  test('Node defaults to the threaded build with one thread per core (at most 8)', async () => {
    await withModel(fixture('gpt2-f32'), {}, (m) => {
      const expected = Math.min(8, os.availableParallelism());
      assert.equal(m.runtime.variant, expected > 1 ? 'mt' : 'st');
      assert.equal(m.runtime.threads, expected);
      assert.equal(m.runtime.simd, true);
      assert.equal(m.runtime.isolated, true);
      assert.match(m.runtime.reason, /Node/);
    });
  });

  test('threads: 1 runs the single-threaded build; threads: N starts N threads', async () => {
    await withModel(fixture('gpt2-f32'), { threads: 1 }, (m) => {
      assert.deepEqual({ ...m.runtime, reason: undefined, contextReason: undefined },
        { variant: 'st', threads: 1, simd: true, isolated: true, reason: undefined, contextLength: 48, contextReason: undefined,
          kvType: 'f32', relaxed: false, relaxedReason: 'this engine lacks relaxed SIMD' });
      assert.match(m.runtime.reason, /threads: 1/);
    });
    await withModel(fixture('gpt2-f32'), { threads: 3 }, (m) => {
      assert.equal(m.runtime.variant, 'mt');
      assert.equal(m.runtime.threads, 3);
    });
  });
});

describe('context length', () => {
  test('the default fits the device: at most 4096 tokens, the full training length on request', async () => {
    // the llama fixture, declaring a 32768-token training context
    const bytes = withU32(readFileSync(fixture('llama-f32')), 'llama.context_length', 32768);
    await withModel(bytes, { threads: 1 }, (m) => {
      assert.equal(m.info.contextLength, 32768);
      assert.equal(m.runtime.contextLength, 4096);
      assert.equal(m.runtime.contextReason, 'the default: at most 4096 tokens, to fit the device (the model was ' +
        'trained for 32768; pass { contextLength: 32768 } for the full length)');
      assert.throws(() => m.forward(Array(4097).fill(1)), /4097 tokens do not fit in the context: it holds 4096 tokens/);
    });
    await withModel(bytes, { threads: 1, contextLength: 32768 }, (m) => {
      assert.equal(m.runtime.contextLength, 32768);
      assert.equal(m.runtime.contextReason, 'contextLength: 32768 requested (the model was trained for 32768 tokens)');
    });
    await withModel(fixture('llama-f32'), { threads: 1 }, (m) => {
      assert.equal(m.runtime.contextLength, 48);
      assert.equal(m.runtime.contextReason, "the default: the model's training length (48 tokens)");
    });
  });
});

describe('logits agree with the native build', () => {
  const ids = [5, 17, 3, 96, 0, 41, 41, 8, 77, 12, 60, 2, 33, 90, 14, 51, 7, 70, 22, 1];
  for (const arch of ARCHS) {
    test(`${arch}-f32: last row and all rows within 1e-5, every runtime`, async () => {
      const file = fixture(`${arch}-f32`);
      const ref = native('logits', file, '--tokens', ids.join(','), '--all').logits;
      for (const r of RUNTIMES) {
        // batchSize 8 splits the prompt into three batches: the result must not change
        for (const batchSize of [0, 8]) {
          await withModel(file, { ...r, batchSize }, (m) => {
            const last = m.forward(ids);
            assert.equal(last.length, m.info.vocabSize);
            assert.ok(relativeError(last, ref.at(-1)) <= 1e-5, `${label(r)} batch ${batchSize}: last row`);
            const all = m.forward(ids, { allLogits: true });
            assert.equal(all.length, ids.length * m.info.vocabSize);
            assert.ok(relativeError(all, ref.flat()) <= 1e-5, `${label(r)} batch ${batchSize}: all rows`);
          });
        }
      }
    });
  }

  for (const arch of ARCHS) {
    for (const type of ['f16', 'q8_0', 'q4_0']) {
      test(`${arch}-${type}: within 1e-4, identical across runtimes`, async () => {
        const file = fixture(`${arch}-${type}`);
        const ref = native('logits', file, '--tokens', ids.join(','), '--all').logits.flat();
        let first;
        for (const r of RUNTIMES) {
          await withModel(file, r, (m) => {
            const all = m.forward(ids, { allLogits: true });
            assert.ok(relativeError(all, ref) <= 1e-4, `${label(r)}: ${relativeError(all, ref)}`);
            first ??= all;
            assert.deepEqual(all, first, `${label(r)} differs from ${label(RUNTIMES[0])}`);
          });
        }
      });
    }
  }
});

describe('generation', () => {
  const prompt = [3, 14, 15, 92, 65];
  for (const arch of ARCHS) {
    for (const type of TYPES) {
      test(`${arch}-${type}: greedy tokens identical across runtimes and to the native build`, async () => {
        const file = fixture(`${arch}-${type}`);
        const ref = native('generate', file, '--tokens', prompt.join(','), '-n', 24, '--temp', 0, '--ignore-eos');
        for (const r of RUNTIMES) {
          await withModel(file, r, async (m) => {
            const steps = await collect(m.generate(prompt, { maxTokens: 24, temperature: 0, ignoreEos: true }));
            assert.deepEqual(steps.map((s) => s.id), ref.tokens, label(r));
          });
        }
      });
    }
  }

  test('sampling options and a 64-bit seed reach the sampler as the native CLI passes them', async () => {
    const file = fixture('llama-q8_0');
    const cases = [
      { temperature: 0.9, topK: 20, topP: 0.9, repeatPenalty: 1.3, seed: 42 },
      { temperature: 1.5, topK: 0, topP: 0.5, repeatPenalty: 1, seed: 2 ** 40 + 7 },
      { temperature: 0.7, topK: 5, topP: 1, repeatPenalty: 0.8, seed: 18446744073709551557n },
    ];
    for (const c of cases) {
      const ref = native('generate', file, '--tokens', prompt.join(','), '-n', 30, '--ignore-eos', '--temp', c.temperature,
        '--top-k', c.topK, '--top-p', c.topP, '--repeat-penalty', c.repeatPenalty, '--seed', c.seed);
      for (const r of [RUNTIMES[0], RUNTIMES[2]]) {
        await withModel(file, r, async (m) => {
          const steps = await collect(m.generate(prompt, { ...c, maxTokens: 30, ignoreEos: true }));
          assert.deepEqual(steps.map((s) => s.id), ref.tokens, `${JSON.stringify(c, (k, v) => String(v))} ${label(r)}`);
        });
      }
    }
  });

  test('the same seed gives the same tokens; a different seed other tokens', async () => {
    await withModel(fixture('gpt2-f32'), { variant: 'st' }, async (m) => {
      const run = async (seed) => (await collect(m.generate(prompt, { maxTokens: 30, temperature: 1.5, seed, ignoreEos: true })))
        .map((s) => s.id);
      const a = await run(7);
      assert.deepEqual(await run(7), a);
      assert.notDeepEqual(await run(8), a);
    });
  });

  test('maxTokens, stop ids and stop strings end the generation', async () => {
    await withModel(fixture('gpt2-f32-char'), { variant: 'st' }, async (m) => {
      const greedy = await collect(m.generate(prompt, { maxTokens: 12, temperature: 0, ignoreEos: true }));
      assert.equal(greedy.length, 12);
      // the last step says why the generation ended; the others carry null
      assert.deepEqual(greedy.map((g) => g.finishReason), [...Array(11).fill(null), 'maxTokens']);
      assert.deepEqual(await collect(m.generate(prompt, { maxTokens: 0 })), []);
      const byId = await collect(m.generate(prompt, { maxTokens: 12, temperature: 0, ignoreEos: true, stop: greedy[4].id }));
      assert.deepEqual(byId.map((s) => s.id), greedy.slice(0, greedy.findIndex((s) => s.id === greedy[4].id) + 1).map((s) => s.id));
      assert.equal(byId.at(-1).finishReason, 'stop');
      const text = greedy.map((s) => s.text).join('');
      const stop = text.slice(6, 8); // completed by the 8th token (or earlier if it repeats)
      const byText = await collect(m.generate(prompt, { maxTokens: 12, temperature: 0, ignoreEos: true, stop: ['zzzz', stop] }));
      // the stop string is not part of the text
      assert.equal(byText.map((s) => s.text).join(''), text.slice(0, text.indexOf(stop)));
      assert.equal(byText.at(-1).finishReason, 'stop');
    });
  });

  test('stops after EOS (yielded) unless ignoreEos', async () => {
    await withModel(fixture('gpt2-f32-char'), { variant: 'st' }, async (m) => {
      // a repetition penalty below 1 favours repeating; find a prompt whose greedy run emits EOS (id 2)
      const eos = m.info.eosId;
      assert.equal(eos, 2);
      let found = false;
      for (let a = 0; a < 97 && !found; a++) {
        const prompt2 = [a, eos];
        const free = await collect(m.generate(prompt2, { maxTokens: 40, temperature: 0, ignoreEos: true, repeatPenalty: 0.5 }));
        const at = free.findIndex((s) => s.id === eos);
        if (at < 0) continue;
        found = true;
        const stopped = await collect(m.generate(prompt2, { maxTokens: 40, temperature: 0, repeatPenalty: 0.5 }));
        assert.deepEqual(stopped.map((s) => s.id), free.slice(0, at + 1).map((s) => s.id));
        assert.equal(stopped.at(-1).finishReason, 'eos');
        assert.equal(free.at(-1).finishReason, 'maxTokens');
      }
      assert.ok(found, 'no prompt led to EOS');
    });
  });

  test('a full context ends the generation', async () => {
    await withModel(fixture('llama-f32'), { variant: 'st', contextLength: 12 }, async (m) => {
      const steps = await collect(m.generate([1, 2, 3, 4, 5], { maxTokens: 100, temperature: 0, ignoreEos: true }));
      // 5 prompt tokens + 7 evaluated generated tokens fill 12 positions; the 8th is sampled but not evaluated
      assert.equal(steps.length, 8);
      assert.equal(steps.at(-1).finishReason, 'contextFull');
    });
  });
});

describe('attention', () => {
  const ids = [9, 8, 7, 6, 5, 4, 3, 2, 1];

  function checkMatrix(a, n) {
    assert.equal(a.queries, n);
    assert.equal(a.keys, n);
    assert.equal(a.data.length, n * n);
    for (let q = 0; q < n; q++) {
      let sum = 0;
      for (let k = 0; k < n; k++) {
        const p = a.data[q * n + k];
        if (k > q) assert.equal(p, 0, 'no attention to later keys');
        else assert.ok(p >= 0 && p <= 1);
        sum += p;
      }
      assert.ok(Math.abs(sum - 1) < 1e-5, `row ${q} sums to ${sum}`);
    }
  }

  test('forward with { attention: true } captures every layer and head; the first row is [1]', async () => {
    await withModel(fixture('llama-f32'), { variant: 'mt', threads: 2 }, (m) => {
      m.forward(ids, { attention: true });
      for (let l = 0; l < m.info.layers; l++)
        for (let h = 0; h < m.info.heads; h++) {
          const a = m.attention(l, h);
          checkMatrix(a, ids.length);
          assert.equal(a.data[0], 1);
        }
      m.forward(ids);
      assert.throws(() => m.attention(0, 0), /no captured attention/);
      assert.throws(() => m.attention(m.info.layers, 0), /layer must be an integer in \[0, 2\)/);
      assert.throws(() => m.attention(0, -1), /head must be/);
    });
  });

  test('generate yields each new query row (a copy) matching the captured matrix, same in st and mt', async () => {
    const rows = {};
    for (const r of [RUNTIMES[0], RUNTIMES[2]]) {
      await withModel(fixture('gpt2-q8_0'), r, async (m) => {
        const { layers, heads } = m.info;
        const steps = await collect(m.generate(ids, { maxTokens: 6, temperature: 0, ignoreEos: true, attention: true }));
        const n = ids.length + steps.length - 1; // the last sampled token is never evaluated
        const matrices = [];
        for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) matrices.push(m.attention(l, h));
        matrices.forEach((a) => checkMatrix(a, n));
        steps.forEach((s, i) => {
          const q = ids.length - 1 + i;
          assert.equal(s.attention.query, q);
          assert.equal(s.attention.keys, q + 1);
          assert.equal(s.attention.data.length, layers * heads * (q + 1));
          for (let lh = 0; lh < layers * heads; lh++)
            assert.deepEqual(s.attention.data.subarray(lh * (q + 1), (lh + 1) * (q + 1)),
              matrices[lh].data.subarray(q * n, q * n + q + 1), `step ${i} layer×head ${lh}`);
        });
        rows[label(r)] = steps.map((s) => s.attention.data);
      });
    }
    assert.deepEqual(rows.st, rows['mt×2']);
  });

  test('attentionRows: rows in bulk in one layout, equal to the per-head matrices and to the steps', async () => {
    for (const r of [RUNTIMES[0], RUNTIMES[2]]) {
      await withModel(fixture('llama-q8_0'), r, async (m) => {
        const { layers, heads } = m.info;
        const steps = await collect(m.generate(ids, { maxTokens: 5, temperature: 0, ignoreEos: true, attention: true }));
        const n = ids.length + steps.length - 1;
        assert.equal(m.capturedRows(), n);
        const all = m.attentionRows();
        assert.deepEqual({ ...all, keys: [...all.keys], offsets: [...all.offsets], data: undefined }, {
          kind: 'self', layers, heads, from: 0, to: n, data: undefined,
          keys: Array.from({ length: n }, (_, q) => q + 1),
          offsets: Array.from({ length: n + 1 }, (_, q) => (layers * heads * q * (q + 1)) / 2),
        });
        assert.equal(all.data.length, all.offsets[n]);
        for (let l = 0; l < layers; l++)
          for (let h = 0; h < heads; h++) {
            const matrix = m.attention(l, h).data;
            for (let q = 0; q < n; q++) {
              const at = all.offsets[q] + (l * heads + h) * all.keys[q];
              assert.deepEqual(all.data.subarray(at, at + q + 1), matrix.subarray(q * n, q * n + q + 1), `l${l} h${h} q${q}`);
            }
          }
        steps.forEach((s, i) => {
          const q = s.attention.query;
          assert.deepEqual(s.attention.data, all.data.subarray(all.offsets[q], all.offsets[q + 1]), `step ${i}`);
        });
        // a range is the same block cut out; a view holds the same values without a copy
        const part = m.attentionRows('self', 3, 7);
        assert.deepEqual([part.from, part.to, [...part.keys]], [3, 7, [4, 5, 6, 7]]);
        assert.deepEqual(part.data, all.data.subarray(all.offsets[3], all.offsets[7]));
        const view = m.attentionRows('self', 3, 7, { view: true });
        assert.deepEqual(view.data, part.data);
        assert.notEqual(view.data.buffer, part.data.buffer);
        assert.equal(view.data.buffer instanceof SharedArrayBuffer, r.variant === 'mt');
        assert.equal(m.attentionRows('self', 4, 4).data.length, 0);
        assert.throws(() => m.attentionRows('self', 3, n + 1), new RegExp(`rows \\[3, ${n + 1}\\) are not within the ${n} captured self rows`));
        assert.throws(() => m.attentionRows('self', 0, '1'), { message: "rows: from and to must be integers (or undefined: all), got 0 and '1'" });
        assert.throws(() => m.attentionRows('self', 5, 4), /rows \[5, 4\) are not within/);
        assert.throws(() => m.attentionRows('self', 0.5), /from and to must be integers/);
        assert.throws(() => m.attentionRows('cross'), { code: 'SAC_ERR_ARG' }); // a decoder-only model has no cross rows
        assert.throws(() => m.attentionRows('diagonal'), /kind must be 'self', 'cross' or 'encoder'/);
        // without capture there is nothing to read, and C says why
        m.forward(ids);
        assert.equal(m.capturedRows(), 0);
        assert.throws(() => m.attentionRows(), { code: 'SAC_ERR_STATE' });
      });
    }
  });

  test('loadModel({ attention: true }) captures on every call; steps carry no rows unless asked', async () => {
    await withModel(fixture('gpt2-f32'), { variant: 'st', attention: true }, async (m) => {
      m.forward(ids);
      checkMatrix(m.attention(1, 3), ids.length);
      const steps = await collect(m.generate(ids, { maxTokens: 3, temperature: 0 }));
      assert.equal(steps[0].attention, undefined);
      checkMatrix(m.attention(0, 0), ids.length + 2);
    });
  });
});

describe('tokenizer', () => {
  test('a model without tokenizer metadata: tokenize/detokenize throw "no tokenizer", generate gives ids', async () => {
    await withModel(fixture('gpt2-f32'), { variant: 'st' }, async (m) => {
      assert.equal(m.info.hasTokenizer, false);
      assert.throws(() => m.tokenize('hello'), /no tokenizer/);
      assert.throws(() => m.detokenize([1, 2]), /no tokenizer/);
      assert.throws(() => m.generate('hello'), /no tokenizer/);
      const steps = await collect(m.generate([1, 2], { maxTokens: 3 }));
      assert.deepEqual(steps.map((s) => s.text), ['', '', '']);
    });
  });

  test('tokenize matches the native CLI; detokenize inverts it, multi-byte characters included', async () => {
    const file = fixture('gpt2-f32-char');
    const { tokens } = charVocabulary(97);
    await withModel(file, { variant: 'st' }, (m) => {
      for (const text of ['Hello, world!', 'é😀 and é', '', 'a b  c']) {
        const ids = m.tokenize(text);
        assert.deepEqual(ids, JSON.parse(JSON.stringify(native('tokenize', file, '--text', text))));
        assert.deepEqual(ids.map((id) => tokens[id]).join(''), text);
        assert.equal(m.detokenize(ids), text);
        assert.deepEqual(m.tokenize(text, { bos: true }), JSON.parse(JSON.stringify(native('tokenize', file, '--text', text, '--bos'))));
      }
      assert.deepEqual(m.tokenize('ab', { bos: true, eos: true }), [m.info.bosId, ...m.tokenize('ab'), m.info.eosId]);
      assert.deepEqual(m.tokenize('<s>a', { special: true }), [m.info.bosId, tokens.indexOf('a')]);
      assert.equal(m.detokenize([m.info.bosId, tokens.indexOf('x'), m.info.eosId]), 'x');
      assert.throws(() => m.detokenize([500]), /out of range/);
      // a long text grows the id buffer
      const long = 'abc😀'.repeat(3000);
      assert.equal(m.detokenize(m.tokenize(long)), long);
    });
  });

  test('pieces: the text each id adds, in one pass; joined they are the detokenized text', async () => {
    await withModel(fixture('llama-f32-char-bos'), { vocabOnly: true }, (m) => {
      const { bosId, eosId } = m.info;
      const ids = [bosId, ...m.tokenize('Hé 😀 x'), eosId];
      const pieces = m.pieces(ids);
      assert.equal(pieces.length, ids.length);
      assert.deepEqual(pieces, ['', 'H', 'é', ' ', '😀', ' ', 'x', '']);
      assert.equal(pieces.join(''), m.detokenize(ids));
      assert.deepEqual(m.pieces([]), []);
      // one pass: 4000 ids (re-detokenizing every prefix would be ~8 million pushes)
      const long = m.tokenize('abcdé 😀'.repeat(500));
      const t0 = performance.now();
      assert.equal(m.pieces(long).join(''), 'abcdé 😀'.repeat(500));
      assert.ok(performance.now() - t0 < 1000);
      assert.throws(() => m.pieces([1, 500]), /out of range/);
      assert.throws(() => m.pieces('ab'), /ids must be an array of token ids/);
    });
  });

  test('spellings: each id as the vocabulary spells it, control tokens included', async () => {
    await withModel(chatModel({ name: 'spellings' }), { vocabOnly: true }, (m) => {
      const ids = m.tokenize('<|im_start|>hi<|im_end|>', { special: true });
      assert.deepEqual(m.pieces(ids), ['', 'h', 'i', '']); // control tokens decode to nothing
      assert.deepEqual(m.spellings(ids), ['<|im_start|>', 'h', 'i', '<|im_end|>']);
      assert.deepEqual(m.spellings([]), []);
      const n = m.info.vocabSize;
      assert.throws(() => m.spellings([n]), new RegExp(`token ${n} is out of range \\(vocabulary size ${n}\\)`));
      assert.throws(() => m.spellings('ab'), /ids must be an array of token ids/);
    });
  });

  test('spellings: a SentencePiece byte token is spelled <0x..> where its piece is empty', {
    skip: existsSync(stories) ? false : `${stories} is absent (../shared)` }, async () => {
    await withModel(stories, { vocabOnly: true }, (m) => {
      // '中' is three byte tokens after the leading space ('▁', which the first token's piece
      // drops): only the last adds text
      const ids = m.tokenize('中');
      assert.deepEqual(m.pieces(ids), ['', '', '', '中']);
      assert.deepEqual(m.spellings(ids), ['\u2581', '<0xE4>', '<0xB8>', '<0xAD>']);
      assert.deepEqual(m.spellings(m.tokenize('a the')), ['\u2581a', '\u2581the']);
    });
  });

  test('vocabOnly: tokenizes without a context; computing throws', async () => {
    const file = fixture('llama-f32-char-bos');
    await withModel(file, { vocabOnly: true }, (m) => {
      assert.equal(m.runtime.variant, 'st');
      assert.equal(m.info.hasTokenizer, true);
      assert.deepEqual(m.tokenize('Hé 😀', { bos: true }), native('tokenize', file, '--text', 'Hé 😀', '--bos'));
      assert.equal(m.detokenize(m.tokenize('Hé 😀')), 'Hé 😀');
      for (const call of [() => m.forward([1]), () => m.generate([1]), () => m.attention(0, 0), () => m.bench()])
        assert.throws(call, /loaded with \{ vocabOnly: true \}: it can only tokenize and detokenize/);
    });
    await assert.rejects(() => loadModel(fixture('gpt2-f32'), { vocabOnly: true }), /no tokenizer metadata/);
  });

  test('generate from text: the prompt gets BOS when the model asks, the text matches the native CLI', async () => {
    const file = fixture('llama-f32-char-bos');
    const ref = native('generate', file, '--prompt', 'Once upon', '-n', 20, '--temp', 0.8, '--seed', 3, '--ignore-eos');
    await withModel(file, { threads: 2 }, async (m) => {
      assert.equal(m.info.addBos, true);
      assert.deepEqual(ref.prompt_tokens, [m.info.bosId, ...m.tokenize('Once upon')]);
      const steps = await collect(m.generate('Once upon', { maxTokens: 20, temperature: 0.8, seed: 3, ignoreEos: true }));
      assert.deepEqual(steps.map((s) => s.id), ref.tokens);
      assert.equal(steps.map((s) => s.text).join(''), ref.text);
    });
  });
});
