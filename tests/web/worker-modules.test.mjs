// The model worker requests the library's modules all at once from a list (web/worker-modules.mjs):
// the list must be the import graph of src/js/load.mjs, or the worker would fetch a missing module
// level by level again (slower), or fetch one it never runs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { LIBRARY_MODULES } from '../../web/worker-modules.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const libraryDir = path.join(root, 'src/js');

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
  assert.deepEqual(LIBRARY_MODULES.slice(0, first.length).sort(), first.sort());
  assert.deepEqual([...LIBRARY_MODULES].sort(), graph.sort());
});

test('the graph walk sees multi-line imports and re-exports', () => {
  const graph = [...importGraph(path.join(libraryDir, 'index.mjs'))].map((f) => path.basename(f));
  for (const name of ['load.mjs', 'train.mjs', 'attend.mjs', 'model.mjs', 'timing.mjs']) assert.ok(graph.includes(name), name);
});
