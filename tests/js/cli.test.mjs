// The Node CLI prints what the native CLI prints: byte for byte where no timing or float
// rounding is involved, the same values otherwise; errors go to stderr with status 1.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

import { formatG, jsonString } from '../../src/js/cli.mjs';
import { fixture, relativeError, root } from './helpers.mjs';

const exec = promisify(execFile);
const cli = path.join(root, 'src/js/cli.mjs');
const nativeCli = path.join(root, 'build/saccade');

async function both(...args) {
  const run = async (cmd, argv) => {
    try {
      // a CLI that waits (on a pipe, say) fails the test rather than hanging it
      const { stdout, stderr } = await exec(cmd, argv.map(String), { timeout: 60_000 });
      return { status: 0, stdout, stderr };
    } catch (e) {
      return { status: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const [js, native] = await Promise.all([run(process.execPath, [cli, ...args]), run(nativeCli, args)]);
  return { js, native };
}

describe('printf-compatible formatting', () => {
  test('formatG is C\'s %g', () => {
    const cases = [[0, 6, '0'], [-0, 6, '-0'], [1e-5, 6, '1e-05'], [10000, 6, '10000'], [1e6, 6, '1e+06'],
      [123456789, 9, '123456789'], [0.1, 9, '0.1'], [Math.fround(0.1), 9, '0.100000001'], [0.0001, 6, '0.0001'],
      [0.00001234, 6, '1.234e-05'], [-2.5, 6, '-2.5'], [9.9999996, 6, '10'], [1e100, 6, '1e+100'], [NaN, 6, 'nan'],
      [Infinity, 6, 'inf'], [Math.fround(9.99999975e-06), 9, '9.99999975e-06'], [Math.fround(-0.0476077199), 9, '-0.0476077199']];
    for (const [x, p, s] of cases) assert.equal(formatG(x, p), s, `%.${p}g of ${x}`);
  });

  test('formatG rounds exact decimal ties to even, as glibc\'s printf does (JS rounds them away from zero)', () => {
    // -11.87890625 is a float32 logit of stories260K that the two CLIs once printed differently
    const cases = [[-11.87890625, 9, '-11.8789062'], [0.125, 2, '0.12'], [0.375, 2, '0.38'], [2.5, 1, '2'],
      [3.5, 1, '4'], [9.5, 1, '1e+01'], [8.5, 1, '8'], [-8.5, 1, '-8'], [1234568.5, 7, '1234568'],
      [1234567.5, 7, '1234568']];
    for (const [x, p, s] of cases) assert.equal(formatG(x, p), s, `%.${p}g of ${x}`);
  });

  test('jsonString escapes as src/cli.c does', () => {
    assert.equal(jsonString('a"b\\c\nd\te\rf\u0001\u0008é😀'), '"a\\"b\\\\c\\nd\\te\\rf\\u0001\\u0008é😀"');
  });
});

describe("the shipped models' cards", () => {
  test("Model A's card: the command it quotes writes the sample it shows, in both CLIs", async () => {
    const card = readFileSync(path.join(root, 'models/README.md'), 'utf8');
    const section = card.slice(card.indexOf('## Model A'), card.indexOf('## Model B'));
    const command = "build/saccade generate models/shakespeare-char-q8_0.gguf --prompt $'ROMEO:\\nWhat light' -n 200 --seed 1 --temp 0.8";
    assert.ok(section.replace(/\s+/g, ' ').includes(command), `the card quotes ${command}`);
    // the sample: the card's first indented block
    const lines = section.split('\n');
    const first = lines.findIndex((l) => l.startsWith('    '));
    let end = first;
    while (end < lines.length && (lines[end].startsWith('    ') || lines[end] === '')) end++;
    const sample = lines.slice(first, end).map((l) => l.slice(4)).join('\n').trimEnd();
    const prompt = 'ROMEO:\nWhat light';
    const { js, native } = await both('generate', path.join(root, 'models/shakespeare-char-q8_0.gguf'), '--prompt', prompt,
      '-n', 200, '--seed', 1, '--temp', 0.8);
    for (const out of [js, native]) {
      assert.equal(out.status, 0, out.stderr);
      assert.equal(prompt + JSON.parse(out.stdout).text, sample);
    }
  });
});

describe('the same output as build/saccade', () => {
  test('info: identical text', async () => {
    for (const name of ['gpt2-q4_0', 'llama-f16-char-bos']) {
      const { js, native } = await both('info', fixture(name));
      assert.equal(js.status, 0, js.stderr);
      assert.equal(js.stdout, native.stdout);
    }
  });

  test('tokenize: identical text', async () => {
    const file = fixture('llama-f32-char-bos');
    for (const extra of [[], ['--bos']]) {
      const { js, native } = await both('tokenize', file, '--text', 'Hé 😀 "x"', ...extra);
      assert.equal(js.stdout, native.stdout);
    }
  });

  test('logits: same shape, values within 1e-5 (wasm and native round differently)', async () => {
    for (const extra of [[], ['--all'], ['--all', '--threads', '2']]) {
      const { js, native } = await both('logits', fixture('gpt2-f32'), '--tokens', '4,8,15,16,23,42', ...extra);
      const a = JSON.parse(js.stdout).logits;
      const b = JSON.parse(native.stdout).logits;
      assert.equal(a.length, extra.length ? 6 : 1);
      assert.ok(relativeError(a.flat(), b.flat()) <= 1e-5);
      assert.match(js.stdout, /^\{"logits":\[\[-?\d/);
    }
  });

  test('generate: identical apart from the timings', async () => {
    const strip = (s) => s.replace(/"prefill_ms":[\d.]+,"decode_ms":[\d.]+/, '');
    for (const args of [
      ['generate', fixture('llama-q8_0'), '--tokens', '1,2,3', '-n', 20, '--seed', 9, '--temp', 0.9, '--top-k', 10],
      ['generate', fixture('gpt2-f32-char'), '--prompt', 'Hello', '-n', 16, '--seed', 1, '--threads', 2],
      ['generate', fixture('llama-f32-char-bos'), '--prompt', 'é', '-n', 10, '--temp', 0, '--ignore-eos'],
    ]) {
      const { js, native } = await both(...args);
      assert.equal(js.status, 0, js.stderr);
      assert.equal(strip(js.stdout), strip(native.stdout));
      assert.match(js.stdout, /"timings":\{"prefill_ms":\d+\.\d{3},"decode_ms":\d+\.\d{3},"threads":\d\}\}\n$/);
    }
  });

  test('bench: the same fields', async () => {
    const args = ['bench', fixture('gpt2-q8_0'), '--prompt-tokens', 16, '--decode-tokens', 8, '--repeat', 1];
    const { js, native } = await both(...args);
    const a = JSON.parse(js.stdout);
    const b = JSON.parse(native.stdout);
    assert.deepEqual(Object.keys(a), Object.keys(b));
    assert.equal(a.engine, 'saccade-wasm-st');
    assert.deepEqual([a.type, a.threads, a.prompt_tokens, a.decode_tokens], [b.type, b.threads, b.prompt_tokens, b.decode_tokens]);
    assert.ok(a.prefill_tokens_per_s > 0 && a.decode_tokens_per_s > 0);
    const mt = JSON.parse((await exec(process.execPath, [cli, ...args, '--threads', '2'])).stdout);
    assert.equal(mt.engine, 'saccade-wasm-mt');
    assert.equal(mt.threads, 2);
  });

  test('errors and usage: same messages and exit status', async () => {
    const file = fixture('gpt2-f32');
    for (const args of [
      ['frobnicate', file], ['info', '/no/such.gguf'], ['logits', file], ['logits', file, '--tokens', '1,x'],
      ['logits', file, '--tokens', '1,200'], ['generate', file], ['generate', file, '--tokens', '1', '-n', '-3'],
      ['generate', file, '--tokens', '1', '--bogus', '1'], ['generate', file, '--tokens'], ['tokenize', file],
      ['tokenize', file, '--text', 'hi'], ['bench', file, '--prompt-tokens', 40, '--decode-tokens', 20], ['info'], [],
      ['logits', '--tokens', '1', file], ['info', '-'],
    ]) {
      const { js, native } = await both(...args);
      assert.equal(js.status, native.status, args.join(' '));
      assert.equal(js.stderr, native.stderr, args.join(' '));
      assert.equal(js.stdout, native.stdout, args.join(' '));
    }
    for (const args of [['help'], ['--help'], ['-h'], ['generate', '-h'], ['info', '--help']]) {
      const { js, native } = await both(...args);
      assert.deepEqual([js.status, native.status], [0, 0], args.join(' '));
      assert.match(js.stdout, /^usage:/);
      assert.equal(js.stdout, native.stdout);
    }
    // options before the model: said so, rather than "unknown option 1"
    const { native } = await both('logits', '--tokens', '1', file);
    assert.equal(native.stderr,
      "saccade: the model file comes before the options: saccade logits MODEL.gguf [options] ('--tokens' is not a file)\n");
  });
});

describe('paths that are not a model: the same one-line verdict from both CLIs', () => {
  test('a missing file, a directory, a pipe, the shards of a split model', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'saccade-paths-'));
    try {
      const model = readFileSync(fixture('gpt2-f32'));
      const fifo = path.join(dir, 'fifo.gguf');
      await exec('mkfifo', [fifo]); // nobody writes to it: opening it to read would wait forever
      const shard = (k) => path.join(dir, `m-0000${k}-of-00002.gguf`);
      writeFileSync(shard(1), model);
      const cases = [
        [path.join(dir, 'none.gguf'), `cannot open '${path.join(dir, 'none.gguf')}': no such file`],
        [dir, `cannot open '${dir}': it is a directory`],
        [fifo, `cannot open '${fifo}': not a regular file`],
        [path.join(dir, 'empty.gguf'), 'the model is empty (0 bytes)', () => writeFileSync(path.join(dir, 'empty.gguf'), '')],
        // procfs stats its files as 0 bytes yet they have contents: read to the end, not called empty
        ['/proc/self/status', "not a GGUF file: it starts with bytes 4e 61 6d 65, not 'GGUF'"], // 'Name'
        [path.join(dir, 'loop.gguf'), `cannot open '${path.join(dir, 'loop.gguf')}': too many levels of symbolic links`,
          () => symlinkSync('loop.gguf', path.join(dir, 'loop.gguf'))],
        [path.join(dir, 'm-00003-of-00002.gguf'), `'${path.join(dir, 'm-00003-of-00002.gguf')}' names shard 3 of 2, which cannot be`],
        [shard(1), `shard 2 of 2 (${shard(2)}): cannot open '${shard(2)}': no such file`],
        [shard(1), `shard 2 of 2 (${shard(2)}): the model is empty (0 bytes)`, () => writeFileSync(shard(2), '')],
        [shard(1), /^shard 2 of 2: not a GGUF file: .* \(shard 2 is .*m-00002-of-00002\.gguf\)$/,
          () => writeFileSync(shard(2), 'not a model at all')],
        [shard(1), `shard 1 of 2 is not part of a split model (no 'split.count') (shard 1 is ${shard(1)})`,
          () => writeFileSync(shard(2), model)],
      ];
      for (const [file, message, setup] of cases) {
        setup?.();
        const { js, native } = await both('info', file);
        for (const out of [js, native]) {
          assert.equal(out.status, 1, `${file}: ${out.stdout}`);
          const line = out.stderr.replace(/^saccade: /, '').replace(/\n$/, '');
          if (typeof message == 'string') assert.equal(line, message);
          else assert.match(line, message);
        }
        assert.equal(js.stderr, native.stderr);
      }
      // tokenize reads a split model's first shard alone (it holds the tokenizer), whichever shard is named
      rmSync(shard(1));
      for (const [message, setup] of [
        [`shard 1 of 2 (${shard(1)}): cannot open '${shard(1)}': no such file`],
        [`shard 1 of 2 (${shard(1)}): the model is empty (0 bytes)`, () => writeFileSync(shard(1), '')],
      ]) {
        setup?.();
        const { js, native } = await both('tokenize', shard(2), '--text', 'a');
        for (const out of [js, native]) {
          assert.equal(out.status, 1, out.stdout);
          assert.equal(out.stderr.replace(/^saccade: /, '').replace(/\n$/, ''), message);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('generate: one prompt, --tokens or --prompt; --bos goes with --prompt; --text is tokenize\'s', async () => {
    const file = fixture('gpt2-f32');
    for (const [args, message] of [
      [['--tokens', '1,2', '--prompt', 'hi'], 'give --tokens or --prompt, not both'],
      [['--prompt', 'hi', '--tokens', '1,2'], 'give --tokens or --prompt, not both'],
      [['--tokens', '1,2', '--bos'], '--bos is for --prompt: --tokens are used as given'],
    ]) {
      const { js, native } = await both('generate', file, ...args, '-n', 1);
      assert.equal(native.status, 1, args.join(' '));
      assert.equal(native.stderr, `saccade: ${message}\n`);
      assert.deepEqual(js, native);
    }
    const { js, native } = await both('generate', file, '--text', 'hi', '-n', 1);
    assert.equal(native.status, 1);
    assert.match(native.stderr, /--text/);
    assert.deepEqual(js, native);
    // --bos on a vocabulary without BOS: the option's name, not the C flag's
    const shakespeare = path.join(root, 'models/shakespeare-char-q8_0.gguf');
    for (const args of [['generate', shakespeare, '--prompt', 'A', '--bos', '-n', 1], ['tokenize', shakespeare, '--text', 'A', '--bos']]) {
      const out = await both(...args);
      assert.equal(out.native.status, 1);
      assert.equal(out.native.stderr, 'saccade: --bos: the vocabulary has no BOS token\n');
      assert.deepEqual(out.js, out.native);
    }
  });

  test('the Node CLI\'s refusal of a context wasm32 cannot hold names --ctx, not the library\'s contextLength', async () => {
    // a llama (RoPE) model takes any length; 10M tokens of this one need more than wasm32's 4 GB
    const refused = await exec(process.execPath, [cli, 'generate', fixture('llama-f32'), '--tokens', '1', '-n', '1',
      '--ctx', '10000000']).then(() => null, (e) => e);
    assert.equal(refused?.code, 1);
    assert.match(refused.stderr, /does not fit in WebAssembly memory: .* pass a smaller --ctx\n$/);
  });

  test('generate: a prompt id out of range is one line in both', async () => {
    // a model with a tokenizer: the old native CLI's detokenizer said it first, then the evaluation
    const { js, native } = await both('generate', fixture('gpt2-f32-char'), '--tokens', '1,999', '-n', 2);
    assert.equal(native.status, 1);
    assert.equal(native.stderr, js.stderr);
    assert.equal(native.stderr.split('\n').length, 2, native.stderr); // one line and its newline
  });
});

describe('integer limits: checked ranges, 64-bit sums, every failure an error (both CLIs)', () => {
  test('bench: --prompt-tokens + --decode-tokens beyond int32 is refused, not wrapped into a "successful" 0.00 tok/s', async () => {
    const file = fixture('gpt2-f32'); // context 48
    for (const [np, nd] of [[1073741824, 1073741824], [2147483647, 2147483647], [2147483647, 1], [48, 1]]) {
      const { js, native } = await both('bench', file, '--prompt-tokens', np, '--decode-tokens', nd, '--repeat', 1);
      assert.equal(native.status, 1, `${np} + ${nd}: ${native.stdout}`);
      assert.equal(native.stderr, 'saccade: --prompt-tokens + --decode-tokens exceed the context length (48)\n');
      assert.deepEqual(js, native);
    }
    const { js, native } = await both('bench', file, '--prompt-tokens', 47, '--decode-tokens', 1, '--repeat', 1);
    assert.equal(native.status, 0, native.stderr);
    assert.equal(js.status, 0, js.stderr);
  });

  test('generate -n 2147483647 runs until the context is full', async () => {
    const file = fixture('llama-q8_0'); // context 48
    const { js, native } = await both('generate', file, '--tokens', '1,2,3', '-n', 2147483647, '--temp', 0, '--ignore-eos');
    assert.equal(native.status, 0, native.stderr);
    assert.equal(js.status, 0, js.stderr);
    const strip = (s) => s.replace(/"prefill_ms":[\d.]+,"decode_ms":[\d.]+/, '');
    assert.equal(strip(js.stdout), strip(native.stdout));
    assert.equal(JSON.parse(native.stdout).tokens.length, 48 - 3 + 1); // the last one is never evaluated
    const over = await both('generate', file, '--tokens', '1', '-n', 2147483648);
    assert.equal(over.native.status, 1);
    assert.equal(over.native.stderr, "saccade: -n must be an integer from 0 to 2147483647, got '2147483648'\n");
    assert.deepEqual(over.js, over.native);
  });
});
