// model.chat(): the conversation rendered with the file's chat template by @huggingface/jinja,
// tokenized with its special tokens and one BOS at most, generated like generate() and stopped
// at an end-of-turn token; files without a template fall back to plain text and say so.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import * as jinjaModule from '@huggingface/jinja';

import { SaccadeError } from '../../src/js/index.mjs';
import { chatModel, chatVocabulary, FAMILY_TOKENS, TEMPLATES, tokenId } from './chat-models.mjs';
import { collect, withModel } from './helpers.mjs';

const family = (name, extra = {}) => chatModel({ name, template: TEMPLATES[name], ...FAMILY_TOKENS[name], ...extra });
const ids = (text) => [...text].map(tokenId);
const greedy = { temperature: 0, seed: 1, maxTokens: 4 };
const conversation = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: ' Hi ' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: 'Again' },
];

describe('model.chat renders the chat template', () => {
  test('chatml: the text the template writes, its special tokens one id each', async () => {
    await withModel(family('chatml'), {}, async (model) => {
      const [first] = await collect(model.chat(conversation, greedy));
      const text = '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Hi <|im_end|>\n' +
        '<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n';
      assert.equal(first.prompt.text, text);
      assert.equal(first.prompt.template, true);
      assert.deepEqual(first.prompt.ids.slice(0, 3), [tokenId('<|im_start|>'), ...ids('sy')]);
      assert.deepEqual(first.prompt.ids, model.tokenize(text, { special: true })); // the model adds no BOS
    });
  });

  test('llama3: the template writes BOS and the model asks for it: one BOS, not two', async () => {
    await withModel(family('llama3'), {}, async (model) => {
      assert.equal(model.info.addBos, true);
      const [first] = await collect(model.chat(conversation, greedy));
      assert.ok(first.prompt.text.startsWith('<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>'));
      assert.ok(first.prompt.text.includes('user<|end_header_id|>\n\nHi<|eot_id|>')); // | trim
      assert.deepEqual(first.prompt.ids.slice(0, 2), [tokenId('<|begin_of_text|>'), tokenId('<|start_header_id|>')]);
    });
  });

  test('zephyr: the template writes no BOS and the model asks for it: BOS is added', async () => {
    await withModel(family('zephyr'), {}, async (model) => {
      const [first] = await collect(model.chat(conversation, greedy));
      assert.ok(first.prompt.text.startsWith('<|system|>\nBe brief.</s>\n<|user|>\n Hi </s>\n'));
      assert.ok(first.prompt.text.endsWith('<|user|>\nAgain</s>\n<|assistant|>\n'));
      assert.deepEqual(first.prompt.ids.slice(0, 2), [tokenId('<s>'), tokenId('<|system|>')]);
    });
  });

  test('addGenerationPrompt: false leaves the assistant turn out; phi3 then ends with EOS', async () => {
    await withModel(family('phi3'), {}, async (model) => {
      const [first] = await collect(model.chat(conversation.slice(0, 2), { ...greedy, addGenerationPrompt: false }));
      assert.equal(first.prompt.text, '<s><|system|>\nBe brief.<|end|>\n<|user|>\n Hi <|end|>\n<|endoftext|>');
    });
  });

  test('options.template and options.templateArgs', async () => {
    await withModel(family('chatml'), {}, async (model) => {
      const template = '{{ greeting }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}{{ eos_token }}';
      const [first] = await collect(model.chat([{ role: 'user', content: 'x' }], { ...greedy, template, templateArgs: { greeting: 'Hey' } }));
      assert.equal(first.prompt.text, 'Hey[user:x]<|im_end|>');
    });
  });

  test('options.jinja: the module passed in is used (a page without an import map, a worker)', async () => {
    await withModel(family('chatml'), {}, async (model) => {
      let rendered = 0;
      class Template extends jinjaModule.Template {
        render(vars) {
          rendered++;
          return super.render(vars);
        }
      }
      await collect(model.chat(conversation, { ...greedy, jinja: { ...jinjaModule, Template } }));
      assert.equal(rendered, 1);
      await assert.rejects(collect(model.chat(conversation, { ...greedy, jinja: {} })),
        { name: 'SaccadeError', message: /options\.jinja must be the @huggingface\/jinja module/ });
    });
  });
});

