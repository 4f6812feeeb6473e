// Which model URLs the page has seen go into the browser cache, kept in localStorage: index.html
// reads it before any module loads, so that a first visit's download of the default model starts
// at once instead of after a look into the Cache API (tens of ms on a browser's first use of it).
// A wrong answer costs only that time: a URL noted but no longer cached is looked up and then
// downloaded; one not noted but cached is downloaded again, and its copy replaces the old one.

/** The localStorage key of `url` (an absolute URL); index.html spells the same prefix. */
export const knownCachedKey = (url) => `saccade-cached:${url}`;

/** Notes whether `url` is in the cache now (no-op where localStorage is unavailable). */
export function noteCached(url, cached) {
  try {
    if (cached) localStorage.setItem(knownCachedKey(url), '1');
    else localStorage.removeItem(knownCachedKey(url));
  } catch {
    // storage disabled: every visit looks into the cache first, as without this note
  }
}

/** Forgets every note (the cache was cleared). */
export function forgetCached() {
  try {
    for (const key of Object.keys(localStorage)) if (key.startsWith(knownCachedKey(''))) localStorage.removeItem(key);
  } catch {
    // as above
  }
}
