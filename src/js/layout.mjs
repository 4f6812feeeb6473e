// The C structs the library reads and writes, through the offsets the wasm32 compiler reported
// at build time (dist/saccade-layout.mjs, printed by scripts/wasm-layout.c): no hand-kept offsets.
import { constants, structs } from '../../dist/saccade-layout.mjs';

export { constants };

const get = {
  i32: (v, at) => v.getInt32(at, true),
  u32: (v, at) => v.getUint32(at, true),
  ptr: (v, at) => v.getUint32(at, true),
  f32: (v, at) => v.getFloat32(at, true),
  u64: (v, at) => v.getBigUint64(at, true),
  i64: (v, at) => v.getBigInt64(at, true),
};
const set = {
  i32: (v, at, x) => v.setInt32(at, x, true),
  u32: (v, at, x) => v.setUint32(at, x, true),
  ptr: (v, at, x) => v.setUint32(at, x, true),
  f32: (v, at, x) => v.setFloat32(at, x, true),
  u64: (v, at, x) => v.setBigUint64(at, BigInt(x), true),
  i64: (v, at, x) => v.setBigInt64(at, BigInt(x), true),
};

/** Bytes of a C struct (for scratch space). */
export const sizeOf = (struct) => structs[struct].size;

/** Every field of a C struct at `ptr`, by its C name (pointers as numbers, 64-bit as BigInt). */
export function readStruct(heap, ptr, struct) {
  const { size, ...fields } = structs[struct];
  const v = heap.view(ptr, size);
  const out = {};
  for (const [name, { offset, type }] of Object.entries(fields)) out[name] = get[type](v, offset);
  return out;
}

/** Writes every field of a C struct at `ptr` (padding zeroed); `values` must name each field. */
export function writeStruct(heap, ptr, struct, values) {
  const { size, ...fields } = structs[struct];
  heap.u8(ptr, size).fill(0);
  const v = heap.view(ptr, size);
  for (const [name, { offset, type }] of Object.entries(fields)) {
    if (!(name in values)) throw new Error(`internal: ${struct}.${name} not given`);
    set[type](v, offset, values[name]);
  }
}

export function readInfo(heap, ptr) {
  const c = readStruct(heap, ptr, 'sac_model_info');
  return {
    architecture: heap.cstring(c.architecture),
    name: heap.cstring(c.name),
    vocabSize: c.n_vocab,
    contextLength: c.n_ctx,
    embeddingSize: c.n_embd,
    feedForwardSize: c.n_ff,
    layers: c.n_layer,
    heads: c.n_head,
    kvHeads: c.n_head_kv,
    headDim: c.head_dim,
    ropeDim: c.rope_dim,
    ropeFreqBase: c.rope_freq_base,
    normEps: c.norm_eps,
    tiedOutput: c.tied_output !== 0,
    hasTokenizer: c.has_tokenizer !== 0,
    parameters: Number(c.n_params),
    tensorBytes: Number(c.n_bytes),
    ggufVersion: c.gguf_version,
    encoderLayers: c.n_encoder_layer,
  };
}

/** The KV cache types by the name the options use, as sac_kv_type. */
export const KV_TYPES = { f32: constants.SAC_KV_F32, bf16: constants.SAC_KV_BF16, q8: constants.SAC_KV_Q8 };

/** p: { contextLength, batchSize, threads, attention, noPositions, scores, qk, kvType } */
export function writeContextParams(heap, ptr, p) {
  writeStruct(heap, ptr, 'sac_context_params', {
    n_ctx: p.contextLength, n_batch: p.batchSize, n_threads: p.threads, capture_attention: p.attention ? 1 : 0,
    no_positions: p.noPositions ? 1 : 0, capture_scores: p.scores ? 1 : 0, capture_qk: p.qk ? 1 : 0,
    ablate_heads: 0, kv_type: KV_TYPES[p.kvType ?? 'f32'],
  });
}

/** The C defaults of sampling (sac_sampling_default_params), in the option names of generate. */
export function readSamplingDefaults(heap, ptr) {
  const c = readStruct(heap, ptr, 'sac_sampling_params');
  return { temperature: c.temperature, topK: c.top_k, topP: c.top_p, repeatPenalty: c.repeat_penalty,
    repeatLastN: c.repeat_last_n };
}

/** p: the checked generate options (seed a BigInt). */
export function writeSamplingParams(heap, ptr, p) {
  writeStruct(heap, ptr, 'sac_sampling_params', {
    temperature: p.temperature, top_k: p.topK, top_p: p.topP, repeat_penalty: p.repeatPenalty,
    repeat_last_n: p.repeatLastN, seed: p.seed,
  });
}
