// A minimal GGUF v3 rewriter for the tests: adds metadata (e.g. a tokenizer) to a file that
// build/tools/make_model wrote, keeping its tensors. Independent of src/ on purpose.

const TYPE = { u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12 };
const SIZE = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const encoder = new TextEncoder();

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = 0;
  }
  u32() {
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }
  u64() {
    const v = Number(this.view.getBigUint64(this.at, true));
    this.at += 8;
    return v;
  }
  string() {
    const n = this.u64();
    const s = new TextDecoder().decode(this.bytes.subarray(this.at, this.at + n));
    this.at += n;
    return s;
  }
  skipValue(type) {
    if (type === TYPE.string) this.string();
    else if (type === TYPE.array) {
      const elem = this.u32();
      const n = this.u64();
      for (let i = 0; i < n; i++) this.skipValue(elem);
    } else this.at += SIZE[type];
  }
}

class Writer {
  constructor() {
    this.parts = [];
  }
  raw(bytes) {
    this.parts.push(bytes);
  }
  num(setter, size, v) {
    const b = new Uint8Array(size);
    new DataView(b.buffer)[setter](0, v, true);
    this.parts.push(b);
  }
  u32(v) {
    this.num('setUint32', 4, v);
  }
  u64(v) {
    this.num('setBigUint64', 8, BigInt(v));
  }
  string(s) {
    const b = encoder.encode(s);
    this.u64(b.length);
    this.raw(b);
  }
  value(type, v) {
    switch (type) {
      case TYPE.string: return this.string(v);
      case TYPE.u32: return this.u32(v);
      case TYPE.i32: return this.num('setInt32', 4, v);
      case TYPE.f32: return this.num('setFloat32', 4, v);
      case TYPE.bool: return this.raw(new Uint8Array([v ? 1 : 0]));
      default: throw new Error(`gguf.mjs: cannot write type ${type}`);
    }
  }
  kv(key, type, v, elemType) {
    this.string(key);
    this.u32(type);
    if (type === TYPE.array) {
      this.u32(elemType);
      this.u64(v.length);
      for (const x of v) this.value(elemType, x);
    } else this.value(type, v);
  }
  get length() {
    return this.parts.reduce((n, p) => n + p.length, 0);
  }
  bytes() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/**
 * Where things are in a GGUF file: the header counts, the metadata's byte range, each tensor's
 * info bytes ([start, end), the offset being its last 8 bytes), the alignment and the data section.
 */
function layout(bytes) {
  const r = new Reader(bytes);
  if (r.u32() !== 0x46554747) throw new Error('not a GGUF file');
  const version = r.u32();
  const nTensors = r.u64();
  const nKv = r.u64();
  const kvStart = r.at;
  let alignment = 32;
  for (let i = 0; i < nKv; i++) {
    const key = r.string();
    const type = r.u32();
    if (key === 'general.alignment') alignment = r.view.getUint32(r.at, true);
    r.skipValue(type);
  }
  const kvEnd = r.at;
  const tensors = [];
  for (let i = 0; i < nTensors; i++) {
    const start = r.at;
    r.string();
    const nDims = r.u32();
    r.at += 8 * nDims + 4;
    const offset = r.u64();
    tensors.push({ start, end: r.at, offset });
  }
  const dataStart = Math.ceil(r.at / alignment) * alignment;
  return { version, nTensors, nKv, kvStart, kvEnd, tensors, alignment, dataStart };
}

/**
 * Returns a copy of the GGUF `bytes` with extra metadata. `kvs`: [key, type, value, elemType?]
 * with type one of TYPE's names ('string', 'u32', 'bool', 'array', ...).
 */
export function addMetadata(bytes, kvs) {
  const { version, nTensors, nKv, kvStart, kvEnd, tensors, alignment, dataStart } = layout(bytes);
  const infoEnd = tensors.length ? tensors.at(-1).end : kvEnd;
  const w = new Writer();
  w.u32(0x46554747);
  w.u32(version);
  w.u64(nTensors);
  w.u64(nKv + kvs.length);
  w.raw(bytes.subarray(kvStart, kvEnd));
  for (const [key, type, value, elemType] of kvs) w.kv(key, TYPE[type], value, TYPE[elemType]);
  w.raw(bytes.subarray(kvEnd, infoEnd));
  w.raw(new Uint8Array((alignment - (w.length % alignment)) % alignment));
  w.raw(bytes.subarray(dataStart));
  return w.bytes();
}

/**
 * The tests' character vocabulary, exactly vocabSize tokens: <unk>, <s>, </s>, then printable
 * ASCII from ' ', then 'é' and '😀' as the last two (multi-byte characters).
 */
export function charVocabulary(vocabSize) {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  const ascii = vocabSize - 5;
  for (let c = 0x20; c < 0x20 + ascii; c++) tokens.push(String.fromCharCode(c));
  tokens.push('é', '😀');
  while (types.length < tokens.length) types.push(1);
  return { tokens, types };
}

/** Adds a "char" tokenizer (see charVocabulary) to a GGUF file. */
export function withCharTokenizer(bytes, vocabSize, { addBos = false } = {}) {
  const { tokens, types } = charVocabulary(vocabSize);
  return addMetadata(bytes, [
    ['tokenizer.ggml.model', 'string', 'char'],
    ['tokenizer.ggml.tokens', 'array', tokens, 'string'],
    ['tokenizer.ggml.token_type', 'array', types, 'i32'],
    ['tokenizer.ggml.unknown_token_id', 'u32', 0],
    ['tokenizer.ggml.bos_token_id', 'u32', 1],
    ['tokenizer.ggml.eos_token_id', 'u32', 2],
    ['tokenizer.ggml.add_bos_token', 'bool', addBos],
  ]);
}

/** GPT-2's byte → character map (printable bytes stand for themselves). */
function gpt2ByteChars() {
  const bytes = [];
  for (let b = 0; b < 256; b++) if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) bytes.push(b);
  const chars = new Array(256);
  for (const b of bytes) chars[b] = String.fromCodePoint(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (chars[b] === undefined) chars[b] = String.fromCodePoint(256 + n++);
  return chars;
}

/**
 * Adds a synthetic byte-level BPE ("gpt2") tokenizer of exactly vocabSize tokens: the 256 byte
 * tokens (id = byte value), then two-byte tokens made by one merge each, then <|endoftext|>
 * (BOS and EOS). Peer engines (llama.cpp/wllama) refuse GGUF files without a vocabulary.
 */
export function withSyntheticGpt2Tokenizer(bytes, vocabSize) {
  const chars = gpt2ByteChars();
  const tokens = [...chars];
  const merges = [];
  for (let k = 0; tokens.length < vocabSize - 1; k++) {
    const a = chars[(k >> 8) & 255];
    const b = chars[k & 255];
    tokens.push(a + b);
    merges.push(`${a} ${b}`);
  }
  tokens.push('<|endoftext|>');
  const types = tokens.map((_, i) => (i === vocabSize - 1 ? 3 : 1));
  return addMetadata(bytes, [
    ['tokenizer.ggml.model', 'string', 'gpt2'],
    ['tokenizer.ggml.pre', 'string', 'gpt-2'],
    ['tokenizer.ggml.tokens', 'array', tokens, 'string'],
    ['tokenizer.ggml.token_type', 'array', types, 'i32'],
    ['tokenizer.ggml.merges', 'array', merges, 'string'],
    ['tokenizer.ggml.bos_token_id', 'u32', vocabSize - 1],
    ['tokenizer.ggml.eos_token_id', 'u32', vocabSize - 1],
  ]);
}

/** Returns a copy of the GGUF `bytes` with the value of the existing u32 key `key` replaced. */
export function withU32(bytes, key, value) {
  const out = new Uint8Array(bytes);
  const r = new Reader(out);
  r.at = 16; // magic, version, tensor count
  const nKv = r.u64();
  for (let i = 0; i < nKv; i++) {
    const k = r.string();
    const type = r.u32();
    if (k === key) {
      if (type !== TYPE.u32) throw new Error(`${key} is not a u32`);
      r.view.setUint32(r.at, value, true);
      return out;
    }
    r.skipValue(type);
  }
  throw new Error(`no key ${key}`);
}

/**
 * A llama GGUF file of random F32 weights in any shape (the native fixtures have one shape):
 * { vocab, ctx, embd, ff, layers, heads, headsKv, ropeDim }.
 */
export function llamaGguf({ vocab = 97, ctx = 48, embd = 64, ff = 96, layers = 2, heads = 4, headsKv = 2, ropeDim }) {
  const headDim = embd / heads;
  const kv = headsKv * headDim;
  const tensors = [['token_embd.weight', [embd, vocab]]];
  for (let l = 0; l < layers; l++)
    tensors.push([`blk.${l}.attn_norm.weight`, [embd]], [`blk.${l}.attn_q.weight`, [embd, embd]],
      [`blk.${l}.attn_k.weight`, [embd, kv]], [`blk.${l}.attn_v.weight`, [embd, kv]],
      [`blk.${l}.attn_output.weight`, [embd, embd]], [`blk.${l}.ffn_norm.weight`, [embd]],
      [`blk.${l}.ffn_gate.weight`, [embd, ff]], [`blk.${l}.ffn_up.weight`, [embd, ff]],
      [`blk.${l}.ffn_down.weight`, [ff, embd]]);
  tensors.push(['output_norm.weight', [embd]], ['output.weight', [embd, vocab]]);
  const w = new Writer();
  w.u32(0x46554747);
  w.u32(3);
  w.u64(tensors.length);
  const kvs = [['general.architecture', 'string', 'llama'], ['llama.context_length', 'u32', ctx],
    ['llama.embedding_length', 'u32', embd], ['llama.feed_forward_length', 'u32', ff], ['llama.block_count', 'u32', layers],
    ['llama.attention.head_count', 'u32', heads], ['llama.attention.head_count_kv', 'u32', headsKv],
    ['llama.attention.layer_norm_rms_epsilon', 'f32', 1e-5], ['llama.rope.freq_base', 'f32', 10000],
    ['llama.rope.dimension_count', 'u32', ropeDim ?? headDim]];
  w.u64(kvs.length);
  for (const [key, type, value] of kvs) w.kv(key, TYPE[type], value);
  let offset = 0;
  for (const [name, dims] of tensors) {
    w.string(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(0); // F32
    w.u64(offset);
    offset += Math.ceil((4 * dims.reduce((a, b) => a * b, 1)) / 32) * 32;
  }
  w.raw(new Uint8Array((32 - (w.length % 32)) % 32));
  const data = new Float32Array(offset / 4);
  let seed = 1;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31; // reproducible weights in (-0.2, 0.2)
    data[i] = (seed / 2 ** 31 - 0.5) * 0.4;
  }
  w.raw(new Uint8Array(data.buffer));
  return w.bytes();
}

/**
 * Splits a GGUF file as llama.cpp's gguf-split does: shard i holds tensors [first[i], first[i+1])
 * (in the file's order; first[n] is the tensor count) and split.no = i, split.count = n,
 * split.tensors.count (u16, u16, i32); only shard 0 keeps the other metadata. Returns the shards' bytes.
 */
export function splitGguf(bytes, first) {
  const { version, nTensors, nKv, kvStart, kvEnd, alignment, dataStart, tensors: infos } = layout(bytes);
  const tensors = infos.map((t) => ({ info: bytes.subarray(t.start, t.end - 8), offset: t.offset }));
  if (alignment !== 32) throw new Error('splitGguf: shards after the first would need general.alignment too');
  const byOffset = [...tensors].sort((a, b) => a.offset - b.offset);
  byOffset.forEach((t, i) => (t.length = (byOffset[i + 1]?.offset ?? bytes.length - dataStart) - t.offset));
  const pad = (w) => w.raw(new Uint8Array((alignment - (w.length % alignment)) % alignment));
  const shards = [];
  for (let s = 0; s + 1 < first.length; s++) {
    const mine = tensors.slice(first[s], first[s + 1]);
    const w = new Writer();
    w.u32(0x46554747);
    w.u32(version);
    w.u64(mine.length);
    w.u64((s === 0 ? nKv : 0) + 3);
    if (s === 0) w.raw(bytes.subarray(kvStart, kvEnd));
    w.string('split.no');
    w.u32(TYPE.u16);
    w.num('setUint16', 2, s);
    w.string('split.count');
    w.u32(TYPE.u16);
    w.num('setUint16', 2, first.length - 1);
    w.kv('split.tensors.count', TYPE.i32, nTensors);
    let at = 0;
    for (const t of mine) {
      w.raw(t.info);
      w.u64(at);
      at += Math.ceil(t.length / alignment) * alignment;
    }
    pad(w);
    for (const t of mine) {
      w.raw(bytes.subarray(dataStart + t.offset, dataStart + t.offset + t.length));
      pad(w);
    }
    shards.push(w.bytes());
  }
  return shards;
}
