// corpus.mjs — a corpus of hostile GGUF files, one per way a model file can be wrong (issue
// classes: hyperparameters, weights, unknown tensors and keys, metadata text, sizes, tokenizer;
// and the parser's: magic, version, counts, lengths, offsets, types, truncation), plus valid
// tiny models of each architecture as the controls.
//
//   node tests/hostile/corpus.mjs OUT_DIR   writes OUT_DIR/<name>.gguf and OUT_DIR/manifest.json
//   import { hostileCases } from './corpus.mjs'   → [{ name, bytes, expect, note }]
//
// `expect` is the verdict every surface (native CLI, Node CLI on each wasm build, JS API) must
// give: { error: [words...] } — each surface fails with a message containing every word (the
// key or tensor it names); { ok: true } — each surface succeeds and prints the same JSON;
// { agree: true } — a class whose rule another change decides: the surfaces must give the
// same verdict (all fail with the same message, or all succeed with the same JSON).
// Files are written from scratch (no src/ code), deterministic, and small.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { charVocabulary } from '../js/gguf.mjs';

const T = { u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12 };
const F32 = 0, F16 = 1, Q4_0 = 2, Q8_0 = 8;
const encoder = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------------------------

class Bytes {
  constructor() {
    this.parts = [];
    this.length = 0;
  }
  raw(b) {
    this.parts.push(b);
    this.length += b.length;
  }
  num(setter, size, v) {
    const b = new Uint8Array(size);
    new DataView(b.buffer)[setter](0, v, true);
    this.raw(b);
  }
  u32(v) { this.num('setUint32', 4, v); }
  u64(v) { this.num('setBigUint64', 8, BigInt(v)); }
  /** A string: JS text (UTF-8) or a Uint8Array of raw bytes. */
  str(s) {
    const b = typeof s === 'string' ? encoder.encode(s) : s;
    this.u64(b.length);
    this.raw(b);
  }
  value(type, v) {
    switch (type) {
      case T.string: return this.str(v);
      case T.u8: return this.num('setUint8', 1, v);
      case T.i8: return this.num('setInt8', 1, v);
      case T.u16: return this.num('setUint16', 2, v);
      case T.i16: return this.num('setInt16', 2, v);
      case T.u32: return this.u32(v);
      case T.i32: return this.num('setInt32', 4, v);
      case T.f32: return this.num('setFloat32', 4, v);
      case T.bool: return this.num('setUint8', 1, v ? 1 : 0);
      case T.u64: return this.u64(v);
      case T.i64: return this.num('setBigInt64', 8, BigInt(v));
      case T.f64: return this.num('setFloat64', 8, v);
      default: throw new Error(`corpus.mjs: cannot write type ${type}`);
    }
  }
  bytes() {
    return new Uint8Array(Buffer.concat(this.parts));
  }
}

/** A GGUF file under construction: metadata [key, type, value, elemType] and tensors. */
class Gguf {
  constructor() {
    this.kvs = [];
    this.tensors = [];
    this.alignment = 32;
  }
  kv(key, type, value, elemType) {
    this.kvs.push([key, T[type], value, T[elemType]]);
    return this;
  }
  drop(key) {
    this.kvs = this.kvs.filter(([k]) => k !== key);
    return this;
  }
  set(key, type, value, elemType) {
    return this.drop(key).kv(key, type, value, elemType);
  }
  tensor(name, type, dims, data) {
    this.tensors.push({ name, type, dims, data });
    return this;
  }
  /** The file; `header` overrides { magic, version, nTensors, nKv }, `offset(i, off)` a tensor's offset. */
  bytes({ header = {}, offset = (i, off) => off } = {}) {
    const w = new Bytes();
    w.raw(header.magic ?? encoder.encode('GGUF'));
    w.u32(header.version ?? 3);
    w.u64(header.nTensors ?? this.tensors.length);
    w.u64(header.nKv ?? this.kvs.length);
    for (const [key, type, value, elemType] of this.kvs) {
      w.str(key);
      w.u32(type);
      if (type === T.array) {
        w.u32(elemType);
        w.u64(value.length);
        for (const x of value) w.value(elemType, x);
      } else w.value(type, value);
    }
    let off = 0;
    const offsets = [];
    this.tensors.forEach((t, i) => {
      w.str(t.name);
      w.u32(t.dims.length);
      for (const d of t.dims) w.u64(d);
      w.u32(t.type);
      offsets.push(off);
      w.u64(offset(i, off));
      off += Math.ceil(t.data.length / this.alignment) * this.alignment;
    });
    w.raw(new Uint8Array((this.alignment - (w.length % this.alignment)) % this.alignment));
    for (const t of this.tensors) {
      w.raw(t.data);
      w.raw(new Uint8Array((this.alignment - (t.data.length % this.alignment)) % this.alignment));
    }
    return w.bytes();
  }
}

