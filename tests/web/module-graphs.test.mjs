// Module graphs fetched at once rather than level by level: the model worker requests the
// library's modules from a list (web/worker-modules.mjs), and the page modulepreloads app.mjs's
// graph (web/index.html). Each list must be its graph, or a missing module is fetched a level
// later again (slower), or one nobody runs is fetched on the way to the first token.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { INSTANCE_MODULES, LIBRARY_MODULES, OPEN_MODULES } from '../../web/worker-modules.mjs';

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

test("the worker's module list is load.mjs's import graph", () => {
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

test("the page's modulepreloads are app.mjs's graph, and the worker starts before it", () => {
  const html = readFileSync(path.join(webDir, 'index.html'), 'utf8');
  const preloads = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => path.resolve(webDir, m[1]));
  const graph = [...importGraph(path.join(webDir, 'app.mjs'))].filter((f) => !/\/web\/(app|boot)\.mjs$/.test(f));
  const rel = (files) => files.map((f) => path.relative(root, f).split(path.sep).join('/')).sort();
  assert.deepEqual(rel(preloads), rel(graph));
  // boot.mjs (which app.mjs imports) comes first, and the inline script before it starts the worker
  const at = (s) => html.indexOf(s);
  assert.ok(at('new Worker(') > 0 && at('new Worker(') < at('src="boot.mjs"') && at('src="boot.mjs"') < at('src="app.mjs"'));
  // what the first token does not need is not in the graph
  for (const later of ['web/model-cache.mjs', 'web/train/section.mjs', 'web/worker-probe.mjs']) assert.ok(!rel(graph).includes(later), later);
});
