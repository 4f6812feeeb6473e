// Opening a model URL before loadModel is called with it: a page's worker can start the download
// (or the cache read) while the rest of the library is still loading. loadModel(url) with the
// same cache option takes the opened source, as if it had opened it itself; one that no load
// takes within UNCLAIMED_MS is abandoned (its download cancelled, nothing cached).
import { cacheName } from './cache.mjs';
import { openSource } from './sources.mjs';
import { measure, now } from './timing.mjs';

const UNCLAIMED_MS = 10_000;
const early = new Map(); // cache name + URL → { input: Promise of an opened source, timer }

const keyOf = (url, name) => `${name}\n${url}`;

/** Starts opening `url` (a string, as loadModel will be given it) for a load with the `cache` option. */
export function preopen(url, { cache } = {}) {
  const name = cacheName(cache);
  const key = keyOf(url, name);
  if (typeof url != 'string' || early.has(key)) return;
  const start = now();
  const input = openSource(url, { cache: name });
  input.then(() => measure('model-preopen', start), () => {}); // (the load that takes it reports a failure)
  const timer = setTimeout(() => {
    if (early.get(key)?.input !== input) return;
    early.delete(key);
    input.then((opened) => {
      opened.cancel();
      return opened.settle('abandoned');
    }).catch(() => {});
  }, UNCLAIMED_MS);
  timer.unref?.();
  early.set(key, { input, timer });
}

/** The source preopen started for `url` and the cache `name` (a promise), once; undefined when there is none. */
export function takePreopened(url, name) {
  const key = keyOf(url, name);
  const entry = early.get(key);
  if (!entry) return undefined;
  early.delete(key);
  clearTimeout(entry.timer);
  return entry.input;
}