// ---------------------------------------------------------------------------------------------
// Weights: deterministic random values, stored as F32, F16 or Q8_0
// ---------------------------------------------------------------------------------------------

function f16(x) {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = ((u >>> 23) & 0xff) - 127 + 15;
  const mant = u & 0x7fffff;
  if (Number.isNaN(x)) return 0x7e00;
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) return sign; // the tests' values never need subnormals
  return sign | (exp << 10) | Math.round(mant / 8192);
}

function encode(type, values) {
  if (type === F32) return new Uint8Array(new Float32Array(values).buffer);
  if (type === F16) return new Uint8Array(new Uint16Array(values.map(f16)).buffer);
  if (type !== Q8_0) throw new Error(`corpus.mjs: type ${type}`);
  const out = new Uint8Array((values.length / 32) * 34);
  const view = new DataView(out.buffer);
  for (let b = 0; b < values.length / 32; b++) {
    const block = values.slice(b * 32, b * 32 + 32);
    const amax = Math.max(...block.map(Math.abs));
    const d = amax / 127;
    view.setUint16(b * 34, f16(d), true);
    for (let j = 0; j < 32; j++) view.setInt8(b * 34 + 2 + j, d ? Math.round(block[j] / d) : 0);
  }
  return out;
}

function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

/** Tensor names and dims [n_in, n_out] of an architecture, as model.c binds them. */
function tensorList(arch, h) {
  const E = h.nEmbd, F = h.nFf, KV = (h.nHeadKv * h.nEmbd) / h.nHead;
  const list = [['token_embd.weight', [E, h.nVocab]]];
  if (arch === 'gpt2') list.push(['position_embd.weight', [E, h.nCtx]]);
  const gptBlock = (p) => [
    [`${p}attn_norm.weight`, [E]], [`${p}attn_norm.bias`, [E]], [`${p}attn_qkv.weight`, [E, 3 * E]],
    [`${p}attn_qkv.bias`, [3 * E]], [`${p}attn_output.weight`, [E, E]], [`${p}attn_output.bias`, [E]],
    [`${p}ffn_norm.weight`, [E]], [`${p}ffn_norm.bias`, [E]], [`${p}ffn_up.weight`, [E, F]], [`${p}ffn_up.bias`, [F]],
    [`${p}ffn_down.weight`, [F, E]], [`${p}ffn_down.bias`, [E]]];
  if (arch === 'llama' || arch === 'qwen2' || arch === 'gemma')
    for (let l = 0; l < h.nLayer; l++) {
      const p = `blk.${l}.`;
      list.push([`${p}attn_norm.weight`, [E]], [`${p}attn_q.weight`, [E, E]], [`${p}attn_k.weight`, [E, KV]],
        [`${p}attn_v.weight`, [E, KV]], [`${p}attn_output.weight`, [E, E]], [`${p}ffn_norm.weight`, [E]],
        [`${p}ffn_gate.weight`, [E, F]], [`${p}ffn_up.weight`, [E, F]], [`${p}ffn_down.weight`, [F, E]]);
      if (arch === 'qwen2') list.push([`${p}attn_q.bias`, [E]], [`${p}attn_k.bias`, [KV]], [`${p}attn_v.bias`, [KV]]);
    }
  if (arch === 'phi3') // Q|K|V and gate|up fused
    for (let l = 0; l < h.nLayer; l++) {
      const p = `blk.${l}.`;
      list.push([`${p}attn_norm.weight`, [E]], [`${p}attn_qkv.weight`, [E, E + 2 * KV]],
        [`${p}attn_output.weight`, [E, E]], [`${p}ffn_norm.weight`, [E]], [`${p}ffn_up.weight`, [E, 2 * F]],
        [`${p}ffn_down.weight`, [F, E]]);
    }
  if (arch === 'gpt2') for (let l = 0; l < h.nLayer; l++) list.push(...gptBlock(`blk.${l}.`));
  if (arch === 'encdec') {
    for (let l = 0; l < h.nEncLayer; l++) list.push(...gptBlock(`enc.blk.${l}.`));
    list.push(['enc.output_norm.weight', [E]], ['enc.output_norm.bias', [E]]);
    for (let l = 0; l < h.nLayer; l++) {
      const p = `dec.blk.${l}.`;
      list.push(...gptBlock(p), [`${p}cross_attn_norm.weight`, [E]], [`${p}cross_attn_norm.bias`, [E]],
        [`${p}cross_attn_q.weight`, [E, E]], [`${p}cross_attn_q.bias`, [E]], [`${p}cross_attn_kv.weight`, [E, 2 * E]],
        [`${p}cross_attn_kv.bias`, [2 * E]], [`${p}cross_attn_output.weight`, [E, E]], [`${p}cross_attn_output.bias`, [E]]);
    }
  }
  list.push(['output_norm.weight', [E]]);
  if (arch === 'gpt2' || arch === 'encdec') list.push(['output_norm.bias', [E]]);
  return list;
}

