// Reading captured attention. One layout from C to the caller: query row q of a kind is a block
// of layers × heads × keys(q) floats (layer-major, then head, then key), and the rows of a kind
// follow each other in query order. Self-attention rows have q + 1 keys; cross and encoder rows
// have one key per source token.
import { fail } from './errors.mjs';
import { constants } from './layout.mjs';
import { describe } from './options.mjs';

export const ATTENTION_KINDS = {
  self: constants.SAC_ATTENTION_SELF,
  cross: constants.SAC_ATTENTION_CROSS,
  encoder: constants.SAC_ATTENTION_ENCODER,
};

function kindOf(kind) {
  if (!Object.hasOwn(ATTENTION_KINDS, kind)) fail(`kind must be 'self', 'cross' or 'encoder', got ${describe(kind)}`);
  return ATTENTION_KINDS[kind];
}

const layersOf = (info, kind) => (kind === 'encoder' ? info.encoderLayers : info.layers);

/** Query rows captured so far for `kind`. */
export function capturedRows(engine, kind) {
  return engine.M._sac_attention_n_rows(engine.ctx, kindOf(kind));
}

/**
 * Rows [from, to) of `kind` in the common layout: { kind, layers, heads, from, to, keys,
 * offsets, data }, keys[i] and offsets[i] for row from + i (offsets[to - from] = data.length).
 * `view`: data is a view of the wasm memory instead of a copy.
 */
export function attentionRows(engine, info, kind, from, to, view, scores = false) {
  const k = kindOf(kind);
  const n = engine.M._sac_attention_n_rows(engine.ctx, k);
  from ??= 0;
  to ??= n;
  if (!Number.isInteger(from) || !Number.isInteger(to))
    fail(`rows: from and to must be integers (or undefined: all), got ${describe(from)} and ${describe(to)}`);
  if (from < 0 || from > to || to > n)
    fail(`rows [${String(from)}, ${String(to)}) are not within the ${n} captured ${kind} rows`);
  const layers = layersOf(info, kind);
  const { heads } = info;
  const count = to - from;
  const keys = new Int32Array(count);
  const offsets = new Uint32Array(count + 1);
  const source = kind === 'self' ? 0 : engine.M._sac_context_n_source(engine.ctx);
  for (let i = 0; i < count; i++) {
    keys[i] = kind === 'self' ? from + i + 1 : source;
    offsets[i + 1] = offsets[i] + layers * heads * keys[i];
  }
  let data = new Float32Array(0);
  if (count > 0 || n === 0) { // with nothing captured, C says why
    const { heap, scratch: s } = engine;
    const read = scores ? engine.M._sac_attention_scores_rows : engine.M._sac_attention_rows;
    engine.check(read(engine.ctx, k, from, to, s, s + 4));
    const floats = heap.u32(s + 4);
    if (floats !== offsets[count]) fail(`internal: C returned ${floats} floats for rows [${from}, ${to}), JS expected ${offsets[count]}`, 'SAC_ERR_STATE');
    data = heap.f32s(heap.u32(s), floats);
    if (!view) data = data.slice();
  }
  return { kind, layers, heads, from, to, keys, offsets, data };
}

export { kindOf, layersOf };

/**
 * The matrix of one layer and head: { queries, keys, data } with data[q * keys + k] (0 above the
 * diagonal for self-attention). A copy.
 */
export function attentionMatrix(engine, info, layer, head, kind) {
  const k = kindOf(kind);
  const layers = layersOf(info, kind);
  const { heads } = info;
  if (!Number.isInteger(layer) || layer < 0 || layer >= layers)
    fail(`layer must be an integer in [0, ${layers}), got ${describe(layer)}`);
  if (!Number.isInteger(head) || head < 0 || head >= heads)
    fail(`head must be an integer in [0, ${heads}), got ${describe(head)}`);
  const { M, heap, scratch: s, ctx } = engine;
  engine.check(M._sac_attention_get(ctx, k, layer, head, 0, 0, s, s + 4)); // sizes only
  const queries = heap.i32(s);
  const keys = heap.i32(s + 4);
  const out = heap.malloc(queries * keys * 4);
  try {
    engine.check(M._sac_attention_get(ctx, k, layer, head, out, queries * keys, s, s + 4));
    return { queries, keys, data: heap.f32s(out, queries * keys).slice() };
  } finally {
    heap.free(out);
  }
}

/** The self (and, with a source, cross) row of query `q` for every layer and head: copies. */
export function stepRows(engine, info, q, withCross) {
  const { M, heap, scratch: s, ctx } = engine;
  const { layers, heads } = info;
  engine.check(M._sac_attention_row(ctx, q, s, s + 4));
  const attention = { query: q, keys: q + 1, data: heap.f32s(heap.u32(s), layers * heads * (q + 1)).slice() };
  if (!withCross) return { attention, cross: undefined };
  engine.check(M._sac_attention_cross_row(ctx, q, s, s + 4));
  const keys = heap.i32(s + 4);
  return { attention, cross: { query: q, keys, data: heap.f32s(heap.u32(s), layers * heads * keys).slice() } };
}
