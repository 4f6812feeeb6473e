// Prepended (--extern-pre-js) to the Emscripten ES-module glue in dist/. In Node, the 3.1.6 glue
// still calls require() (for built-in modules only: fs, path, worker_threads, perf_hooks) and
// reads __dirname, which do not exist in ES modules: define them. process.getBuiltinModule
// (Node >= 20.16) is synchronous, so the glue needs no top-level await and bundlers see no
// 'node:' import. Browsers and workers skip this block.
var require, __filename, __dirname;
if (typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string') {
  require = (id) => process.getBuiltinModule(id);
  __filename = require('node:url').fileURLToPath(import.meta.url);
  __dirname = require('node:path').dirname(__filename);
}