describe('model.chat streams like generate', () => {
  test('the same steps as generate on the prompt ids; the reply ends at an end-of-turn token with finishReason eos', async () => {
    await withModel(family('chatml'), {}, async (model) => {
      const hi = [{ role: 'user', content: 'Hi' }];
      const chatSteps = await collect(model.chat(hi, { ...greedy, attention: true, ignoreEos: true }));
      const plain = await collect(model.generate(chatSteps[0].prompt.ids, { ...greedy, attention: true, ignoreEos: true }));
      assert.deepEqual(chatSteps.map((s) => s.id), plain.map((s) => s.id));
      assert.deepEqual(chatSteps.map((s) => s.text), plain.map((s) => s.text));
      assert.deepEqual(chatSteps.at(-1).attention, plain.at(-1).attention); // the views keep working
      assert.equal(chatSteps.at(-1).finishReason, 'maxTokens');
      // find where this random model first says an end-of-turn token; chat stops there
      const eog = new Set(['<|im_end|>', '<|eot_id|>', '<end_of_turn>', '<|end|>', '<|endoftext|>', '</s>'].map(tokenId));
      const cut = plain.findIndex((s) => eog.has(s.id));
      assert.ok(cut >= 0, 'the test needs a reply that reaches an end-of-turn token within 4 tokens');
      const stopped = await collect(model.chat(hi, greedy));
      assert.equal(stopped.length, cut + 1);
      assert.equal(stopped.at(-1).finishReason, 'eos');
      assert.equal(stopped.at(-1).id, plain[cut].id);
    });
  });

  test('tokenizer.ggml.eot_token_id ends the reply too; a stop id of the caller stays "stop"', async () => {
    const first = await withModel(family('chatml'), {}, async (m) => (await collect(m.chat(conversation, greedy)))[0].id);
    await withModel(family('chatml', { name: 'chatml-eot-api', eot: first }), {}, async (model) => {
      const steps = await collect(model.chat(conversation, greedy));
      assert.deepEqual(steps.map((s) => [s.id, s.finishReason]), [[first, 'eos']]);
      const own = await collect(model.chat(conversation, { ...greedy, stop: [first] }));
      assert.equal(own.at(-1).finishReason, 'stop');
    });
  });
});

