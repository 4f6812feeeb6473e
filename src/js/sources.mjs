// Model sources. Each becomes { size, chunks(): AsyncIterable<Uint8Array>, cancel(), from,
// settle(verdict) }; size is null when unknown (a response without Content-Length); cancel()
// releases a source whose chunks were never read; from says where the bytes come from ('cache',
// 'network', 'file', 'memory'); settle tells a cached URL how the load went (cache.mjs) and
// resolves to what became of its cache copy; storing is true when that means waiting for a write.
import { knownLength, openCachedUrl } from './cache.mjs';
import { fail } from './errors.mjs';
import { isNode, nodeBuiltin } from './runtime.mjs';

const CHUNK = 8 * 2 ** 20; // copy granularity for in-memory sources (progress and abort checks)

function bytesSource(bytes) {
  return {
    size: bytes.length,
    async *chunks() {
      for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.subarray(at, at + CHUNK);
    },
    cancel() {},
  };
}

function streamSource(stream, size) {
  return {
    size,
    async *chunks() {
      const reader = stream.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    },
    cancel() {
      if (!stream.locked) stream.cancel().catch(() => {});
    },
  };
}

function responseSource(response, what) {
  if (!response.ok) fail(`cannot load ${what}: HTTP ${response.status} ${response.statusText}`.trim(), 'SAC_ERR_STATE');
  if (response.bodyUsed) fail(`cannot load ${what}: the response body was already read`);
  if (!response.body) return bytesSource(new Uint8Array(0));
  return streamSource(response.body, knownLength(response));
}

// Why a file cannot be opened, in the native CLI's words (src/cli.c).
const OPEN_FAILURES = { ENOENT: 'no such file', ENOTDIR: 'no such file', EACCES: 'permission denied',
  EPERM: 'permission denied', ELOOP: 'too many levels of symbolic links', ENAMETOOLONG: 'file name too long' };

/** A regular file only: a directory or a pipe has no size to read (a pipe nobody writes to, no end). */
async function fileSource(path) {
  const { access, constants, open, stat } = nodeBuiltin('node:fs/promises');
  const cannot = (why) => fail(`cannot open '${path}': ${why}`, 'SAC_ERR_ARG');
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    cannot(OPEN_FAILURES[e.code] ?? e.message);
  }
  if (st.isDirectory()) cannot('it is a directory');
  if (!st.isFile()) cannot('not a regular file');
  await access(path, constants.R_OK).catch((e) => cannot(OPEN_FAILURES[e.code] ?? e.message));
  const size = st.size || null; // files in /proc or /sys stat as 0 bytes yet have contents: read to the end
  return {
    size,
    // Two buffers: the next read goes on while the caller copies the chunk just yielded (into
    // fresh heap pages, which fault on first touch: the slower half), not after it. A chunk
    // stays valid until the caller asks for the next one, as with one buffer.
    async *chunks() {
      const handle = await open(path, 'r');
      let reading = null;
      // A read's failure is handled where it is awaited, or not at all once the caller stopped:
      // never unhandled while the caller holds a chunk.
      const read = (buffer, at) => {
        reading = handle.read(buffer, 0, buffer.length, at);
        reading.catch(() => {});
      };
      try {
        const n = Math.min(CHUNK, size ?? CHUNK);
        const buffers = [new Uint8Array(n), new Uint8Array(n)];
        read(buffers[0], 0);
        for (let at = 0, k = 0; ; k ^= 1) {
          const { bytesRead } = await reading;
          reading = null;
          if (bytesRead === 0) return;
          at += bytesRead;
          read(buffers[k ^ 1], at);
          yield buffers[k].subarray(0, bytesRead);
        }
      } finally {
        await reading?.catch(() => {}); // (close would wait for it anyway)
        await handle.close();
      }
    },
    cancel() {},
  };
}

const CACHE_OFF = { status: 'off', message: 'not cached (cache: false)' };
const NOT_A_URL = { status: 'off', message: 'not cached (not a URL)' };
const NO_CACHE_API = { status: 'unavailable', message: 'not cached (no Cache API here)' };

/**
 * Where the bytes come from, what settle() reports (`note`) for a source outside the cache, and
 * `name`: the URL (resolved) or file path, or null.
 */
const tagged = (source, from, note, name = null) => Object.assign(source, { from, name, settle: async () => note });

/**
 * The source of a model: bytes, a Blob, a Response, a stream, a URL or (Node) a file path.
 * `cache`: the cache name for http(s) URLs, or null.
 */
export async function openSource(source, { signal, cache = null } = {}) {
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer == 'function' && source instanceof SharedArrayBuffer))
    return tagged(bytesSource(new Uint8Array(source)), 'memory', NOT_A_URL);
  if (ArrayBuffer.isView(source))
    return tagged(bytesSource(new Uint8Array(source.buffer, source.byteOffset, source.byteLength)), 'memory', NOT_A_URL);
  if (typeof Response == 'function' && source instanceof Response)
    return tagged(responseSource(source, 'the model'), 'memory', NOT_A_URL);
  if (typeof Blob == 'function' && source instanceof Blob) return tagged(streamSource(source.stream(), source.size), 'memory', NOT_A_URL);
  if (typeof ReadableStream == 'function' && source instanceof ReadableStream)
    return tagged(streamSource(source, null), 'memory', NOT_A_URL);
  let url;
  if (source instanceof URL) url = source;
  else if (typeof source == 'string') {
    if (isNode && !/^(https?|file|data|blob):/i.test(source)) return tagged(await fileSource(source), 'file', NOT_A_URL, source);
    try {
      url = new URL(source, globalThis.location?.href);
    } catch {
      fail(`'${source}' is not a valid URL`);
    }
  } else {
    fail('the model source must be a Uint8Array, ArrayBuffer, Blob, Response, ReadableStream, URL or string ' +
      `(a URL, or a file path in Node), or an array of them (a split model's shards), got ${source === null ? 'null' : typeof source}`);
  }
  if (isNode && url.protocol === 'file:') {
    const file = nodeBuiltin('node:url').fileURLToPath(url);
    return tagged(await fileSource(file), 'file', NOT_A_URL, file);
  }
  const http = /^https?:$/.test(url.protocol);
  if (http && cache !== null) {
    const opened = await openCachedUrl(url.href, cache, signal);
    if (opened) {
      const input = opened.body instanceof Blob ? streamSource(opened.body.stream(), opened.body.size)
        : responseSource(opened.body, url.href);
      return Object.assign(input, { from: opened.from, name: url.href, settle: opened.settle, storing: opened.storing === true });
    }
  }
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    fail(`cannot fetch ${url.href}: ${e.message}`, 'SAC_ERR_STATE');
  }
  const note = !http ? NOT_A_URL : cache === null ? CACHE_OFF : NO_CACHE_API; // (with a Cache API, the URL went above)
  return tagged(responseSource(response, url.href), 'network', note, url.href);
}
