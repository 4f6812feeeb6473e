// Model sources. Each becomes { size, chunks(): AsyncIterable<Uint8Array>, cancel() }; size is
// null when unknown (a response without Content-Length); cancel() releases a source whose
// chunks were never read.
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
  const encoding = response.headers.get('content-encoding');
  const length = response.headers.get('content-length');
  // With a content encoding, Content-Length counts compressed bytes.
  const size = length !== null && (!encoding || encoding === 'identity') ? Number(length) : null;
  if (!response.body) return bytesSource(new Uint8Array(0));
  return streamSource(response.body, Number.isSafeInteger(size) ? size : null);
}

async function fileSource(path) {
  const { open, stat } = nodeBuiltin('node:fs/promises');
  let size;
  try {
    ({ size } = await stat(path));
  } catch (e) {
    fail(`cannot open '${path}': ${e.code === 'ENOENT' ? 'no such file' : e.message}`, 'SAC_ERR_ARG');
  }
  return {
    size,
    async *chunks() {
      const handle = await open(path, 'r');
      const buffer = new Uint8Array(Math.min(CHUNK, Math.max(1, size)));
      try {
        for (let at = 0; ; ) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
          if (bytesRead === 0) return;
          at += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
      } finally {
        await handle.close();
      }
    },
    cancel() {},
  };
}

/** The source of a model: bytes, a Blob, a Response, a stream, a URL or (Node) a file path. */
export async function openSource(source, signal) {
  if (source instanceof ArrayBuffer || (typeof SharedArrayBuffer == 'function' && source instanceof SharedArrayBuffer))
    return bytesSource(new Uint8Array(source));
  if (ArrayBuffer.isView(source)) return bytesSource(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  if (typeof Response == 'function' && source instanceof Response) return responseSource(source, 'the model');
  if (typeof Blob == 'function' && source instanceof Blob) return streamSource(source.stream(), source.size);
  if (typeof ReadableStream == 'function' && source instanceof ReadableStream) return streamSource(source, null);
  let url;
  if (source instanceof URL) url = source;
  else if (typeof source == 'string') {
    if (isNode && !/^(https?|file|data|blob):/i.test(source)) return fileSource(source);
    try {
      url = new URL(source, globalThis.location?.href);
    } catch {
      fail(`'${source}' is not a valid URL`);
    }
  } else {
    fail('the model source must be a Uint8Array, ArrayBuffer, Blob, Response, ReadableStream, URL or string ' +
      `(a URL, or a file path in Node), got ${source === null ? 'null' : typeof source}`);
  }
  if (isNode && url.protocol === 'file:') return fileSource(nodeBuiltin('node:url').fileURLToPath(url));
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    fail(`cannot fetch ${url.href}: ${e.message}`, 'SAC_ERR_STATE');
  }
  return responseSource(response, url.href);
}
