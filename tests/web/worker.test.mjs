// The page's model worker (web/worker.mjs) in Node: the real module runs in a worker thread
// behind a two-line shim for postMessage/onmessage, and is driven through protocol.mjs as the
// page drives it. What it sends, fed to the page's AttentionStore as the page feeds it, must give
// the same attention as the library's per-head matrices for every kind, layer, head and row; the
// token texts must be the library's pieces; and 'done' must carry the last step's finishReason.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { loadModel } from '../../src/js/index.mjs';
import { STOPPED, TO_PAGE, toWorker } from '../../web/protocol.mjs';
import { AttentionStore } from '../../web/views/store.mjs';
import { chatModel, tokenId } from '../js/chat-models.mjs';
import { devModel, root } from './dev-models.mjs';

// a real SentencePiece vocabulary, from ../shared when it is there
const stories = path.join(root, '../shared/data/models/stories260K.gguf');

const workerUrl = new URL('../../web/worker.mjs', import.meta.url).href;

/** The worker behind a shim; `request(make, onMessage)` posts make(id) and resolves with 'done'/'loaded' (rejects on 'error'). */
function startWorker() {
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads');
    globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
    globalThis.onmessage = null; // a worker global, assigned by the module
    import(${JSON.stringify(workerUrl)}).then(() => parentPort.on('message', (data) => globalThis.onmessage({ data })));
  `, { eval: true });
  let next = 1;
  const pending = new Map();
  worker.on('message', (msg) => {
    const p = pending.get(msg.id);
    if (!p) return;
    p.messages.push(msg);
    if (msg.type === TO_PAGE.ERROR) p.reject(Object.assign(new Error(msg.message), { code: msg.code }));
    else if (msg.type === TO_PAGE.DONE || msg.type === TO_PAGE.LOADED) p.resolve(p.messages);
  });
  worker.on('error', (e) => {
    for (const p of pending.values()) p.reject(e);
  });
  return {
    request(make) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, messages: [] });
        worker.postMessage(make(id));
      });
    },
    post: (message) => worker.postMessage(message),
    terminate: () => worker.terminate(),
  };
}

const workers = [];
after(() => Promise.all(workers.map((w) => w.terminate())));

/** Loads `file` in a worker, generates, and replays the messages into a store as app.mjs does. */
async function run(file, prompt, options) {
  const w = startWorker();
  workers.push(w);
  const [loaded] = (await w.request((id) => toWorker.load(id, { file: new Blob([readFileSync(file)]), threads: 1 })))
    .filter((m) => m.type === TO_PAGE.LOADED);
  const messages = await w.request((id) => toWorker.generate(id, prompt, options));
  const store = new AttentionStore(loaded.info);
  for (const msg of messages) {
    if (msg.type === TO_PAGE.START) store.start(msg);
    else if (msg.type === TO_PAGE.TOKEN) store.add(msg);
  }
  return { store, messages, done: messages.at(-1), start: messages.find((m) => m.type === TO_PAGE.START) };
}

/** The library's own run (same options, one thread): its steps, and every captured per-head matrix. */
async function reference(file, prompt, options) {
  const model = await loadModel(readFileSync(file), { threads: 1 });
  try {
    const input = model.info.architecture === 'encdec' || typeof prompt != 'string' ? prompt
      : model.tokenize(prompt, { bos: model.info.addBos });
    const steps = [];
    for await (const step of model.generate(input, { ...options, attention: true })) steps.push(step);
    const matrices = {};
    const kinds = model.info.architecture === 'encdec' ? ['self', 'cross', 'encoder'] : ['self'];
    for (const kind of kinds) {
      const layers = kind === 'encoder' ? model.info.encoderLayers : model.info.layers;
      matrices[kind] = Array.from({ length: layers }, (_, l) =>
        Array.from({ length: model.info.heads }, (_, h) => model.attention(l, h, { kind })));
    }
    const sourceIds = model.sourceIds;
    return { steps, matrices, input, sourceIds, sourceText: sourceIds && model.pieces(sourceIds), model };
  } catch (e) {
    model.dispose();
    throw e;
  }
}

/** Every row of every head in the store equals the library's matrix, bit for bit. */
function sameAttention(store, matrices) {
  for (const [kind, perLayer] of Object.entries(matrices)) {
    const nq = perLayer[0][0].queries;
    assert.equal(store.queries(kind), nq, `${kind}: rows`);
    perLayer.forEach((heads, l) => heads.forEach((m, h) => {
      for (let q = 0; q < nq; q++) {
        const k = store.keysOf(kind, q);
        assert.deepEqual(store.headRow(kind, l, h, q), m.data.subarray(q * m.keys, q * m.keys + k), `${kind} L${l} H${h} q${q}`);
      }
    }));
  }
}

describe('web/worker.mjs', () => {
  test('decoder-only: rows as captured, the library\'s pieces, the last step\'s finishReason (maxTokens)', async () => {
    const file = devModel('gpt2-char-q8_0');
    const options = { maxTokens: 7, seed: 5, temperature: 0.9 };
    const { store, done, start, messages } = await run(file, 'ROMEO: what', options);
    const ref = await reference(file, 'ROMEO: what', options);
    try {
      assert.deepEqual(start.tokens.map((t) => t.id), Array.from(ref.input));
      assert.deepEqual(start.tokens.map((t) => t.text), ref.model.pieces(ref.input));
      assert.equal(start.tokens.map((t) => t.text).join(''), ref.model.detokenize(ref.input));
      const tokens = messages.filter((m) => m.type === TO_PAGE.TOKEN);
      assert.deepEqual(tokens.map((m) => m.token.id), ref.steps.map((s) => s.id));
      assert.deepEqual(tokens.map((m) => m.token.text), ref.steps.map((s) => s.text));
      assert.deepEqual(tokens.map((m) => m.query), ref.steps.map((s) => s.attention.query));
      assert.deepEqual({ reason: done.reason, count: done.count }, { reason: 'maxTokens', count: 7 });
      sameAttention(store, ref.matrices);
    } finally {
      ref.model.dispose();
    }
  });

  test('a full context ends with contextFull, not a guess', async () => {
    const file = devModel('gpt2-char-q8_0'); // a context of 48 tokens
    const options = { maxTokens: 200, seed: 1, ignoreEos: true };
    const { done, store } = await run(file, 'abc', options);
    const ref = await reference(file, 'abc', options);
    try {
      assert.equal(ref.steps.at(-1).finishReason, 'contextFull');
      assert.deepEqual({ reason: done.reason, count: done.count }, { reason: 'contextFull', count: ref.steps.length });
      sameAttention(store, ref.matrices);
    } finally {
      ref.model.dispose();
    }
  });

  test('a stop string ends with stop (the old guess said "stop sequence or full context")', async () => {
    const file = devModel('gpt2-char-q8_0');
    const options = { maxTokens: 12, seed: 9, ignoreEos: true };
    const free = await reference(file, 'ab', options);
    free.model.dispose();
    const at = free.steps.findIndex((s, i) => i >= 2 && s.text !== '');
    assert.ok(at >= 2, 'a generated step with text');
    const stop = free.steps[at].text;
    const { done } = await run(file, 'ab', { ...options, stop });
    const ref = await reference(file, 'ab', { ...options, stop });
    ref.model.dispose();
    assert.equal(ref.steps.at(-1).finishReason, 'stop');
    assert.deepEqual({ reason: done.reason, count: done.count }, { reason: 'stop', count: ref.steps.length });
  });

  test('encoder–decoder: self, cross and encoder rows as captured; the source\'s pieces', async () => {
    const file = devModel('encdec-char-q8_0');
    const options = { maxTokens: 5, seed: 3 };
    const { store, done, start } = await run(file, 'sat 21 nov', options);
    const ref = await reference(file, 'sat 21 nov', options);
    try {
      assert.deepEqual(start.source.map((t) => t.id), ref.sourceIds);
      assert.deepEqual(start.source.map((t) => t.text), ref.sourceText);
      assert.equal(done.reason, ref.steps.at(-1).finishReason);
      assert.equal(store.queries('encoder'), ref.sourceIds.length);
      sameAttention(store, ref.matrices);
    } finally {
      ref.model.dispose();
    }
  });

  test('labels: what adds no text is named by its spelling (a control token, the bytes of a character)', async () => {
    const file = chatModel({ name: 'worker-labels', dir: path.join(root, 'build/web-models') });
    const ids = [tokenId('<|im_start|>'), tokenId('h'), tokenId('<|im_end|>')];
    const { start } = await run(file, ids, { maxTokens: 1, seed: 1 });
    assert.deepEqual(start.tokens.map((t) => t.text), ['', 'h', '']);
    assert.deepEqual(start.tokens.map((t) => t.label), ['<|im_start|>', 'h', '<|im_end|>']); // (they were ⟨3⟩, ⟨4⟩)
  });

  test('labels: a SentencePiece leading space and byte tokens by their spellings', {
    skip: existsSync(stories) ? false : `${stories} is absent (../shared)` }, async () => {
    const spm = await run(stories, '中', { maxTokens: 1, seed: 1 });
    assert.deepEqual(spm.start.tokens.map((t) => t.label), ['<bos>', '\u2581', '<0xE4>', '<0xB8>', '中']); // (⟨410⟩, ���)
  });

  test('stop: the generation ends with STOPPED', async () => {
    const w = startWorker();
    workers.push(w);
    await w.request((id) => toWorker.load(id, { file: new Blob([readFileSync(devModel('gpt2-char-q8_0'))]), threads: 1 }));
    const generation = w.request((id) => toWorker.generate(id, 'a', { maxTokens: 40, ignoreEos: true, seed: 2 }));
    w.post(toWorker.stop());
    const messages = await generation;
    assert.equal(messages.at(-1).reason, STOPPED);
  });
});
