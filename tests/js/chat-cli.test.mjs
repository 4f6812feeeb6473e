// generate --chat and --version through both CLIs. The native CLI formats the well-known chat
// templates in C (src/chat_template.c); the Node CLI renders them with Jinja: on the published
// templates of those families both must give the same prompt ids, the same replies, and the
// same refusals. The models are small random llamas whose vocabulary holds the families'
// special tokens (tests/js/chat-models.mjs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { chatModel, FAMILY_TOKENS, TEMPLATES, tokenId } from './chat-models.mjs';
import { root, withModel } from './helpers.mjs';

const cli = path.join(root, 'src/js/cli.mjs');
const nativeCli = path.join(root, 'build/saccade');

function run(cmd, argv, input = '') {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv.map(String));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.on('error', () => {}); // EPIPE: the command did not read stdin (e.g. --prompt)
    child.stdin.end(input);
  });
}

/** The same arguments and stdin through build/saccade and src/js/cli.mjs. */
async function both(args, input) {
  const [native, js] = await Promise.all([run(nativeCli, args, input), run(process.execPath, [cli, ...args], input)]);
  return { native, js };
}

const untimed = (s) => s.replace(/"prefill_ms":\d+\.\d{3},"decode_ms":\d+\.\d{3}/g, '"prefill_ms":T,"decode_ms":T');
const lines = (s) => s.trim().split('\n').map((l) => JSON.parse(l));

/** Both CLIs succeed with the same lines (timings aside); returns them parsed. */
function same({ native, js }) {
  assert.equal(native.status, 0, native.stderr);
  assert.equal(js.status, 0, js.stderr);
  assert.equal(untimed(js.stdout), untimed(native.stdout));
  assert.equal(js.stderr, native.stderr);
  return lines(native.stdout);
}

const sampling = ['--temp', 0, '-n', 6];
// Three user turns (stdin lines), with white space that trimming templates remove.
const conversation = 'Hello there \n\n  Who are you?\r\nTell me more\n';

