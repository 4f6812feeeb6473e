// Shared by the JS tests: random-weight fixture models (written on first use into
// build/js-fixtures/ by build/tools/make_model), the native CLI as the reference, comparisons.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadModel } from '../../src/js/index.mjs';
import { withCharTokenizer } from './gguf.mjs';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const fixtureDir = path.join(root, 'build/js-fixtures');
const makeModel = path.join(root, 'build/tools/make_model');
const nativeCli = path.join(root, 'build/saccade');

for (const tool of [makeModel, nativeCli])
  if (!existsSync(tool)) throw new Error(`${tool} is missing: run \`make build/saccade build/tools/make_model\``);

/**
 * Path of a fixture model: `${arch}-${type}` (the tests' small shape: vocab 97, context 48,
 * width 64, 2 layers, 4 heads), with '-char' a character tokenizer added (with '-char-bos' it
 * also asks for BOS).
 */
export function fixture(name) {
  const file = path.join(fixtureDir, `${name}.gguf`);
  // rebuilt whenever make_model is: the models are whatever the current tool writes
  if (existsSync(file) && statSync(file).mtimeMs >= statSync(makeModel).mtimeMs) return file;
  const m = /^(gpt2|llama|encdec)-(f32|f16|q8_0|q4_0)(-char(-bos)?)?$/.exec(name);
  if (!m) throw new Error(`unknown fixture ${name}`);
  mkdirSync(fixtureDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`; // test files run in parallel: write, then rename
  execFileSync(makeModel, [tmp, '--arch', m[1], '--type', m[2]]);
  if (m[3]) writeFileSync(tmp, withCharTokenizer(readFileSync(tmp), 97, { addBos: Boolean(m[4]) }));
  renameSync(tmp, file);
  return file;
}

/** Runs build/saccade; returns its stdout parsed as JSON. */
export function native(...args) {
  return JSON.parse(execFileSync(nativeCli, args.map(String), { encoding: 'utf8' }));
}

export function nativeText(...args) {
  return execFileSync(nativeCli, args.map(String), { encoding: 'utf8' });
}

/** max |a - b| / max |b|: the error relative to the reference's scale. */
export function relativeError(a, b) {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < a.length; i++) {
    diff = Math.max(diff, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return diff / scale;
}

/** Collects every step of a generation. */
export async function collect(steps) {
  const out = [];
  for await (const step of steps) out.push(step);
  return out;
}

/** Loads a model, runs fn(model) and disposes of the model whatever happens; returns fn's result. */
export async function withModel(file, options, fn) {
  const model = await loadModel(file, options);
  try {
    return await fn(model);
  } finally {
    model.dispose();
  }
}
