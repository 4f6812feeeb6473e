// Module graphs fetched at once rather than level by level: the model worker (unbundled, as the
// embed runs it) imports the library's modules by name (web/worker-modules.mjs). Each list must
// be its graph, or a missing module is fetched a level later again (slower), or one nobody runs
// is fetched on the way to the first token. The page runs bundles (bundle.test.mjs).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const libraryDir = path.join(root, 'src/js');
const webDir = path.join(root, 'web');

/** Every module `file` imports, directly or not (static imports and re-exports), itself included. */
function importGraph(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/^(?:import|export)\s[^'"]*?\sfrom\s+'([^']+)'|^import\s+'([^']+)'/gm)) {
    const spec = m[1] ?? m[2];
    if (spec.startsWith('.')) importGraph(path.resolve(path.dirname(file), spec), seen);
  }
  return seen;
}

/** The modules that worker-modules.mjs's `name` imports, relative to src/js/. */
function imported(name) {
  const text = readFileSync(path.join(webDir, 'worker-modules.mjs'), 'utf8');
  const body = text.slice(text.indexOf(`export const ${name} =`)).split(/\n\n/)[0];
  return [...body.matchAll(/import\('([^']+)'\)/g)].map((m) => path.relative(libraryDir, path.resolve(webDir, m[1])).split(path.sep).join('/'));
}
const INSTANCE_MODULES = imported('importInstance');
const OPEN_MODULES = imported('importOpen');
const LIBRARY_MODULES = [...INSTANCE_MODULES, ...OPEN_MODULES, ...imported('importRest')];

test("the worker's module list is load.mjs's import graph", () => {
  assert.deepEqual(INSTANCE_MODULES.slice(0, 2), ['instantiate.mjs', 'runtime.mjs']); // what warmUp uses
  assert.equal(OPEN_MODULES[0], 'preopen.mjs');
  assert.equal(imported('importRest')[0], 'load.mjs');
  const graph = [...importGraph(path.join(libraryDir, 'load.mjs'))].map((f) => path.relative(libraryDir, f).split(path.sep).join('/'));
  // instantiate.mjs's own graph comes first (the worker's 'prepare' needs only that)
  const first = [...importGraph(path.join(libraryDir, 'instantiate.mjs'))].map((f) => path.basename(f));
  assert.deepEqual([...INSTANCE_MODULES].sort(), first.sort());
  assert.deepEqual(LIBRARY_MODULES.slice(0, first.length), INSTANCE_MODULES);
  // then preopen.mjs's
  const open = [...importGraph(path.join(libraryDir, 'preopen.mjs'))].map((f) => path.basename(f)).filter((f) => !first.includes(f));
  assert.deepEqual([...OPEN_MODULES].sort(), open.sort());
  assert.deepEqual(LIBRARY_MODULES.slice(first.length, first.length + open.length), OPEN_MODULES);
  assert.deepEqual([...LIBRARY_MODULES].sort(), graph.sort());
});

test('the graph walk sees multi-line imports and re-exports', () => {
  const graph = [...importGraph(path.join(libraryDir, 'index.mjs'))].map((f) => path.basename(f));
  for (const name of ['load.mjs', 'train.mjs', 'attend.mjs', 'model.mjs', 'timing.mjs']) assert.ok(graph.includes(name), name);
});

test("the page starts the worker before its bundle, and app.mjs's graph leaves out what comes later", () => {
  const html = readFileSync(path.join(webDir, 'index.html'), 'utf8');
  const at = (s) => html.indexOf(s);
  assert.ok(at('new Worker(') > 0 && at('new Worker(') < at('src="bundle/app.mjs"'));
  assert.equal(at('rel="modulepreload"'), -1, 'nothing to preload: the page runs one bundle');
  const graph = [...importGraph(path.join(webDir, 'app.mjs'))].map((f) => path.relative(root, f).split(path.sep).join('/'));
  assert.equal(graph[1], 'web/boot.mjs', "boot.mjs is app.mjs's first import (it runs first in the bundle)");
  // what the first token does not need is not in the graph
  for (const later of ['web/model-cache.mjs', 'web/train/section.mjs', 'web/worker-probe.mjs']) assert.ok(!graph.includes(later), later);
});