describe('generate --chat on the published templates: both CLIs give the same prompts', () => {
  for (const [family, template] of Object.entries(TEMPLATES)) {
    const file = chatModel({ name: family, template, ...FAMILY_TOKENS[family] });
    const { bos, addBos } = FAMILY_TOKENS[family];

    test(`${family}: a conversation from stdin, reply after reply`, async () => {
      const system = family === 'gemma' ? [] : ['--system', ' Be brief. '];
      const turns = same(await both(['generate', file, '--chat', ...system, ...sampling], conversation));
      assert.equal(turns.length, 3);
      for (const [i, t] of turns.entries()) {
        // one BOS at most, and only where the model or the template puts it
        assert.ok(t.prompt_tokens.filter((id) => id === tokenId(bos)).length <= (family === 'llama2' ? i + 1 : 1));
        if (addBos) assert.equal(t.prompt_tokens[0], tokenId(bos));
        // each prompt holds the previous one's reply: the conversation grows
        if (i > 0) assert.ok(t.prompt_tokens.length > turns[i - 1].prompt_tokens.length);
      }
    });

    test(`${family}: --prompt is one user turn`, async () => {
      const [t] = same(await both(['generate', file, '--chat', '--prompt', 'Hi', ...sampling]));
      assert.ok(t.prompt_tokens.length > 2);
    });
  }

  for (const family of ['qwen1_5', 'qwen2_5']) {
    test(`${family}: without --system, the template's own system prompt opens the conversation`, async () => {
      const file = chatModel({ name: family, template: TEMPLATES[family], ...FAMILY_TOKENS[family] });
      const [t] = same(await both(['generate', file, '--chat', '--prompt', 'Hi', ...sampling]));
      const own = family === 'qwen1_5' ? 'You are a helpful assistant.' : 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';
      const ids = (text) => [...text].map(tokenId);
      assert.deepEqual(t.prompt_tokens, [tokenId('<|im_start|>'), ...ids(`system\n${own}`), tokenId('<|im_end|>'), ...ids('\n'),
        tokenId('<|im_start|>'), ...ids('user\nHi'), tokenId('<|im_end|>'), ...ids('\n'), tokenId('<|im_start|>'), ...ids('assistant\n')]);
    });
  }

  test('an empty --system adds no turn: both CLIs give the prompt of no --system (llama2, whose template writes an empty one differently in Python\'s Jinja and @huggingface/jinja)', async () => {
    const file = chatModel({ name: 'llama2', template: TEMPLATES.llama2, ...FAMILY_TOKENS.llama2 });
    const [empty] = same(await both(['generate', file, '--chat', '--system', '', '--prompt', 'Hi', ...sampling]));
    const [none] = same(await both(['generate', file, '--chat', '--prompt', 'Hi', ...sampling]));
    assert.deepEqual(empty.prompt_tokens, none.prompt_tokens);
    const [some] = same(await both(['generate', file, '--chat', '--system', 'x', '--prompt', 'Hi', ...sampling]));
    assert.ok(some.prompt_tokens.length > none.prompt_tokens.length);
  });

  test('gemma: a system turn is refused by both with the template\'s message', async () => {
    const file = chatModel({ name: 'gemma', template: TEMPLATES.gemma, ...FAMILY_TOKENS.gemma });
    const { native, js } = await both(['generate', file, '--chat', '--system', 'x', '--prompt', 'Hi']);
    assert.equal(native.status, 1);
    assert.equal(js.status, 1);
    assert.equal(native.stderr, 'saccade: the chat template refused the conversation: System role not supported\n');
    assert.equal(js.stderr, native.stderr);
  });

  test('the reply stops at an end-of-turn token: by its spelling, or named by tokenizer.ggml.eot_token_id', async () => {
    const args = ['--chat', '--prompt', 'Hi', '--temp', 0, '-n', 4];
    const plain = chatModel({ name: 'chatml', template: TEMPLATES.chatml, ...FAMILY_TOKENS.chatml });
    const [free] = same(await both(['generate', plain, ...args, '--ignore-eos']));
    assert.equal(free.tokens.length, 4);
    // this random model says <end_of_turn> second: a spelling every vocabulary marks as end of turn
    assert.equal(free.tokens[1], tokenId('<end_of_turn>'));
    const [stopped] = same(await both(['generate', plain, ...args]));
    assert.deepEqual(stopped.tokens, free.tokens.slice(0, 2));
    const eot = chatModel({ name: 'chatml-eot', template: TEMPLATES.chatml, ...FAMILY_TOKENS.chatml, eot: free.tokens[0] });
    const [first] = same(await both(['generate', eot, ...args]));
    assert.deepEqual(first.tokens, free.tokens.slice(0, 1));
  });
});

