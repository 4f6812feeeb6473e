// saccade — run small GGUF language models in WebAssembly and capture their attention.
//
// The JavaScript layer picks a wasm build (threaded or not), streams the model file into the
// wasm heap, and calls the C API (src/saccade.h) through the exported functions, reading and
// writing C structs and strings in the heap itself. No model math here. One concern per module,
// in the order a call travels:
//
//   runtime.mjs      which build (threads or not) and why
//   timing.mjs       a load's phases as 'saccade:' User Timing measures (browsers)
//   instantiate.mjs  compiling and instantiating a wasm module, one per model
//   heap.mjs         views, strings and ids in the wasm heap
//   layout.mjs       C struct fields and constants (offsets generated at build time)
//   shards.mjs       a split model's shard names
//   cache.mjs        download caching of model URLs in the browser's Cache API
//   sources.mjs      bytes, files, URLs, responses, blobs and streams as chunk sources
//   budget.mjs       wasm32 memory limits: model, context and attention capture
//   options.mjs      option checks shared by every call
//   load.mjs         loadModel
//   engine.mjs       the C handles of one model and thin wrappers over the C calls
//   attention.mjs    captured attention: rows in bulk, one matrix, one step's rows
//   stops.mjs        stop strings: the text a generation releases
//   generate.mjs     generate's options and its loop; one generation at a time per model
//   model.mjs        the Model class
//   attend.mjs       the attention primitive on arrays, without a model (attend, kernel width fit, sinusoids)
export { SaccadeError } from './errors.mjs';
export { chooseRuntime } from './runtime.mjs';
export { loadModel } from './load.mjs';
export { configure } from './instantiate.mjs';
export { clearCachedModels, DEFAULT_CACHE, listCachedModels } from './cache.mjs';
export { Model } from './model.mjs';
export { Attention, attend, createAttention, fitKernelWidth, sinusoidPositions } from './attend.mjs';
// Training in the tab: train() loads the trainer's own wasm module (dist/saccade-train-*) only when called.
export { train, TrainingRun, PRESETS as trainingPresets } from './train.mjs';
