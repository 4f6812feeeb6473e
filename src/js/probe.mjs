// Looking inside attention through the C core: captured pre-softmax scores, the query and key
// vectors of a layer and head, the row softmax at a temperature, and head ablation.
import { attentionRows, kindOf, layersOf } from './attention.mjs';
import { fail, SaccadeError } from './errors.mjs';
import { describe, number } from './options.mjs';

// The C core's refusals when nothing was captured name its own switches; a JS caller gets the
// library's.
const JS_SWITCHES = [
  ['make the context with capture_scores = 1 or call sac_attention_scores_enable(ctx, 1)',
    'load the model with { scores: true } or call model.captureScores(true)'],
  ['make the context with capture_qk = 1 or call sac_context_capture_qk(ctx, 1)',
    'load the model with { qk: true } or call model.captureQueryKeys(true)'],
];

function inJsTerms(read) {
  try {
    return read();
  } catch (e) {
    if (e instanceof SaccadeError) for (const [c, js] of JS_SWITCHES) e.message = e.message.replace(c, js);
    throw e;
  }
}

/** Rows [from, to) of the scores q·k·scale of `kind`, in attentionRows' shape, plus { scale }. */
export function attentionScores(engine, info, kind, from, to, view) {
  const rows = inJsTerms(() => attentionRows(engine, info, kind, from, to, view, true));
  rows.scale = engine.M._sac_attention_scale(engine.model);
  return rows;
}

function checkLayerHead(info, kind, layer, head) {
  const layers = layersOf(info, kind);
  if (!Number.isInteger(layer) || layer < 0 || layer >= layers)
    fail(`layer must be an integer in [0, ${layers}), got ${describe(layer)}`);
  if (!Number.isInteger(head) || head < 0 || head >= info.heads)
    fail(`head must be an integer in [0, ${info.heads}), got ${describe(head)}`);
}

/**
 * The query and key vectors of one layer and head of `kind` (the model needs { qk: true }):
 * { kind, layer, head, queries, keys, headDim, scale, q, k } with q[i * headDim + d] and
 * k[j * headDim + d]; score(i, j) = Σ_d q·k · scale. Copies.
 */
export function queryKeys(engine, info, kind, layer, head) {
  const k = kindOf(kind);
  checkLayerHead(info, kind, layer, head);
  const { M, heap, scratch: s, ctx } = engine;
  inJsTerms(() => engine.check(M._sac_context_qk(ctx, k, layer, head, 0, 0, 0, 0, s, s + 4, s + 8))); // sizes only
  const queries = heap.i32(s), keys = heap.i32(s + 4), headDim = heap.i32(s + 8);
  const qp = heap.malloc(queries * headDim * 4), kp = heap.malloc(keys * headDim * 4);
  try {
    engine.check(M._sac_context_qk(ctx, k, layer, head, qp, queries * headDim, kp, keys * headDim, s, s + 4, s + 8));
    return {
      kind, layer, head, queries, keys, headDim, scale: M._sac_attention_scale(engine.model),
      q: heap.f32s(qp, queries * headDim).slice(), k: heap.f32s(kp, keys * headDim).slice(),
    };
  } finally {
    heap.free(qp);
    heap.free(kp);
  }
}

/** softmax(scores / temperature) in C (sac_softmax_row): −Infinity gives 0; a Float32Array. */
export function softmaxRow(M, heap, scores, temperature = 1) {
  if (!(scores && typeof scores.length == 'number') || scores.length === 0) fail('scores must be a non-empty array of numbers');
  // 1/τ must be a float too: below ~3e-39 it is infinite, and scores / τ would be NaN
  const tau = number('temperature', temperature, 1, (x) => x > 0 && Number.isFinite(Math.fround(1 / Math.fround(x))),
    'a finite number > 0 whose inverse is a finite float (at least 3e-39)');
  const n = scores.length;
  const p = heap.malloc(n * 8);
  try {
    heap.f32s(p, n).set(scores);
    const st = M._sac_softmax_row(p, n, tau, p + n * 4);
    if (st !== 0) fail('the scores have no finite value, or a NaN or +Infinity');
    return heap.f32s(p + n * 4, n).slice();
  } finally {
    heap.free(p);
  }
}

/**
 * Checks a list of [layer, head] pairs of `kind` and returns the C mask (layers × heads bytes),
 * or null for none.
 */
export function ablationMask(info, kind, heads) {
  if (heads == null) return null;
  if (!Array.isArray(heads)) fail('ablate must be an array of [layer, head] pairs');
  const layers = layersOf(info, kind);
  const mask = new Uint8Array(layers * info.heads);
  heads.forEach((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2) fail(`ablate[${i}] must be a [layer, head] pair`);
    const [l, h] = pair;
    if (!Number.isInteger(l) || l < 0 || l >= layers || !Number.isInteger(h) || h < 0 || h >= info.heads)
      fail(`ablate[${i}] is [${String(l)}, ${String(h)}]: the ${kind} attention has ${layers} layers of ${info.heads} heads`);
    mask[l * info.heads + h] = 1;
  });
  return mask.some((x) => x) ? mask : null;
}

/**
 * Sets the ablated heads of `kind`: a mask from ablationMask, null for none, or text
 * "L:H,L:H" parsed by C (sac_context_set_ablation_spec, as the native CLI's --ablate).
 */
export function setAblation(engine, kind, mask) {
  const { M, heap, ctx } = engine;
  const k = kindOf(kind);
  if (!mask) return engine.check(M._sac_context_set_ablation(ctx, k, 0, 0));
  if (typeof mask == 'string') {
    const [p] = heap.string(mask);
    try {
      return engine.check(M._sac_context_set_ablation_spec(ctx, k, p));
    } finally {
      heap.free(p);
    }
  }
  const p = heap.malloc(mask.length);
  try {
    heap.u8(p, mask.length).set(mask);
    engine.check(M._sac_context_set_ablation(ctx, k, p, mask.length));
  } finally {
    heap.free(p);
  }
}

/** The ablated heads of `kind` as [layer, head] pairs. */
export function ablatedHeads(engine, info, kind) {
  const k = kindOf(kind);
  const out = [];
  for (let l = 0; l < layersOf(info, kind); l++)
    for (let h = 0; h < info.heads; h++) if (engine.M._sac_context_ablated(engine.ctx, k, l, h)) out.push([l, h]);
  return out;
}
