// Runs an Emscripten program built for the web (-sENVIRONMENT=web -sSINGLE_FILE=1
// -sEXIT_RUNTIME=1) in headless Chromium and reports like Node would: its output in
// PROGRAM.log and on stdout, its exit code as ours. For wasm features that Node 20 lacks or gets
// wrong (relaxed SIMD's int8 dot product).
//
//   node scripts/run-chromium.mjs PROGRAM.js
import { readFileSync, writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const program = process.argv[2];
if (!program) {
  console.error('usage: node scripts/run-chromium.mjs PROGRAM.js');
  process.exit(2);
}
const TIMEOUT_MS = 600_000;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium' });
let status = 1;
const lines = [];
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => lines.push(`uncaught: ${e.message}`));
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
writeFileSync(`${program}.log`, text);
process.stdout.write(text);
process.exit(status);
