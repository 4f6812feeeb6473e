// How a page's engine computes relaxed SIMD's int8 dot product on operands outside the 7-bit
// range the kernels keep to: as V8 does with AVX-VNNI (vpdpbusd), with AVX-VNNI-INT8 or on ARM
// (signed products), or without either on x86 (pmaddubsw pair sums that saturate; the case
// where src/kernels.c's relaxed builds take their int16 paths: relaxed_dot_saturating). Passed
// to Playwright's page.evaluate, so it is self-contained. Used by scripts/run-chromium.mjs,
// scripts/bench-wasm.mjs, scripts/bench-relaxed-dot.mjs and tests/web/relaxed.test.mjs.

/** Chromium's argument for V8 to compile the dot as on x86 CPUs without AVX-VNNI (nor AVX-VNNI-INT8). */
export const WITHOUT_AVX_VNNI = '--js-flags=--no-enable-avx-vnni --no-enable-avx-vnni-int8';

/**
 * In the page: one i32x4.relaxed_dot_i8x16_i7x16_add_s of 127s and 200s (200 is outside the
 * 7-bit range the kernels keep to, where engines may differ). AVX-VNNI's vpdpbusd takes 200 as
 * unsigned: 4 · 127 · 200 = 101600; AVX-VNNI-INT8's vpdpbssd and ARM's dots as signed (-56):
 * -28448; the lowering without them (pmaddubsw, pmaddwd) saturates each pair's 50800 to 32767
 * and gives 65534; an engine without relaxed SIMD refuses the module.
 */
export function relaxedDotLowering() {
  const splat = (byte) => [0xfd, 0x0c, ...Array(16).fill(byte)]; // v128.const
  const body = [0x00, ...splat(127), ...splat(200), ...splat(0),
    0xfd, 0x93, 0x02, // i32x4.relaxed_dot_i8x16_i7x16_add_s
    0xfd, 0x1b, 0x00, // i32x4.extract_lane 0
    0x0b];
  const bytes = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
    0x03, 0x02, 0x01, 0x00, // one function
    0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, // export "f"
    0x0a, body.length + 2, 0x01, body.length, ...body]);
  if (!WebAssembly.validate(bytes)) return 'relaxed dot lowering: none (this engine lacks relaxed SIMD)';
  const f = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.f;
  let lane = 0;
  for (let i = 0; i < 2000; i++) lane = f(); // called often, in case a tier computed it otherwise
  const how = { 101600: 'exact, unsigned by signed (AVX-VNNI)', [-28448]: 'exact, signed by signed (AVX-VNNI-INT8 or ARM)',
    65534: 'saturating pair sums (x86 without AVX-VNNI)' }[lane] ?? 'unknown';
  return `relaxed dot lowering: ${how}; 127·200 four times gives ${lane}`;
}
