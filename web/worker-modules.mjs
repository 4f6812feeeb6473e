// The library's modules the model worker runs (the import graph of src/js/load.mjs), named here
// so that the worker requests them all at once: a worker has no <link rel=modulepreload>, and a
// module graph is otherwise fetched level by level, one round trip per level (six here).
// tests/web/module-graphs.test.mjs checks the list against the graph.

/**
 * Paths relative to src/js/, in the order they are requested (six at a time over HTTP/1.1):
 * instantiate.mjs and its graph first, so that the wasm starts compiling (the worker's 'prepare')
 * before the rest has arrived.
 */
export const LIBRARY_MODULES = [
  'instantiate.mjs', 'runtime.mjs', 'errors.mjs', 'options.mjs', 'timing.mjs',
  'load.mjs', 'attention.mjs', 'budget.mjs', 'cache.mjs', 'chat.mjs', 'engine.mjs', 'generate.mjs', 'heap.mjs',
  'layout.mjs', 'model.mjs', 'probe.mjs', 'shards.mjs', 'sources.mjs', 'stops.mjs', '../../dist/saccade-layout.mjs',
];
