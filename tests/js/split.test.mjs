// Split GGUF models (llama.cpp's gguf-split layout): loadModel takes the first shard's path or
// URL (the others follow from its name) or an array of shard sources, loads every shard into
// one model that computes what the whole file computes, reports progress over all of them, and
// refuses shards that do not belong together with a message naming the shard; vocab-only, it
// reads the first shard alone (the tokenizer's).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { splitGguf } from './gguf.mjs';
import { fixture, fixtureDir, root, withModel } from './helpers.mjs';

const dir = path.join(fixtureDir, `split-${process.pid}`);
const whole = readFileSync(fixture('llama-q8_0-char'));
const nTensors = Number(new DataView(whole.buffer, whole.byteOffset).getBigUint64(8, true));
const shards = splitGguf(whole, [0, 4, 9, nTensors]); // 3 shards, the last with the rest
const files = [];
let server;
let base;
const requests = [];

before(async () => {
  mkdirSync(dir, { recursive: true });
  shards.forEach((bytes, i) => {
    const file = path.join(dir, `tiny-${String(i + 1).padStart(5, '0')}-of-00003.gguf`);
    writeFileSync(file, bytes);
    files.push(file);
  });
  server = http.createServer((req, res) => {
    requests.push(req.url);
    const file = path.join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    try {
      const bytes = readFileSync(file);
      res.writeHead(200, { 'content-length': bytes.length, 'content-type': 'application/octet-stream' });
      res.end(bytes);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const reference = await withModel(fixture('llama-q8_0-char'), { threads: 1 }, (m) => m.forward([1, 5, 9, 2], { allLogits: true }));

describe('split models', () => {
  test('the first shard\'s path loads every shard; the model computes what the whole file does', async () => {
    const reports = [];
    await withModel(files[0], { threads: 1, onProgress: (p) => reports.push(p) }, (m) => {
      assert.deepEqual(m.forward([1, 5, 9, 2], { allLogits: true }), reference);
      assert.equal(m.info.metadata['split.count'], '3');
      assert.deepEqual({ ...m.sourceInfo, cache: undefined },
        { from: 'file', bytes: shards.reduce((n, s) => n + s.length, 0), shards: 3, urls: files, cache: undefined });
    });
    const total = shards.reduce((n, s) => n + s.length, 0);
    assert.deepEqual(reports.at(-1), { loaded: total, total, shard: 2, shards: 3, from: 'file' });
    assert.deepEqual([...new Set(reports.map((r) => r.shard))], [0, 1, 2]);
    for (let i = 1; i < reports.length; i++) assert.ok(reports[i].loaded >= reports[i - 1].loaded);
  });

  test('any shard\'s URL stands for all of them; an array of bytes loads too', async () => {
    await withModel(`${base}/tiny-00002-of-00003.gguf`, { threads: 1 }, (m) => {
      assert.deepEqual(m.forward([1, 5, 9, 2], { allLogits: true }), reference);
      assert.equal(m.sourceInfo.from, 'network');
      assert.deepEqual(m.sourceInfo.urls, [1, 2, 3].map((i) => `${base}/tiny-0000${i}-of-00003.gguf`));
    });
    await withModel(shards, { threads: 1 }, (m) => {
      assert.deepEqual(m.forward([1, 5, 9, 2], { allLogits: true }), reference);
      assert.equal(m.sourceInfo.from, 'memory');
      assert.deepEqual(m.sourceInfo.urls, []);
    });
  });

  test('both CLIs take any shard\'s path', () => {
    const args = (file) => ['generate', file, '--tokens', '1,2,3', '-n', '6', '--temp', '0', '--threads', '1'];
    const node = (file) => JSON.parse(execFileSync(process.execPath, [path.join(root, 'src/js/cli.mjs'), ...args(file)],
      { encoding: 'utf8' }));
    const native = (file) => JSON.parse(execFileSync(path.join(root, 'build/saccade'), args(file), { encoding: 'utf8' }));
    const expected = node(fixture('llama-q8_0-char')).tokens;
    assert.deepEqual(node(files[0]).tokens, expected);
    assert.deepEqual(native(files[0]).tokens, expected);
    assert.deepEqual(native(files[1]).tokens, expected);
  });

  test('shards that do not belong together are refused, naming the shard', async () => {
    const refused = (source, message, code = 'SAC_ERR_FORMAT') =>
      assert.rejects(() => loadModel(source, { threads: 1 }), (e) => {
        assert.equal(e.name, 'SaccadeError');
        assert.equal(e.code, code);
        assert.match(e.message, message);
        return true;
      });
    await refused(shards[0], /^the file is shard 1 of a model split in 3 files \('split\.count'\); load every shard together \(the first one's name ends in -00001-of-00003\.gguf\)$/, 'SAC_ERR_ARG');
    await refused([shards[0], shards[2], shards[1]],
      /^shard 2 of 3 has 'split\.no' = 2 \(it is shard 3\): the shards are out of order \(shard 2 is Uint8Array\)$/);
    await refused([files[0], files[1]], /^shard 1 of 2 has 'split\.count' = 3: it belongs to a model in 3 files \(shard 1 is .*tiny-00001-of-00003\.gguf\)$/);
    await refused(`${base}/missing-00001-of-00002.gguf`,
      /^shard 1 of 2 \(http:.*missing-00001-of-00002\.gguf\): cannot load http:.*: HTTP 404/, 'SAC_ERR_STATE');
    await refused(path.join(dir, 'tiny-00001-of-00004.gguf'), /^shard 1 of 4 \(.*\): cannot open .*: no such file$/, 'SAC_ERR_ARG');
    await refused([shards[0], new Uint8Array(0), shards[2]], /^shard 2 of 3 \(Uint8Array\): the model is empty \(0 bytes\)$/);
    await refused([], /^the model source is an empty array/, 'SAC_ERR_ARG');
    await refused(`${base}/tiny-00004-of-00003.gguf`, /names shard 4 of 3, which cannot be/, 'SAC_ERR_ARG');
  });

  test('vocabOnly reads the first shard alone, from any shard\'s name, and both CLIs tokenize so', async () => {
    const text = 'To be, or not';
    const expected = await withModel(fixture('llama-q8_0-char'), { vocabOnly: true }, (m) => m.tokenize(text));
    assert.equal(expected.length, text.length); // (a character model: one id a character)
    // a folder holding the first shard only: the others are never opened
    const alone = path.join(dir, 'alone');
    mkdirSync(alone, { recursive: true });
    const first = path.join(alone, 'tiny-00001-of-00003.gguf');
    writeFileSync(first, shards[0]);
    for (const source of [first, path.join(alone, 'tiny-00003-of-00003.gguf')])
      await withModel(source, { vocabOnly: true }, (m) => {
        assert.deepEqual(m.tokenize(text), expected);
        assert.equal(m.sourceInfo.shards, 1);
      });
    // an array is read and checked whole, as without vocabOnly
    await withModel(shards, { vocabOnly: true }, (m) => assert.equal(m.sourceInfo.shards, 3));
    await assert.rejects(() => loadModel([shards[0], shards[1]], { vocabOnly: true }), { message: /^shard 1 of 2 has 'split\.count' = 3/ });
    requests.length = 0;
    await withModel(`${base}/tiny-00002-of-00003.gguf`, { vocabOnly: true, cache: false }, (m) => assert.deepEqual(m.tokenize(text), expected));
    assert.deepEqual(requests, ['/tiny-00001-of-00003.gguf']);
    const args = (file) => ['tokenize', file, '--text', text];
    const node = (file) => JSON.parse(execFileSync(process.execPath, [path.join(root, 'src/js/cli.mjs'), ...args(file)], { encoding: 'utf8' }));
    const native = (file) => JSON.parse(execFileSync(path.join(root, 'build/saccade'), args(file), { encoding: 'utf8' }));
    assert.deepEqual(node(first), native(first));
    assert.deepEqual(native(first), native(fixture('llama-q8_0-char')));
    // a later shard alone is refused, saying where the tokenizer is
    await assert.rejects(() => loadModel([shards[1]], { vocabOnly: true }), {
      code: 'SAC_ERR_ARG',
      message: "the file is shard 2 of a model split in 3 files ('split.count'); the tokenizer is in the first " +
        'shard, whose name ends in -00001-of-00003.gguf',
    });
  });

  // (a timeout: this took minutes before, and must fail rather than hang if it comes back)
  test('shards are opened a few ahead of the one read, and none after one that fails', { timeout: 60_000 }, async () => {
    // the first shard of 99999: a request for each of them went out at once, before
    writeFileSync(path.join(dir, 'many-00001-of-99999.gguf'), shards[0]);
    requests.length = 0;
    await assert.rejects(() => loadModel(`${base}/many-00001-of-99999.gguf`, { threads: 1 }),
      { code: 'SAC_ERR_STATE', message: /^shard 2 of 99999 \(http:.*many-00002-of-99999\.gguf\): cannot load .*HTTP 404/ });
    assert.ok(requests.length <= 6, `${requests.length} requests: ${requests.slice(0, 8).join(' ')}`);
    // every shard of a small model is still asked for at once: the total is known once their headers come
    requests.length = 0;
    const totals = [];
    await withModel(`${base}/tiny-00001-of-00003.gguf`, { threads: 1, onProgress: (p) => totals.push(p.total) }, () => {});
    assert.equal(requests.length, 3);
    const whole = shards.reduce((a, b) => a + b.length, 0);
    assert.ok(totals.at(-1) === whole && totals.every((t) => t === null || t === whole), JSON.stringify(totals));
  });
});
