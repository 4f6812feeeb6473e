// Rewrites the relaxed builds' placeholder instruction into the one it stands for.
//
//   node scripts/relaxed-patch.mjs IN.wasm OUT.wasm
//   node scripts/relaxed-patch.mjs IN.js OUT.js      (an Emscripten -sSINGLE_FILE program)
//
// clang 14 cannot emit i32x4.relaxed_dot_i8x16_i7x16_add_s (opcode 0xfd 0x113), so src/kernels.c
// writes f32x4.relaxed_fma in its place (the relaxed-simd prototype's 0xfd 0xaf, which clang 14
// and binaryen 108 know): the same operands and result (v128 v128 v128 -> v128) and, as LEB128,
// the same three bytes long (fd af 01 -> fd 93 02). This script walks the code section one
// instruction at a time, decoding every immediate, so it rewrites opcodes only, never bytes
// that happen to match inside an immediate (a v128.const, a shuffle's lanes, an i32.const).
//
// It refuses (exit 1, with the offset) an opcode it does not know, a module without any
// placeholder, and a placeholder in a function whose name (from the name section, which the
// relaxed link keeps for this check with --profiling-funcs) is not one of the kernels that use
// it; the name section is then dropped. The output must pass WebAssembly.validate, for which
// Node 20 needs --experimental-wasm-relaxed-simd (it validates the instruction; it runs it
// wrong, see src/js/runtime.mjs).
import { readFileSync, writeFileSync } from 'node:fs';

const PLACEHOLDER = 0xaf; // f32x4.relaxed_fma, relaxed-simd prototype opcode
const RELAXED_DOT = 0x113; // i32x4.relaxed_dot_i8x16_i7x16_add_s
/**
 * The functions the placeholder may appear in: the K-quant kernels (their matvec, and their
 * matmat's leftover rows), the 4- and 5-bit formats' matmat (its panel), the 4-bit formats'
 * matvec (nibble_dot), what they inline, the paths of the kernels that have two (kernels.c's
 * TWO_PATHS: the K-quant matmat's name_relaxed and name_int16, whose leftover rows take the
 * matvec's dot; the 4-bit matvec's and Q8_0 matmat's name_relaxed only), whose name function
 * also holds the probe of the engine's dot (relaxed_dot_saturating, relaxed_dot_unsigned8).
 */
export const KERNEL_FUNCTIONS =
  /^(sac_matvec_q[2-6]_K|sac_matmat_q[2-6]_K(_relaxed|_int16)?|sac_matmat_q[45]_[01]|sac_matmat_q8_0(_relaxed)?|sac_matvec_q4_[01](_relaxed)?|kquant_(dot|rows4_in_(order|turn)|matvec)|kdot_(q[2-6]_K|nibbles)|dot16_u8|nibble_dot|row_block_dot|quant_(rows4|matvec_rows|matvec))$/;