/**
 * A tiny valid model with a character tokenizer. Options: the hyperparameters (nVocab, nCtx,
 * nEmbd, nFf, nLayer, nHead, nHeadKv, nEncLayer, eps, ropeBase), `type` of the 2-D weights,
 * `types` {tensor name → type}, `values(name, array)` to alter a tensor's values before encoding,
 * `drop` a tensor name to leave out.
 */
export function makeModel(arch, o = {}) {
  const llamaLike = ['llama', 'qwen2', 'gemma', 'phi3'].includes(arch);
  const h = { nVocab: 64, nCtx: 32, nEmbd: 32, nFf: 64, nLayer: 1, nHead: 2, nHeadKv: llamaLike ? 1 : 2,
    nEncLayer: 1, eps: 1e-5, ropeBase: 10000, ...o };
  const g = new Gguf();
  const k = (s) => `${arch}.${s}`;
  g.kv('general.architecture', 'string', arch).kv('general.name', 'string', `hostile ${arch}`);
  g.kv(k('context_length'), 'u32', h.nCtx).kv(k('embedding_length'), 'u32', h.nEmbd)
    .kv(k('feed_forward_length'), 'u32', h.nFf).kv(k('block_count'), 'u32', h.nLayer)
    .kv(k('attention.head_count'), 'u32', h.nHead);
  if (arch === 'encdec') g.kv(k('encoder.block_count'), 'u32', h.nEncLayer);
  if (llamaLike)
    g.kv(k('attention.head_count_kv'), 'u32', h.nHeadKv).kv(k('attention.layer_norm_rms_epsilon'), 'f32', h.eps)
      .kv(k('rope.freq_base'), 'f32', h.ropeBase);
  else g.kv(k('attention.layer_norm_epsilon'), 'f32', h.eps);
  const { tokens, types } = charVocabulary(o.tokenizerSize ?? h.nVocab);
  g.kv('tokenizer.ggml.model', 'string', 'char').kv('tokenizer.ggml.tokens', 'array', tokens, 'string')
    .kv('tokenizer.ggml.token_type', 'array', types, 'i32').kv('tokenizer.ggml.unknown_token_id', 'u32', 0)
    .kv('tokenizer.ggml.bos_token_id', 'u32', 1).kv('tokenizer.ggml.eos_token_id', 'u32', 2);
  const rnd = random(arch.length * 7919 + h.nEmbd);
  for (const [name, dims] of tensorList(arch, h)) {
    if (name === o.drop) continue;
    const n = dims.reduce((a, b) => a * b, 1);
    const norm = dims.length === 1 && name.endsWith('norm.weight');
    let values = Array.from({ length: n }, () => (norm ? 1 + 0.1 * rnd() : 0.5 * rnd()));
    if (o.values) values = o.values(name, values) ?? values;
    const type = o.types?.[name] ?? (dims.length === 2 ? (o.type ?? F32) : F32);
    g.tensor(name, type, dims, encode(type, values));
  }
  return g;
}

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

