// The library's modules the model worker runs (the import graph of src/js/load.mjs), named here
// so that the worker requests them all at once: a worker has no <link rel=modulepreload>, and a
// module graph is otherwise fetched level by level, one round trip per level (six here).
// tests/web/module-graphs.test.mjs checks the list against the graph.

/** Paths relative to src/js/: instantiate.mjs's graph, which the worker's 'prepare' needs. */
export const INSTANCE_MODULES = ['instantiate.mjs', 'runtime.mjs', 'errors.mjs', 'options.mjs', 'timing.mjs'];

/** preopen.mjs's graph beyond those: the worker opens the model's URL with it as soon as a load asks. */
export const OPEN_MODULES = ['preopen.mjs', 'sources.mjs', 'cache.mjs', 'shards.mjs'];

/**
 * Every module, paths relative to src/js/: the two lists above, then the rest — requested once
 * the prepare has asked for the wasm, the glue and the pool's workers, so that those go first
 * (six requests at a time over HTTP/1.1).
 */
export const LIBRARY_MODULES = [
  ...INSTANCE_MODULES, ...OPEN_MODULES,
  'load.mjs', 'attention.mjs', 'budget.mjs', 'chat.mjs', 'engine.mjs', 'generate.mjs', 'heap.mjs',
  'layout.mjs', 'model.mjs', 'probe.mjs', 'stops.mjs', '../../dist/saccade-layout.mjs',
];
