// web/serve.mjs compresses text and wasm as a static host does: brotli or gzip by Accept-Encoding,
// with Content-Encoding, Vary and a per-encoding ETag; models and clients that accept neither
// get the bytes as they are.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import zlib from 'node:zlib';

import { pickEncoding, serve } from '../../web/serve.mjs';
import { root } from './helpers.mjs';

let server;
before(async () => (server = await serve({ root })));
after(() => server.close());

/** GET (or `method`) `url` with `headers`; resolves to { status, headers, body } (the body as sent). */
function get(url, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    request(`${server.url}${url}`, { method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject).end();
  });
}

test('Accept-Encoding picks brotli, then gzip, honouring q=0 and *', () => {
  assert.equal(pickEncoding('gzip, deflate, br, zstd'), 'br');
  assert.equal(pickEncoding('gzip, br;q=0'), 'gzip');
  assert.equal(pickEncoding('identity'), null);
  assert.equal(pickEncoding(''), null);
  assert.equal(pickEncoding('*'), 'br');
  assert.equal(pickEncoding('*;q=0, gzip'), 'gzip');
});

for (const [encoding, decode] of [['br', zlib.brotliDecompressSync], ['gzip', zlib.gunzipSync]]) {
  test(`${encoding}: text and wasm come compressed and decode to the file`, async () => {
    for (const file of ['/src/js/index.mjs', '/dist/saccade-mt.wasm', '/web/embed-example.html']) {
      const r = await get(file, { 'accept-encoding': `${encoding}` });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], encoding, file);
      assert.equal(r.headers.vary, 'accept-encoding');
      assert.equal(Number(r.headers['content-length']), r.body.length);
      const original = readFileSync(path.join(root, file));
      assert.ok(r.body.length < original.length, `${file}: ${r.body.length} >= ${original.length}`);
      assert.deepEqual(decode(r.body), original);
      assert.match(r.headers.etag, new RegExp(`-${encoding}"$`));
      assert.equal((await get(file, { 'accept-encoding': encoding, 'if-none-match': r.headers.etag })).status, 304);
    }
  });
}

test('without Accept-Encoding, and for models, the bytes are sent as they are', async () => {
  const plain = await get('/src/js/index.mjs');
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers.vary, 'accept-encoding');
  assert.deepEqual(plain.body, readFileSync(path.join(root, 'src/js/index.mjs')));
  const model = await get('/models/dates-q8_0.gguf', { 'accept-encoding': 'br, gzip' }, 'HEAD');
  assert.equal(model.headers['content-encoding'], undefined);
  assert.equal(model.headers.vary, undefined);
});
