// One loaded model in its own wasm instance: the C handles (model, context, a scratch block for
// out-parameters) and thin wrappers over the C calls, each turning a failed status into a
// SaccadeError with the handle's message. The public Model class is built on this.
import { fail } from './errors.mjs';
import { release } from './instantiate.mjs';
import { constants } from './layout.mjs';

const { SAC_OK, SAC_ERR_ARG } = constants;

export const SCRATCH_BYTES = 256; // out-parameters and the small structs

export function statusName(M, heap, status) {
  return heap.cstring(M._sac_status_name(status));
}

export class Engine {
  /** ctx is 0 for a vocabulary-only model. */
  constructor(M, heap, model, ctx, scratch) {
    this.M = M;
    this.heap = heap;
    this.model = model;
    this.ctx = ctx;
    this.scratch = scratch;
  }

  /** Throws the handle's message when a C call failed. */
  check(status, handle = 'context', ptr) {
    if (status === SAC_OK) return;
    const M = this.M;
    const msg = handle === 'model' ? M._sac_model_errmsg(this.model)
      : handle === 'detokenizer' ? M._sac_detokenizer_errmsg(ptr)
        : M._sac_context_errmsg(this.ctx);
    fail(this.heap.cstring(msg), statusName(M, this.heap, status));
  }

  get nPast() {
    return this.M._sac_context_n_past(this.ctx);
  }

  get nCtx() {
    return this.M._sac_context_n_ctx(this.ctx);
  }

  tokenize(text, flags) {
    const { M, heap, scratch } = this;
    const [str, len] = heap.string(text);
    let capacity = len + 8;
    try {
      for (;;) {
        const out = heap.malloc(capacity * 4);
        try {
          const status = M._sac_tokenize(this.model, str, len, flags, out, capacity, scratch);
          const n = heap.i32(scratch);
          if (status === SAC_ERR_ARG && n > capacity) {
            capacity = n;
            continue;
          }
          this.check(status, 'model');
          return Array.from(new Int32Array(heap.buffer, out, n));
        } finally {
          heap.free(out);
        }
      }
    } finally {
      heap.free(str);
    }
  }

  detokenizer() {
    this.check(this.M._sac_detokenizer_new(this.model, this.scratch), 'model');
    return this.heap.u32(this.scratch);
  }

  freeDetokenizer(dt) {
    this.M._sac_detokenizer_free(dt);
  }

  /** The text `id` completes. */
  push(dt, id) {
    const s = this.scratch;
    this.check(this.M._sac_detokenizer_push(dt, id, s, s + 4), 'detokenizer', dt);
    return this.heap.text(this.heap.u32(s), this.heap.u32(s + 4));
  }

  /** The token as the vocabulary spells it, control tokens included (sac_token_spelling). */
  spelling(id) {
    const s = this.scratch;
    this.check(this.M._sac_token_spelling(this.model, id, s, s + 4), 'model');
    return this.heap.text(this.heap.u32(s), this.heap.u32(s + 4));
  }

  /** What the detokenizer holds back (an incomplete character becomes U+FFFD); it starts over. */
  flush(dt) {
    const s = this.scratch;
    this.check(this.M._sac_detokenizer_flush(dt, s, s + 4), 'detokenizer', dt);
    return this.heap.text(this.heap.u32(s), this.heap.u32(s + 4));
  }

  /** Forgets every token and sets attention capture. */
  reset(capture) {
    this.M._sac_context_reset(this.ctx);
    this.setCapture(capture);
  }

  /** Keeps the first n tokens of the context and forgets the rest (sac_context_truncate). */
  truncate(n) {
    this.check(this.M._sac_context_truncate(this.ctx, n));
  }

  setCapture(on) {
    this.check(this.M._sac_attention_enable(this.ctx, on ? 1 : 0));
  }

  encode(ids) {
    const ptr = this.heap.ids(ids);
    try {
      this.check(this.M._sac_encode(this.ctx, ptr, ids.length, 0));
    } finally {
      this.heap.free(ptr);
    }
  }

  eval(ids, flags = 0) {
    const ptr = this.heap.ids(ids);
    try {
      this.check(this.M._sac_eval(this.ctx, ptr, ids.length, 0, flags));
    } finally {
      this.heap.free(ptr);
    }
  }

  /** A copy of the logits of the last eval (one row, or every row with SAC_EVAL_ALL_LOGITS). */
  logits() {
    const { heap, scratch: s } = this;
    const ptr = this.M._sac_logits(this.ctx, s, s + 4) >>> 0;
    return heap.f32s(ptr, heap.i32(s) * heap.i32(s + 4)).slice();
  }

  /** Frees the C handles, and the wasm instance (and its threads) or parks it for reuse. */
  free() {
    const { M } = this;
    if (this.ctx) M._sac_context_free(this.ctx);
    if (this.model) M._sac_model_free(this.model);
    this.heap.free(this.scratch);
    release(M);
    this.M = this.heap = null;
  }
}
