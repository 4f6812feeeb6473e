// The relaxed-SIMD build's choice in Node: Node 20 lacks relaxed SIMD unless flagged, and with
// --experimental-wasm-relaxed-simd its V8 validates i32x4.relaxed_dot_i8x16_i7x16_add_s but
// computes it wrong, which the loader's test vector catches: the SIMD128 build runs either way,
// simd: 'relaxed' is refused with the reason, and a bad simd value is refused on every call.
// (Chromium, where the relaxed build runs: tests/web/relaxed.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import { chooseRuntime, loadModel } from '../../src/js/index.mjs';

const runtimeIn = (flags) => JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', `
  import { chooseRuntime } from './src/js/index.mjs';
  const r = chooseRuntime({ threads: 1 });
  let refused = null;
  try { chooseRuntime({ simd: 'relaxed' }); } catch (e) { refused = { code: e.code, message: e.message }; }
  console.log(JSON.stringify({ relaxed: r.relaxed, relaxedReason: r.relaxedReason, refused }));`], { encoding: 'utf8' }));

test('without the flag: no relaxed SIMD, the SIMD128 build, and simd: relaxed refused with why', () => {
  const r = runtimeIn([]);
  assert.deepEqual(r, { relaxed: false, relaxedReason: 'this engine lacks relaxed SIMD',
    refused: { code: 'SAC_ERR_UNSUPPORTED', message: 'the relaxed-SIMD build cannot run here: this engine lacks relaxed SIMD' } });
});

test("with --experimental-wasm-relaxed-simd: Node 20's wrong dot product is caught by the test vector", () => {
  const r = runtimeIn(['--experimental-wasm-relaxed-simd']);
  if (r.relaxed) return; // a later Node that computes it right: the relaxed build is then fine here
  assert.match(r.relaxedReason, /^this engine's relaxed SIMD int8 dot product is wrong \(a test gave \[.*\], not \[870,-69872\]\)$/);
  assert.equal(r.refused.code, 'SAC_ERR_UNSUPPORTED');
  assert.equal(r.refused.message, `the relaxed-SIMD build cannot run here: ${r.relaxedReason}`);
});

test("simd: 'simd128' is always possible; an unknown simd is refused by chooseRuntime and loadModel alike", async () => {
  const r = chooseRuntime({ threads: 1, simd: 'simd128' });
  assert.deepEqual([r.relaxed, r.relaxedReason], [false, "simd 'simd128' requested"]);
  const words = { message: /^simd must be 'relaxed' \(the relaxed-SIMD build\) or 'simd128', got 'sse'$/ };
  assert.throws(() => chooseRuntime({ simd: 'sse' }), words);
  await assert.rejects(() => loadModel(new Uint8Array(8), { simd: 'sse' }), words);
});
