// web/serve.mjs against hostile requests: the server runs as its own process (as `make demo`
// starts it) on 127.0.0.1 and a random port, over a scratch root that holds what the demo serves
// beside what it must not (.git/, node_modules/, sources, symbolic links out of the root). Requests
// are written to a raw socket, so that nothing normalises them on the way.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const serveScript = fileURLToPath(new URL('../../web/serve.mjs', import.meta.url));
const SECRET = 'secret-do-not-serve';

let scratch; // { root, outside }
let server; // { child, port, output }

function put(file, text) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'saccade-serve-'));
  const root = path.join(dir, 'repo');
  const outside = path.join(dir, 'outside');
  put(path.join(outside, 'secret.txt'), SECRET);
  put(path.join(root, 'web/index.html'), '<!doctype html><title>demo</title>');
  put(path.join(root, 'web/app.mjs'), 'export {};');
  put(path.join(root, 'web/views/store.mjs'), 'export {};');
  put(path.join(root, 'src/js/index.mjs'), 'export {};');
  put(path.join(root, 'dist/saccade-st.wasm'), 'wasm');
  put(path.join(root, 'models/m.gguf'), 'GGUF');
  put(path.join(root, 'build/web-models/dev.gguf'), 'GGUF');
  put(path.join(root, 'build/tools/secret.txt'), SECRET);
  put(path.join(root, '.git/config'), SECRET);
  put(path.join(root, 'web/.env'), SECRET);
  put(path.join(root, 'node_modules/pkg/index.js'), SECRET);
  put(path.join(root, 'src/context.c'), SECRET);
  put(path.join(root, 'Makefile'), SECRET);
  symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'web/escape.txt'));
  symlinkSync(outside, path.join(root, 'models/outside'));
  symlinkSync('../.git/config', path.join(root, 'web/git-config.txt'));
  symlinkSync('index.html', path.join(root, 'web/alias.html')); // a link to an allowed file stays fine
  scratch = { dir, root, outside };
});

/** Starts `node web/serve.mjs` on the scratch root and a free port. */
async function start() {
  const child = spawn(process.execPath, [serveScript, '--root', scratch.root, '--port', '0', '--host', '127.0.0.1'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { text: '' };
  child.stdout.on('data', (d) => { output.text += d; });
  child.stderr.on('data', (d) => { output.text += d; });
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${output.text}`)), 10_000);
    child.stdout.on('data', () => {
      const m = /http:\/\/127\.0\.0\.1:(\d+)/.exec(output.text);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}): ${output.text}`)));
  });
  return { child, port, output };
}

// a test that killed the server must not fail the ones after it
beforeEach(async () => {
  const up = server && await get('/web/index.html').then((r) => r.status === 200, () => false);
  if (!up) {
    server?.child.kill();
    server = await start();
  }
});

after(() => {
  server?.child.kill();
  if (scratch) rmSync(scratch.dir, { recursive: true, force: true });
});

