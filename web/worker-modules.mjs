// The library's modules the model worker runs (the import graph of src/js/load.mjs), imported
// here by name so that the worker requests them all at once: a worker has no
// <link rel=modulepreload>, and a module graph is otherwise fetched level by level, one round trip
// per level (six here). In the page's bundle (scripts/bundle-web.mjs) they are all inside it.
// Relative paths: under the service worker shim the worker runs from the shim's mount
// (client.mjs), and so do these. tests/web/module-graphs.test.mjs checks the lists against the graph.

/** instantiate.mjs's graph, which the worker's 'prepare' needs: { instantiate, runtime }. */
export const importInstance = () => Promise.all([
  import('../src/js/instantiate.mjs'), import('../src/js/runtime.mjs'), import('../src/js/errors.mjs'),
  import('../src/js/options.mjs'), import('../src/js/timing.mjs'),
]).then(([instantiate, runtime]) => ({ instantiate, runtime }));

/** preopen.mjs's graph beyond those (the worker opens the model's URL with it as soon as a load asks): preopen.mjs. */
export const importOpen = () => Promise.all([
  import('../src/js/preopen.mjs'), import('../src/js/sources.mjs'), import('../src/js/cache.mjs'), import('../src/js/shards.mjs'),
]).then(([preopen]) => preopen);

/**
 * The rest of load.mjs's graph: load.mjs. Imported once the prepare has asked for the wasm, the
 * glue and the pool's workers, so that those go first (six requests at a time over HTTP/1.1).
 */
export const importRest = () => Promise.all([
  import('../src/js/load.mjs'), import('../src/js/attention.mjs'), import('../src/js/budget.mjs'), import('../src/js/chat.mjs'),
  import('../src/js/engine.mjs'), import('../src/js/generate.mjs'), import('../src/js/heap.mjs'), import('../src/js/layout.mjs'),
  import('../src/js/model.mjs'), import('../src/js/probe.mjs'), import('../src/js/stops.mjs'), import('../dist/saccade-layout.mjs'),
]).then(([load]) => load);
