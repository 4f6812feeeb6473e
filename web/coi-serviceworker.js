// An optional service worker for static hosts that cannot set response headers (GitHub Pages
// and the like). It answers the pages in its scope, and everything they and their workers
// fetch, with the headers that make a page cross-origin isolated —
//   Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp
// (and Cross-Origin-Resource-Policy on same-origin files) — so that SharedArrayBuffer, and with it
// saccade's threaded build, becomes available. The demo page installs it from its status line
// ("Enable threads"); it takes effect after one reload and is removed with "Turn … off".
//
// The mount: a service worker sees the requests *of* the pages and workers in its scope (here
// web/), but a new worker's own script is fetched under the worker's URL, and only a
// registration whose scope covers that URL can add headers to it. The library's thread workers
// live in dist/, outside web/, and a worker script without COEP cannot start under an isolated
// page. So the shim also serves the folder above web/ under web/__root__/: the demo's worker
// starts from web/__root__/web/ when the shim is active (client.mjs's startWorker), so that the
// library it imports by relative URL starts its thread workers from web/__root__/dist/, inside
// the scope.
//
// Cross-origin files (a model on another host) must be served with CORS or CORP headers, as on
// any cross-origin isolated page.
/* eslint-env serviceworker */

const MOUNT = new URL('./__root__/', self.location.href).href;
const ROOT = new URL('../', self.location.href).href;

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  // A request the browser may only answer from its cache (DevTools does this): leave it alone.
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  if (request.method !== 'GET' && request.method !== 'HEAD') return;
  event.respondWith(isolate(request));
});

async function isolate(request) {
  let response;
  if (request.url.startsWith(MOUNT)) {
    // the same file from its real place; the response keeps the mounted URL (and so do the
    // relative URLs resolved against it)
    response = await fetch(ROOT + request.url.slice(MOUNT.length), {
      method: request.method, headers: request.headers, credentials: 'same-origin', signal: request.signal,
    });
  } else response = await fetch(request);
  // Opaque responses (no-cors, cross-origin) cannot be rewritten; COEP decides about them.
  if (response.type === 'opaque' || response.type === 'opaqueredirect') return response;
  const headers = new Headers(response.headers);
  headers.set('Cross-Origin-Opener-Policy', 'same-origin');
  headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
  if (new URL(request.url).origin === self.location.origin && !headers.has('Cross-Origin-Resource-Policy'))
    headers.set('Cross-Origin-Resource-Policy', 'same-origin');
  const empty = request.method === 'HEAD' || response.status === 204 || response.status === 304;
  if (empty) headers.delete('Content-Length'); // a length without a body reads as a broken response
  return new Response(empty ? null : response.body, { status: response.status, statusText: response.statusText, headers });
}
