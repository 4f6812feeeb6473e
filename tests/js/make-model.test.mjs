// build/tools/make_model --vocab: the synthetic GPT-2 vocabulary that llama.cpp needs to load the
// benchmark's files (scripts/bench-wasm.mjs) is the one tests/js/gguf.mjs adds, byte for byte,
// and saccade reads it as a byte-level BPE tokenizer.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { withSyntheticGpt2Tokenizer } from './gguf.mjs';
import { native, root } from './helpers.mjs';

const makeModel = path.join(root, 'build/tools/make_model');
const dir = mkdtempSync(path.join(os.tmpdir(), 'saccade-make-model-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('--vocab writes the same file as withSyntheticGpt2Tokenizer', () => {
  const plain = path.join(dir, 'plain.gguf');
  const withVocab = path.join(dir, 'vocab.gguf');
  execFileSync(makeModel, [plain, '--n-vocab', '300']);
  execFileSync(makeModel, [withVocab, '--n-vocab', '300', '--vocab']);
  const expected = Buffer.from(withSyntheticGpt2Tokenizer(readFileSync(plain), 300));
  assert.ok(expected.equals(readFileSync(withVocab)));
  const info = native('info', withVocab);
  assert.equal(info.has_tokenizer, true);
  assert.equal(info.metadata['tokenizer.ggml.model'], 'gpt2');
  assert.equal(info.metadata['tokenizer.ggml.tokens'], '[string; 300]');
  assert.equal(info.metadata['tokenizer.ggml.merges'], '[string; 43]');
  assert.deepEqual(native('tokenize', withVocab, '--text', 'AB é'), [65, 66, 32, 195, 169]);
});

test('--vocab refuses vocabularies smaller than the 256 bytes and an end token', () => {
  assert.throws(() => execFileSync(makeModel, [path.join(dir, 'small.gguf'), '--vocab'], { stdio: 'pipe' }),
    (e) => e.status === 1 && /257 tokens or more/.test(String(e.stderr)));
});