/** Sends `request` as written; resolves to { status, headers, body } ({ status: 0 } when the socket closed first). */
function raw(request) {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(request.slice(0, 80))}`)));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', (e) => (e.code === 'ECONNRESET' ? null : reject(e)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head, ...rest] = text.split('\r\n\r\n');
      const lines = head.split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0])?.[1] ?? 0);
      const headers = Object.fromEntries(lines.slice(1).map((l) => {
        const i = l.indexOf(':');
        return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
      }));
      resolve({ status, headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
  });
}

const get = (target, method = 'GET') => raw(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);

/** The server process is still running and still serves the page. */
async function alive() {
  assert.equal(server.child.exitCode, null, `the server exited: ${server.output.text}`);
  const r = await get('/web/index.html');
  assert.equal(r.status, 200, `the server no longer serves the page: ${server.output.text}`);
}

describe('web/serve.mjs', () => {
  test('serves what the demo needs', async () => {
    for (const target of ['/web/index.html', '/web/app.mjs', '/web/views/store.mjs', '/src/js/index.mjs',
      '/dist/saccade-st.wasm', '/models/m.gguf', '/build/web-models/dev.gguf', '/web/alias.html']) {
      const r = await get(target);
      assert.equal(r.status, 200, target);
      assert.equal(r.headers['access-control-allow-origin'], '*', target);
      assert.equal(r.headers['cross-origin-embedder-policy'], 'require-corp', target);
    }
    const page = await get('/web/');
    assert.equal(page.status, 200);
    assert.match(page.body, /<title>demo/);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal((await get('/dist/saccade-st.wasm')).headers['content-type'], 'application/wasm');
    assert.equal((await get('/models/m.gguf', 'HEAD')).headers['content-length'], '4');
    const folder = await get('/web');
    assert.equal(folder.status, 301);
    assert.equal(folder.headers.location, '/web/');
    assert.equal((await get('/')).headers.location, '/web/');
  });

  test('a newline in the path (/%0a%2f..) is refused, and the process lives on', async () => {
    for (const target of ['/%0a%2f..', '/web/%0a%2f..', '/web/%0d%0aSet-Cookie:%20x=1%2f..', '/%0a', '/web/%0a/']) {
      const r = await get(target);
      assert.ok(r.status >= 400 && r.status < 500, `${target}: ${r.status}`);
      assert.equal(r.headers['set-cookie'], undefined);
      await alive();
    }
  });

  test('bad encodings and odd paths are refused', async () => {
    for (const target of ['/web/%ff', '/web/%', '/web/%zz', '/web/%c0%af', '/web/%00index.html', '/web/index.html%00',
      '/web//index.html', '/web\\index.html', 'web/index.html', '*']) {
      const r = await get(target);
      assert.ok(r.status >= 400 && r.status < 500, `${target}: ${r.status}`);
      assert.ok(!r.body.includes(SECRET), target);
    }
    await alive();
  });

  test('no traversal out of the root or into folders the demo does not need', async () => {
    for (const target of ['/../outside/secret.txt', '/web/../../outside/secret.txt', '/web/%2e%2e/%2e%2e/outside/secret.txt',
      '/web/..%2f..%2foutside%2fsecret.txt', '/web/..%5c..%5coutside%5csecret.txt', '/%2e%2e/outside/secret.txt',
      '/web/./../.git/config', '/web/%2e/index.html']) {
      const r = await get(target);
      assert.ok(r.status >= 400 && r.status < 500, `${target}: ${r.status}`);
      assert.ok(!r.body.includes(SECRET), target);
    }
    await alive();
  });

  test('.git/, node_modules/, sources and build products are not served', async () => {
    for (const target of ['/.git/config', '/.git/', '/web/.env', '/node_modules/pkg/index.js', '/node_modules/',
      '/src/context.c', '/Makefile', '/build/tools/secret.txt', '/web/%2egit', '/%2egit/config']) {
      const r = await get(target);
      assert.ok(r.status === 404 || r.status === 400, `${target}: ${r.status}`);
      assert.ok(!r.body.includes(SECRET), target);
    }
  });

  test('symbolic links out of the root, or to what is not served, are not followed', async () => {
    for (const target of ['/web/escape.txt', '/models/outside/secret.txt', '/models/outside/', '/web/git-config.txt']) {
      const r = await get(target);
      assert.equal(r.status, 404, target);
      assert.ok(!r.body.includes(SECRET), target);
    }
    await alive();
  });

  test('other methods, odd methods, huge requests and garbage get an error, not a crash', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND']) {
      const r = await get('/web/index.html', method);
      assert.equal(r.status, 405, method);
    }
    const odd = [
      `${'X'.repeat(100_000)} /web/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      `GET /web/${'a'.repeat(200_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      `GET /web/ HTTP/1.1\r\nHost: x\r\nX: ${'y'.repeat(100_000)}\r\nConnection: close\r\n\r\n`,
      'GET /web/\nindex.html HTTP/1.1\r\nHost: x\r\n\r\n',
      '\x00\x01\x02\xff\r\n\r\n',
      'GET /web/index.html HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n',
    ];
    for (const request of odd) {
      const r = await raw(request);
      assert.ok(r.status === 0 || r.status >= 400, `${JSON.stringify(request.slice(0, 40))}: ${r.status}`);
      await alive();
    }
    const long = await get(`/web/${'a'.repeat(5000)}.mjs`);
    assert.equal(long.status, 404);
    await alive();
  });
});
