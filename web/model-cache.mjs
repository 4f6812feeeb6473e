// Model files kept in the browser's Cache API, so that a reload reads the weights from disk
// instead of the network. A download is cached only once every byte of it has arrived: the copy
// for the cache goes through a check (GGUF magic first, then the byte count the server
// announced), and Cache.put() commits nothing when its body errors. A cached copy is
// revalidated with a HEAD request (ETag, or Last-Modified and size): a model rebuilt at the same
// URL is downloaded again; offline, the cached copy is used.

export const CACHE_NAME = 'saccade-models-v1';
const GGUF_MAGIC = [0x47, 0x47, 0x55, 0x46]; // "GGUF"

async function openCache() {
  try {
    return typeof caches == 'object' ? await caches.open(CACHE_NAME) : null;
  } catch {
    return null; // e.g. an insecure origin, or storage disabled
  }
}

/** Whether the cached copy still matches what the server has. */
async function isFresh(url, cached, signal) {
  let head;
  try {
    head = await fetch(url, { method: 'HEAD', cache: 'no-store', signal });
  } catch {
    signal?.throwIfAborted();
    return true; // offline: the cached copy is all there is
  }
  if (!head.ok) return true; // e.g. 405 for HEAD: nothing to compare with
  const etag = head.headers.get('etag');
  if (etag && cached.headers.get('etag')) return etag === cached.headers.get('etag');
  const modified = head.headers.get('last-modified');
  const length = head.headers.get('content-length');
  if (modified && cached.headers.get('last-modified') && modified !== cached.headers.get('last-modified')) return false;
  if (length && cached.headers.get('x-saccade-bytes') && length !== cached.headers.get('x-saccade-bytes')) return false;
  return true;
}

/** Passes bytes through; errors when they are not a GGUF file or not `expected` bytes long. */
function completeGguf(expected) {
  let seen = 0;
  const head = [];
  return new TransformStream({
    transform(chunk, controller) {
      for (let i = 0; head.length < 4 && i < chunk.length; i++) head.push(chunk[i]);
      if (head.length === 4 && seen < 4 && head.some((b, i) => b !== GGUF_MAGIC[i]))
        throw new Error('not a GGUF file');
      seen += chunk.length;
      controller.enqueue(chunk);
    },
    flush() {
      if (seen < 4) throw new Error('not a GGUF file');
      if (expected !== null && seen !== expected) throw new Error(`incomplete: ${seen} of ${expected} bytes`);
    },
  });
}

/**
 * Opens a model URL: from the cache when a complete, current copy is there, else from the
 * network while a copy goes to the cache. Resolves to
 *   { body: Blob | Response, size: number | null, from: 'cache' | 'network',
 *     stored: Promise<string> (what became of the cache copy), forget(): Promise<void> }.
 * Call forget() when the bytes turn out unusable, so that they are not served again.
 */
export async function openModel(url, { signal } = {}) {
  const cache = await openCache();
  const cached = cache ? await cache.match(url) : undefined;
  if (cached) {
    const expected = Number(cached.headers.get('x-saccade-bytes'));
    if (await isFresh(url, cached, signal)) {
      const blob = await cached.blob();
      if (!cached.headers.has('x-saccade-bytes') || blob.size === expected)
        return { body: blob, size: blob.size, from: 'cache', stored: Promise.resolve('read from the browser cache'),
          forget: () => cache.delete(url).then(() => {}) };
    }
    await cache.delete(url);
  }
  let response;
  try {
    response = await fetch(url, { signal });
  } catch (e) {
    signal?.throwIfAborted();
    throw new Error(`cannot fetch ${url}: ${e.message}`);
  }
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status} ${response.statusText}`.trim());
  const encoding = response.headers.get('content-encoding');
  const length = response.headers.get('content-length');
  const size = length !== null && (!encoding || encoding === 'identity') && Number.isSafeInteger(Number(length))
    ? Number(length) : null;
  if (!cache || !response.body)
    return { body: response, size, from: 'network', stored: Promise.resolve('not cached (no Cache API here)'),
      forget: async () => {} };

  const [forModel, forCache] = response.body.tee();
  const headers = new Headers({ 'content-type': 'application/octet-stream', 'x-saccade-url': url });
  if (size !== null) headers.set('x-saccade-bytes', String(size));
  for (const h of ['etag', 'last-modified']) if (response.headers.has(h)) headers.set(h, response.headers.get(h));
  const stored = cache.put(url, new Response(forCache.pipeThrough(completeGguf(size)), { headers })).then(
    () => 'saved in the browser cache',
    (e) => `not cached: ${e.message}`,
  );
  const modelHeaders = size === null ? {} : { 'content-length': String(size) };
  return {
    body: new Response(forModel, { headers: modelHeaders }),
    size,
    from: 'network',
    stored,
    forget: () => stored.then(() => cache.delete(url)).then(() => {}),
  };
}

/** Cached models: [{ url, bytes }]. */
export async function cachedModels() {
  const cache = await openCache();
  if (!cache) return [];
  const out = [];
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    out.push({ url: request.url, bytes: Number(response?.headers.get('x-saccade-bytes') ?? 0) });
  }
  return out;
}

/** Empties the model cache. */
export async function clearModelCache() {
  if (typeof caches == 'object') await caches.delete(CACHE_NAME);
}
