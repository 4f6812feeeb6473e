// The relaxed-SIMD build in Chromium: the loader picks it (Chromium runs i32x4.relaxed_dot_i8x16_
// i7x16_add_s right), on an isolated page (threaded, 2 threads) and a plain one (single-threaded);
// simd: 'simd128' falls back to the SIMD128 build; and the logits of every position are the same
// bytes in both builds, for both shipped models (Q8_0) and generated Q4_0 and K-quant models —
// the kernels differ, the integer dot products they compute do not. The same again with V8
// compiling the relaxed dot as it does on x86 CPUs without AVX-VNNI (pair sums that saturate
// past 16 bits), where some kernels take their int16 paths instead (src/kernels.c, TWO_PATHS).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { devDir } from './dev-models.mjs';
import { relaxedDotLowering, WITHOUT_AVX_VNNI } from '../../scripts/relaxed-dot-lowering.mjs';
import { launch, modelA, modelB, root, useBrowser } from './helpers.mjs';

const env = useBrowser();

/** A random-weight gpt2 of `type` (no tokenizer needed: forward takes ids), beside the page's development models. */
function generated(type) {
  const file = path.join(devDir, `relaxed-gpt2-${type}.gguf`);
  if (!existsSync(file)) {
    mkdirSync(devDir, { recursive: true });
    execFileSync(path.join(root, 'build/tools/make_model'), [`${file}.${process.pid}.tmp`, '--type', type, '--seed', '17']);
    renameSync(`${file}.${process.pid}.tmp`, file);
  }
  return file;
}

/**
 * In one page of `server`: loads each of `files` in turn with `options`, returns for each its
 * runtime and the bytes of every position's logits (one page for all: a page each took most of
 * the time). `noRelaxed`: the page's WebAssembly.validate refuses relaxed SIMD (an engine
 * without it). `browser`: another Chromium than the file's.
 */
async function runAll(server, files, options, noRelaxed = false, browser = env.browser) {
  const page = await browser.newPage();
  try {
    if (noRelaxed)
      await page.addInitScript(() => {
        const validate = WebAssembly.validate;
        const hasRelaxedDot = (b) => new Uint8Array(b).some((x, i, a) => x === 0xfd && a[i + 1] === 0x93 && a[i + 2] === 0x02);
        WebAssembly.validate = (bytes) => !hasRelaxedDot(bytes) && validate(bytes);
      });
    const isolation = server === env.srv.isolated
      ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
    await page.route(`${server.url}/web/relaxed-test.html`, (route) => route.fulfill({
      status: 200, body: '<!doctype html><meta charset="utf-8"><title>relaxed</title>',
      headers: { 'content-type': 'text/html', ...isolation } }));
    await page.goto(`${server.url}/web/relaxed-test.html`);
    return await page.evaluate(async ({ urls, options }) => {
      const { loadModel } = await import('/src/js/index.mjs');
      const results = [];
      for (const url of urls) {
        const m = await loadModel(url, options);
        try {
          const n = Math.min(24, m.info.contextLength ?? 24);
          const ids = Array.from({ length: n }, (_, i) => (i * 7 + 3) % m.info.vocabSize);
          const encdec = m.info.architecture === 'encdec';
          const logits = m.forward(ids, { allLogits: true, ...(encdec ? { source: ids } : {}) });
          const { relaxed, relaxedReason, variant, threads } = m.runtime;
          results.push({ relaxed, relaxedReason, variant, threads, bytes: Array.from(new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength)) });
        } finally {
          m.dispose();
        }
      }
      return results;
    }, { urls: files.map((file) => `/${path.relative(root, file)}`), options });
  } finally {
    await page.close();
  }
}

/** One file in a page of its own (runAll's arguments). */
const run = async (server, file, ...rest) => (await runAll(server, [file], ...rest))[0];

