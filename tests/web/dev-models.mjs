#!/usr/bin/env node
// Random-weight development models for the demo page, its tests and its benchmark, written into
// build/web-models/ by build/tools/make_model (+ a tokenizer from tests/js/gguf.mjs):
//
//   gpt2-char-q8_0.gguf      stands in for Model A (gpt2, character vocabulary; 2 layers × 4 heads, context 48)
//   encdec-char-q8_0.gguf    stands in for Model B (encoder–decoder, character vocabulary)
//   gpt2-small-q8_0.gguf     GPT-2 small's shape (12 × 12 heads, context 1024) with a synthetic
//                            byte-level BPE vocabulary: the benchmark's long contexts (--large)
//
//   node tests/web/dev-models.mjs [--large]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { withCharTokenizer, withSyntheticGpt2Tokenizer } from '../js/gguf.mjs';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const devDir = path.join(root, 'build/web-models');
const makeModel = path.join(root, 'build/tools/make_model');

const SPECS = {
  'gpt2-char-q8_0': { args: ['--arch', 'gpt2', '--type', 'q8_0'], tokenizer: (b) => withCharTokenizer(b, 97) },
  'encdec-char-q8_0': { args: ['--arch', 'encdec', '--type', 'q8_0'], tokenizer: (b) => withCharTokenizer(b, 97) },
  'gpt2-small-q8_0': { args: ['--gpt2-small', '--type', 'q8_0'], tokenizer: (b) => withSyntheticGpt2Tokenizer(b, 50257) },
};

/** Path of a development model, written (or rewritten after make_model changed) on demand. */
export function devModel(name) {
  const spec = SPECS[name];
  if (!spec) throw new Error(`unknown development model ${name}`);
  if (!existsSync(makeModel)) throw new Error(`${makeModel} is missing: run \`make build/tools/make_model\``);
  const file = path.join(devDir, `${name}.gguf`);
  if (existsSync(file) && statSync(file).mtimeMs >= statSync(makeModel).mtimeMs) return file;
  mkdirSync(devDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`; // test files may run in parallel: write, then rename
  try {
    execFileSync(makeModel, [tmp, ...spec.args]);
    writeFileSync(tmp, spec.tokenizer(readFileSync(tmp)));
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  return file;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = ['gpt2-char-q8_0', 'encdec-char-q8_0'];
  if (process.argv.includes('--large')) names.push('gpt2-small-q8_0');
  for (const name of names) console.log(path.relative(root, devModel(name)));
}
