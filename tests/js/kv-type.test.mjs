// The bf16 and q8 KV caches on every surface: loadModel's kvType (checked, reported in
// model.runtime), both CLIs' --kv-type (the same logits JSON byte for byte, native and wasm, 1 and
// 2 threads; the same refusal), and the JS API giving the CLI's logits.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

import { loadModel } from '../../src/js/index.mjs';
import { fixture, relativeError, root } from './helpers.mjs';

const exec = promisify(execFile);
const cli = path.join(root, 'src/js/cli.mjs');
const nativeCli = path.join(root, 'build/saccade');
// a decoder-only model and an encoder–decoder one (whose source is encoded once: its cross cache stays f32)
const shipped = ['shakespeare-char-q8_0', 'dates-q8_0'].map((n) => path.join(root, 'models', `${n}.gguf`));
const logitsArgs = (file) => ['logits', file, '--tokens', '1,2,3,4,5,6,7,8', '--all',
  ...(file.includes('dates') ? ['--source', '9,10,11,12,13'] : [])];

async function run(cmd, argv) {
  try {
    const { stdout, stderr } = await exec(cmd, argv.map(String), { maxBuffer: 64 << 20 });
    return { status: 0, stdout, stderr };
  } catch (e) {
    if (typeof e.code != 'number') throw e;
    return { status: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const both = (...args) => Promise.all([run(nativeCli, args), run(process.execPath, [cli, ...args])]);

describe('loadModel kvType', () => {
  test("defaults to 'f32', and model.runtime says which cache is in use", async () => {
    for (const kvType of [undefined, 'f32', 'bf16', 'q8']) {
      const m = await loadModel(fixture('llama-f32'), { threads: 1, ...(kvType && { kvType }) });
      try {
        assert.equal(m.runtime.kvType, kvType ?? 'f32');
      } finally {
        m.dispose();
      }
    }
    const v = await loadModel(fixture('llama-f32-char'), { vocabOnly: true, kvType: 'bf16' });
    assert.equal(v.runtime.kvType, null);
    v.dispose();
  });

  test('refuses anything but the known names, listing them', async () => {
    for (const bad of ['f16', 'BF16', 'q8_0', '', 1, null, true])
      await assert.rejects(loadModel(fixture('llama-f32'), { threads: 1, kvType: bad }),
        { name: 'SaccadeError', message: /^kvType must be one of 'f32', 'bf16', 'q8', got / });
  });

  // tolerance against f32: bf16 measured up to ~3e-3 of the logits' scale on these fixtures, q8
  // up to ~1e-2 (test_kv_cache.c checks both against the float64 reference)
  for (const [kvType, tol] of [['bf16', 2e-2], ['q8', 5e-2]])
    test(`${kvType} logits: the native CLI's bits, close to f32, not equal to them`, async () => {
      const tokens = [5, 17, 42, 3, 88, 61, 0, 96, 23, 23, 7, 50];
      for (const name of ['gpt2-f32', 'llama-q8_0']) {
        const file = fixture(name);
        const want = JSON.parse((await run(nativeCli, ['logits', file, '--tokens', tokens.join(','), '--kv-type', kvType])).stdout);
        const [mk, m32] = await Promise.all([kvType, 'f32'].map((t) => loadModel(file, { threads: 2, kvType: t })));
        try {
          const a = mk.forward(tokens), b = m32.forward(tokens);
          assert.deepEqual(Array.from(a, (x) => Math.fround(x)), want.logits[0].map((x) => Math.fround(x)), name);
          const err = relativeError(a, b);
          assert.ok(err > 0 && err < tol, `${name}: ${kvType} vs f32 relative difference ${err}`);
        } finally {
          mk.dispose();
          m32.dispose();
        }
      }
    });
});

describe('--kv-type on both CLIs', () => {
  for (const file of shipped) {
    test(`logits of ${path.basename(file)}: native = Node, byte for byte, 1 and 2 threads`, async () => {
      const f32 = (await run(nativeCli, logitsArgs(file))).stdout;
      const seen = new Set([f32]);
      for (const kvType of ['bf16', 'q8'])
        for (const threads of [1, 2]) {
          const [native, js] = await both(...logitsArgs(file), '--kv-type', kvType, '--threads', threads);
          assert.equal(native.status, 0, native.stderr);
          assert.equal(js.status, 0, js.stderr);
          assert.equal(js.stdout, native.stdout, `${kvType}, ${threads} threads`);
          if (threads === 1) {
            assert.ok(!seen.has(native.stdout), `${kvType} logits equal another type's: the option did nothing`);
            seen.add(native.stdout);
          }
        }
    });
  }

  test('bench reports the cache type', async () => {
    for (const kvType of ['bf16', 'q8']) {
      const [native, js] = await both('bench', shipped[0], '--prompt-tokens', 8, '--decode-tokens', 4, '--repeat', 1,
        '--kv-type', kvType);
      assert.equal(native.status, 0, native.stderr);
      assert.equal(js.status, 0, js.stderr);
      assert.equal(JSON.parse(native.stdout).kv_type, kvType);
      assert.equal(JSON.parse(js.stdout).kv_type, kvType);
    }
    const [d] = await both('bench', shipped[0], '--prompt-tokens', 8, '--decode-tokens', 4, '--repeat', 1);
    assert.equal(JSON.parse(d.stdout).kv_type, 'f32');
  });

  test('the same refusal for an unknown type, a missing value and a command without a context', async () => {
    for (const args of [['logits', shipped[0], '--tokens', '1', '--kv-type', 'f16'],
      ['bench', shipped[0], '--kv-type'], ['tokenize', shipped[0], '--text', 'a', '--kv-type', 'bf16']]) {
      const [native, js] = await both(...args);
      assert.equal(native.status, 1);
      assert.equal(js.status, 1);
      assert.equal(js.stderr, native.stderr);
      assert.equal(js.stdout, '');
    }
    const [native] = await both('logits', shipped[0], '--tokens', '1', '--kv-type', 'f16');
    assert.equal(native.stderr, "saccade: --kv-type must be one of f32, bf16, q8, got 'f16'\n");
  });
});