const bytesOf = (...b) => new Uint8Array(b);
const concat = (...parts) => {
  const w = new Bytes();
  for (const p of parts) w.raw(typeof p === 'string' ? encoder.encode(p) : p);
  return w.bytes();
};
const ok = { ok: true };
const agree = { agree: true };
const error = (...words) => ({ error: words });

/** [{ name, bytes, expect, note }] */
export function hostileCases(shrink) {
  // fuzzSeeds asks for the smallest models; the verdicts then no longer apply
  const tinyModel = (arch, o = {}) => makeModel(arch, { ...shrink, ...o });
  const cases = [];
  const add = (name, g, expect, note, opts) =>
    cases.push({ name, bytes: g instanceof Uint8Array ? g : g.bytes(opts), expect, note });

  // controls: valid tiny models that every surface runs identically
  for (const arch of ['gpt2', 'llama', 'qwen2', 'gemma', 'phi3', 'encdec'])
    add(`ok-${arch}-f32`, tinyModel(arch), ok, 'a valid model');
  add('ok-llama-q8_0', tinyModel('llama', { type: Q8_0 }), ok, 'a valid quantized model');
  add('ok-qwen2-q8_0', tinyModel('qwen2', { type: Q8_0 }), ok, 'a valid quantized qwen2 (NEOX RoPE, Q/K/V biases)');
  add('ok-gpt2-f16', tinyModel('gpt2', { type: F16 }), ok, 'a valid F16 model');

  // 1. attention capture sizes that wrap in 32 bits: llama, 2 layers, 64 heads, context 8192
  add('capture-overflow', tinyModel('llama', { nLayer: 2, nHead: 64, nHeadKv: 64, nEmbd: 128, nFf: 32, nCtx: 8192, type: Q8_0 }),
    { ok: true, captureRefused: true },
    'L×H×n² attention capture overflows 32-bit sizes (issue 11 item 1): runs, and capture is refused with its size');
  // 2. only wv quantized: the int8 activation workspace must cover it
  add('partial-q8-wv', tinyModel('llama', { types: { 'blk.0.attn_v.weight': Q8_0 } }), ok,
    'only blk.0.attn_v.weight is Q8_0 (issue 11 item 2)');
  add('partial-q8-wo', tinyModel('llama', { types: { 'blk.0.attn_output.weight': Q8_0 } }), ok, 'only wo is Q8_0');
  add('partial-q8-down', tinyModel('gpt2', { types: { 'blk.0.ffn_down.weight': Q8_0 } }), ok, 'only ffn_down is Q8_0');

  // 7. hyperparameters
  for (const arch of ['gpt2', 'llama', 'encdec']) {
    const key = arch === 'llama' ? 'layer_norm_rms_epsilon' : 'layer_norm_epsilon';
    add(`eps-nan-${arch}`, tinyModel(arch, { eps: NaN }), error(`${arch}.attention.${key}`), 'NaN epsilon');
    add(`eps-negative-${arch}`, tinyModel(arch, { eps: -1 }), error(`${arch}.attention.${key}`), 'epsilon -1');
    add(`eps-inf-${arch}`, tinyModel(arch, { eps: Infinity }), error(`${arch}.attention.${key}`), 'epsilon +inf');
  }
  add('rope-base-nan', tinyModel('llama', { ropeBase: NaN }), error('llama.rope.freq_base'), 'NaN RoPE base');
  add('rope-base-tiny', tinyModel('llama', { ropeBase: 1e-30 }), error('llama.rope.freq_base'), 'RoPE base < 1');
  add('rope-dim-odd', tinyModel('llama').kv('llama.rope.dimension_count', 'u32', 15), error('rotary dimension'),
    'odd rotary dims');
  add('heads-not-dividing', tinyModel('gpt2').set('gpt2.attention.head_count', 'u32', 3), error('head_count'),
    'width 32 / 3 heads');
  add('kv-heads-not-dividing', tinyModel('llama').set('llama.attention.head_count_kv', 'u32', 3),
    error('head_count_kv'), '2 heads / 3 kv heads');
  add('layers-zero', tinyModel('gpt2').set('gpt2.block_count', 'u32', 0), error('gpt2.block_count'), '0 layers');
  add('eps-as-string', tinyModel('gpt2').set('gpt2.attention.layer_norm_epsilon', 'string', '1e-5'),
    error('gpt2.attention.layer_norm_epsilon'), 'a float key of the wrong type');
  add('huge-context', tinyModel('llama').set('llama.context_length', 'u32', 1 << 20), agree,
    'a context of 2^20 tokens (issue 11 item 12 decides the default context)');
  add('context-too-large', tinyModel('llama').set('llama.context_length', 'u32', 0xffffffff),
    error('llama.context_length'), 'context 2^32 - 1');

  // 7. non-finite weights
  const poison = (target, x) => (name, v) => (name === target ? v.map((y, i) => (i === 5 ? x : y)) : v);
  add('weight-nan-f32', tinyModel('gpt2', { values: poison('blk.0.attn_qkv.weight', NaN) }),
    error('blk.0.attn_qkv.weight', 'NaN'), 'a NaN in a matrix');
  add('weight-inf-norm', tinyModel('llama', { values: poison('blk.0.ffn_norm.weight', Infinity) }),
    error('blk.0.ffn_norm.weight'), 'an infinity in a norm weight');
  add('weight-nan-embd', tinyModel('encdec', { values: poison('token_embd.weight', NaN) }),
    error('token_embd.weight'), 'a NaN in the embedding table');
  add('weight-inf-q8-scale', tinyModel('llama', { type: Q8_0, values: poison('blk.0.ffn_up.weight', 1e9) }),
    error('blk.0.ffn_up.weight'), 'a Q8_0 block whose f16 scale is infinite');
  add('weight-nan-f16', tinyModel('gpt2', { types: { 'output_norm.bias': F16 }, values: poison('output_norm.bias', NaN) }),
    error('output_norm.bias'), 'a NaN in an F16 vector (converted at load)');

  // 8. tensors and keys the loader would ignore
  const extra = (g, name, dims) => g.tensor(name, F32, dims, encode(F32, new Array(dims.reduce((a, b) => a * b)).fill(1)));
  add('tensor-rope-freqs', extra(tinyModel('llama'), 'rope_freqs.weight', [8]), ok,
    'Llama 3.1 RoPE frequency factors (bound as llama.cpp binds them)');
  add('tensor-rope-freqs-zero',
    tinyModel('llama').tensor('rope_freqs.weight', F32, [8], encode(F32, [1, 1, 0, 1, 1, 1, 1, 1])),
    error('rope_freqs.weight', 'positive'), 'a RoPE frequency factor of 0 (a divisor)');
  add('tensor-rope-freqs-size', extra(tinyModel('llama'), 'rope_freqs.weight', [9]), error('rope_freqs.weight'),
    'RoPE frequency factors of the wrong count');
  add('tensor-rope-freqs-qwen2', extra(tinyModel('qwen2'), 'rope_freqs.weight', [8]), error('rope_freqs.weight'),
    'RoPE frequency factors on qwen2, which llama.cpp does not bind');
  add('tensor-q-bias', extra(tinyModel('llama'), 'blk.0.attn_q.bias', [32]), ok,
    'an optional Q bias, which llama.cpp binds for llama');
  add('tensor-ffn-bias', extra(tinyModel('llama'), 'blk.0.ffn_up.bias', [64]), error('blk.0.ffn_up.bias'),
    'a bias llama does not have');
  add('ok-phi3-q8_0-swa', tinyModel('phi3', { type: Q8_0 }).kv('phi3.attention.sliding_window', 'u32', 16), ok,
    "phi3's sliding window, which llama.cpp disables (attends over the whole context), as saccade does");
  add('tensor-phi3-longrope', extra(tinyModel('phi3'), 'rope_factors_long.weight', [8]),
    error('rope_factors_long.weight'), 'LongRoPE factors (Phi-3 128k), not implemented');
  add('tensor-gemma-output', extra(tinyModel('gemma'), 'output.weight', [32, 64]), error('output.weight'),
    "gemma's output is token_embd; llama.cpp reads no output.weight");
  add('tensor-qwen2-no-bias', tinyModel('qwen2', { drop: 'blk.0.attn_k.bias' }), error('blk.0.attn_k.bias'),
    'qwen2 without its required K bias');
  add('tensor-extra-layer', extra(tinyModel('gpt2'), 'blk.1.attn_norm.weight', [32]), error('blk.1.attn_norm.weight'),
    'a block beyond block_count');
  add('key-rope-scaling', tinyModel('llama').kv('llama.rope.scaling.type', 'string', 'linear')
    .kv('llama.rope.scaling.factor', 'f32', 4), ok, 'linear RoPE scaling');
  add('key-rope-scaling-yarn', tinyModel('qwen2').kv('qwen2.rope.scaling.type', 'string', 'yarn')
    .kv('qwen2.rope.scaling.factor', 'f32', 4), error('qwen2.rope.scaling.type', 'yarn'), 'YaRN RoPE scaling');
  add('key-rope-scaling-factor-nan', tinyModel('llama').kv('llama.rope.scaling.factor', 'f32', NaN),
    error('llama.rope.scaling.factor'), 'a NaN RoPE scaling factor');
  add('key-rope-scaling-none', tinyModel('llama').kv('llama.rope.scaling.type', 'string', 'none')
    .kv('llama.rope.scaling.factor', 'f32', 1), ok, 'RoPE scaling explicitly off (the implemented default)');
  add('key-vocab-size-ok', tinyModel('llama').kv('llama.vocab_size', 'u32', 64), ok, 'vocab_size as in real files');
  add('key-vocab-size-wrong', tinyModel('llama').kv('llama.vocab_size', 'u32', 65), error('llama.vocab_size'),
    'vocab_size that disagrees with token_embd');
  add('key-experts', tinyModel('llama').kv('llama.expert_count', 'u32', 8), error('llama.expert_count'), 'MoE');
  add('key-unknown', tinyModel('gpt2').kv('gpt2.attention.clamp_kqv', 'f32', 8), error('gpt2.attention.clamp_kqv'),
    'a hyperparameter saccade does not implement');
  add('key-other-namespace', tinyModel('gpt2').kv('general.source.url', 'string', 'x').kv('split.count', 'u16', 1),
    ok, 'keys outside <arch>.* are descriptive');

  // 11. metadata text
  const name = (b) => tinyModel('gpt2').set('general.name', 'string', b);
  add('name-invalid-utf8', name(concat('a', bytesOf(0xff, 0xfe), 'b', bytesOf(0xc0, 0xaf), 'c', bytesOf(0xed, 0xa0, 0x80),
    'd', bytesOf(0xf4, 0x90, 0x80, 0x80), 'e', bytesOf(0xe2, 0x82))), ok, 'ill-formed UTF-8 in general.name → U+FFFD');
  add('name-bom', name(concat(bytesOf(0xef, 0xbb, 0xbf), 'bom')), ok, 'a leading BOM is text, not to be dropped');
  add('name-nul', name(concat('before', bytesOf(0), 'after')), ok, 'NUL in a value is shown as U+FFFD');
  add('name-long', name('x'.repeat(300) + 'é'.repeat(200)), ok, 'a long value is not cut (or cut mid-character)');
  add('value-invalid-utf8', tinyModel('llama').kv('general.description', 'string', concat('ok', bytesOf(0x80, 0x22, 0x5c))),
    ok, 'ill-formed UTF-8 with JSON specials');
  add('arch-nul', tinyModel('gpt2').set('general.architecture', 'string', concat('gpt2', bytesOf(0), 'evil')),
    error('general.architecture', 'NUL'), '"gpt2\\0evil" must not pass for gpt2');
  add('arch-invalid-utf8', tinyModel('gpt2').set('general.architecture', 'string', concat('gpt2', bytesOf(0xff))),
    error('unknown architecture'), 'an architecture name with a stray byte');
  const keyFile = (key) => tinyModel('gpt2').kv(key, 'u32', 1);
  add('key-nul', keyFile(concat('general.x', bytesOf(0), 'y')), error('NUL'), 'a key with NUL');
  add('key-invalid-utf8', keyFile(concat('general.', bytesOf(0xff))), error('UTF-8'), 'a key that is not UTF-8');
  const tname = tinyModel('gpt2');
  tname.tensors[0].name = concat('token_embd.weight', bytesOf(0), 'x');
  add('tensor-name-nul', tname, error('NUL'), 'a tensor name with NUL');

  // a SentencePiece vocabulary without BOS and EOS ids: llama.cpp's defaults, 1 and 2 (prompts
  // asked for a BOS there was none of, and generate failed); a vocabulary without BOS that asks
  // for it (add_bos_token) contradicts itself
  const spm = tinyModel('llama').set('tokenizer.ggml.model', 'string', 'llama')
    .drop('tokenizer.ggml.bos_token_id').drop('tokenizer.ggml.eos_token_id');
  spm.kv('tokenizer.ggml.scores', 'array', charVocabulary(64).tokens.map((_, i) => -i), 'f32');
  add('spm-no-bos', spm, ok, 'a SentencePiece vocabulary without BOS and EOS ids');
  add('no-bos-asked', tinyModel('gpt2').drop('tokenizer.ggml.bos_token_id').kv('tokenizer.ggml.add_bos_token', 'bool', true),
    error('add_bos_token', 'no BOS token'), 'add_bos_token true without a BOS token');
  // a tokenizer name with NUL is not the name before it
  add('tokenizer-model-nul', tinyModel('gpt2').set('tokenizer.ggml.model', 'string', concat('char', bytesOf(0), 'x')),
    error('tokenizer.ggml.model', 'NUL'), '"char\\0x" must not read as "char"');

  // a vocabulary that does not say which tokenizer it is for: loading it as none would drop it
  add('tokenizer-no-model', tinyModel('gpt2').drop('tokenizer.ggml.model'), error('tokenizer.ggml.model'),
    'tokenizer.ggml.tokens without tokenizer.ggml.model');

  // 11. tokenizer smaller than the embedding table; one larger
  add('tokenizer-smaller', tinyModel('gpt2', { tokenizerSize: 48 }), agree,
    'tokenizer of 48 tokens, token_embd of 64 rows (issue 11 item 11 decides the rule)');
  add('tokenizer-larger', tinyModel('gpt2', { tokenizerSize: 80 }), error('tokenizer'),
    'tokenizer of 80 tokens, token_embd of 64 rows');

  // the parser
  const base = tinyModel('gpt2');
  const good = base.bytes();
  add('bad-magic', concat('GGUX', good.subarray(4)), error('not a GGUF file'), 'magic');
  add('empty', new Uint8Array(0), error('the model is empty (0 bytes)'), 'an empty file');
  add('version-1', base.bytes({ header: { version: 1 } }), error('version 1'), 'obsolete version');
  add('version-big-endian', base.bytes({ header: { version: 0x03000000 } }), error('big-endian'), 'byte-swapped version');
  add('huge-kv-count', base.bytes({ header: { nKv: 2n ** 62n } }), error('metadata entries'), 'n_kv 2^62');
  add('huge-tensor-count', base.bytes({ header: { nTensors: 2n ** 40n } }), error('tensors'), 'n_tensors 2^40');
  for (const frac of [0.01, 0.3, 0.6, 0.9, 0.999])
    add(`truncated-${frac}`, good.subarray(0, Math.floor(good.length * frac)), error('truncated'), `cut at ${frac}`);
  const hugeString = new Gguf().kv('general.architecture', 'string', 'gpt2').bytes();
  new DataView(hugeString.buffer).setBigUint64(24 + 8 + 20 + 4, 2n ** 63n, true); // the value's length
  add('huge-string-length', hugeString, error('truncated'), 'a string of 2^63 bytes');
  const hugeArray = new Gguf().kv('tokenizer.ggml.tokens', 'array', ['a'], 'string').bytes();
  new DataView(hugeArray.buffer).setBigUint64(24 + 8 + 21 + 4 + 4, 2n ** 61n, true); // the count
  add('huge-array-count', hugeArray, error('tokenizer.ggml.tokens'), 'an array of 2^61 strings');
  add('offset-misaligned', base.bytes({ offset: (i, off) => (i === 3 ? off + 4 : off) }), error('alignment'),
    'a tensor offset not a multiple of 32');
  add('offset-out-of-bounds', base.bytes({ offset: (i, off) => (i === 3 ? 2 ** 40 : off) }), error('out of bounds'),
    'a tensor beyond the file');
  add('offset-overlap', base.bytes({ offset: (i, off) => (i === 3 ? 0 : off) }), error('overlap'), 'two tensors at 0');
  const retype = (type) => {
    const g = tinyModel('gpt2');
    g.tensors[0].type = type;
    return g;
  };
  add('type-unknown', retype(99), error('token_embd.weight', 'type'), 'tensor type 99');
  add('type-unsupported', retype(20), error('token_embd.weight', 'IQ4_NL'), 'IQ4_NL (ggml knows it; saccade does not)');
  const dims = (d) => {
    const g = tinyModel('gpt2');
    g.tensors[0].dims = d;
    return g;
  };
  add('dims-zero', dims([32, 0]), error('token_embd.weight', 'dimension'), 'a zero dimension');
  add('dims-five', dims([32, 64, 1, 1, 1]), error('token_embd.weight', 'dimensions'), '5 dimensions');
  add('dims-overflow', dims([2 ** 32, 2 ** 32, 2 ** 32]), error('token_embd.weight', 'overflows'), 'a 2^96-element tensor');
  add('shape-mismatch', dims([32, 63]), error('token_embd.weight'), 'vocab rows that no longer fit the data');
  add('duplicate-key', tinyModel('gpt2').kv('general.name', 'string', 'again'), error('duplicate', 'general.name'),
    'a key twice');
  const dupT = tinyModel('gpt2');
  dupT.tensors[1].name = dupT.tensors[0].name;
  add('duplicate-tensor', dupT, error('duplicate', 'token_embd.weight'), 'a tensor name twice');
  add('nested-array', tinyModel('gpt2').kv('general.tags', 'array', [], 'array'), error('general.tags', 'nested'),
    'an array of arrays');
  const badType = tinyModel('gpt2').kv('general.x', 'u32', 1).bytes();
  const at = Buffer.from(badType).indexOf('general.x') + 9;
  new DataView(badType.buffer).setUint32(at, 13, true);
  add('value-type-unknown', badType, error('general.x', 'unknown'), 'value type 13');
  add('alignment-not-pow2', tinyModel('gpt2').kv('general.alignment', 'u32', 24), error('general.alignment'),
    'alignment 24');
  add('alignment-zero', tinyModel('gpt2').kv('general.alignment', 'u32', 0), error('general.alignment'), 'alignment 0');
  add('alignment-2-31', tinyModel('gpt2').kv('general.alignment', 'u32', 2 ** 31), error('general.alignment = 2147483648', 'past the end'),
    'an alignment that puts the data past the end (it was reported as a truncated file)');
  add('no-architecture', tinyModel('gpt2').drop('general.architecture'), error('general.architecture'), 'no arch');
  add('arch-unknown', tinyModel('gpt2').set('general.architecture', 'string', 'mamba'), error('mamba'), 'mamba');
  return cases;
}

