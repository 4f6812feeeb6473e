// Prints the -sEXPORTED_FUNCTIONS list for the wasm builds: every function declared in the
// public header (comments stripped), plus malloc and free, as a JSON array of "_name".
import { readFileSync } from 'node:fs';

const header = readFileSync(process.argv[2] ?? 'src/saccade.h', 'utf8')
  .replace(/\/\*[\s\S]*?\*\//g, '')
  .replace(/\/\/.*$/gm, '');
const names = new Set();
for (const [, name] of header.matchAll(/\b(sac_\w+)\s*\(/g)) names.add(name);
if (names.size === 0) throw new Error('no sac_* functions found in the header');
console.log(JSON.stringify(['_malloc', '_free', ...[...names].sort().map((n) => `_${n}`)]));