for (const isolated of [true, false]) {
  const where = isolated ? 'isolated page, 2 threads' : 'plain page, 1 thread';
  test(`${where}: the relaxed build by default, SIMD128 on request, the same logits bytes`, async () => {
    await env.ready;
    const server = isolated ? env.srv.isolated : env.srv.plain;
    const files = [modelA().file, modelB().file, ...['q4_0', 'q2_k', 'q3_k', 'q4_k', 'q5_k', 'q6_k'].map(generated)];
    const options = isolated ? { threads: 2 } : {};
    const relaxedRuns = await runAll(server, files, options);
    const simd128Runs = await runAll(server, files, { ...options, simd: 'simd128' });
    for (const [i, file] of files.entries()) {
      const [relaxed, simd128] = [relaxedRuns[i], simd128Runs[i]];
      const name = path.basename(file);
      assert.equal(relaxed.relaxed, true, `${name}: ${relaxed.relaxedReason}`);
      assert.match(relaxed.relaxedReason, /has relaxed SIMD's int8 dot product/);
      assert.deepEqual([relaxed.variant, relaxed.threads], isolated ? ['mt', 2] : ['st', 1]);
      assert.equal(simd128.relaxed, false);
      assert.equal(simd128.relaxedReason, "simd 'simd128' requested");
      assert.ok(relaxed.bytes.length > 0);
      assert.ok(Buffer.from(relaxed.bytes).equals(Buffer.from(simd128.bytes)), `${name}: the logits differ between the builds`);
    }
  });
}

test("simd: 'relaxed' loads the relaxed build; an unknown simd value is refused", async () => {
  await env.ready;
  const r = await run(env.srv.plain, modelA().file, { simd: 'relaxed' });
  assert.equal(r.relaxed, true);
  assert.equal(r.relaxedReason, "simd 'relaxed' requested; this engine has relaxed SIMD's int8 dot product");
  await assert.rejects(() => run(env.srv.plain, modelA().file, { simd: 'avx512' }),
    /simd must be 'relaxed' \(the relaxed-SIMD build\) or 'simd128', got 'avx512'/);
});

test('an engine without relaxed SIMD gets the SIMD128 build, and simd: relaxed is refused with why', async () => {
  await env.ready;
  const r = await run(env.srv.plain, modelA().file, {}, true);
  assert.deepEqual([r.relaxed, r.relaxedReason], [false, 'this engine lacks relaxed SIMD']);
  await assert.rejects(() => run(env.srv.plain, modelA().file, { simd: 'relaxed' }, true),
    /the relaxed-SIMD build cannot run here: this engine lacks relaxed SIMD/);
});

const noVnni = process.arch === 'x64' ? false : "V8's lowering without AVX-VNNI is x86-64's";
test('V8 as on x86 without AVX-VNNI: the relaxed build gives the SIMD128 build\'s logits bytes', { skip: noVnni }, async () => {
  await env.ready;
  const browser = await launch([WITHOUT_AVX_VNNI]);
  try {
    const page = await browser.newPage();
    const lowering = await page.evaluate(relaxedDotLowering);
    await page.close();
    assert.match(lowering, /^relaxed dot lowering: saturating pair sums/, 'the flag did not change how V8 compiles the dot');
    const server = env.srv.isolated;
    const files = [modelA().file, ...['q4_0', 'q2_k', 'q3_k', 'q4_k', 'q5_k', 'q6_k'].map(generated)];
    const relaxedRuns = await runAll(server, files, { threads: 2 }, false, browser);
    const simd128Runs = await runAll(server, files, { threads: 2, simd: 'simd128' }, false, browser);
    for (const [i, file] of files.entries()) {
      const [relaxed, simd128] = [relaxedRuns[i], simd128Runs[i]];
      const name = path.basename(file);
      assert.equal(relaxed.relaxed, true, `${name}: ${relaxed.relaxedReason}`);
      assert.equal(simd128.relaxed, false);
      assert.ok(relaxed.bytes.length > 0);
      assert.ok(Buffer.from(relaxed.bytes).equals(Buffer.from(simd128.bytes)), `${name}: the logits differ between the builds`);
    }
  } finally {
    await browser.close();
  }
});
