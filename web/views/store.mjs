// Every attention map captured during one generation, kept as query rows in the layout the
// library captures them in, and the aggregates the views show, computed lazily and incrementally.
//
// Kinds: 'self' (the decoder's causal self-attention; row q has q + 1 keys), and for
// encoder–decoder models 'cross' (decoder query → source; nSource keys) and 'encoder'
// (bidirectional, nSource × nSource). Every row holds layers × heads × keys floats, layer-major,
// then head, then key; the rows of a kind follow each other in query order, so a block of rows
// [from, to) is cut into rows by arithmetic (rowStart). Rows of earlier queries never change as
// tokens are added (causal attention over a KV cache), so aggregates of old rows are computed once.
//
// Selections (what a view shows of one kind): a head number, or
//   'mean' | 'max'  over the heads of one layer,
//   'all'           the mean over every layer and head,
//   'rollout'       attention rollout (Abnar & Zuidema, 2020) through layers 0..layer: each
//                   layer's head-mean with the residual added (½A + ½I, rows renormalised),
//                   multiplied layer by layer — how much each token's representation at that
//                   layer draws on each input token.

/**
 * The aggregates a view can show instead of one head, by selection name: `title` (what the map
 * shows), `option` (the page's menu entry), `short` (the widget's menu entry), `wholeModel` (one
 * map for every layer: no layer applies), `notFor` (the kinds it is not defined for).
 */
export const AGGREGATES = Object.freeze({
  mean: {
    title: 'mean over heads', option: 'mean over heads', short: 'mean',
    explain: 'Mean over heads: the average of this layer\'s head maps. The model never computes it — each head ' +
      'mixes its own values, and the output projection combines the results — so a head that looks elsewhere ' +
      'is averaged away. Rows still sum to 1.',
  },
  max: {
    title: 'max over heads', option: 'max over heads', short: 'max',
    explain: 'Max over heads: each cell is the largest weight any head of this layer gives it — where at least one ' +
      'head looks. Not a distribution: rows do not sum to 1.',
  },
  all: {
    title: 'mean of all layers and heads', option: 'mean of all layers and heads', short: 'all layers', wholeModel: true,
    explain: 'Mean of all layers and heads: one average over the whole stack. No layer computes it, and it blurs ' +
      'heads that disagree. Rows sum to 1.',
  },
  rollout: {
    title: 'rollout', option: 'rollout through this layer', short: 'rollout', notFor: ['cross'],
    explain: 'Rollout (Abnar & Zuidema, 2020): each layer\'s head-mean with the residual added as ½A + ½I, ' +
      'multiplied layer by layer up to this one. It assumes that the residual stream carries half of every ' +
      'token, that heads combine by their mean, and that values and MLPs move nothing: an estimate of how much ' +
      'each input token reaches this layer\'s token, not a measurement. Rows sum to 1.',
  },
});

/** What one head's map is, for the legend beside a single head. */
export const HEAD_EXPLAIN = 'One head: softmax(q·k/√d) over the keys, exactly as the model computes it — each row sums to 1.';

/** The aggregate names defined for `kind`, in menu order. */
export const aggregatesFor = (kind) => Object.keys(AGGREGATES).filter((name) => !AGGREGATES[name].notFor?.includes(kind));

/** A selection's description: 'head 3 · layer 2', 'mean over heads · layer 2', 'rollout through layer 2', … */
export function selectionTitle(selection, layer) {
  if (typeof selection == 'number') return `head ${selection} · layer ${layer}`;
  const a = AGGREGATES[selection];
  if (a.wholeModel) return a.title;
  return selection === 'rollout' ? `${a.title} through layer ${layer}` : `${a.title} · layer ${layer}`;
}

/**
 * Rows kept from earlier blocks (each row a view of the block it came in), copied out of any
 * block of which they keep less than half: a kept row would otherwise hold its whole block.
 */
function unpinned(rows) {
  const kept = new Map(); // buffer → bytes of it kept
  for (const r of rows) kept.set(r.buffer, (kept.get(r.buffer) ?? 0) + r.byteLength);
  return rows.map((r) => (2 * kept.get(r.buffer) < r.buffer.byteLength ? r.slice() : r));
}

let lineages = 0;

export class AttentionStore {
  constructor({ layers, heads, encoderLayers = 0 }) {
    this.layers = layers;
    this.heads = heads;
    this.encoderLayers = encoderLayers;
    this.clear();
  }

  clear() {
    /** Decoder-side tokens: [{ id, text, label, generated }]; row q belongs to tokens[q]. */
    this.tokens = [];
    /** Source tokens of an encoder–decoder model. */
    this.source = [];
    this.rows = { self: [], cross: [], encoder: [] }; // per kind, row q: a view of the block it came in
    this.cache = new Map(); // `${kind}/${selection}` → aggregate rows
    this.version = (this.version ?? 0) + 1;
    /** What the rows are: a new number with every clear; `kept`: { lineage, rows } when the first
     * self rows are those of an earlier lineage (a start that kept them), so pooled views keep them. */
    this.lineage = ++lineages; // unique across stores: a new model's store never names an old one's rows
    this.kept = null;
  }

