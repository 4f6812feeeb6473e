// The large heatmap of one map (a head or an aggregate): queries down, keys across, token labels
// on both axes, a colour bar, and an overlay canvas for highlights (the hovered token's row and
// column, the cell under the pointer). Past screen resolution the map is max-pooled (pool.mjs).
import { LUT, SCALES, colorizer } from './colormap.mjs';
import { Pooled } from './pool.mjs';

const EMPTY = 0xfff4f1f0; // #f0f1f4: above the diagonal (no key yet)
const FONT = '10px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

/** A token as a short, visible label: whitespace made visible, at most 8 characters. */
export function shortLabel(text) {
  const s = text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥').replace(/\r/g, '␍');
  return [...s].length > 8 ? `${[...s].slice(0, 7).join('')}…` : s || '∅';
}

export class HeatmapView {
  /** `canvas` draws the map; `overlay` (same size, stacked on top) the highlights. */
  constructor(canvas, overlay) {
    this.canvas = canvas;
    this.overlay = overlay;
    this.pooled = null;
    this.key = null;
    this.layout = null;
    this.marks = {};
    this.widths = new Map(); // label → measured width
    this.shorts = new Map(); // token text → label
  }

  #short = (text) => {
    let l = this.shorts.get(text);
    if (l === undefined) this.shorts.set(text, (l = shortLabel(text)));
    return l;
  };

  /** Matches the canvases' pixels to their CSS size; returns the CSS size. */
  #fit() {
    const dpr = Math.min(3, globalThis.devicePixelRatio || 1);
    const { width, height } = this.canvas.getBoundingClientRect();
    const W = Math.max(200, Math.round(width));
    const H = Math.max(200, Math.round(height));
    for (const c of [this.canvas, this.overlay]) {
      if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) {
        c.width = Math.round(W * dpr);
        c.height = Math.round(H * dpr);
        this.key = null; // pixels changed: pool again
      }
    }
    return { W, H, dpr };
  }

  /**
   * Draws `matrix` ({ nq, nk, row(q) }). `key` names what it is (kind, layer, selection and the
   * generation): the pooled rows are kept while it stays the same and only new rows are added.
   */
  render({ matrix, key, rowLabels, colLabels, title, scale = 'linear' }) {
    const { W, H, dpr } = this.#fit();
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';

    const rows = rowLabels.map(this.#short);
    const cols = colLabels.map(this.#short);
    const labelWidth = (labels) => {
      let max = 16;
      for (const l of labels) {
        let width = this.widths.get(l);
        if (width === undefined) this.widths.set(l, (width = ctx.measureText(l).width));
        if (width > max) max = width;
      }
      return Math.min(64, max);
    };
    const ml = 8 + labelWidth(rows);
    const mt = 22 + labelWidth(cols) + 4;
    const mr = 46;
    const side = Math.max(40, Math.min(W - ml - mr, H - mt - 6));
    const sidePx = Math.floor(side * dpr);

    if (!this.pooled || this.pooled.capacity !== sidePx) this.pooled = new Pooled(sidePx);
    if (key !== this.key) {
      this.pooled.reset();
      this.key = key;
    }
    this.pooled.update(matrix);
    const { w, h, block } = this.pooled;
    const blocks = Math.max(w, h, 1);
    const cell = side / blocks; // CSS px per block (square cells)
    const wPx = Math.max(1, Math.round(w * cell * dpr));
    const hPx = Math.max(1, Math.round(h * cell * dpr));
    if (w && h) {
      if (this.image?.width !== wPx || this.image?.height !== hPx) {
        this.image = ctx.createImageData(wPx, hPx);
        this.pixels = new Uint32Array(this.image.data.buffer);
      }
      if (this.scale !== scale) this.color = colorizer((this.scale = scale));
      this.pooled.paint(this.pixels, wPx, 0, 0, wPx, hPx, this.color, EMPTY, scale);
      ctx.putImageData(this.image, Math.round(ml * dpr), Math.round(mt * dpr));
    }

    // Labels: every block's first token, thinned to one per 10 px.
    ctx.fillStyle = '#333';
    const every = Math.max(1, Math.ceil(10 / cell));
    ctx.textAlign = 'right';
    for (let r = 0; r < h; r += every) ctx.fillText(rows[r * block] ?? '', ml - 4, mt + (r + 0.5) * cell);
    ctx.save();
    ctx.textAlign = 'left';
    for (let c = 0; c < w; c += every) {
      ctx.setTransform(dpr, 0, 0, dpr, (ml + (c + 0.5) * cell) * dpr, (mt - 4) * dpr);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(cols[c * block] ?? '', 0, 0);
    }
    ctx.restore();
    ctx.textAlign = 'left';
    ctx.font = `bold ${FONT}`;
    ctx.fillText(title, 2, 9);
    if (block > 1) {
      ctx.font = FONT;
      ctx.fillStyle = '#666';
      ctx.fillText(`max-pooled: ${block}×${block} cells per block`, 2, H - 6);
    }
    this.#colorBar(ctx, W - mr + 10, mt, Math.min(side, 160), scale);

    this.layout = { ml, mt, cell, block, w, h, nq: matrix.nq, nk: matrix.nk, row: matrix.row };
    this.#drawOverlay();
  }

  #colorBar(ctx, x, y, height, scale) {
    const f = SCALES[scale] ?? SCALES.linear;
    for (let i = 0; i < height; i++) {
      const c = LUT[Math.round(255 * (1 - i / (height - 1)))];
      ctx.fillStyle = `rgb(${c & 255},${(c >> 8) & 255},${(c >> 16) & 255})`;
      ctx.fillRect(x, y + i, 10, 1);
    }
    ctx.font = FONT;
    ctx.fillStyle = '#333';
    // the values at the top, middle and bottom of the bar under this scale
    const inverse = (level) => {
      let lo = 0;
      let hi = 1;
      for (let k = 0; k < 40; k++) {
        const mid = (lo + hi) / 2;
        if (f(mid) < level) lo = mid;
        else hi = mid;
      }
      return hi;
    };
    const fmt = (v) => (v >= 0.01 ? v.toFixed(2) : v.toExponential(0));
    ctx.fillText('1', x + 13, y + 4);
    ctx.fillText(fmt(inverse(0.5)), x + 13, y + height / 2);
    ctx.fillText('0', x + 13, y + height - 4);
    ctx.fillText(scale, x - 2, y + height + 12);
  }

  /** The cell under a pointer event: { q, k, value } (the block's first cell when pooled), or null. */
  hit(event) {
    const L = this.layout;
    if (!L) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - L.ml;
    const y = event.clientY - rect.top - L.mt;
    const c = Math.floor(x / L.cell);
    const r = Math.floor(y / L.cell);
    if (x < 0 || y < 0 || c >= L.w || r >= L.h) return null;
    const q = r * L.block;
    const k = c * L.block;
    if (q >= L.nq) return null;
    const row = L.row(q);
    return { q, k, value: k < row.length ? row[k] : null };
  }

  /** Highlights: { row, col } (the hovered token's query row and key column), { cell } ({ q, k }). */
  mark(marks) {
    this.marks = marks;
    this.#drawOverlay();
  }

  #drawOverlay() {
    const ctx = this.overlay.getContext('2d');
    const dpr = this.overlay.width / Math.max(1, this.overlay.getBoundingClientRect().width || 1);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    const L = this.layout;
    if (!L) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const { row, col, cell } = this.marks;
    const band = (x, y, w, h, color) => {
      ctx.strokeStyle = color;
      ctx.lineWidth = 2;
      ctx.strokeRect(x, y, w, h);
    };
    const bw = L.w * L.cell;
    const bh = L.h * L.cell;
    // a row spans its keys; a column starts at the first query that has that key
    if (row != null && row < L.nq) {
      const width = Math.ceil(L.row(row).length / L.block) * L.cell;
      band(L.ml, L.mt + Math.floor(row / L.block) * L.cell, width, L.cell, '#ff7a00');
    }
    if (col != null && col < L.nk) {
      let first = 0;
      while (first < L.nq && L.row(first).length <= col) first++;
      const top = Math.floor(first / L.block) * L.cell;
      if (first < L.nq) band(L.ml + Math.floor(col / L.block) * L.cell, L.mt + top, L.cell, bh - top, '#0a84ff');
    }
    if (cell) {
      ctx.strokeStyle = 'rgba(0,0,0,0.35)';
      ctx.lineWidth = 1;
      const cx = L.ml + (Math.floor(cell.k / L.block) + 0.5) * L.cell;
      const cy = L.mt + (Math.floor(cell.q / L.block) + 0.5) * L.cell;
      ctx.beginPath();
      ctx.moveTo(L.ml, cy);
      ctx.lineTo(L.ml + bw, cy);
      ctx.moveTo(cx, L.mt);
      ctx.lineTo(cx, L.mt + bh);
      ctx.stroke();
    }
  }
}
