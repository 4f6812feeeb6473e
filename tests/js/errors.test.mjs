// Bad input throws an Error with a clear message, and the model stays usable where that
// makes sense.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { chooseRuntime, clearCachedModels, loadModel, SaccadeError } from '../../src/js/index.mjs';
import { llamaGguf } from './gguf.mjs';
import { collect, fixture, withModel } from './helpers.mjs';

/** Asserts that fn (sync or async) throws a SaccadeError whose message matches `pattern`. */
async function rejects(fn, pattern, code) {
  await assert.rejects(async () => fn(), (e) => {
    assert.ok(e instanceof SaccadeError, `expected a SaccadeError, got ${e?.name}: ${e?.message}`);
    assert.match(e.message, pattern);
    if (code) assert.equal(e.code, code);
    return true;
  });
}

describe('loading bad input', () => {
  test('bytes that are not GGUF', async () => {
    await rejects(() => loadModel(new TextEncoder().encode('<!doctype html><title>404</title>'), { threads: 1 }),
      /GGUF|magic/i, 'SAC_ERR_FORMAT');
  });

  test('a truncated file', async () => {
    const bytes = readFileSync(fixture('gpt2-f32'));
    for (const size of [10, 100, bytes.length >> 1, bytes.length - 1])
      await rejects(() => loadModel(bytes.subarray(0, size), { threads: 1 }), /truncat|end of|short|beyond|exceed/i, 'SAC_ERR_FORMAT');
  });

  test('empty input, a missing file, a wrong source type', async () => {
    await rejects(() => loadModel(new Uint8Array(0)), /empty/);
    await rejects(() => loadModel('/nonexistent/model.gguf'), /cannot open '\/nonexistent\/model.gguf': no such file/);
    await rejects(() => loadModel(42), /source must be a Uint8Array, ArrayBuffer, .*got number/);
    await rejects(() => loadModel(null), /got null/);
  });

  test('tokenize: bos or eos that the vocabulary lacks, in the option\'s words', async () => {
    // Model A's character vocabulary has neither BOS nor EOS
    const m = await loadModel(new URL('../../models/shakespeare-char-q8_0.gguf', import.meta.url).pathname, { threads: 1 });
    try {
      assert.equal(m.info.bosId, -1);
      await rejects(() => m.tokenize('A', { bos: true }), /^bos: the vocabulary has no BOS token$/);
      await rejects(() => m.tokenize('A', { eos: true }), /^eos: the vocabulary has no EOS token$/);
      assert.deepEqual(m.tokenize('A'), m.tokenize('A', { bos: false }));
    } finally {
      m.dispose();
    }
  });

  test('bad options', async () => {
    const file = fixture('gpt2-f32');
    await rejects(() => loadModel(file, { threads: 0 }), /threads must be an integer from 1 to 256, got 0/);
    await rejects(() => loadModel(file, { threads: '2' }), /threads must be an integer from 1 to 256, got '2'/);
    await rejects(() => loadModel(file, { threads: 2.5 }), /threads must be an integer/);
    await rejects(() => loadModel(file, { variant: 'gpu' }), /variant must be 'mt' .* or 'st'/);
    // chooseRuntime checks its options as loadModel does
    await rejects(() => chooseRuntime({ variant: 'gpu' }), /variant must be 'mt' .* or 'st'/);
    await rejects(() => chooseRuntime({ thread: 2 }), /unknown option 'thread' for chooseRuntime; the options are: threads, variant, simd/);
    await rejects(() => chooseRuntime('mt'), /the options of chooseRuntime must be an object, got string/);
    // clearCachedModels refuses what is not a URL, also in Node, where there is no cache to clear
    await rejects(() => clearCachedModels(5), /clearCachedModels takes URLs, got number/);
    await rejects(() => clearCachedModels(['https://example.com/m.gguf', {}]), /clearCachedModels takes URLs, got object/);
    await rejects(() => loadModel(file, { contextLength: -1 }), /contextLength must be an integer >= 0/);
    await rejects(() => loadModel(file, { onProgress: 'yes' }), /onProgress must be a function/);
    // gpt2 has learned positions: no longer context than trained
    await rejects(() => loadModel(file, { contextLength: 100 }), /exceeds the model's 48 learned positions/);
  });

  test('the memory budget is checked before allocating, with a clear message', async () => {
    // llama (RoPE) accepts any context length; 2 layers x 10M positions x 32 floats of keys = 2.4 GB
    await rejects(() => loadModel(fixture('llama-f32'), { threads: 1, contextLength: 10_000_000 }),
      /does not fit in WebAssembly memory.*contextLength/, 'SAC_ERR_NOMEM');
    // attention capture: 2 layers x 4 heads x 12000²/2 floats = 2.1 GB, too much for one allocation
    await rejects(() => loadModel(fixture('llama-f32'), { threads: 1, contextLength: 12000, attention: true }),
      /attention capture over a 12000-token context needs 2197\.\d MB .* turn attention capture off/, 'SAC_ERR_NOMEM');
    // a source announcing more than one wasm allocation can hold fails before reading it
    let pulled = 0;
    const body = new ReadableStream({ pull: (c) => (pulled++, c.enqueue(new Uint8Array(16))) });
    const response = new Response(body, { headers: { 'content-length': String(3 * 2 ** 30) } });
    await rejects(() => loadModel(response, { threads: 1 }), /the model is 3072.0 MB: more than .* one WebAssembly allocation/);
    assert.ok(pulled <= 1, 'the body was not read');
  });

  test('per-call attention capture is checked as loadModel({ attention: true }) is, before anything runs', async () => {
    // a 12000-token context loads without capture; a call that can capture ~12000 rows must not start
    const m = await loadModel(fixture('llama-f32'), { threads: 2, contextLength: 12000 });
    try {
      // 3 prompt tokens + 11989 evaluated generated tokens: 2 layers x 4 heads x 11992²/2 floats = 2194.5 MB
      await rejects(() => m.generate([1, 2, 3], { attention: true, maxTokens: 11990 }),
        /^attention capture of 11992 query rows needs 2194\.5 MB in one allocation, more than the 2047\.9 MB WebAssembly allows; lower maxTokens or contextLength, or turn attention off$/,
        'SAC_ERR_NOMEM');
      const long = Array.from({ length: 11600 }, (_, i) => i % 97);
      await rejects(() => m.forward(long, { attention: true }), /^attention capture of 11600 query rows needs 2053\.\d MB/,
        'SAC_ERR_NOMEM');
      // the same calls within the budget run
      const steps = await collect(m.generate([1, 2, 3], { attention: true, maxTokens: 4, ignoreEos: true }));
      assert.equal(steps.at(-1).attention.keys, 6);
      assert.equal(m.forward(long.slice(0, 300), { attention: true }).length, m.info.vocabSize);
    } finally {
      m.dispose();
    }
  });
});

describe('attention capture that cannot fit (llama, 2 layers, 64 heads, an 8192-token context)', () => {
  // Its full capture is 16 GiB, which 32-bit sizes used to wrap to ~2 MB: rows were written past
  // the buffer (wrong rows in st, a trap that killed the process in mt).
  const bytes = llamaGguf({ ctx: 8192, embd: 128, heads: 64, headsKv: 2, ropeDim: 2 });
  for (const variant of ['st', 'mt']) {
    test(`${variant}: every capture path fails with the size and what to change; shorter contexts capture right rows`, async () => {
      await rejects(() => loadModel(bytes, { variant, threads: 2, contextLength: 8192, attention: true }),
        /^the model does not fit in WebAssembly memory: .* for a 8192-token context .*turn attention capture off$/, 'SAC_ERR_NOMEM');
      await withModel(bytes, { variant, threads: 2, contextLength: 8192 }, async (m) => {
        await rejects(() => collect(m.generate([1, 2, 3], { attention: true, maxTokens: 4 })),
          /^attention capture for a context of 8192 tokens \(2 layers x 64 heads\) needs 17181966336 bytes .*use a shorter context/,
          'SAC_ERR_NOMEM');
        await rejects(() => m.forward([1, 2, 3], { attention: true }), /needs 17181966336 bytes/, 'SAC_ERR_NOMEM');
        assert.equal((await collect(m.generate([1, 2, 3], { maxTokens: 4, ignoreEos: true }))).length, 4);
      });
      await withModel(bytes, { variant, threads: 2, contextLength: 1024 }, async (m) => {
        const steps = await collect(m.generate([1, 2, 3], { attention: true, maxTokens: 4, ignoreEos: true }));
        const rows = m.attentionRows();
        assert.equal(rows.to, 6);
        for (let q = 0; q < rows.to; q++)
          for (let lh = 0; lh < rows.layers * rows.heads; lh++) {
            const at = rows.offsets[q] + lh * (q + 1);
            const sum = rows.data.subarray(at, at + q + 1).reduce((a, b) => a + b, 0);
            assert.ok(Math.abs(sum - 1) < 1e-5, `row ${q}, layer×head ${lh} sums to ${sum}`);
          }
        assert.deepEqual(steps.at(-1).attention.data, rows.data.subarray(rows.offsets[5], rows.offsets[6]));
      });
    });
  }
});

describe('bad calls on a loaded model', () => {
  let m;
  const prompt = [1, 2, 3];
  let reference;
  before(async () => {
    m = await loadModel(fixture('llama-f32-char'), { threads: 2 });
    reference = m.forward(prompt);
  });
  after(() => m.dispose());

  async function stillUsable() {
    assert.deepEqual(m.forward(prompt), reference);
    assert.equal((await collect(m.generate(prompt, { maxTokens: 2, ignoreEos: true }))).length, 2);
  }

  test('ids out of range or not integers', async () => {
    await rejects(() => m.forward([1, 97, 2]), /token id 97 at index 1 is out of range \(vocabulary size 97\)/, 'SAC_ERR_ARG');
    await rejects(() => m.forward([-1]), /token id -1 at index 0 is out of range/);
    await rejects(() => m.forward([1, 2.5]), /ids\[1\] is 2.5, not a token id/);
    await rejects(() => m.forward(['1']), /ids\[0\] is '1', not a token id/); // quoted: 1 would look valid
    await rejects(() => m.forward('abc'), /ids must be an array of token ids, got a string/);
    await rejects(() => m.complete(5), /^prompt must be text or an array of token ids, got 5$/);
    await rejects(() => m.complete('a', { stop: '' }), /^stop must be a non-empty string, a token id, or an array of them, got ''$/);
    await rejects(() => m.forward([]), /no tokens to evaluate/);
    await rejects(() => m.detokenize([3, 1000]), /token 1000 is out of range/);
    await rejects(() => collect(m.generate([5, 100])), /out of range/); // at the first step
    await stillUsable();
  });

  test('a prompt longer than the context', async () => {
    const long = Array.from({ length: 49 }, (_, i) => i % 90);
    await rejects(() => m.forward(long), /49 tokens do not fit in the context: it holds 48 tokens/, 'SAC_ERR_CONTEXT');
    await rejects(() => collect(m.generate(long)), /49 tokens do not fit in the context/, 'SAC_ERR_CONTEXT');
    await rejects(() => collect(m.generate('x'.repeat(60))), /60 tokens do not fit in the context/);
    await stillUsable();
  });

  test('NaN, negative or infinite temperature; topP outside (0, 1]; other sampling options', async () => {
    for (const temperature of [NaN, -0.1, Infinity, '0.5'])
      await rejects(() => m.generate(prompt, { temperature }), /temperature must be a finite number >= 0/);
    for (const topP of [0, -0.5, 1.01, NaN])
      await rejects(() => m.generate(prompt, { topP }), /topP must be in \(0, 1\]/);
    await rejects(() => m.generate(prompt, { topK: -1 }), /topK must be an integer >= 0/);
    await rejects(() => m.generate(prompt, { repeatPenalty: 0 }), /repeatPenalty must be a finite number > 0/);
    await rejects(() => m.generate(prompt, { maxTokens: -1 }), /maxTokens must be an integer >= 0/);
    await rejects(() => m.generate(prompt, { seed: -1 }), /seed must be an integer in \[0, 2\^64\)/);
    await rejects(() => m.generate(prompt, { seed: 2n ** 64n }), /seed must be/);
    await rejects(() => m.generate(prompt, { stop: [''] }), /stop must be a non-empty string, a token id/);
    // a stop id no token has would never match: refused like a prompt id out of range
    const V = m.info.vocabSize;
    await rejects(() => m.generate(prompt, { stop: -1 }), new RegExp(`stop token id -1 is out of range \\(vocabulary size ${V}\\)`));
    await rejects(() => m.generate(prompt, { stop: ['\n', V] }), new RegExp(`stop token id ${V} is out of range`));
    await rejects(() => m.complete(prompt, { stop: V + 5 }), /stop token id \d+ is out of range/);
    await rejects(() => m.generate(prompt, { signal: 'stop' }), /signal must be an AbortSignal/);
    await rejects(() => m.generate([]), /the prompt is empty/);
    await stillUsable();
  });

  test('a new generate or forward takes the context over; the generation it stopped throws at its next step', async () => {
    const first = m.generate(prompt, { maxTokens: 5, temperature: 0, ignoreEos: true });
    assert.equal((await first.next()).done, false);
    assert.deepEqual(m.forward(prompt), reference);
    await rejects(() => first.next(), /this generation was stopped: a later generate\(\), complete\(\), chat\(\), forward\(\), bench\(\) or setAblation\(\)/,
      'SAC_ERR_STATE');
    // two iterators made before either started: the later one holds the context
    const x = m.generate(prompt, { maxTokens: 3, ignoreEos: true });
    const y = m.generate(prompt, { maxTokens: 3, ignoreEos: true });
    await rejects(() => x.next(), /this generation was stopped/);
    assert.equal((await collect(y)).length, 3);
    await stillUsable();
  });

  test('attention without capture, bad layer or head', async () => {
    m.forward(prompt);
    await rejects(() => m.attention(0, 0), /no captured attention/);
    await rejects(() => m.attention(0.5, 0), /layer must be an integer in \[0, 2\)/);
    await rejects(() => m.attention(0, 4), /head must be an integer in \[0, 4\)/);
    await stillUsable();
  });

  test('tokenize needs a string', async () => {
    await rejects(() => m.tokenize(42), /text must be a string, got 42/);
    await rejects(() => m.tokenize(null), /text must be a string, got null/);
    await stillUsable();
  });
});
