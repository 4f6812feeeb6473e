// Every subcommand of the Node CLI against the native one on every shipped model (and on
// stories260K when ../shared has it): the same JSON, byte for byte where nothing is timed or
// rounded differently; and the same verdict, message and exit status for every bad option.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

import { fixture, relativeError, root } from './helpers.mjs';

const exec = promisify(execFile);
const cli = path.join(root, 'src/js/cli.mjs');
const nativeCli = path.join(root, 'build/saccade');

async function run(cmd, argv) {
  try {
    const { stdout, stderr } = await exec(cmd, argv.map(String), { maxBuffer: 64 << 20 });
    return { status: 0, stdout, stderr };
  } catch (e) {
    if (typeof e.code != 'number') throw e; // not an exit status: the process did not run
    return { status: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs the same arguments through build/saccade and src/js/cli.mjs. */
async function both(...args) {
  const [native, js] = await Promise.all([run(nativeCli, args), run(process.execPath, [cli, ...args])]);
  return { native, js };
}

const untimed = (s) => s.replace(/"prefill_ms":\d+\.\d{3},"decode_ms":\d+\.\d{3}/, '"prefill_ms":T,"decode_ms":T');

const stories = path.join(root, '../shared/data/models/stories260K.gguf');
const shipped = readdirSync(path.join(root, 'models'))
  .filter((f) => f.endsWith('.gguf'))
  .map((f) => path.join(root, 'models', f));
const prompts = {
  'shakespeare-char-q8_0': 'ROMEO:\nWhat light', 'dates-q8_0': 'sat 21 nov 2026', stories260K: 'Once upon a time',
};

test('models/ ships models to compare on', () => assert.ok(shipped.length >= 2, shipped.join(', ')));

for (const file of [...shipped, stories]) {
  const name = path.basename(file, '.gguf');
  const skip = existsSync(file) ? false : `${file} is absent (it comes with ../shared/data)`;
  describe(`both CLIs on ${name}`, { skip }, () => {
    // filled by the first test: what the rest need to know about the model
    const m = {};

    test('info: identical', async () => {
      const { native, js } = await both('info', file);
      assert.equal(native.status, 0, native.stderr);
      assert.equal(js.status, 0, js.stderr);
      assert.equal(js.stdout, native.stdout);
      Object.assign(m, JSON.parse(native.stdout));
      m.encdec = m.architecture === 'encdec';
      m.text = prompts[name] ?? 'Hello';
    });

    test('tokenize: identical (or the same refusal without a tokenizer)', async () => {
      for (const extra of [[], ['--bos']]) {
        const { native, js } = await both('tokenize', file, '--text', m.text, ...extra);
        assert.deepEqual(js, native);
        const hasBos = 'tokenizer.ggml.bos_token_id' in m.metadata; // --bos without one is refused
        assert.equal(native.status, m.has_tokenizer && (!extra.length || hasBos) ? 0 : 1, native.stderr);
      }
      if (m.has_tokenizer) m.ids = JSON.parse((await run(nativeCli, ['tokenize', file, '--text', m.text])).stdout);
      else m.ids = [1, 2, 3, 4, 5].map((i) => i % m.n_vocab);
    });

    test('logits: the same rows, values within 1e-5', async () => {
      const tokens = m.encdec ? [m.ids[0], ...m.ids.slice(1, 4)] : m.ids;
      const source = m.encdec ? ['--source', m.ids.join(',')] : [];
      for (const extra of [[], ['--all'], ['--all', '--threads', 2]]) {
        const { native, js } = await both('logits', file, '--tokens', tokens.join(','), ...source, ...extra);
        assert.equal(native.status, 0, native.stderr);
        assert.equal(js.status, 0, js.stderr);
        const a = JSON.parse(js.stdout).logits;
        const b = JSON.parse(native.stdout).logits;
        assert.equal(b.length, extra.length ? tokens.length : 1);
        assert.deepEqual(a.map((r) => r.length), b.map((r) => r.length));
        assert.ok(b.every((r) => r.length === m.n_vocab && r.every(Number.isFinite)));
        assert.ok(relativeError(a.flat(), b.flat()) <= 1e-5, `${name} logits ${extra.join(' ')}`);
      }
    });

    test('generate: identical apart from the timings', async () => {
      const prompt = m.has_tokenizer ? ['--prompt', m.text] : ['--tokens', m.ids.join(',')];
      for (const extra of [['-n', 16, '--seed', 1], ['-n', 12, '--temp', 0], ['-n', 10, '--seed', 7, '--threads', 2],
        ['--tokens', m.ids.join(','), '-n', 8, '--seed', 3, '--top-k', 5, '--top-p', 0.9, '--repeat-penalty', 1.1]]) {
        const { native, js } = await both('generate', file, ...(extra.includes('--tokens') ? [] : prompt), ...extra);
        assert.equal(native.status, 0, native.stderr);
        assert.equal(js.status, 0, js.stderr);
        assert.equal(untimed(js.stdout), untimed(native.stdout), `${name} generate ${extra.join(' ')}`);
        const out = JSON.parse(native.stdout);
        assert.ok(out.tokens.length > 0);
      }
      if (name === 'dates-q8_0') {
        const out = JSON.parse((await run(nativeCli, ['generate', file, '--prompt', m.text, '--temp', 0])).stdout);
        assert.equal(out.text, '2026-11-21');
      }
    });

    test('bench: the same fields, positive figures', async () => {
      const np = m.encdec ? Math.min(16, m.n_ctx) : Math.min(16, m.n_ctx >> 1);
      const nd = Math.min(8, m.n_ctx - (m.encdec ? 0 : np));
      for (const threads of [1, 2]) {
        const args = ['bench', file, '--prompt-tokens', np, '--decode-tokens', nd, '--repeat', 1, '--threads', threads];
        const { native, js } = await both(...args);
        assert.equal(native.status, 0, native.stderr);
        assert.equal(js.status, 0, js.stderr);
        const a = JSON.parse(js.stdout);
        const b = JSON.parse(native.stdout);
        assert.deepEqual(Object.keys(a), Object.keys(b));
        assert.equal(b.engine, 'saccade-native');
        assert.equal(a.engine, threads === 1 ? 'saccade-wasm-st' : 'saccade-wasm-mt');
        assert.deepEqual([a.type, a.threads, a.prompt_tokens, a.decode_tokens], [b.type, threads, np, nd]);
        for (const r of [a, b])
          for (const k of ['prefill_tokens_per_s', 'decode_tokens_per_s'])
            assert.ok(r[k] > 0 && Number.isFinite(r[k]), `${k}: ${r[k]}`);
        for (const s of [js.stdout, native.stdout])
          assert.match(s, /"prefill_tokens_per_s":\d+\.\d\d,"decode_tokens_per_s":\d+\.\d\d\}\n$/);
      }
    });
  });
}

// -------------------------------------------------------------------------------------------
// Option verdicts: every option's bad values, refused by both with the same words
// -------------------------------------------------------------------------------------------

describe('both CLIs judge every option the same way', () => {
  const gpt2 = path.join(root, 'models/shakespeare-char-q8_0.gguf');
  const dates = path.join(root, 'models/dates-q8_0.gguf');
  const gen = ['generate', gpt2, '--prompt', 'A', '-n', 2];

  test('--seed -1 is refused by both (it used to wrap to 2^64 - 1 natively)', async () => {
    const { native, js } = await both(...gen, '--seed', -1);
    assert.equal(native.status, 1);
    assert.equal(native.stderr, "saccade: --seed must be an integer from 0 to 18446744073709551615, got '-1'\n");
    assert.deepEqual(js, native);
  });

  const bad = {
    '-n': ['-1', '2147483648', '1.5', ' 3', '3 ', '0x10', '', 'nan', '1e3', '99999999999999999999999'],
    '--threads': ['0', '257', '-1', '2.0', 'two', '+', '1_0'],
    '--top-k': ['-5', '2147483648', '1e1', '- 1'],
    '--temp': ['-1', '-0.5', 'nan', 'inf', 'Infinity', '1e40', '0x1p3', ' 1', '1.0f', '.', 'e5', '1e', '--1', ''],
    '--top-p': ['0', '-0', '2', '1.0000001', 'nan', '1e-50', 'inf', '0,5'],
    '--repeat-penalty': ['0', '-1', 'inf', '1e39', 'nan'],
    '--seed': ['-1', '-5', '18446744073709551616', '1e3', '0x10', ' 1', '1.0', ''],
    '--tokens': ['', '1,', ',1', '1,,2', '1, 2', '-1', '+1', '2147483648', '1;2', 'x'],
    '--decoder-start': ['', '1,x'],
    '--ctx': ['0', '-1', '2147483648', '1.5', 'x', ''],
  };
  for (const [option, values] of Object.entries(bad))
    test(`bad values of ${option}`, async () => {
      for (const v of values) {
        const args = option === '--decoder-start'
          ? ['generate', dates, '--prompt', '1 may 2020', option, v]
          : [...gen, option, v];
        const { native, js } = await both(...args);
        assert.equal(native.status, 1, `${option} '${v}' was accepted natively`);
        assert.match(native.stderr, new RegExp(`^saccade: ${option} must be .*, got '.*'\\n$`));
        assert.deepEqual(js, native, `${option} '${v}'`);
      }
    });

  test('bench --attention: decode with attention capture on, the same fields on both', async () => {
    const { native, js } = await both('bench', gpt2, '--prompt-tokens', 8, '--decode-tokens', 4, '--repeat', 1, '--attention');
    assert.equal(native.status, 0, native.stderr);
    assert.equal(js.status, 0, js.stderr);
    const a = JSON.parse(js.stdout), b = JSON.parse(native.stdout);
    assert.deepEqual(Object.keys(a), Object.keys(b));
    assert.deepEqual([a.prompt_tokens, a.decode_tokens], [8, 4]);
    assert.ok(a.decode_tokens_per_s > 0 && b.decode_tokens_per_s > 0);
  });

  test('bench --attention-cost: both speeds, the same fields on both; the same refusals', async () => {
    const { native, js } = await both('bench', gpt2, '--prompt-tokens', 8, '--decode-tokens', 4, '--repeat', 2,
      '--attention-cost');
    assert.equal(native.status, 0, native.stderr);
    assert.equal(js.status, 0, js.stderr);
    const a = JSON.parse(js.stdout), b = JSON.parse(native.stdout);
    assert.deepEqual(Object.keys(a), Object.keys(b));
    assert.equal(Object.keys(a).at(-1), 'decode_capture_tokens_per_s');
    for (const r of [a, b]) assert.ok(r.decode_tokens_per_s > 0 && r.decode_capture_tokens_per_s > 0, JSON.stringify(r));
    for (const args of [['--decode-tokens', 1, '--attention-cost'], ['--attention-cost', '--attention']]) {
      const { native, js } = await both('bench', gpt2, '--prompt-tokens', 4, ...args);
      assert.equal(native.status, 1, args.join(' '));
      assert.match(native.stderr, /^saccade: --attention-cost /);
      assert.deepEqual(js, native, args.join(' '));
    }
  });

  test('bench --decode-depth: the same fields on both, from an empty context or past the prompt; the same refusals', async () => {
    for (const depth of [0, 20]) {
      const { native, js } = await both('bench', gpt2, '--prompt-tokens', 8, '--decode-tokens', 4, '--repeat', 1,
        '--decode-depth', depth, '--threads', 2);
      assert.equal(native.status, 0, native.stderr);
      assert.equal(js.status, 0, js.stderr);
      const a = JSON.parse(js.stdout), b = JSON.parse(native.stdout);
      assert.deepEqual(Object.keys(a), Object.keys(b));
      assert.deepEqual([a.prompt_tokens, a.decode_tokens, a.decode_depth, b.decode_depth], [8, 4, depth, depth]);
      assert.ok(a.decode_tokens_per_s > 0 && b.decode_tokens_per_s > 0);
    }
    const plain = await both('bench', gpt2, '--prompt-tokens', 8, '--decode-tokens', 4, '--repeat', 1);
    assert.equal(JSON.parse(plain.native.stdout).decode_depth, 8, 'by default decode follows the prompt');
    assert.equal(JSON.parse(plain.js.stdout).decode_depth, 8);
    // a prompt and a decode that each fill the context: only a reset between them lets both run
    const full = await both('bench', gpt2, '--ctx', 16, '--prompt-tokens', 16, '--decode-tokens', 16, '--decode-depth', 0,
      '--repeat', 2, '--attention-cost');
    assert.equal(full.native.status, 0, full.native.stderr);
    assert.equal(full.js.status, 0, full.js.stderr);
    const [fj, fn] = [JSON.parse(full.js.stdout), JSON.parse(full.native.stdout)];
    assert.deepEqual(Object.keys(fj), Object.keys(fn));
    for (const r of [fj, fn]) assert.ok(r.decode_depth === 0 && r.decode_capture_tokens_per_s > 0, JSON.stringify(r));
    // the defaults, 128 and 32, fit a shorter context: a quarter decoded (at most 32), the prompt the rest
    for (const [args, np, nd] of [[['--ctx', 128], 96, 32], [['--ctx', 40], 30, 10],
      [['--ctx', 40, '--decode-tokens', 36], 4, 36], [['--ctx', 40, '--decode-depth', 2], 40, 10]]) {
      const fitted = await both('bench', gpt2, ...args, '--repeat', 1);
      assert.equal(fitted.native.status, 0, fitted.native.stderr);
      assert.equal(fitted.js.status, 0, fitted.js.stderr);
      for (const out of [fitted.native, fitted.js])
        assert.deepEqual([JSON.parse(out.stdout).prompt_tokens, JSON.parse(out.stdout).decode_tokens], [np, nd], args.join(' '));
    }
    const encdec = await both('bench', dates, '--prompt-tokens', 4, '--decode-tokens', 2, '--repeat', 1);
    for (const out of [encdec.native, encdec.js])
      assert.equal(JSON.parse(out.stdout).decode_depth, 0, 'an encoder-decoder model decodes from an empty decoder context');
    for (const [args, message] of [
      [['bench', gpt2, '--decode-depth', -1], /^saccade: --decode-depth must be an integer from 0 to 2147483647, got '-1'\n$/],
      [['bench', dates, '--decode-depth', 0], /^saccade: --decode-depth: an encoder-decoder model decodes from an empty decoder context; leave it out\n$/],
      [['bench', gpt2, '--prompt-tokens', 8, '--decode-depth', 100, '--decode-tokens', 29], /^saccade: --decode-depth \+ --decode-tokens exceed the context length \(128\)\n$/],
      [['bench', gpt2, '--prompt-tokens', 129, '--decode-depth', 0, '--decode-tokens', 1], /^saccade: --prompt-tokens exceeds the context length \(128\)\n$/],
    ]) {
      const { native, js } = await both(...args);
      assert.equal(native.status, 1, args.join(' '));
      assert.match(native.stderr, message);
      assert.deepEqual(js, native, args.join(' '));
    }
  });

  test('bench and logits options', async () => {
    for (const args of [
      ['bench', gpt2, '--prompt-tokens', 0], ['bench', gpt2, '--decode-tokens', -1], ['bench', gpt2, '--repeat', 0],
      ['bench', gpt2, '--prompt-tokens', '2147483648'], ['bench', gpt2, '--repeat', '1.5'],
      ['logits', gpt2, '--tokens', '1', '--threads', 300], ['logits', dates, '--tokens', '1', '--source', '1,-2'],
    ]) {
      const { native, js } = await both(...args);
      assert.equal(native.status, 1, args.join(' '));
      assert.match(native.stderr, /^saccade: --[a-z-]+ must be /);
      assert.deepEqual(js, native, args.join(' '));
    }
  });

  test('options a command does not take, unknown options, missing values, encoder-decoder misuse', async () => {
    for (const args of [
      [...gen, '--all'], ['info', gpt2, '--threads', 2], ['tokenize', gpt2, '--text', 'a', '--prompt', 'b'],
      ['bench', gpt2, '-n', 3], ['logits', gpt2, '--tokens', 1, '--temp', 0], ['frobnicate', gpt2, '--bogus'],
      ['logits', gpt2, '--tokens', 1, '--attention'], ['bench', gpt2, '--attention', 1],
      [...gen, '--bogus'], [...gen, '--bogus', 1], [...gen, '--seed'], [...gen, '--decoder-start', 1],
      ['logits', gpt2, '--tokens', 1, '--source', 1], ['logits', dates, '--tokens', 1], ['logits', dates],
      ['bench', dates, '--prompt-tokens', 41, '--decode-tokens', 1],
      ['bench', dates, '--prompt-tokens', 1, '--decode-tokens', 41],
      ['bench', gpt2, '--prompt-tokens', 100, '--decode-tokens', 29],
      ['generate', dates, '--tokens', '11' + ',5'.repeat(40)], // a 41-token source in a 40-token context
      ['generate', gpt2, '--prompt', ''], ['generate', gpt2],
      ['bench', gpt2, '--ctx', 16, '--prompt-tokens', 16], [...gen, '--ctx', 1000000], // past the learned positions
    ]) {
      const { native, js } = await both(...args);
      assert.equal(native.status, 1, args.join(' '));
      assert.ok(native.stderr.startsWith('saccade: ') && native.stdout === '', native.stderr);
      assert.deepEqual(js, native, args.join(' '));
    }
  });

  test('a model without BOS needs --decoder-start; with it both decode the same', async () => {
    const file = fixture('encdec-q8_0'); // random weights, no tokenizer: no BOS
    const refused = await both('generate', file, '--tokens', '5,6,7');
    assert.equal(refused.native.status, 1);
    assert.equal(refused.native.stderr,
      'saccade: the model has no BOS token to start the decoder with: give --decoder-start 1,2,3\n');
    assert.deepEqual(refused.js, refused.native);
    const args = ['--tokens', '5,6,7', '--decoder-start', '2,9', '-n', 6, '--temp', 0, '--ignore-eos'];
    const { native, js } = await both('generate', file, ...args);
    assert.equal(native.status, 0, native.stderr);
    assert.equal(untimed(js.stdout), untimed(native.stdout));
    assert.equal(JSON.parse(native.stdout).tokens.length, 6);
  });

  test('edge values both accept, with the same result', async () => {
    for (const extra of [
      ['--seed', '18446744073709551615'], ['--seed', '-0'], ['--seed', '+12'],
      ['--top-p', '1'], ['--top-p', '1e-30'], ['--top-p', '1.00000005'],
      ['--temp', '0'], ['--temp', '-0'], ['--temp', '1e-50'], ['--temp', '5.'], ['--temp', '.5'], ['--temp', '+.5E+0'],
      ['--top-k', '2147483647'], ['--top-k', '0'], ['-n', '0'], ['-n', '+3'], ['-n', '007'],
      ['--repeat-penalty', '3.4e38'], ['--tokens', '0,65'],
    ]) {
      // --tokens in place of gen's --prompt: one prompt a run
      const args = extra[0] === '--tokens' ? ['generate', gpt2, '-n', 2, ...extra] : [...gen, ...extra];
      const { native, js } = await both(...args);
      assert.equal(native.status, 0, `${extra.join(' ')}: ${native.stderr}`);
      assert.equal(js.status, 0, `${extra.join(' ')}: ${js.stderr}`);
      assert.equal(untimed(js.stdout), untimed(native.stdout), extra.join(' '));
    }
  });
});
