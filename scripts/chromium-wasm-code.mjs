// Prints the x86-64 code that this machine's Chromium compiles for one function of an Emscripten
// web program (-sENVIRONMENT=web -sSINGLE_FILE=1 -sEXIT_RUNTIME=1, linked with --profiling-funcs
// so that its name section names the functions). Chromium's release builds have no disassembler
// (--print-wasm-code prints only headers), but V8's --perf-prof writes every function it compiles,
// machine code included, to a jitdump file, which objdump disassembles. Liftoff and tier-up are
// off, so the code is the optimizing compiler's, as in a warmed-up run.
//
//   node scripts/chromium-wasm-code.mjs [--names NAMED.js] PROGRAM.js FUNCTION [ARGS...]
//
// ARGS go to the program's main. --names: take the names from another build of the same module
// (the relaxed builds drop their name section once scripts/relaxed-patch.mjs has checked it, so
// pass the unpatched program there). Needs objdump (binutils).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const argv = process.argv.slice(2);
let namesFrom;
if (argv[0] === '--names') [, namesFrom] = argv.splice(0, 2);
const [program, wanted, ...args] = argv;
if (!program || !wanted) {
  console.error('usage: node scripts/chromium-wasm-code.mjs [--names NAMED.js] PROGRAM.js FUNCTION [ARGS...]');
  process.exit(2);
}

function embeddedWasm(file) {
  const m = /data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`${file}: no embedded wasm (link with -sSINGLE_FILE=1)`);
  return Buffer.from(m[1], 'base64');
}

// Function index -> name, from the "name" custom section's function names (subsection 1).
function functionNames(wasm) {
  let at = 8;
  const leb = () => {
    let value = 0, shift = 0, byte;
    do {
      byte = wasm[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  const names = new Map();
  while (at < wasm.length) {
    const id = wasm[at++], size = leb(), end = at + size;
    if (id === 0) {
      const len = leb(), section = wasm.toString('utf8', at, at + len);
      at += len;
      while (section === 'name' && at < end) {
        const sub = wasm[at++], subSize = leb(), subEnd = at + subSize;
        if (sub === 1)
          for (let count = leb(); count > 0; count--) {
            const index = leb(), n = leb();
            names.set(index, wasm.toString('utf8', at, at + n));
            at += n;
          }
        at = subEnd;
      }
    }
    at = end;
  }
  return names;
}

// The code records of a jitdump file (JIT_CODE_LOAD): name and machine code.
function* codeRecords(dump) {
  for (let at = 40; at + 16 <= dump.length; ) {
    const id = dump.readUInt32LE(at), total = dump.readUInt32LE(at + 4);
    if (id === 0) {
      const size = Number(dump.readBigUInt64LE(at + 16 + 24));
      const nameAt = at + 16 + 40, nameEnd = dump.indexOf(0, nameAt);
      yield { name: dump.toString('utf8', nameAt, nameEnd), code: dump.subarray(nameEnd + 1, nameEnd + 1 + size) };
    }
    if (total === 0) break;
    at += total;
  }
}

const programPath = path.resolve(program); /* before the chdir below */
const names = functionNames(embeddedWasm(namesFrom ?? program));
const index = [...names].find(([, name]) => name === wanted)?.[0];
if (index === undefined) {
  console.error(`${namesFrom ?? program}: no function named ${wanted} (link with --profiling-funcs)`);
  process.exit(1);
}

// With --single-process the renderer writes its jitdump into this process's working directory.
const work = mkdtempSync(path.join(tmpdir(), 'chromium-wasm-code-'));
process.chdir(work);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--no-zygote', '--single-process', '--js-flags=--perf-prof --no-liftoff --no-wasm-tier-up'],
});
try {
  const page = await browser.newPage();
  const exited = new Promise((resolve) => page.exposeFunction('programExit', resolve));
  await page.evaluate((a) => {
    window.Module = { arguments: a, print: () => {}, printErr: () => {}, onExit: (code) => programExit(code) };
  }, args);
  await page.addScriptTag({ content: readFileSync(programPath, 'utf8') });
  await exited;
} finally {
  await browser.close();
}

const dumps = readdirSync(work).filter((f) => /^jit-\d+\.dump$/.test(f));
let code;
for (const f of dumps)
  for (const r of codeRecords(readFileSync(path.join(work, f))))
    /* a module without names: "wasm-function[N]"; with them: "JS:NAME-N-turbofan" */
    if (new RegExp(`wasm-function\\[${index}\\]|-${index}-turbofan$`).test(r.name)) code = r.code; /* the last compile */
if (!code) {
  console.error(`no code for ${wanted} (function ${index}) in ${dumps.join(', ') || 'no jitdump'}: did it run?`);
  rmSync(work, { recursive: true });
  process.exit(1);
}
writeFileSync(path.join(work, 'code.bin'), code);
process.stdout.write(`${wanted} (function ${index}): ${code.length} bytes of machine code\n`);
process.stdout.write(execFileSync('objdump', ['-D', '-b', 'binary', '-mi386:x86-64', path.join(work, 'code.bin')], { encoding: 'utf8' }));
rmSync(work, { recursive: true });