  get encdec() {
    return this.encoderLayers > 0;
  }

  get kinds() {
    return this.encdec ? ['self', 'cross', 'encoder'] : ['self'];
  }

  /** Where row q of `kind` starts in a block that begins at row 0 (floats). */
  rowStart(kind, q) {
    const LH = this.layersOf(kind) * this.heads;
    return kind === 'self' ? (LH * q * (q + 1)) / 2 : LH * this.source.length * q;
  }

  /** A block of whole rows [from, …) of `kind`, as the worker sends it; its length says how many. */
  #addRows(kind, from, block) {
    if (!block?.length) return;
    const base = this.rowStart(kind, from);
    let q = from;
    for (; this.rowStart(kind, q + 1) - base <= block.length && this.keysOf(kind, q) > 0; q++)
      this.rows[kind][q] = block.subarray(this.rowStart(kind, q) - base, this.rowStart(kind, q + 1) - base);
    if (this.rowStart(kind, q) - base !== block.length)
      throw new Error(`${block.length} floats are not whole ${kind} rows from row ${from}`);
  }

  /**
   * What the next generation may keep (pass it to start): the self rows, their tokens' ids
   * (what the worker compares a new prompt with: protocol.mjs) and the aggregates made of them.
   */
  held() {
    const rows = this.rows.self;
    const cache = [...this.cache].filter(([key]) => key.startsWith('self/'));
    return { ids: this.tokens.slice(0, rows.length).map((t) => t.id), rows, cache, lineage: this.lineage };
  }

  /**
   * The prompt (and, for encoder–decoder models, the source) from the worker's 'start'; its self
   * rows from `keep` on, the ones before it taken from `held` (this store's held() before).
   */
  start({ tokens, self, cross, source, encoder, keep = 0 }, held = null) {
    if (keep > (held?.rows.length ?? 0)) throw new Error(`the worker kept ${keep} rows, but only ${held?.rows.length ?? 0} are held`);
    this.clear();
    this.tokens = tokens.map((t) => ({ ...t, generated: false }));
    this.source = source ?? [];
    if (keep) {
      // a row and its aggregates depend only on the rows up to it (rollout included): the first `keep` stay
      this.rows.self = unpinned(held.rows.slice(0, keep));
      for (const [key, rows] of held.cache) this.cache.set(key, rows.slice(0, keep));
      this.kept = { lineage: held.lineage, rows: keep };
    }
    this.#addRows('self', keep, self);
    this.#addRows('cross', 0, cross);
    this.#addRows('encoder', 0, encoder);
  }

  /** One generated token and the query row that produced it. */
  add({ token, query, self, cross }) {
    this.#addRows('self', query, self);
    this.#addRows('cross', query, cross);
    this.tokens.push({ ...token, generated: true });
    this.version++;
  }

  layersOf(kind) {
    return kind === 'encoder' ? this.encoderLayers : this.layers;
  }

  /** Query rows available (0 … n-1): rows arrive in order (the prompt's, then one per token). */
  queries(kind) {
    return this.rows[kind].length;
  }

  keysOf(kind, q) {
    return kind === 'self' ? q + 1 : this.source.length;
  }

  /** Keys of the widest row. */
  keys(kind) {
    return kind === 'self' ? this.queries('self') : this.source.length;
  }

  /**
   * Token labels along a kind's rows and columns. `wrote[q]`: the label of the token that decoder
   * row q wrote (tokens[q + 1]; hover.mjs has the convention), null for encoder rows.
   */
  labels(kind) {
    const out = this.tokens.map((t) => t.label);
    const src = this.source.map((t) => t.label);
    if (kind === 'encoder') return { rows: src, cols: src, wrote: null };
    return { rows: out, cols: kind === 'cross' ? src : out, wrote: out.slice(1) };
  }

  /** Row q of one head (a view, not a copy). */
  headRow(kind, layer, head, q) {
    const k = this.keysOf(kind, q);
    const at = (layer * this.heads + head) * k;
    return this.rows[kind][q].subarray(at, at + k);
  }

  /** { kind, layer, selection, nq, nk, row(q) } for a head number or an aggregate. */
  matrix(kind, layer, selection) {
    const nq = this.queries(kind);
    const nk = this.keys(kind);
    // lineage and kept: which rows these are, for views that pool them (pool.mjs); self rows may
    // be kept across starts
    const m = { kind, layer, selection, nq, nk, lineage: this.lineage, kept: kind === 'self' ? this.kept : null };
    if (typeof selection == 'number') return { ...m, row: (q) => this.headRow(kind, layer, selection, q) };
    const rows = this.#aggregate(kind, selection, nq);
    if (AGGREGATES[selection].wholeModel) return { ...m, row: (q) => rows[q] };
    return {
      ...m,
      row: (q) => {
        const k = this.keysOf(kind, q);
        return rows[q].subarray(layer * k, (layer + 1) * k);
      },
    };
  }

  /** Aggregate rows up to nq, extending the cached ones. */
  #aggregate(kind, selection, nq) {
    if (!(selection in AGGREGATES)) throw new Error(`unknown selection ${String(selection)}`);
    if (AGGREGATES[selection].notFor?.includes(kind)) throw new Error(`${selection} is not defined for ${kind} attention`);
    const key = `${kind}/${selection}`;
    let rows = this.cache.get(key);
    if (!rows) this.cache.set(key, (rows = []));
    if (rows.length >= nq) return rows;
    if (selection === 'rollout') this.#rollout(kind, rows, nq);
    else for (let q = rows.length; q < nq; q++) rows.push(this.#headAggregate(kind, selection, q));
    return rows;
  }

  /** mean / max over heads for every layer (layers × keys), or 'all': the mean of everything (keys). */
  #headAggregate(kind, selection, q) {
    const L = this.layersOf(kind);
    const H = this.heads;
    const k = this.keysOf(kind, q);
    if (selection === 'all') {
      const out = new Float32Array(k);
      for (let l = 0; l < L; l++)
        for (let h = 0; h < H; h++) {
          const r = this.headRow(kind, l, h, q);
          for (let j = 0; j < k; j++) out[j] += r[j];
        }
      for (let j = 0; j < k; j++) out[j] /= L * H;
      return out;
    }
    const out = new Float32Array(L * k);
    for (let l = 0; l < L; l++) {
      const o = out.subarray(l * k, (l + 1) * k);
      for (let h = 0; h < H; h++) {
        const r = this.headRow(kind, l, h, q);
        if (selection === 'max') for (let j = 0; j < k; j++) o[j] = Math.max(o[j], r[j]);
        else for (let j = 0; j < k; j++) o[j] += r[j] / H;
      }
    }
    return out;
  }

  /** Rollout rows (layers × keys each). Causal self-attention extends row by row; the encoder at once. */
  #rollout(kind, rows, nq) {
    const L = this.layersOf(kind);
    const mean = this.#aggregate(kind, 'mean', nq);
    const causal = kind === 'self';
    const from = rows.length;
    for (let q = from; q < nq; q++) rows.push(new Float32Array(L * this.keysOf(kind, q)));
    // Ā = ½·mean + ½·I, renormalised; R_0 = Ā_0, R_l[q] = Σ_j Ā_l[q][j] · R_{l-1}[j].
    const residual = (l, q) => {
      const k = this.keysOf(kind, q);
      const a = mean[q].slice(l * k, (l + 1) * k);
      let sum = 0;
      for (let j = 0; j < k; j++) sum += (a[j] = 0.5 * a[j] + (j === q ? 0.5 : 0));
      if (sum > 0) for (let j = 0; j < k; j++) a[j] /= sum;
      return a;
    };
    const layerRow = (l, q) => {
      const k = this.keysOf(kind, q);
      return rows[q].subarray(l * k, (l + 1) * k);
    };
    const step = (l, q) => {
      const a = residual(l, q);
      const out = layerRow(l, q);
      if (l === 0) return out.set(a);
      for (let j = 0; j < a.length; j++) {
        const w = a[j];
        if (w === 0) continue;
        const prev = layerRow(l - 1, j); // causal: j + 1 keys, all ≤ q
        for (let i = 0; i < prev.length; i++) out[i] += w * prev[i];
      }
    };
    // Causal rows depend on earlier rows only; the encoder's on every row of the layer below.
    if (causal) for (let q = from; q < nq; q++) for (let l = 0; l < L; l++) step(l, q);
    else for (let l = 0; l < L; l++) for (let q = from; q < nq; q++) step(l, q);
  }

  /** Everything captured, for the JSON export. Maps are [layer][head][query][key], rounded to 1e-6. */
  toJSON() {
    const round = (r) => Array.from(r, (v) => Math.round(v * 1e6) / 1e6);
    const maps = {};
    for (const kind of this.kinds) {
      const nq = this.queries(kind);
      const L = this.layersOf(kind);
      const data = [];
      for (let l = 0; l < L; l++) {
        const layer = [];
        for (let h = 0; h < this.heads; h++) {
          const head = [];
          for (let q = 0; q < nq; q++) head.push(round(this.headRow(kind, l, h, q)));
          layer.push(head);
        }
        data.push(layer);
      }
      maps[kind] = { layers: L, heads: this.heads, queries: nq, keys: this.keys(kind), data };
    }
    // `writtenByRow`: the query row (of 'self' and 'cross') whose step wrote the token
    const strip = ({ id, text, label, generated }, i) => ({ id, text, label, generated, writtenByRow: i > 0 ? i - 1 : null });
    return {
      convention: 'row q of self and cross sits at tokens[q] and wrote tokens[q + 1]; encoder row q is source[q]',
      tokens: this.tokens.map(strip),
      source: this.encdec ? this.source.map(({ id, text, label }) => ({ id, text, label })) : undefined,
      maps,
    };
  }
}
