// The demo page's chat mode (web/chat.mjs) in headless Chromium: offered for a model whose
// file has a chat template (a random llama written by the test, with the ChatML template),
// not for one without; turns shown as a conversation; each reply the library's model.chat
// reply (the worker imports @huggingface/jinja from the demo server); the views showing the
// whole conversation the template wrote, with the library's attention rows to the bit, of which
// the next turn is sent only those the page does not hold; no console errors.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { chatModel, FAMILY_TOKENS, TEMPLATES } from '../js/chat-models.mjs';
import { devDir } from './dev-models.mjs';
import { canvasStats, frames, modelA, root, openPage, useBrowser, withPage } from './helpers.mjs';

const env = useBrowser();
const file = chatModel({ name: 'chatml', template: TEMPLATES.chatml, ...FAMILY_TOKENS.chatml, dir: devDir });
const url = (server, model) => `${server.url}/web/?model=/${path.relative(root, model)}`;
const options = { temperature: 0, seed: 1, maxTokens: 6 };

/** What the library says for this conversation: { text (the reply), promptIds, rows (every self row's bits) }. */
async function expected(messages) {
  const model = await loadModel(file);
  try {
    let text = '';
    let prompt = null;
    for await (const step of model.chat(messages, { ...options, attention: true })) {
      prompt ??= step.prompt;
      text += step.text;
    }
    const { data } = model.attentionRows('self');
    return { text, promptIds: prompt.ids, prompt, rows: Array.from(new Uint32Array(data.buffer, data.byteOffset, data.length)) };
  } finally {
    model.dispose();
  }
}

const waitLoaded = (page) => page.waitForFunction(() => {
  const t = document.getElementById('progress-text').textContent;
  if (/^Could not load/.test(t)) throw new Error(t);
  return !document.getElementById('generate').disabled;
}, null, { timeout: 30_000 });

async function send(page, text) {
  await page.fill('#prompt', text);
  await page.click('#generate');
  await page.waitForFunction(() => !document.getElementById('generate').disabled
    && / · [a-z ]+$/.test(document.getElementById('speed').textContent), null, { timeout: 30_000 });
  await frames(page);
}

/** The rows a prompt of `ids` keeps of those of the `held` tokens: as many as begin it, all but its last at most. */
function rowsToKeep(held, ids) {
  let n = 0;
  while (n < held.length && n < ids.length - 1 && held[n] === ids[n]) n++;
  return n;
}

/** The ids of the tokens whose rows the page holds: what its next request names. */
const heldIds = (page) => page.evaluate(() => {
  const { tokens, rows } = window.saccadeDemo.state.store;
  return tokens.slice(0, rows.self.length).map((t) => t.id);
});

/** Whether every aggregate of the page's store equals, to the bit, that of a store given all its rows afresh (or where not). */
const freshAggregates = (page) => page.evaluate(() => {
  const live = window.saccadeDemo.state.store;
  const fresh = new live.constructor(window.saccadeDemo.state.model.info);
  const rows = live.rows.self;
  const block = new Float32Array(rows.reduce((n, r) => n + r.length, 0));
  rows.reduce((at, r) => (block.set(r, at), at + r.length), 0);
  fresh.start({ tokens: live.tokens, self: block });
  for (const selection of ['mean', 'max', 'all', 'rollout'])
    for (let layer = 0; layer < live.layers; layer++) {
      const a = live.matrix('self', layer, selection);
      const b = fresh.matrix('self', layer, selection);
      for (let q = 0; q < a.nq; q++) if (a.row(q).some((x, j) => !Object.is(x, b.row(q)[j]))) return `${selection}, layer ${layer}, row ${q}`;
    }
  return true;
});

