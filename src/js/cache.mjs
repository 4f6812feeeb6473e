// Download caching for model URLs in browsers, in the Cache API: a reload reads the weights
// from disk instead of the network. A download goes into the cache only when all of it arrived
// and the engine parsed it: the copy for the cache passes through a check (GGUF magic, the byte
// count the server announced) that holds its last chunk until the load's verdict, and
// Cache.put() commits nothing when its body errors — so a truncated, aborted or refused download
// is never stored. A cached copy is used when its length is the one recorded, and the server
// (asked with HEAD: ETag, or Last-Modified and length) has not changed it; offline, it is used
// as it is.
import { fail } from './errors.mjs';
import { shardNames } from './shards.mjs';
import { measure, now } from './timing.mjs';

/** The cache `cache: true` uses. */
export const DEFAULT_CACHE = 'saccade-models-v1';
const BYTES = 'x-saccade-bytes'; // the length, recorded beside a cached copy
const STORED = 'x-saccade-stored'; // when it was stored (ISO 8601)
const GGUF_MAGIC = [0x47, 0x47, 0x55, 0x46]; // "GGUF"

/** The cache name that the `cache` option asks for, or null (off). */
export function cacheName(option, what = 'cache') {
  if (option === undefined || option === true) return DEFAULT_CACHE;
  if (option === false) return null;
  if (typeof option == 'string' && option.length > 0) return option;
  return fail(`${what} must be true, false or a cache name (a non-empty string), got ${
    option === null ? 'null' : typeof option == 'string' ? "''" : typeof option}`);
}

/** The Cache API is there: browsers' secure contexts (https, localhost), windows and workers. */
export const cacheAvailable = () => typeof caches == 'object' && caches !== null && typeof caches.open == 'function';

async function openCache(name) {
  if (!cacheAvailable()) return null;
  try {
    return await caches.open(name);
  } catch {
    return null; // storage disabled (e.g. some private modes)
  }
}

/** Whether the cached copy still matches what the server has. */
async function isFresh(url, cached, signal) {
  let head;
  try {
    head = await fetch(url, { method: 'HEAD', cache: 'no-store', signal });
  } catch {
    signal?.throwIfAborted();
    return true; // offline (or HEAD not allowed across origins): the cached copy is all there is
  }
  if (!head.ok) return true; // e.g. 405 for HEAD: nothing to compare with
  const etag = head.headers.get('etag');
  if (etag && cached.headers.get('etag')) return etag === cached.headers.get('etag');
  const modified = head.headers.get('last-modified');
  if (modified && cached.headers.get('last-modified') && modified !== cached.headers.get('last-modified')) return false;
  const length = knownLength(head);
  return length === null || String(length) === cached.headers.get(BYTES);
}

