// scripts/relaxed-patch.mjs: it rewrites the placeholder instruction (f32x4.relaxed_fma, fd af 01)
// to i32x4.relaxed_dot_i8x16_i7x16_add_s (fd 93 02) where it is an instruction, never where the
// same bytes sit inside an immediate, and refuses what it cannot vouch for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { patchRelaxed } from '../../scripts/relaxed-patch.mjs';

const PLACEHOLDER = [0xfd, 0xaf, 0x01];
const leb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const str = (s) => [...leb(s.length), ...new TextEncoder().encode(s)];
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];

const names = (name) => section(0, [...str('name'), 1, ...leb([1, 0, ...str(name)].length), 1, 0, ...str(name)]);

/** A module of one function () -> v128 named `name` (null: no name section) with the given body. */
function module(name, code) {
  const body = [0, ...code, 0x0b]; // no locals
  return new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 0, 1, 0x7b]), // type: () -> v128
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]), // memory 1 page
    ...section(10, [1, ...leb(body.length), ...body]),
    ...(name === null ? [] : names(name))]);
}

// The placeholder's bytes inside an i32.const (22525 is fd af 01 as LEB128), a memarg's offset,
// a v128.const and a shuffle's lanes, then one real placeholder on three v128 operands.
const decoys = [0x41, ...PLACEHOLDER, 0x1a, // i32.const 22525, drop
  0x41, 0, 0xfd, 0x00, 4, ...PLACEHOLDER, // i32.const 0, v128.load offset=22525
  0xfd, 0x0c, 1, 2, ...PLACEHOLDER, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, // v128.const
  0xfd, 0x0c, ...Array(16).fill(0xaf), // v128.const
  0xfd, 0x0d, ...Array(16).fill(1), // i8x16.shuffle
];
const real = [...decoys, ...PLACEHOLDER];

test('rewrites the placeholder instruction and nothing inside immediates; drops the names', () => {
  const bytes = module('sac_matvec_q4_K', real);
  const { bytes: out, count, functions } = patchRelaxed(bytes);
  assert.equal(count, 1);
  assert.deepEqual(functions, { sac_matvec_q4_K: 1 });
  const at = bytes.indexOf(0x0b, bytes.length - 40) - 3; // the placeholder ends the body
  const want = bytes.slice(0, at + 3);
  want.set([0xfd, 0x93, 0x02], at);
  assert.deepEqual(out.slice(0, at + 3), want, 'only the three bytes of the instruction change');
  const name = new TextEncoder().encode('sac_matvec_q4_K');
  assert.equal(Buffer.from(out).indexOf(Buffer.from(name)), -1, 'the name section is dropped');
  assert.equal(out.length, bytes.length - names('sac_matvec_q4_K').length);
});

test('refuses a module without a placeholder, an unknown opcode, a placeholder elsewhere, no names', () => {
  assert.throws(() => patchRelaxed(module('sac_matvec_q4_K', [...decoys, 0x1a, 0x1a, 0x1a, 0xfd, 0x0c, ...Array(16).fill(0)])),
    /no placeholder/);
  assert.throws(() => patchRelaxed(module('sac_matvec_q4_K', [0xfd, 0xb0, 0x01, ...real])), /unknown opcode 0xfd 176/);
  assert.throws(() => patchRelaxed(module('sac_matvec_q4_K', [0x06, 0x40, ...real])), /unknown opcode 0x6/);
  assert.throws(() => patchRelaxed(module('sac_matvec_q4_K', [0xfd, 0x93, 0x02, ...real])), /unknown opcode 0xfd 275/);
  assert.throws(() => patchRelaxed(module('sac_matvec_f32', real)), /in sac_matvec_f32, which is not a relaxed kernel/);
  assert.throws(() => patchRelaxed(module(null, real)), /no function names/);
});

test('the shipped relaxed builds hold the dot product and no placeholder', { skip: !existsSync('dist/saccade-relaxed-st.wasm') && 'make wasm first' }, () => {
  for (const v of ['st', 'mt']) {
    const bytes = readFileSync(`dist/saccade-relaxed-${v}.wasm`);
    // a second patch finds no placeholder (and the names are gone)
    assert.throws(() => patchRelaxed(bytes), /no function names|no placeholder/);
    assert.ok(Buffer.from(bytes).includes(Buffer.from([0xfd, 0x93, 0x02])));
  }
});