/**
 * Seeds for fuzz_model (tests/fuzz/corpus/fuzz_model): the smallest valid models of each architecture
 * (a few KB, so that mutations reach the structure), and every hostile case under 16 KB.
 */
export function fuzzSeeds() {
  const small = { nVocab: 8, nCtx: 4, nEmbd: 8, nFf: 8, nHead: 2 };
  const seeds = [];
  for (const arch of ['gpt2', 'llama', 'encdec'])
    seeds.push({ name: `tiny-${arch}-f32`, bytes: makeModel(arch, small).bytes() });
  seeds.push({ name: 'tiny-llama-q8_0', bytes: makeModel('llama', { ...small, nEmbd: 32, type: Q8_0 }).bytes() });
  seeds.push({ name: 'tiny-gpt2-f16', bytes: makeModel('gpt2', { ...small, type: F16 }).bytes() });
  for (const c of hostileCases(small)) if (c.bytes.length < 16384) seeds.push({ name: `hostile-${c.name}`, bytes: c.bytes });
  return seeds;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--fuzz-seeds') {
    const dir = process.argv[3];
    mkdirSync(dir, { recursive: true });
    for (const s of fuzzSeeds()) writeFileSync(path.join(dir, `${s.name}.gguf`), s.bytes);
    process.exit(0);
  }
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: node tests/hostile/corpus.mjs OUT_DIR | --fuzz-seeds DIR');
  mkdirSync(dir, { recursive: true });
  const manifest = {};
  for (const c of hostileCases()) {
    writeFileSync(path.join(dir, `${c.name}.gguf`), c.bytes);
    manifest[c.name] = { expect: c.expect, note: c.note };
  }
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n');
  console.log(`${Object.keys(manifest).length} files in ${dir}`);
}
