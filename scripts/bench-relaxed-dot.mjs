#!/usr/bin/env node
// Benchmark (not a test): how fast this machine's Chromium runs relaxed SIMD's int8 dot product
// (i32x4.relaxed_dot_i8x16_i7x16_add_s) against the SIMD128 int16 dot the kernels use
// (i32x4.dot_i16x8_s + i32x4.add), in multiply-adds per second on one thread. V8 lowers the
// relaxed dot to one instruction only where it chooses to use AVX-VNNI (or Arm's sdot); expanded
// (pmaddubsw + pmaddwd + paddd) it loses to the int16 dot, and the kernels that lose with it take
// their int16 paths there (src/kernels.c's TWO_PATHS). Eight independent accumulators, so
// throughput, not latency, is timed.
//
// It prints how this engine compiles the relaxed dot (scripts/relaxed-dot-lowering.mjs): a CPU's
// AVX-VNNI flag alone does not say (a VM may pass it through while V8 does not use it); with
// --js-flags='--no-enable-avx-vnni --no-enable-avx-vnni-int8' V8 compiles it as on x86 without
// AVX-VNNI. On an AMD EPYC (Zen 5) with AVX-VNNI, Chromium 156, the relaxed dot timed 34.3 G/s
// with one vpdpbusd and 35.4 G/s without (int16 dot 45.7 and 52.2): something in this loop, not
// the dot, bounds it there, while the kernels gain from the relaxed dot on that machine. Read
// its figure as a lower bound.
//
//   node scripts/bench-relaxed-dot.mjs [--js-flags=FLAGS]
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

import { relaxedDotLowering } from './relaxed-dot-lowering.mjs';

// The module, built in the page: (func (export "r"|"d") (param i32) (result i32)), each looping n
// times over eight accumulators.
function benchInPage() {
  const leb = (n) => {
    const o = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n) b |= 0x80;
      o.push(b);
    } while (n);
    return o;
  };
  const RELAXED_DOT = 0x113, DOT_I16 = 186, ADD_I32 = 174;
  // locals: 0 n; 1-8 a[k]; 9 b; 10-17 acc[k]
  function body(relaxed) {
    const c = [];
    for (let k = 0; k < 8; k++) c.push(0xfd, 0x0c, ...Array.from({ length: 16 }, (_, i) => ((i * 7 + k * 13) % 100) - 50 & 0xff), 0x21, 1 + k);
    c.push(0xfd, 0x0c, ...Array.from({ length: 16 }, (_, i) => (i * 5) % 60), 0x21, 9);
    c.push(0x03, 0x40); // loop
    for (let k = 0; k < 8; k++) {
      if (relaxed) c.push(0x20, 1 + k, 0x20, 9, 0x20, 10 + k, 0xfd, ...leb(RELAXED_DOT), 0x21, 10 + k);
      else c.push(0x20, 10 + k, 0x20, 1 + k, 0x20, 9, 0xfd, ...leb(DOT_I16), 0xfd, ...leb(ADD_I32), 0x21, 10 + k);
    }
    c.push(0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x0d, 0, 0x0b); // n -= 1; br_if n; end
    c.push(0x20, 10);
    for (let k = 1; k < 8; k++) c.push(0x20, 10 + k, 0xfd, ...leb(ADD_I32));
    c.push(0xfd, 0x1b, 0, 0x0b); // i32x4.extract_lane 0
    const fn = [1, 17, 0x7b, ...c];
    return [...leb(fn.length), ...fn];
  }
  const sec = (id, content) => [id, ...leb(content.length), ...content];
  const bytes = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...sec(1, [1, 0x60, 1, 0x7f, 1, 0x7f]), ...sec(3, [2, 0, 0]),
    ...sec(7, [2, 1, 0x72, 0, 0, 1, 0x64, 0, 1]), ...sec(10, [2, ...body(true), ...body(false)])]);
  if (!WebAssembly.validate(bytes)) return { error: 'this engine lacks relaxed SIMD' };
  const { r, d } = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
  const n = 20_000_000, best = { relaxed: 0, int16: 0 };
  for (const [name, f, macs] of [['relaxed', r, 16], ['int16', d, 8], ['relaxed', r, 16], ['int16', d, 8]]) {
    f(1000);
    const t0 = performance.now();
    f(n);
    best[name] = Math.max(best[name], (n * 8 * macs) / ((performance.now() - t0) / 1000) / 1e9);
  }
  return { relaxedGmacPerS: +best.relaxed.toFixed(1), int16GmacPerS: +best.int16.toFixed(1) };
}

const jsFlags = process.argv.find((a) => a.startsWith('--js-flags='));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: jsFlags ? [jsFlags] : [] });
try {
  const page = await browser.newPage();
  const lowering = await page.evaluate(relaxedDotLowering);
  const result = await page.evaluate(`(${benchInPage.toString()})()`);
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  const cpu = info.match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown CPU';
  const vnni = /\bavx_vnni\b/.test(info) ? 'with AVX-VNNI' : 'without AVX-VNNI';
  console.log(`${cpu} (${vnni}), Chromium ${browser.version()}${jsFlags ? ` ${jsFlags}` : ''}, one thread:`, result);
  console.log(lowering);
} finally {
  await browser.close();
}