class Reader {
  constructor(bytes, pos = 0) {
    this.b = bytes;
    this.pos = pos;
  }
  byte() {
    if (this.pos >= this.b.length) throw new Error(`unexpected end of the module at offset ${this.pos}`);
    return this.b[this.pos++];
  }
  /** An unsigned LEB128 (at most 32 bits); returns its value. */
  u32() {
    let result = 0, shift = 0, byte;
    do {
      byte = this.byte();
      if (shift > 28) throw new Error(`LEB128 too long at offset ${this.pos - 1}`);
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  }
  /** A signed LEB128 of at most `bits` bits (its value is not needed, only its length). */
  sleb(bits) {
    const max = Math.ceil(bits / 7);
    for (let n = 1; ; n++) {
      if (n > max) throw new Error(`LEB128 too long at offset ${this.pos - 1}`);
      if (!(this.byte() & 0x80)) return;
    }
  }
  skip(n) {
    if (this.pos + n > this.b.length) throw new Error(`unexpected end of the module at offset ${this.pos}`);
    this.pos += n;
  }
  memarg() {
    const align = this.u32();
    if (align & 0x40) this.u32(); // multi-memory: a memory index follows
    this.u32(); // offset (wasm32)
  }
  name() {
    const n = this.u32();
    const s = new TextDecoder().decode(this.b.subarray(this.pos, this.pos + n));
    this.skip(n);
    return s;
  }
}

const VALTYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

// 0xfd opcodes with a memarg (loads, stores), a memarg and a lane, or one lane byte.
const SIMD_MEMARG = new Set([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x5c, 0x5d]);
const SIMD_MEMARG_LANE = new Set([0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x5b]);
const SIMD_LANE = new Set([0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22]);
// The final SIMD proposal leaves these 0xfd opcodes unassigned; a module holding one is not ours.
const SIMD_UNASSIGNED = new Set([0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb, 0xc2, 0xc5, 0xc6, 0xcf,
  0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee]);

/**
 * Decodes one instruction at r.pos (advancing past it); returns { depth: +1 | -1 | 0, simd } where
 * simd is the 0xfd sub-opcode and its LEB's start and length when it is one.
 */
function instruction(r) {
  const at = r.pos;
  const op = r.byte();
  if (op === 0x02 || op === 0x03 || op === 0x04) { // block, loop, if: a block type
    const t = r.b[r.pos];
    if (t === 0x40 || VALTYPES.has(t)) r.pos++;
    else r.sleb(33);
    return { depth: 1 };
  }
  if (op === 0x0b) return { depth: -1 }; // end
  if (op <= 0x01 || op === 0x05 || op === 0x0f || op === 0x1a || op === 0x1b || op === 0xd1 ||
    (op >= 0x45 && op <= 0xc4)) return { depth: 0 }; // no immediates
  switch (op) {
    case 0x0c: case 0x0d: case 0x10: case 0xd2: // br, br_if, call, ref.func
    case 0x20: case 0x21: case 0x22: case 0x23: case 0x24: case 0x25: case 0x26: // locals, globals, tables
    case 0x3f: case 0x40: // memory.size, memory.grow (a memory index)
      r.u32();
      return { depth: 0 };
    case 0x0e: { // br_table
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.u32();
      return { depth: 0 };
    }
    case 0x11: r.u32(); r.u32(); return { depth: 0 }; // call_indirect: type, table
    case 0x1c: { // select with types
      const n = r.u32();
      for (let i = 0; i < n; i++) r.byte();
      return { depth: 0 };
    }
    case 0x41: r.sleb(32); return { depth: 0 };
    case 0x42: r.sleb(64); return { depth: 0 };
    case 0x43: r.skip(4); return { depth: 0 };
    case 0x44: r.skip(8); return { depth: 0 };
    case 0xd0: r.byte(); return { depth: 0 }; // ref.null t
  }
  if (op >= 0x28 && op <= 0x3e) { r.memarg(); return { depth: 0 }; } // loads, stores
  if (op === 0xfc) {
    const sub = r.u32();
    if (sub <= 7) return { depth: 0 }; // saturating truncations
    if (sub === 8) { r.u32(); r.u32(); return { depth: 0 }; } // memory.init data, memory
    if (sub === 9 || sub === 13 || (sub >= 15 && sub <= 17)) { r.u32(); return { depth: 0 }; }
    if (sub === 10 || sub === 12 || sub === 14) { r.u32(); r.u32(); return { depth: 0 }; }
    if (sub === 11) { r.u32(); return { depth: 0 }; } // memory.fill
    throw new Error(`unknown opcode 0xfc ${sub} at offset ${at}`);
  }
  if (op === 0xfe) { // threads
    const sub = r.u32();
    if (sub === 0x03) { r.byte(); return { depth: 0 }; } // atomic.fence
    if (sub <= 0x02 || (sub >= 0x10 && sub <= 0x4e)) { r.memarg(); return { depth: 0 }; }
    throw new Error(`unknown opcode 0xfe ${sub} at offset ${at}`);
  }
  if (op === 0xfd) {
    const start = r.pos;
    const sub = r.u32();
    const simd = { sub, start, length: r.pos - start };
    if (SIMD_MEMARG.has(sub)) r.memarg();
    else if (SIMD_MEMARG_LANE.has(sub)) { r.memarg(); r.byte(); }
    else if (SIMD_LANE.has(sub)) r.byte();
    else if (sub === 0x0c || sub === 0x0d) r.skip(16); // v128.const, i8x16.shuffle
    else if (sub === PLACEHOLDER) return { depth: 0, simd };
    else if (sub > 0xff || SIMD_UNASSIGNED.has(sub)) throw new Error(`unknown opcode 0xfd ${sub} at offset ${at}`);
    return { depth: 0, simd };
  }
  throw new Error(`unknown opcode 0x${op.toString(16)} at offset ${at}`);
}

/** The sections of a module: [{ id, start (of the contents), end, headerStart, name (custom) }]. */
function sections(bytes) {
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || magic.some((b, i) => bytes[i] !== b)) throw new Error('not a WebAssembly 1.0 module');
  const r = new Reader(bytes, 8);
  const out = [];
  while (r.pos < bytes.length) {
    const headerStart = r.pos;
    const id = r.byte();
    const size = r.u32();
    const start = r.pos;
    const end = start + size;
    if (end > bytes.length) throw new Error(`section ${id} at offset ${headerStart} runs past the end`);
    const s = { id, start, end, headerStart };
    if (id === 0) s.name = new Reader(bytes, start).name();
    out.push(s);
    r.pos = end;
  }
  return out;
}

