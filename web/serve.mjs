#!/usr/bin/env node
// A tiny static server for the demo: serves the folders of the repository the demo needs
// (/web/, /src/js/, /dist/, /models/ and the generated stand-in models, at the paths they have in
// the package) on localhost, cross-origin isolated by default.
//
//   node web/serve.mjs [--port 8000] [--host 127.0.0.1] [--root .] [--no-isolation]
//
// Browsers only give a page SharedArrayBuffer (and so threads) when its response carries
// Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp;
// every file also gets Cross-Origin-Resource-Policy: cross-origin and CORS, so that an isolated
// page on another origin (a docs site embedding the widget) may load the files. Text and wasm are
// served compressed (brotli or gzip) to clients that accept it, as static hosts do.
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
  '.gguf': 'application/octet-stream',
};

// ---------------------------------------------------------------------------------------------
// Compression, as a static host serves these files: text and wasm, brotli or gzip by the
// request's Accept-Encoding, each file version compressed once and kept in memory. Brotli at
// quality 5, as CDNs compress on the fly (11, as hosts precompress, saves another ~10% on the
// wasm but takes ~3 s per file here). The models are not compressed (quantized weights barely shrink).
// ---------------------------------------------------------------------------------------------

const COMPRESSIBLE = new Set(['.html', '.mjs', '.js', '.css', '.json', '.md', '.svg', '.wasm']);
const COMPRESS_MAX_BYTES = 16 * 2 ** 20;
const ENCODERS = {
  br: promisify((bytes, done) => zlib.brotliCompress(bytes, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  }, done)),
  gzip: promisify((bytes, done) => zlib.gzip(bytes, { level: 9 }, done)),
};
const compressedCache = new Map(); // `${file}|${etag}|${encoding}` → Promise<Buffer>

/** The encoding to answer `accept` (an Accept-Encoding header) with: 'br', 'gzip' or null. */
export function pickEncoding(accept = '') {
  const q = {};
  for (const part of accept.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const weight = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    q[name] = weight ? Number(weight.slice(2)) || 0 : 1;
  }
  const ok = (name) => (q[name] ?? q['*'] ?? 0) > 0;
  return ok('br') ? 'br' : ok('gzip') ? 'gzip' : null;
}

function compressed(file, etag, encoding, read) {
  const key = `${file}|${etag}|${encoding}`;
  if (!compressedCache.has(key)) {
    const promise = read().then((bytes) => ENCODERS[encoding](bytes));
    promise.catch(() => compressedCache.delete(key));
    compressedCache.set(key, promise);
  }
  return compressedCache.get(key);
}

export const ISOLATION_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

/**
 * What the demo needs, as folders of the repository: the page and the widget, the library and
 * its wasm builds, the shipped models and the generated stand-ins the tests and the benchmark use,
 * and the ESM build of @huggingface/jinja (chat templates; web/worker.mjs imports it).
 * Nothing else is served (no .git/, the rest of node_modules/, sources or build products).
 */
export const DEMO_PATHS = ['/web/', '/src/js/', '/dist/', '/models/', '/build/web-models/',
  '/node_modules/@huggingface/jinja/dist/'];

/**
 * The path's segments, decoded one by one, or null when the path is not the plain form of a
 * file name: an undecodable escape, an encoded slash or backslash, a control character, or a segment
 * that is empty (inside the path), '.', '..' or starts with '.' (.git, .env). Nothing is
 * normalised, so what is checked is what is opened.
 */