describe('generate --chat without a template, and refusals', () => {
  const bare = chatModel({ name: 'none', template: undefined, addBos: true });

  test('no template: the turns as plain text, one per line, with a note on stderr once', async () => {
    const r = await both(['generate', bare, '--chat', '--system', 'Sys', ...sampling], 'a\nb\n');
    const turns = same(r);
    assert.equal(r.native.stderr,
      'saccade: the model has no chat template (tokenizer.chat_template): the turns are plain text, one per line\n');
    // BOS (the model asks for it), then the system and user contents, a line each
    assert.deepEqual(turns[0].prompt_tokens, [tokenId('<s>'), ...[...'Sys\na'].map(tokenId)]);
    assert.equal(turns.length, 2);
  });

  test('an empty template is none: the same turns and note in both CLIs', async () => {
    const empty = chatModel({ name: 'empty', template: '', addBos: true });
    const r = await both(['generate', empty, '--chat', '--system', 'Sys', ...sampling], 'a\nb\n');
    assert.equal(r.native.stderr,
      'saccade: the model has no chat template (tokenizer.chat_template): the turns are plain text, one per line\n');
    assert.equal(r.js.stderr, r.native.stderr);
    assert.deepEqual(same(r)[0].prompt_tokens, [tokenId('<s>'), ...[...'Sys\na'].map(tokenId)]);
  });

  test('the native CLI refuses a template it does not know, naming it; the Node CLI renders it', async () => {
    // mistralai/Mistral-7B-Instruct-v0.1
    const mistral = String.raw`{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}`;
    const file = chatModel({ name: 'mistral', template: mistral, addBos: true });
    const { native, js } = await both(['generate', file, '--chat', '--prompt', 'Hi', ...sampling]);
    assert.equal(native.status, 1);
    assert.match(native.stderr, /^saccade: the chat template is not one saccade can apply without a Jinja engine \(it knows chatml, llama2, llama3, zephyr, gemma and phi3\); it begins '\{\{ bos_token \}\}\{% for message in messages %\}/);
    assert.equal(js.status, 0, js.stderr);
    const [t] = lines(js.stdout);
    assert.equal(t.prompt_tokens[0], tokenId('<s>'));
    assert.equal(t.prompt_tokens.filter((id) => id === tokenId('<s>')).length, 1); // the template's BOS, not two
  });

  for (const [args, message] of [
    [['--chat', '--tokens', '1,2'], '--chat does not take --tokens, --bos or --decoder-start'],
    [['--chat', '--bos', '--prompt', 'x'], '--chat does not take --tokens, --bos or --decoder-start'],
    [['--system', 'x', '--prompt', 'y'], '--system needs --chat'],
  ]) {
    test(`${args.join(' ')}: ${message}`, async () => {
      const { native, js } = await both(['generate', bare, ...args]);
      assert.equal(native.status, 1);
      assert.equal(native.stderr, `saccade: ${message}\n`);
      assert.equal(js.status, 1);
      assert.equal(js.stderr, native.stderr);
    });
  }

  test('--chat needs a decoder-only model', async () => {
    const { native, js } = await both(['generate', path.join(root, 'models/dates-q8_0.gguf'), '--chat', '--prompt', 'x']);
    assert.equal(native.stderr, 'saccade: --chat needs a decoder-only model; this model is encdec\n');
    assert.equal(js.stderr, native.stderr);
    assert.equal(js.status, 1);
  });
});

test('each turn keeps what the last one left in the context: the replies a fresh context gives', async () => {
  // the shipped character model, sampled at temperature 1: its replies change with any change
  // to what it reads
  const file = path.join(root, 'models/shakespeare-char-q8_0.gguf');
  const args = ['generate', file, '--chat', '--system', 'ROMEO:', '--temp', 1, '--seed', 7, '-n', 24];
  const turns = same(await both(args, 'What light\nBut soft\nIt is the east\n'));
  assert.equal(turns.length, 3);
  await withModel(file, { threads: 1 }, async (m) => {
    const messages = [{ role: 'system', content: 'ROMEO:' }];
    for (const [i, content] of ['What light', 'But soft', 'It is the east'].entries()) {
      messages.push({ role: 'user', content });
      const steps = [];
      for await (const step of m.chat(messages, { temperature: 1, seed: 7, maxTokens: 24, reuse: false })) steps.push(step);
      assert.deepEqual(turns[i].prompt_tokens, steps[0].prompt.ids);
      assert.deepEqual(turns[i].tokens, steps.map((step) => step.id), `turn ${i}`);
      messages.push({ role: 'assistant', content: steps.map((step) => step.text).join('') });
    }
  });
});

test('a conversation longer than --ctx: both CLIs leave out the oldest exchanges, as model.chat does, and say so', async () => {
  const file = chatModel({ name: 'chatml', template: TEMPLATES.chatml, ...FAMILY_TOKENS.chatml });
  const questions = Array.from({ length: 7 }, (_, i) => `Question ${i}: and what then?`);
  // -n 6: the reply's room is 6 tokens; -n 1000: half the context (sampled replies that end at
  // an end-of-turn token, so that turns with room for less than -n are kept whole)
  const runs = [
    { n: 6, args: ['--temp', 0, '--ignore-eos'], sampling: { temperature: 0, ignoreEos: true } },
    { n: 1000, args: ['--temp', 1, '--seed', 3], sampling: { temperature: 1, seed: 3 } },
  ];
  for (const { n, args, sampling } of runs) {
    const { native, js } = await both(['generate', file, '--chat', '--system', 'Be brief.', '--ctx', 260, '-n', n, ...args],
      questions.join('\n') + '\n');
    const turns = same({ native, js });
    assert.equal(turns.length, 7);
    const notes = native.stderr.split('\n').filter(Boolean);
    assert.ok(notes.length >= 1 && notes.every((l) => /^saccade: the conversation outgrew the context \(260 tokens\): its \d+ oldest messages are left out$/.test(l)),
      native.stderr);
    await withModel(file, { threads: 1, contextLength: 260 }, async (m) => {
      let messages = [{ role: 'system', content: 'Be brief.' }];
      let dropped = 0;
      let wholeThoughShort = 0; // later turns read whole with less room than -n
      for (const [i, content] of questions.entries()) {
        messages.push({ role: 'user', content });
        const steps = [];
        for await (const step of m.chat(messages, { ...sampling, maxTokens: n })) steps.push(step);
        const { prompt } = steps[0];
        assert.deepEqual(turns[i].prompt_tokens, prompt.ids, `-n ${n}, turn ${i}`);
        assert.deepEqual(turns[i].tokens, steps.map((s) => s.id), `-n ${n}, turn ${i}`);
        assert.ok(prompt.ids.length + Math.min(n, 130) <= 260);
        if (prompt.dropped) dropped++;
        else if (i > 0 && prompt.ids.length + n > 260) wholeThoughShort++;
        messages = [...prompt.messages, { role: 'assistant', content: steps.map((s) => s.text).join('') }];
      }
      assert.equal(dropped, notes.length);
      if (n === 1000) assert.ok(wholeThoughShort > 0, 'a turn kept whole with room for less than -n');
    });
  }
  // -n 0 has no reply to a turn: both refuse it
  const none = await both(['generate', file, '--chat', '-n', 0], 'Hi\n');
  assert.equal(none.native.stderr, 'saccade: --chat needs -n of at least 1: a turn with no reply\n');
  assert.equal(none.js.stderr, none.native.stderr);
  assert.deepEqual([none.native.status, none.js.status], [1, 1]);
  // a last message too long for the context with the system one: both refuse it alike
  const grown = questions.map((q, i) => `${q} ${'x'.repeat(20 * i)}`);
  const refused = await both(['generate', file, '--chat', '--ctx', 100, '--temp', 0, '-n', 6, '--ignore-eos'], grown.join('\n') + '\n');
  assert.equal(refused.native.status, 1);
  assert.equal(refused.js.status, 1);
  assert.equal(refused.js.stderr, refused.native.stderr);
  // (the whole prompt counted: with the system message's tokens kept it said "91 tokens … already has 15")
  const [, count] = refused.native.stderr.match(/left out\n.*saccade: (\d+) tokens do not fit in the context: it holds 100 tokens and already has 0\n$/s) ?? [];
  assert.ok(Number(count) > 100, refused.native.stderr);
  assert.equal(untimed(refused.js.stdout), untimed(refused.native.stdout));
});

test('--version: package.json\'s version, from both CLIs', async () => {
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const { native, js } = await both(['--version']);
  assert.equal(native.stdout, `saccade ${version}\n`);
  assert.equal(js.stdout, native.stdout);
  assert.equal(native.status, 0);
  assert.equal(js.status, 0);
});