describe('demo page: chat mode', () => {
  let context;
  let page;
  let errors;

  before(async () => {
    ({ context, page, errors } = await openPage(env, { viewport: { width: 1280, height: 1000 } }));
    await page.goto(url(env.srv.isolated, file));
    await waitLoaded(page);
    await page.fill('#max-tokens', String(options.maxTokens));
    await page.fill('#seed', String(options.seed));
    await page.fill('#temperature', String(options.temperature));
  });
  after(() => context?.close());

  test('a model with a chat template: chat is offered and on', async () => {
    assert.equal(await page.isVisible('#chat-bar'), true);
    assert.equal(await page.isChecked('#chat-mode'), true);
    assert.equal(await page.textContent('#prompt-label'), 'Your message');
  });

  test('two turns: each reply is model.chat\'s, and the views show the whole conversation', async () => {
    const conversation = [];
    let before = []; // the last turn's prompt ids
    let held = []; // the ids of the tokens whose rows the page holds
    for (const text of ['Hi there', 'Tell me more']) {
      conversation.push({ role: 'user', content: text });
      const want = await expected(conversation);
      await send(page, text);
      const messages = await page.evaluate(() => window.saccadeDemo.chat.messages);
      conversation.push({ role: 'assistant', content: want.text });
      assert.deepEqual(messages, conversation);
      const turns = await page.$$eval('#chat-turns .turn', (els) => els.map((e) => [e.dataset.role, e.textContent]));
      assert.deepEqual(turns, conversation.map((m) => [m.role, m.content]));
      assert.equal(await page.inputValue('#prompt'), '', 'the box is cleared for the next message');
      // the token line and the heatmap hold every turn the template wrote, then the reply
      const generated = await page.$$eval('#output .tok.gen', (s) => s.length);
      assert.ok(generated >= 1);
      assert.equal(await page.$$eval('#output .tok', (s) => s.length), want.promptIds.length + generated);
      const queries = await page.evaluate(() => window.saccadeDemo.state.store.queries('self'));
      assert.equal(queries, want.promptIds.length + generated - 1);
      // the page holds the library's rows to the bit; the next turn was sent only the rows it did
      // not hold (its prompt begins with the last turn's, and the reply's tokens)
      const rows = await page.evaluate(() => window.saccadeDemo.state.store.rows.self.flatMap((r) =>
        Array.from(new Uint32Array(r.buffer, r.byteOffset, r.length))));
      assert.deepEqual(rows, want.rows);
      // as many as the rows the page held share tokens with this prompt (all but its last)
      const shared = rowsToKeep(held, want.promptIds);
      assert.equal(await page.evaluate(() => window.saccadeDemo.stats.keptRows), shared);
      if (held.length) assert.ok(shared >= before.length, `only ${shared} rows kept`); // the last prompt, and the reply
      assert.equal(await freshAggregates(page), true); // those of kept rows too
      before = want.promptIds;
      held = await heldIds(page);
      await page.selectOption('#head', 'rollout'); // the aggregates are computed (and kept) before the next turn
      await frames(page);
      assert.ok((await canvasStats(page, '#heatmap')).colored > 0.05, 'the heatmap is drawn');
    }
  });

  test('a prompt that begins as the last one did: its rows are kept, the rest sent, and the views agree', async () => {
    await page.uncheck('#chat-mode');
    const rowsOf = async (prompt) => {
      const model = await loadModel(file);
      try {
        const steps = [];
        for await (const step of model.generate(prompt, { ...options, attention: true })) steps.push(step);
        const { data } = model.attentionRows('self');
        return Array.from(new Uint32Array(data.buffer, data.byteOffset, data.length));
      } finally {
        model.dispose();
      }
    };
    for (const prompt of ['Hello world, said the model', 'Hello there']) {
      const held = await heldIds(page);
      await send(page, prompt);
      const ids = await page.evaluate(() => window.saccadeDemo.state.store.tokens.filter((t) => !t.generated).map((t) => t.id));
      assert.equal(await page.evaluate(() => window.saccadeDemo.stats.keptRows), rowsToKeep(held, ids));
      const rows = await page.evaluate(() => window.saccadeDemo.state.store.rows.self.flatMap((r) =>
        Array.from(new Uint32Array(r.buffer, r.byteOffset, r.length))));
      assert.deepEqual(rows, await rowsOf(prompt));
      assert.equal(await freshAggregates(page), true);
      await page.selectOption('#head', 'rollout');
      await frames(page);
    }
    assert.equal(await page.evaluate(() => window.saccadeDemo.stats.keptRows), 'Hello '.length, 'a part of the rows kept');
    await page.check('#chat-mode');
  });

  test('a conversation longer than the context: its oldest exchanges are left out, shown greyed', async () => {
    assert.ok(await page.$$eval('#output .tok', (s) => s.length) > 0);
    await page.click('#chat-new');
    // the views showed the old conversation: a new chat empties them
    assert.equal(await page.$$eval('#output .tok', (s) => s.length), 0);
    assert.equal(await page.textContent('#speed'), '');
    await page.fill('#chat-system', 'Be brief.');
    const system = { role: 'system', content: 'Be brief.' };
    let conversation = [system];
    const gone = [];
    let drops = 0;
    const line = (i) => `Message ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(2)}`.trim();
    for (let i = 0; i < 5; i++) {
      conversation.push({ role: 'user', content: line(i) });
      const want = await expected(conversation);
      await send(page, line(i));
      assert.match(await page.textContent('#speed'), / · [a-z ]+$/, 'the turn ended without an error');
      gone.push(...conversation.slice(1, 1 + want.prompt.dropped));
      if (want.prompt.dropped) drops++;
      conversation = [...want.prompt.messages, { role: 'assistant', content: want.text }];
      assert.deepEqual(await page.evaluate(() => window.saccadeDemo.chat.messages), conversation);
      // the views hold what the model read, with the library's rows
      const ids = await page.evaluate(() => window.saccadeDemo.state.store.tokens.filter((t) => !t.generated).map((t) => t.id));
      assert.deepEqual(ids, want.promptIds);
      const rows = await page.evaluate(() => window.saccadeDemo.state.store.rows.self.flatMap((r) =>
        Array.from(new Uint32Array(r.buffer, r.byteOffset, r.length))));
      assert.deepEqual(rows, want.rows);
      // the turns in the order they were said, those left out greyed
      const turns = await page.$$eval('#chat-turns .turn', (els) => els.map((e) => [e.dataset.role, e.textContent, e.classList.contains('dropped')]));
      const shown = (m, dropped) => [m.role, m.content, dropped];
      assert.deepEqual(turns, [shown(system, false), ...gone.map((m) => shown(m, true)), ...conversation.slice(1).map((m) => shown(m, false))]);
    }
    assert.ok(drops >= 2, `the context filled ${drops} times`);
    assert.equal(await freshAggregates(page), true);
    await page.fill('#chat-system', '');
  });

  test('New chat forgets the conversation; no console errors', async () => {
    // not while a reply streams (it cleared the turns and the reply went on, its views back on screen)
    await page.fill('#prompt', 'Tell me more.');
    assert.equal(await page.evaluate(() => { // (the turn starts at the click, before its first await)
      document.getElementById('generate').click();
      return document.getElementById('chat-new').disabled;
    }), true);
    await page.waitForFunction(() => !window.saccadeDemo.state.running, null, { timeout: 30_000 });
    assert.equal(await page.isDisabled('#chat-new'), false);
    await page.click('#chat-new');
    assert.deepEqual(await page.evaluate(() => window.saccadeDemo.chat.messages), []);
    assert.equal(await page.$$eval('#chat-turns .turn', (els) => els.length), 0);
    assert.deepEqual(errors, []);
  });
});

test('demo page: a model without a chat template offers no chat mode', async () => {
  await withPage(env, async ({ page, errors }) => {
    const A = modelA();
    await page.goto(`${env.srv.plain.url}/web/${A.query ? `?${A.query}` : ''}`);
    await waitLoaded(page);
    assert.equal(await page.isVisible('#chat-bar'), false);
    assert.equal(await page.isVisible('#chat-turns'), false);
    assert.equal(await page.textContent('#prompt-label'), 'Prompt');
    assert.deepEqual(errors, []);
  });
});
