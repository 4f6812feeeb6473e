// Prepended (--extern-pre-js) to the Emscripten ES-module glue in dist/. In Node, the 3.1.6 glue
// still calls require() and reads __dirname, which do not exist in ES modules: define them from
// import.meta.url. Browsers and workers skip this block.
var require, __filename, __dirname;
if (typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string') {
  const { createRequire } = await import('node:module');
  require = createRequire(import.meta.url);
  __filename = require('node:url').fileURLToPath(import.meta.url);
  __dirname = require('node:path').dirname(__filename);
}
