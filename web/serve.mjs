#!/usr/bin/env node
// A tiny static server for the demo: serves the repository (so /web/, /src/js/, /dist/ and
// /models/ resolve as they do in the package) on localhost, cross-origin isolated by default.
//
//   node web/serve.mjs [--port 8000] [--host 127.0.0.1] [--root .] [--no-isolation]
//
// Browsers only give a page SharedArrayBuffer (and so threads) when its response carries
// Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp;
// every file also gets Cross-Origin-Resource-Policy: cross-origin and CORS, so that an isolated
// page on another origin (a docs site embedding the widget) may load the files.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

export const ISOLATION_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

/**
 * The request handler: GET and HEAD of files under `root`, directories as their index.html,
 * ETag revalidation (a model rebuilt in place is fetched again). `isolated` adds COOP/COEP.
 */
export function staticHandler(root, { isolated = true } = {}) {
  root = path.resolve(root);
  return async (req, res) => {
    const common = { 'cross-origin-resource-policy': 'cross-origin', 'access-control-allow-origin': '*' };
    if (isolated) Object.assign(common, ISOLATION_HEADERS);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...common, allow: 'GET, HEAD' }).end();
      return;
    }
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400, common).end();
      return;
    }
    let file = path.join(root, path.normalize(pathname));
    if (file !== root && !file.startsWith(root + path.sep)) {
      res.writeHead(403, common).end();
      return;
    }
    let info = await stat(file).catch(() => null);
    if (info?.isDirectory()) {
      if (!pathname.endsWith('/')) {
        res.writeHead(301, { ...common, location: `${pathname}/` }).end();
        return;
      }
      file = path.join(file, 'index.html');
      info = await stat(file).catch(() => null);
    }
    if (!info?.isFile()) {
      res.writeHead(404, { ...common, 'content-type': 'text/plain; charset=utf-8' }).end(`not found: ${pathname}\n`);
      return;
    }
    const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const headers = {
      ...common,
      'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
      etag,
      'last-modified': info.mtime.toUTCString(),
    };
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': info.size });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = createReadStream(file);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  };
}

/**
 * Starts a server on `host`:`port` (port 0: any free port; a taken port: the next free one when
 * `tryNext`). Resolves to { url, port, close() }.
 */
export async function serve({ root, port = 0, host = '127.0.0.1', isolated = true, tryNext = false, handler } = {}) {
  const server = createServer(handler ?? staticHandler(root, { isolated }));
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
  console.log(opts.isolated
    ? 'cross-origin isolated (COOP: same-origin, COEP: require-corp): the model runs on threads'
    : 'no COOP/COEP headers (--no-isolation): the page runs single-threaded unless its service worker shim is enabled');
  console.log('Ctrl+C stops the server.');
}
