// Every kind of model source loads the same model, reporting progress as it streams.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:http';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { loadModel } from '../../src/js/index.mjs';
import { openSource } from '../../src/js/sources.mjs';
import { DEMO_PATHS, serve } from '../../web/serve.mjs';
import { fixture, root } from './helpers.mjs';

const name = 'gpt2-q4_0';
let file;
let bytes;
let expected;
let server;
let chunked; // serves the model without Content-Length, in small chunks; /short lies about it
let chunkedUrl;

before(async () => {
  file = fixture(name);
  bytes = new Uint8Array(readFileSync(file));
  const m = await loadModel(bytes, { threads: 1 });
  expected = m.forward([1, 2, 3]);
  m.dispose();
  server = await serve({ root, isolated: false, allow: [...DEMO_PATHS, '/build/js-fixtures/'] });
  chunked = createServer(async (req, res) => {
    if (req.url === '/short') {
      res.writeHead(200, { 'content-length': bytes.length });
      res.write(bytes.subarray(0, 1000), () => res.destroy()); // then the connection drops
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    for (let at = 0; at < bytes.length; at += 65536) {
      res.write(bytes.subarray(at, at + 65536));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise((r) => chunked.listen(0, '127.0.0.1', r));
  chunkedUrl = `http://127.0.0.1:${chunked.address().port}`;
});

after(async () => {
  await server.close();
  chunked.closeAllConnections();
  chunked.close();
});

async function check(source, total) {
  const reports = [];
  const m = await loadModel(source, { threads: 1, onProgress: (p) => reports.push(p) });
  try {
    assert.deepEqual(m.forward([1, 2, 3]), expected);
  } finally {
    m.dispose();
  }
  assert.ok(reports.length >= 1);
  for (let i = 1; i < reports.length; i++) assert.ok(reports[i].loaded >= reports[i - 1].loaded, 'loaded never decreases');
  for (const r of reports) assert.equal(r.total, total);
  assert.equal(reports.at(-1).loaded, bytes.length);
  return reports;
}

test('in-memory sources: Uint8Array, Buffer, ArrayBuffer, a view with an offset, Blob', async () => {
  await check(bytes, bytes.length);
  await check(readFileSync(file), bytes.length);
  await check(bytes.slice().buffer, bytes.length);
  const padded = new Uint8Array(bytes.length + 7);
  padded.set(bytes, 7);
  await check(new DataView(padded.buffer, 7, bytes.length), bytes.length);
  await check(new Blob([bytes]), bytes.length);
});

test('Node file paths and file: URLs', async () => {
  await check(file, bytes.length);
  await check(pathToFileURL(file), bytes.length);
  await check(pathToFileURL(file).href, bytes.length);
});

test('a file of several chunks comes out whole and in order, each chunk valid until the next is asked for', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'saccade-chunks-'));
  try {
    const big = new Uint8Array(2 * 8 * 2 ** 20 + 12345); // two whole 8 MiB chunks and a piece
    for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) % 251;
    big[big.length - 1] = 7;
    const where = path.join(dir, 'big.bin');
    writeFileSync(where, big);
    const source = await openSource(where);
    assert.equal(source.size, big.length);
    const got = new Uint8Array(big.length);
    let at = 0;
    let chunks = 0;
    for await (const chunk of source.chunks()) {
      const copy = chunk.slice(); // the next read must not reach this chunk before it is asked for
      await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(chunk, copy, `chunk ${chunks} changed before the next was asked for`);
      got.set(chunk, at);
      at += chunk.length;
      chunks++;
    }
    assert.equal(at, big.length);
    assert.equal(chunks, 3);
    assert.ok(Buffer.compare(got, big) === 0, 'the bytes as in the file');
    // (Linux: the descriptors open on the file, by /proc/self/fd)
    const fds = '/proc/self/fd';
    const onFile = () => (existsSync(fds) ? readdirSync(fds).filter((fd) => {
      try {
        return readlinkSync(path.join(fds, fd)) === where;
      } catch {
        return false; // (closed meanwhile)
      }
    }).length : 0);
    assert.equal(onFile(), 0, 'the file is closed after a whole read');
    for await (const chunk of (await openSource(where)).chunks()) { // a consumer that stops early
      assert.equal(chunk.length, 8 * 2 ** 20);
      break;
    }
    assert.equal(onFile(), 0, 'the file is closed after an early stop');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('http URLs (string and URL), Response and ReadableStream, with and without a known length', async () => {
  const url = `${server.url}/build/js-fixtures/${name}.gguf`;
  const reports = await check(url, bytes.length);
  assert.equal(reports[0].loaded, 0);
  await check(new URL(url), bytes.length);
  await check(await fetch(url), bytes.length);
  const unknown = await check(`${chunkedUrl}/model`, null);
  assert.ok(unknown.length >= bytes.length / 65536, 'one report per chunk');
  await check((await fetch(`${chunkedUrl}/model`)).body, null);
});

test('HTTP errors, a used body, and a body shorter than announced', async () => {
  await assert.rejects(() => loadModel(`${server.url}/no/such/model.gguf`),
    { message: `cannot load ${server.url}/no/such/model.gguf: HTTP 404 Not Found` });
  const used = await fetch(`${server.url}/build/js-fixtures/${name}.gguf`);
  await used.arrayBuffer();
  await assert.rejects(() => loadModel(used), { message: 'cannot load the model: the response body was already read' });
  await assert.rejects(() => loadModel(`${chunkedUrl}/short`), (e) => {
    // undici reports the dropped connection ("terminated"), or the stream just ends early
    assert.match(e.message, /^reading the model failed after \d+ bytes: terminated$|^the model source ended after \d+ of the \d+ bytes it announced$/);
    return true;
  });
  await assert.rejects(() => loadModel('http://127.0.0.1:9/model.gguf'), { message: /cannot fetch http:\/\/127.0.0.1:9\/model.gguf: fetch failed/ });
});