describe('model.chat: a conversation longer than the context (dropOldest)', () => {
  // a system message, then exchanges of 56 tokens (ChatML; 54 llama2): all 7 take 400, and
  // half of a 260-token context is reached by leaving out 5 (120 tokens; 4 leave 176)
  const long = (n, system = true) => {
    const messages = system ? [{ role: 'system', content: 'Be brief.' }] : [];
    for (let i = 0; i < n; i++)
      messages.push({ role: 'user', content: `Question ${i}: and what then?` }, { role: 'assistant', content: `Answer ${i}.` });
    return messages.slice(0, -1); // ends with the user's turn
  };
  const promptOf = async (model, messages, o = {}) => (await collect(model.chat(messages, { ...greedy, maxTokens: 1, ...o })))[0].prompt;

  test('the fewest oldest exchanges that bring the prompt to half the context are left out; the system message and the last turn stay', async () => {
    for (const name of ['chatml', 'llama2']) {
      const file = family(name);
      const messages = long(7);
      await withModel(file, { contextLength: 1024 }, async (big) => {
        const length = async (j) => (await promptOf(big, [messages[0], ...messages.slice(1 + 2 * j)], { dropOldest: false })).ids.length;
        assert.ok((await length(0)) > 260, 'the conversation is longer than the context');
        await withModel(file, { contextLength: 260 }, async (model) => {
          const steps = await collect(model.chat(messages, { ...greedy, attention: true, ignoreEos: true }));
          const { prompt } = steps[0];
          assert.ok(prompt.dropped > 0 && prompt.dropped % 2 === 0, `${name}: whole exchanges (${prompt.dropped} messages)`);
          const j = prompt.dropped / 2;
          assert.deepEqual(prompt.messages, [messages[0], ...messages.slice(1 + prompt.dropped)]);
          assert.equal(prompt.ids.length, await length(j));
          assert.ok(prompt.ids.length <= 130, `${name}: ${prompt.ids.length} tokens, more than half the context`);
          assert.ok((await length(j - 1)) > 130, `${name}: one exchange fewer would have reached half too`);
          // the reply is generate's on those ids
          const plain = await collect(model.generate(prompt.ids, { ...greedy, attention: true, ignoreEos: true, reuse: false }));
          assert.deepEqual(steps.map((s) => s.id), plain.map((s) => s.id));
          // sent on without them (with the reply), the next turn keeps the rest: nothing more goes
          const next = [...prompt.messages, { role: 'assistant', content: steps.map((s) => s.text).join('') },
            { role: 'user', content: 'Go on' }];
          const again = await promptOf(model, next);
          assert.equal(again.dropped, 0);
        });
      });
    }
  });

  test('a prompt of exactly half the context is short enough; when none is, all but the last exchange go', async () => {
    await withModel(family('chatml'), { contextLength: 240 }, async (model) => {
      const p = await promptOf(model, long(7)); // leaving out 5 exchanges: 120 tokens, half of 240
      assert.deepEqual([p.dropped, p.ids.length], [10, 120]);
    });
    await withModel(family('chatml'), { contextLength: 100 }, async (model) => {
      const messages = long(7); // even the last exchange alone takes 64 tokens, more than half of 100
      const steps = await collect(model.chat(messages, { ...greedy, ignoreEos: true }));
      assert.deepEqual([steps[0].prompt.dropped, steps[0].prompt.ids.length], [12, 64]);
      assert.deepEqual(steps[0].prompt.messages, [messages[0], messages.at(-1)]);
      assert.equal(steps.length, greedy.maxTokens, 'the reply is generated');
    });
  });

  test('the reply\'s room counts: min(maxTokens, half the context) must be left after the prompt', async () => {
    await withModel(family('chatml'), { contextLength: 260 }, async (model) => {
      const messages = long(7);
      const tail = [messages[0], ...messages.slice(7)]; // 232 tokens
      assert.equal((await promptOf(model, tail, { maxTokens: 28 })).dropped, 0); // 232 + 28 = 260
      const cut = await promptOf(model, tail, { maxTokens: 29 });
      assert.equal(cut.dropped, 4);
      assert.equal(cut.ids.length, 120);
      assert.equal((await promptOf(model, tail, { maxTokens: 1e6 })).dropped, 4); // room: half the context
    });
  });

  test('a conversation with room for the reply, or dropOldest: false, is read whole', async () => {
    await withModel(family('chatml'), { contextLength: 96 }, async (model) => {
      const short = long(1);
      const p = await promptOf(model, short);
      assert.equal(p.dropped, 0);
      assert.deepEqual(p.messages, short);
      await assert.rejects(collect(model.chat(long(7), { ...greedy, dropOldest: false })), { name: 'SaccadeError',
        code: 'SAC_ERR_ARG', message: /^the conversation takes \d+ of the context's 96 tokens, leaving the reply fewer than min\(maxTokens, half the context\) = 4, and dropOldest is false/ });
      // one that fits but leaves the reply too little room is refused too (it went on to a full context)
      const n = p.ids.length;
      assert.ok(96 - n + 1 <= 48, `${n} tokens`);
      await assert.rejects(collect(model.chat(short, { ...greedy, maxTokens: 96 - n + 1, dropOldest: false })),
        { name: 'SaccadeError', message: new RegExp(`^the conversation takes ${n} of the context's 96 tokens, .* = ${96 - n + 1}, and dropOldest is false`) });
      assert.equal((await promptOf(model, short, { maxTokens: 96 - n, dropOldest: false })).dropped, 0);
      assert.throws(() => model.chat(short, { ...greedy, maxTokens: 0 }), // (at the call, as the CLIs' --chat -n 0)
        { name: 'SaccadeError', message: 'chat needs maxTokens of at least 1: a turn with no reply' });
      assert.throws(() => model.chat(short, { dropOldest: 'yes' }), { name: 'SaccadeError', message: /dropOldest/ });
    });
  });

  test('a template that wants turns to alternate still gets them (whole exchanges go); no system message', async () => {
    await withModel(family('gemma'), { contextLength: 96 }, async (model) => {
      const messages = long(7, false);
      const p = await promptOf(model, messages);
      assert.ok(p.dropped > 0);
      assert.deepEqual(p.messages, messages.slice(p.dropped));
      assert.equal(p.messages[0].role, 'user');
    });
  });

  test('when the last turn alone does not fit, the prompt is refused as generate refuses it', async () => {
    await withModel(family('chatml'), { contextLength: 96 }, async (model) => {
      const messages = [...long(3), { role: 'assistant', content: 'ok' }, { role: 'user', content: 'x'.repeat(120) }];
      await assert.rejects(collect(model.chat(messages, greedy)), { name: 'SaccadeError', message: /do not fit in the context/ });
    });
  });
});

describe('model.chat: no template, and failures', () => {
  test('a file without a template: the contents one per line, as plain text, and prompt.template false', async () => {
    await withModel(chatModel({ name: 'none-api', addBos: true }), {}, async (model) => {
      const [first] = await collect(model.chat(conversation, greedy));
      assert.equal(first.prompt.template, false);
      assert.equal(first.prompt.text, 'Be brief.\n Hi \nHello.\nAgain');
      assert.deepEqual(first.prompt.ids, [tokenId('<s>'), ...ids('Be brief.\n Hi \nHello.\nAgain')]);
    });
  });

  test('an empty template, the file\'s or options.template, is none (as in C): the contents one per line', async () => {
    await withModel(chatModel({ name: 'empty-api', template: '', addBos: true }), {}, async (model) => {
      for (const options of [greedy, { ...greedy, template: '' }]) {
        const [first] = await collect(model.chat(conversation, options));
        assert.equal(first.prompt.template, false);
        assert.equal(first.prompt.text, 'Be brief.\n Hi \nHello.\nAgain');
      }
    });
  });

  test('a template that refuses the conversation: a SaccadeError quoting raise_exception', async () => {
    await withModel(family('gemma'), {}, async (model) => {
      await assert.rejects(collect(model.chat(conversation, greedy)), (e) => e instanceof SaccadeError &&
        e.code === 'SAC_ERR_ARG' && e.message === 'the chat template refused the conversation: System role not supported');
      await assert.rejects(collect(model.chat([{ role: 'assistant', content: 'x' }], greedy)),
        { message: 'the chat template refused the conversation: Conversation roles must alternate user/assistant/user/assistant/...' });
    });
  });

  test('a template that does not parse or render: a SaccadeError saying which', async () => {
    await withModel(chatModel({ name: 'broken', template: '{% for m in messages %}{{ m.content }' }), {}, async (model) => {
      await assert.rejects(collect(model.chat(conversation, greedy)),
        { name: 'SaccadeError', code: 'SAC_ERR_MODEL', message: /^the model's chat template could not be parsed: / });
      await assert.rejects(collect(model.chat(conversation, { ...greedy, template: '{{ messages | nosuchfilter }}' })),
        { name: 'SaccadeError', code: 'SAC_ERR_ARG', message: /^options\.template failed to render: / });
      // a template that would never end: range(2e9) ended the process (V8 cannot hold the array), nested ranges ran for hours
      for (const template of ['{% for i in range(2000000000) %}x{% endfor %}',
        '{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}'])
        await assert.rejects(collect(model.chat(conversation, { ...greedy, template })), {
          name: 'SaccadeError', code: 'SAC_ERR_ARG', message: 'options.template failed to render: its range() calls give more than 100000 values' });
      // range as the library has it, within the budget
      const [first] = await collect(model.chat(conversation, { ...greedy, maxTokens: 1,
        template: '{% for i in range(3) %}{{ i }}{% endfor %}{% for i in range(10, 0, -3) %}{{ i }}{% endfor %}{{ range(99990)|length }}' }));
      assert.equal(first.prompt.text, '0121074199990');
    });
  });

  test('a model disposed before the first step: the same SaccadeError as every call after dispose()', async () => {
    for (const options of [greedy, { ...greedy, jinja: jinjaModule }]) { // the template's module imported, or given
      await withModel(family('chatml'), {}, async (model) => {
        const steps = model.chat(conversation, options);
        model.dispose();
        await assert.rejects(steps.next(), { name: 'SaccadeError', code: 'SAC_ERR_STATE', message: 'the model was disposed' });
      });
    }
  });

  test('chat takes the context at the call: a later call supersedes it before its first step, not after', async () => {
    await withModel(family('chatml'), {}, async (model) => {
      const options = { ...greedy, ignoreEos: true };
      const reference = await collect(model.generate([1, 2, 3], options));
      // a generate called after the chat keeps the context, whichever is iterated first
      for (const chatFirst of [true, false]) {
        const earlier = model.chat(conversation, options);
        const later = model.generate([1, 2, 3], options);
        if (chatFirst) await assert.rejects(earlier.next(), { code: 'SAC_ERR_STATE', message: /this generation was stopped/ });
        assert.deepEqual((await collect(later)).map((s) => s.id), reference.map((s) => s.id));
        if (!chatFirst) await assert.rejects(earlier.next(), { code: 'SAC_ERR_STATE', message: /this generation was stopped/ });
      }
      // a chat called after a generate began stops it, as a generate would
      const running = model.generate([1, 2, 3], options);
      await running.next();
      const reply = await collect(model.chat(conversation, options));
      assert.equal(reply.length, greedy.maxTokens);
      await assert.rejects(running.next(), { code: 'SAC_ERR_STATE', message: /this generation was stopped/ });
    });
  });

  test('model.stop() between the call and the first step: that step is the aborted one, with the prompt', async () => {
    await withModel(family('chatml'), {}, async (model) => {
      const steps = model.chat(conversation, greedy);
      assert.equal(model.stop(), true, 'the chat holds the context from its call');
      assert.equal(model.stop(), false);
      const [first, ...rest] = await collect(steps);
      assert.deepEqual(rest, []);
      assert.equal(first.id, null);
      assert.equal(first.finishReason, 'aborted');
      assert.match(first.prompt.text, /<\|im_start\|>assistant\n$/);
      // an aborted signal likewise
      const controller = new AbortController();
      controller.abort();
      const [signalled] = await collect(model.chat(conversation, { ...greedy, signal: controller.signal }));
      assert.equal(signalled.finishReason, 'aborted');
      assert.equal(model.stop(), false, 'nothing is left running');
      // a chat that failed before its generation began leaves nothing running
      await assert.rejects(collect(model.chat(conversation, { ...greedy, template: '{{ raise_exception("no") }}' })),
        { message: 'the chat template refused the conversation: no' });
      assert.equal(model.stop(), false);
      assert.equal((await collect(model.chat(conversation, greedy))).length > 0, true);
    });
  });

  test('bad messages and options throw at the call, as generate\'s do', async () => {
    await withModel(family('chatml'), {}, async (model) => {
      assert.throws(() => model.chat([], greedy), { message: /the conversation is empty/ });
      assert.throws(() => model.chat('hi', greedy), { message: /messages must be an array/ });
      assert.throws(() => model.chat([{ role: 'user' }], greedy), { message: 'messages[0].content must be a string, got undefined' });
      assert.throws(() => model.chat(conversation, { maxTokns: 3 }), { name: 'SaccadeError', message: /maxTokns.*addGenerationPrompt/s });
      // the list of chat's options leaves out decoderStart, which chat refuses with its reason
      assert.throws(() => model.chat(conversation, { maxTokns: 3 }), (e) => !e.message.includes('decoderStart'));
      assert.throws(() => model.chat(conversation, { decoderStart: [1] }),
        { name: 'SaccadeError', message: 'decoderStart is for encoder–decoder models; chat is for decoder-only ones' });
      assert.throws(() => model.chat(conversation, { temperature: -1 }), { name: 'SaccadeError' });
    });
  });

  test('the vocabulary has what the test models need', () => {
    assert.equal(new Set(chatVocabulary().tokens).size, chatVocabulary().tokens.length);
  });
});