/** Imported functions (they come first in the function index space). */
function importedFunctions(bytes, section) {
  if (!section) return 0;
  const r = new Reader(bytes, section.start);
  let n = 0;
  for (let i = r.u32(); i > 0; i--) {
    r.name();
    r.name();
    const kind = r.byte();
    if (kind === 0x00) { r.u32(); n++; } // function: type index
    else if (kind === 0x01) { r.byte(); limits(r); } // table
    else if (kind === 0x02) limits(r); // memory
    else if (kind === 0x03) { r.byte(); r.byte(); } // global
    else throw new Error(`unknown import kind ${kind}`);
  }
  return n;
}

function limits(r) {
  const flags = r.byte();
  r.u32();
  if (flags & 1) r.u32();
}

/** Function index → name, from the name section's function names (an empty Map without one). */
function functionNames(bytes, section) {
  const names = new Map();
  if (!section) return names;
  const r = new Reader(bytes, section.start);
  r.name();
  while (r.pos < section.end) {
    const id = r.byte();
    const end = r.u32() + r.pos;
    if (id === 1) for (let i = r.u32(); i > 0; i--) names.set(r.u32(), r.name());
    r.pos = end;
  }
  return names;
}

/**
 * The module `bytes` with every placeholder rewritten to the relaxed dot product and its name
 * section dropped; `allow` (a RegExp) must match the name of every function holding one.
 * Returns { bytes, count, functions: { name: count } }; throws on anything it cannot vouch for.
 */
