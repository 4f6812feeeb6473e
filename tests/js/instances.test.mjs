// Wasm instances: a disposed model's instance serves the next load of the same runtime, unless a
// C call trapped in it (its heap may be inconsistent) — internal, so tested through the module.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { instantiate, release } from '../../src/js/instantiate.mjs';
import { chooseRuntime } from '../../src/js/runtime.mjs';

for (const variant of ['st', 'mt']) {
  test(`${variant}: a released instance is reused; one a C call trapped in is not`, async () => {
    const runtime = chooseRuntime({ variant, threads: 2 });
    const a = await instantiate(runtime);
    release(a);
    const b = await instantiate(runtime);
    assert.equal(b, a, 'reused');
    const other = await instantiate(chooseRuntime({ variant, threads: variant === 'st' ? 1 : 3 }));
    assert.notEqual(other, a, variant === 'st' ? 'the parked one was taken' : 'another pool size');
    // free() of a pointer that malloc never returned traps (dlmalloc aborts)
    assert.throws(() => b._free(0xfffffff0), WebAssembly.RuntimeError);
    release(b);
    const c = await instantiate(runtime);
    assert.notEqual(c, b, 'a trapped instance is terminated, not parked');
    release(c);
    release(other);
  });
}