function segments(pathname) {
  const parts = pathname.split('/').slice(1);
  const out = [];
  for (const [i, raw] of parts.entries()) {
    let part;
    try {
      part = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (part === '' && i === parts.length - 1) break; // a trailing '/': a folder
    if (part === '' || part.startsWith('.') || /[\\/\0-\x1f\x7f]/.test(part)) return null;
    out.push(part);
  }
  return out;
}

/**
 * The request handler: GET and HEAD of files under `root` whose path starts with one of `allow`
 * (DEMO_PATHS by default), folders as their index.html, ETag revalidation (a model rebuilt in
 * place is fetched again). A symbolic link is followed only when its target is allowed too.
 * `isolated` adds COOP/COEP. No request can end the process: a failure is a 4xx or 500.
 */
export function staticHandler(root, { isolated = true, allow = DEMO_PATHS } = {}) {
  root = path.resolve(root);
  const realRoot = realpath(root);
  const allowed = (rel) => allow.some((prefix) => `/${rel}/`.startsWith(prefix));
  const common = { 'cross-origin-resource-policy': 'cross-origin', 'access-control-allow-origin': '*' };
  if (isolated) Object.assign(common, ISOLATION_HEADERS);
  const fail = (res, status, text) => {
    res.writeHead(status, { ...common, 'content-type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
  };

  async function respond(req, res) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...common, allow: 'GET, HEAD' }).end();
      return;
    }
    // the raw path, not a parsed URL: the WHATWG parser would resolve '..' and '%2e%2e' first
    const pathname = req.url.split('?')[0];
    if (pathname === '/') {
      res.writeHead(302, { ...common, location: '/web/' }).end();
      return;
    }
    const parts = pathname.startsWith('/') ? segments(pathname) : null;
    if (!parts) return fail(res, 400, 'bad path');
    const rel = parts.join('/');
    if (!allowed(rel)) return fail(res, 404, 'not found');
    // the file as the links resolve: it must still be an allowed path of the root
    const real = await realpath(path.join(root, ...parts)).catch(() => null);
    const realRel = real && path.relative(await realRoot, real).split(path.sep).join('/');
    if (!real || realRel.startsWith('../') || realRel === '..' || path.isAbsolute(realRel) || !allowed(realRel)) {
      return fail(res, 404, 'not found');
    }
    let file = real;
    let handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      let info = await handle.stat();
      if (info.isDirectory()) {
        await handle.close();
        handle = null;
        if (!pathname.endsWith('/')) {
          // built from the checked segments, percent-encoded: nothing in it can break a header
          res.writeHead(301, { ...common, location: `/${parts.map(encodeURIComponent).join('/')}/` }).end();
          return;
        }
        file = path.join(real, 'index.html');
        handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
        if (!handle) return fail(res, 404, 'not found');
        info = await handle.stat();
      }
      if (!info.isFile()) return fail(res, 404, 'not found');
      const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
      const headers = {
        ...common,
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-cache',
        etag,
        'last-modified': info.mtime.toUTCString(),
      };
      const compressible = COMPRESSIBLE.has(path.extname(file)) && info.size <= COMPRESS_MAX_BYTES;
      const encoding = compressible ? pickEncoding(req.headers['accept-encoding']) : null;
      if (compressible) headers.vary = 'accept-encoding';
      if (encoding) headers.etag = `${etag.slice(0, -1)}-${encoding}"`; // one tag per representation
      if (req.headers['if-none-match'] === headers.etag) {
        res.writeHead(304, headers).end();
        return;
      }
      if (encoding) {
        const h = handle;
        const body = await compressed(file, etag, encoding, () => h.readFile());
        res.writeHead(200, { ...headers, 'content-encoding': encoding, 'content-length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      res.writeHead(200, { ...headers, 'content-length': info.size });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      const stream = handle.createReadStream();
      handle = null; // the stream closes it
      stream.on('error', () => res.destroy());
      res.on('close', () => stream.destroy());
      stream.pipe(res);
    } finally {
      await handle?.close();
    }
  }

  return (req, res) => {
    respond(req, res).catch((e) => {
      try {
        if (res.headersSent) res.destroy();
        else if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'EISDIR'].includes(e?.code)) fail(res, 404, 'not found');
        else fail(res, 500, 'internal error');
      } catch {
        res.destroy();
      }
    });
  };
}

/**
 * Starts a server on `host`:`port` (port 0: any free port; a taken port: the next free one when
 * `tryNext`). `allow`: the folders served (DEMO_PATHS by default). Resolves to { url, port, close() }.
 */
export async function serve({ root, port = 0, host = '127.0.0.1', isolated = true, allow, tryNext = false, handler } = {}) {
  const server = createServer(handler ?? staticHandler(root, { isolated, allow }));
  for (;;) {
    try {
      await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      break;
    } catch (e) {
      if (!(tryNext && e.code === 'EADDRINUSE' && port > 0 && port < 65535)) throw e;
      port++;
    }
  }
  const actual = server.address().port;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${actual}`,
    port: actual,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function parseArgs(argv) {
  const opts = { port: 8000, host: '127.0.0.1', root: fileURLToPath(new URL('..', import.meta.url)), isolated: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port') opts.port = Number(value());
    else if (a === '--host') opts.host = value();
    else if (a === '--root') opts.root = path.resolve(value());
    else if (a === '--no-isolation') opts.isolated = false;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node web/serve.mjs [--port 8000] [--host 127.0.0.1] [--root DIR] [--no-isolation]');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (try --help)`);
  }
  if (!(Number.isInteger(opts.port) && opts.port >= 0 && opts.port < 65536)) throw new Error('--port must be 0..65535');
  return opts;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`serve.mjs: ${e.message}`);
    process.exit(2);
  }
  const { url } = await serve({ ...opts, tryNext: true });
  console.log(`saccade demo:  ${url}/web/`);
  console.log(`embed example: ${url}/web/embed-example.html`);
  console.log(`ideas page:    ${url}/web/explore.html`);
  console.log(opts.isolated
    ? 'cross-origin isolated (COOP: same-origin, COEP: require-corp): the model runs on threads'
    : 'no COOP/COEP headers (--no-isolation): the page runs single-threaded unless its service worker shim is enabled');
  console.log('Ctrl+C stops the server.');
}
