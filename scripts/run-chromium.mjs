// Runs an Emscripten program built for the web (-sENVIRONMENT=web -sSINGLE_FILE=1
// -sEXIT_RUNTIME=1) in headless Chromium and reports like Node would: its output in the log
// (PROGRAM.log unless --log says) and on stdout, its exit code as ours. For wasm features that
// Node 20 lacks or gets wrong (relaxed SIMD's int8 dot product).
//
//   node scripts/run-chromium.mjs [--without-avx-vnni | --js-flags=FLAGS] [--log=FILE] PROGRAM.js
//
// --js-flags goes to V8; --without-avx-vnni gives it the flags that make it compile relaxed
// SIMD's int8 dot product the way it does on an x86 CPU without AVX-VNNI (WITHOUT_AVX_VNNI). V8
// ignores a flag it does not know, so the first line of the log says how this engine computes
// that dot (scripts/relaxed-dot-lowering.mjs).
import { readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

import { relaxedDotLowering, WITHOUT_AVX_VNNI } from './relaxed-dot-lowering.mjs';

const options = { chromiumArgs: [], log: null };
let program = null;
for (const arg of process.argv.slice(2)) {
  if (arg.startsWith('--js-flags=')) options.chromiumArgs.push(arg);
  else if (arg === '--without-avx-vnni') options.chromiumArgs.push(WITHOUT_AVX_VNNI);
  else if (arg.startsWith('--log=')) options.log = arg.slice('--log='.length);
  else if (!arg.startsWith('--') && program === null) program = arg;
  else {
    program = null;
    break;
  }
}
if (!program) {
  console.error('usage: node scripts/run-chromium.mjs [--without-avx-vnni | --js-flags=FLAGS] [--log=FILE] PROGRAM.js');
  process.exit(2);
}

const TIMEOUT_MS = 600_000;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: options.chromiumArgs });
let status = 1;
const lines = [];
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => lines.push(`uncaught: ${e.message}`));
  lines.push(await page.evaluate(relaxedDotLowering));
  await page.exposeFunction('saccadeOut', (s) => lines.push(s));
  const exited = new Promise((resolve) => page.exposeFunction('saccadeExit', resolve));
  await page.evaluate(() => {
    window.Module = { print: (s) => saccadeOut(s), printErr: (s) => saccadeOut(s), onExit: (code) => saccadeExit(code) };
  });
  await page.addScriptTag({ content: readFileSync(program, 'utf8') });
  let timer;
  status = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), TIMEOUT_MS)))]);
  clearTimeout(timer);
  if (status === 'timeout') {
    lines.push(`${program}: timed out after ${TIMEOUT_MS / 1000} s`);
    status = 124;
  }
} finally {
  await browser.close();
}
const text = lines.join('\n') + '\n';
writeFileSync(options.log ?? `${program}.log`, text);
process.stdout.write(text);
process.exit(status);