/** The body's length in bytes from Content-Length, or null (none, or it counts compressed bytes). */
export function knownLength(response) {
  const encoding = response.headers.get('content-encoding');
  const length = response.headers.get('content-length');
  if (length === null || (encoding && encoding !== 'identity')) return null;
  const n = Number(length);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * Passes the bytes through; errors when they are not a GGUF file or not `expected` bytes long,
 * and holds the end until `verdict` resolves true. `stop(error)` errors it at once.
 */
function checkedCopy(expected, verdict) {
  let seen = 0;
  const head = [];
  let ctl;
  const stream = new TransformStream({
    start(controller) {
      ctl = controller;
    },
    transform(chunk, controller) {
      for (let i = 0; head.length < 4 && i < chunk.length; i++) head.push(chunk[i]);
      if (head.some((b, i) => b !== GGUF_MAGIC[i])) throw new Error('not a GGUF file');
      seen += chunk.length;
      controller.enqueue(chunk);
    },
    async flush() {
      if (seen !== expected) throw new Error(`incomplete: ${seen} of ${expected} bytes`);
      if (!(await verdict)) throw new Error('the model did not load');
    },
  });
  return { stream, stop: (error) => ctl.error(error) };
}

const HIT = { status: 'hit', message: 'read from the browser cache' };

/**
 * Opens a model URL through the cache `name`: from the cache when a complete, current copy is
 * there, else from the network while a copy goes to the cache. Resolves to
 *   { body: Blob | Response, from: 'cache' | 'network', settle(verdict), storing },
 * or null when there is no Cache API here; `storing` is true when a copy is being written (its
 * settle then waits for the write). `settle` takes the load's verdict — 'loaded' (the
 * engine parsed the bytes), 'refused' (it did not: a cached copy is deleted) or 'abandoned'
 * (aborted or failed before parsing) — and resolves to { status, message }: what became of the
 * cache copy once it is written.
 */
export async function openCachedUrl(url, name, signal) {
  let t = now();
  const cache = await openCache(name);
  if (!cache) return null;
  const cached = await cache.match(url);
  measure('cache-match', t);
  if (cached) {
    const recorded = cached.headers.get(BYTES);
    t = now();
    const fresh = recorded !== null && (await isFresh(url, cached, signal));
    measure('cache-fresh', t);
    if (fresh) {
      t = now();
      const blob = await cached.blob();
      measure('cache-blob', t);
      if (String(blob.size) === recorded)
        return {
          body: blob, from: 'cache',
          settle: async (verdict) => {
            if (verdict !== 'refused') return HIT;
            await cache.delete(url);
            return { status: 'failed', message: 'the cached copy was refused, and deleted' };
          },
        };
    }
    await cache.delete(url); // stale, or not the length recorded
  }
  signal?.throwIfAborted();
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (e) {
    signal?.throwIfAborted();
    fail(`cannot fetch ${url}: ${e.message}`, 'SAC_ERR_STATE');
  }
  const size = knownLength(response);
  const notCached = (message) => ({ body: response, from: 'network', settle: async () => ({ status: 'failed', message }) });
  if (!response.ok || !response.body) return notCached(`not cached: HTTP ${response.status}`);
  if (size === null) return notCached('not cached: the server did not send the length (Content-Length)');

  const [forModel, forCache] = response.body.tee();
  let decide;
  const verdict = new Promise((resolve) => (decide = resolve));
  const copy = checkedCopy(size, verdict);
  const headers = new Headers({ 'content-type': 'application/octet-stream', [BYTES]: String(size),
    [STORED]: new Date().toISOString() });
  for (const h of ['etag', 'last-modified']) if (response.headers.has(h)) headers.set(h, response.headers.get(h));
  const stored = cache.put(url, new Response(forCache.pipeThrough(copy.stream), { headers }));
  stored.catch(() => {}); // read by settle
  return {
    body: new Response(forModel, { headers: { 'content-length': String(size) } }),
    from: 'network',
    storing: true,
    async settle(result) {
      decide(result === 'loaded');
      // stop the copy (and with it the rest of the download) of a load that went no further
      if (result !== 'loaded') copy.stop(new Error('the model did not load'));
      try {
        await stored;
        // a cache deleted while the copy was written (clearCachedModels) took the copy with it
        if (!(await caches.has(name)) || !(await (await caches.open(name)).match(url)))
          return { status: 'failed', message: 'not cached: the cache was cleared while the model downloaded' };
        return { status: 'stored', message: 'saved in the browser cache' };
      } catch (e) {
        return { status: 'failed', message: `not cached: ${e.message}` };
      }
    },
  };
}

/** The cache option of listCachedModels and clearCachedModels: a name, default DEFAULT_CACHE. */
function nameOf(options, call) {
  if (options === undefined) return DEFAULT_CACHE;
  if (options === null || typeof options != 'object' || Array.isArray(options))
    fail(`the options of ${call} must be an object`);
  for (const k of Object.keys(options))
    if (k !== 'cache') fail(`unknown option '${k}' for ${call}; the options are: cache`);
  const name = cacheName(options.cache);
  if (name === null) fail(`cache must be a cache name or true for ${call}`);
  return name;
}

/**
 * The models in the cache: [{ url, bytes, stored }] (stored: a Date, or null), one entry per
 * file (each shard of a split model is one). [] where there is no Cache API.
 */
export async function listCachedModels(options) {
  const cache = await openCache(nameOf(options, 'listCachedModels'));
  if (!cache) return [];
  const out = [];
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    const stored = response?.headers.get(STORED);
    out.push({ url: request.url, bytes: Number(response?.headers.get(BYTES) ?? 0), stored: stored ? new Date(stored) : null });
  }
  return out;
}

/**
 * Deletes cached models: those of `urls` (a URL or an array; one shard of a split model stands
 * for all of its shards), or with no urls the whole cache. Resolves to how many files went.
 */
export async function clearCachedModels(urls, options) {
  const name = nameOf(options, 'clearCachedModels');
  const list = urls === undefined || urls === null ? null : Array.isArray(urls) ? urls : [urls];
  // checked first: a bad argument is refused also where there is no cache to clear (Node)
  for (const u of list ?? [])
    if (typeof u != 'string' && !(u instanceof URL)) fail(`clearCachedModels takes URLs, got ${typeof u}`);
  if (!cacheAvailable()) return 0;
  if (!list) {
    const n = (await listCachedModels({ cache: name })).length;
    await caches.delete(name);
    return n;
  }
  const cache = await openCache(name);
  if (!cache) return 0;
  let n = 0;
  for (const u of list) {
    const href = new URL(u, globalThis.location?.href).href;
    for (const file of shardNames(href) ?? [href]) if (await cache.delete(file)) n++;
  }
  return n;
}