export function patchRelaxed(bytes, { allow = KERNEL_FUNCTIONS } = {}) {
  const list = sections(bytes);
  const code = list.find((s) => s.id === 10);
  if (!code) throw new Error('the module has no code section');
  const nameSection = list.find((s) => s.id === 0 && s.name === 'name');
  const names = functionNames(bytes, nameSection);
  if (!nameSection || names.size === 0)
    throw new Error('the module has no function names (link it with --profiling-funcs) to check where the placeholders are');
  const first = importedFunctions(bytes, list.find((s) => s.id === 2));
  const out = new Uint8Array(bytes);
  const r = new Reader(out, code.start);
  const sites = [];
  const bodies = r.u32();
  for (let f = 0; f < bodies; f++) {
    const size = r.u32();
    const end = r.pos + size;
    for (let groups = r.u32(); groups > 0; groups--) {
      r.u32();
      const t = r.byte();
      if (!VALTYPES.has(t)) throw new Error(`unknown local type 0x${t.toString(16)} at offset ${r.pos - 1}`);
    }
    let depth = 0;
    while (depth >= 0) {
      if (r.pos >= end) throw new Error(`function ${first + f} runs past its body (offset ${end})`);
      const ins = instruction(r);
      depth += ins.depth;
      if (ins.simd?.sub === PLACEHOLDER) {
        const name = names.get(first + f) ?? `function ${first + f}`;
        if (ins.simd.length !== 2) throw new Error(`a placeholder at offset ${ins.simd.start} is not encoded in 2 bytes`);
        if (!allow.test(name)) throw new Error(`a placeholder (f32x4.relaxed_fma) in ${name}, which is not a relaxed kernel`);
        sites.push({ at: ins.simd.start, name });
      }
    }
    if (r.pos !== end) throw new Error(`function ${first + f}: its last end is at ${r.pos}, its body ends at ${end}`);
  }
  if (r.pos !== code.end) throw new Error('the code section has bytes after its last function');
  if (sites.length === 0) throw new Error('no placeholder (f32x4.relaxed_fma) in the module: nothing to patch');
  const functions = {};
  for (const { at, name } of sites) {
    out[at] = (RELAXED_DOT & 0x7f) | 0x80;
    out[at + 1] = RELAXED_DOT >> 7;
    functions[name] = (functions[name] ?? 0) + 1;
  }
  const patched = new Uint8Array(out.length - (nameSection.end - nameSection.headerStart));
  patched.set(out.subarray(0, nameSection.headerStart));
  patched.set(out.subarray(nameSection.end), nameSection.headerStart);
  return { bytes: patched, count: sites.length, functions };
}

/**
 * Whether the engine validates `bytes`; throws when it cannot tell (no relaxed SIMD: Node 20
 * needs --experimental-wasm-relaxed-simd, which the make rules pass).
 */
function validates(bytes) {
  // (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2 i32x4.relaxed_dot_i8x16_i7x16_add_s)
  const probe = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 8, 1, 0x60, 3, 0x7b, 0x7b, 0x7b, 1, 0x7b, 3, 2, 1, 0,
    10, 13, 1, 11, 0, 0x20, 0, 0x20, 1, 0x20, 2, 0xfd, 0x93, 0x02, 0x0b]);
  if (!WebAssembly.validate(probe))
    throw new Error('this node cannot validate relaxed SIMD (run it with --experimental-wasm-relaxed-simd)');
  return WebAssembly.validate(bytes);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error('usage: node scripts/relaxed-patch.mjs IN.wasm|IN.js OUT.wasm|OUT.js');
    process.exit(2);
  }
  try {
    let result;
    if (input.endsWith('.js')) {
      // an Emscripten SINGLE_FILE program: the module is a base64 data URL inside the glue
      const text = readFileSync(input, 'utf8');
      const urls = text.match(/data:application\/octet-stream;base64,[A-Za-z0-9+/=]+/g) ?? [];
      if (urls.length !== 1) throw new Error(`expected one embedded module, found ${urls.length}`);
      const prefix = 'data:application/octet-stream;base64,';
      result = patchRelaxed(Buffer.from(urls[0].slice(prefix.length), 'base64'));
      writeFileSync(output, text.replace(urls[0], () => prefix + Buffer.from(result.bytes).toString('base64')));
    } else {
      result = patchRelaxed(readFileSync(input));
      writeFileSync(output, result.bytes);
    }
    const { count, functions } = result;
    if (!validates(result.bytes)) throw new Error('the patched module does not validate');
    console.log(`${output}: ${count} × i32x4.relaxed_dot_i8x16_i7x16_add_s in ` +
      Object.entries(functions).map(([n, c]) => `${n} (${c})`).join(', ') + '; it validates');
  } catch (e) {
    console.error(`relaxed-patch: ${input}: ${e.message}`);
    process.exit(1);
  }
}
