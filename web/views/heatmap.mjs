// The large heatmap of one map (a head or an aggregate): queries down, keys across, every token
// labelled on both axes, a colour bar, and an overlay canvas for highlights (the hovered token's
// row and column, the cell under the pointer or the keyboard cursor).
//
// With `scroll` (the demo page), every token keeps a label at a readable size: cells are at least
// MIN_CELL px, and a map wider than its box grows past it and scrolls. Only maps too large for
// one canvas (more than MAX_LABELLED tokens on a side) are max-pooled (pool.mjs), with one label
// per block, and say so. The canvases are then a window the size of the box onto the whole
// drawing, redrawn as the box scrolls: drawing the whole map (up to ~2800 px a side) cost tens of
// ms a drawing while tokens streamed. The page nests them as box (scrolls) > extent (the whole
// map's size) > view (sticky: stays in the box's view) > canvases. The window keeps the labels at
// its left and top edges, so a map scrolled far into still names its rows and columns.
// Without `scroll` the map fits the canvases' CSS size, pooled past screen resolution, its labels
// one per 10 px.
import { LUT, SCALES, colorizer, FLOORS } from './colormap.mjs';
import { Pooled } from './pool.mjs';

export const EMPTY = 0xfff4f1f0; // #f0f1f4: a masked cell (a later key this query cannot see)
const FONT = '10px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
export const MIN_CELL = 12; // CSS px: the 10 px labels stay one per cell
const MAX_CELL = 40;
const MAX_CANVAS = 3072; // device px per side of a whole drawing (the embed's canvas, an export's)
export const MAX_LABELLED = Math.floor((MAX_CANVAS - 200) / MIN_CELL);

/** The screen's device px per CSS px (at most 3). */
const screenRatio = () => Math.min(3, globalThis.devicePixelRatio || 1);
/** The same for a whole drawing of W × H CSS px: at most MAX_CANVAS device px a side. */
const wholeRatio = (W, H) => Math.min(screenRatio(), MAX_CANVAS / Math.max(W, H));

/** A token as a short, visible label: whitespace made visible, at most 8 characters. */
export function shortLabel(text) {
  const s = text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥').replace(/\r/g, '␍');
  return [...s].length > 8 ? `${[...s].slice(0, 7).join('')}…` : s || '∅';
}

/** A row's label under the convention of hover.mjs: "x→y" (at x, wrote y), or the token alone. */
export const rowLabel = (at, wrote) => (wrote == null ? shortLabel(at) : `${shortLabel(at)}→${shortLabel(wrote)}`);

export class HeatmapView {
  /** `canvas` draws the map; `overlay` (same size, stacked on top) the highlights. */
  constructor(canvas, overlay, { scroll = false } = {}) {
    this.canvas = canvas;
    this.scroll = scroll;
    this.overlay = overlay;
    this.pooled = null;
    this.key = null;
    this.layout = null;
    this.marks = {};
    this.overlayInk = false; // whether the overlay holds any drawing (clearing costs what its size does)
    this.widths = new Map(); // label → measured width
    if (scroll) {
      this.extent = canvas.parentElement.parentElement;
      this.box = this.extent.parentElement;
      this.box.addEventListener('scroll', () => this.#redrawSoon(), { passive: true });
    }
  }

  /** Sizes both canvases to `W` × `H` CSS px at `dpr` device px each (and their CSS size, if `setStyle`). */
  #size(W, H, dpr, setStyle) {
    for (const c of [this.canvas, this.overlay]) {
      if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) {
        c.width = Math.round(W * dpr);
        c.height = Math.round(H * dpr);
        if (c === this.overlay) this.overlayInk = false; // (resizing clears a canvas)
      }
      if (setStyle) {
        c.style.width = `${W}px`;
        c.style.height = `${H}px`;
      }
    }
  }

  /**
   * The map's geometry: CSS size W × H of the whole drawing, `dpr`, `cell` (px per token),
   * `capacity` (blocks per side the pooling may use), and whether every token is labelled.
   * Sizes the canvases: the whole drawing, or with `scroll` the window onto it.
   */
  #plan(n, nq, nk, ml, mt, mr) {
    if (!this.scroll) {
      const { width, height } = this.canvas.getBoundingClientRect();
      const W = Math.max(200, Math.round(width));
      const H = Math.max(200, Math.round(height));
      const side = Math.max(40, Math.min(W - ml - mr, H - mt - 6));
      const dpr = wholeRatio(W, H);
      this.#size(W, H, dpr, false);
      return { W, H, dpr, cell: side / n, capacity: Math.max(1, Math.floor(side * dpr)), labelled: false };
    }
    const { box, extent } = this;
    const avail = Math.max(200, Math.round(box.clientWidth || 480));
    const labelled = n <= MAX_LABELLED;
    const fit = (avail - ml - mr) / n;
    const cell = labelled ? Math.max(MIN_CELL, Math.min(MAX_CELL, fit)) : Math.max(1, fit);
    const W = Math.max(Math.ceil(ml + cell * Math.max(1, nk) + mr), Math.min(avail, 240));
    const H = Math.ceil(mt + Math.max(cell * Math.max(1, nq), 170) + 20);
    const dpr = screenRatio(); // (the window is the box's size: the screen's own ratio, however large the map)
    if (extent.style.width !== `${W}px` || extent.style.height !== `${H}px`) {
      extent.style.width = `${W}px`;
      extent.style.height = `${H}px`;
    }
    // the window: what the box shows of the map (its client size once the extent has set its scrollbars)
    this.#size(Math.min(W, box.clientWidth || W), Math.min(H, box.clientHeight || H), dpr, true);
    return { W, H, dpr, cell, capacity: labelled ? MAX_LABELLED : Math.max(1, Math.floor((avail - ml - mr) * dpr)), labelled };
  }

  /** The window's corner in the whole drawing, in device px: where the box has scrolled to. */
  #corner(L) {
    if (!this.scroll) return { ox: 0, oy: 0 };
    const at = (scrolled, whole, shown) => Math.max(0, Math.min(Math.round(scrolled * L.dpr), Math.round(whole * L.dpr) - shown));
    return { ox: at(this.box.scrollLeft, L.W, this.canvas.width), oy: at(this.box.scrollTop, L.H, this.canvas.height) };
  }

  /**
   * Draws `matrix` ({ nq, nk, row(q) }). `key` names what it is (kind, layer, selection): the
   * pooled rows are kept while it stays the same, and only new rows are added (across
   * generations, those the store kept: pool.mjs).
   * `rowWrote[q]` (optional): the token row q wrote, shown as "at→wrote".
   */
  render({ matrix, key, rowLabels, colLabels, rowWrote = null, title, scale = 'linear' }) {
    const rows = Array.from({ length: matrix.nq }, (_, q) => rowLabel(rowLabels[q] ?? '', rowWrote ? rowWrote[q] : null));
    const cols = colLabels.map(shortLabel);
    const measure = this.canvas.getContext('2d');
    measure.font = FONT;
    const labelWidth = (labels, cap) => {
      let max = 16;
      for (const l of labels) {
        let width = this.widths.get(l);
        if (width === undefined) this.widths.set(l, (width = measure.measureText(l).width));
        if (width > max) max = width;
      }
      return Math.min(cap, max);
    };
    const ml = 8 + labelWidth(rows, 120);
    const mt = 22 + labelWidth(cols, 64) + 4;
    const mr = 52;
    const n = Math.max(matrix.nq, matrix.nk, 1);
    const { W, H, dpr, cell, capacity, labelled } = this.#plan(n, matrix.nq, matrix.nk, ml, mt, mr);
    if (!this.pooled || this.pooled.capacity !== capacity) this.pooled = new Pooled(capacity);
    if (key !== this.key) {
      this.pooled.reset();
      this.key = key;
    }
    this.pooled.update(matrix);
    const { w, h } = this.pooled;
    const block = this.pooled.block || 1; // (0 while an emptied store has given no rows yet)
    const bcell = cell * block; // CSS px per block (square cells)
    const every = labelled ? 1 : Math.max(1, Math.ceil(10 / bcell)); // labels: every block's first token
    const L = { W, H, dpr, ml, mt, cell: bcell, block, every, w, h, nq: matrix.nq, nk: matrix.nk, row: matrix.row, rows, cols, title, scale };
    this.layout = Object.assign(L, this.#corner(L));
    this.#drawWindow();
  }

  /** The layout's window on the canvas, and the highlights over it. */
  #drawWindow() {
    this.#draw(this.canvas.getContext('2d'), this.layout);
    this.#drawOverlay();
  }

  /** The box scrolled: the same map, another window (drawn in the next frame, once however often it scrolls). */
  #redrawSoon() {
    if (this.redrawFrame) return;
    this.redrawFrame = requestAnimationFrame(() => {
      this.redrawFrame = 0;
      const L = this.layout;
      if (!L) return;
      const { ox, oy } = this.#corner(L);
      if (ox === L.ox && oy === L.oy) return;
      Object.assign(L, { ox, oy });
      this.#drawWindow();
    });
  }

  /** The whole map drawn on a canvas of its own (the page's canvases show a window of it): what an export saves. */
  wholeCanvas() {
    const L = this.layout;
    if (!this.scroll || !L) return this.canvas;
    const canvas = document.createElement('canvas');
    const dpr = wholeRatio(L.W, L.H);
    canvas.width = Math.round(L.W * dpr);
    canvas.height = Math.round(L.H * dpr);
    this.#draw(canvas.getContext('2d'), { ...L, dpr, ox: 0, oy: 0 });
    return canvas;
  }

  /**
   * Draws the map of layout `L` on `ctx`'s canvas, whose corner is at (L.ox, L.oy) device px in
   * the whole drawing: the pooled map's pixels that fall in it, and the labels, title and colour bar.
   */
  #draw(ctx, L) {
    const { dpr, ml, mt, cell, block, every, w, h, rows, cols, scale, ox, oy } = L;
    const [cw, ch] = [ctx.canvas.width, ctx.canvas.height];
    // the map's pixels in the whole drawing, and the part of them in this canvas
    const x0 = Math.round(ml * dpr);
    const y0 = Math.round(mt * dpr);
    const wPx = Math.max(1, Math.round((ml + w * cell) * dpr) - x0);
    const hPx = Math.max(1, Math.round((mt + h * cell) * dpr) - y0);
    const [left, top] = [Math.max(x0, ox), Math.max(y0, oy)];
    const [pw, ph] = [Math.min(x0 + wPx, ox + cw) - left, Math.min(y0 + hPx, oy + ch) - top];
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#fff';
    if (!w || !h || pw <= 0 || ph <= 0) ctx.fillRect(0, 0, cw, ch);
    else {
      // white around the map only: its pixels are put whole
      const [x, y] = [left - ox, top - oy];
      ctx.fillRect(0, 0, cw, y);
      ctx.fillRect(0, y + ph, cw, ch - y - ph);
      ctx.fillRect(0, y, x, ph);
      ctx.fillRect(x + pw, y, cw - x - pw, ph);
      // the window's pixels: one buffer the canvas's size, kept (an export's whole drawing gets its own)
      let image = this.image;
      if (ctx.canvas !== this.canvas) image = ctx.createImageData(cw, ch);
      else if (image?.width !== cw || image?.height !== ch) image = this.image = ctx.createImageData(cw, ch);
      if (this.scale !== scale) this.color = colorizer((this.scale = scale));
      const pixels = new Uint32Array(image.data.buffer);
      this.pooled.paint(pixels, cw, 0, 0, wPx, hPx, this.color, EMPTY, scale, { left: left - x0, top: top - y0, width: pw, height: ph });
      ctx.putImageData(image, x, y, 0, 0, pw, ph);
    }
    // the rest in CSS px of the whole drawing. The labels and title keep to the canvas's left and
    // top edges, on white over the cells there: scrolled into a long map, its rows and columns
    // stay named. Unscrolled (and in a whole drawing) that is where the map has its margins.
    ctx.setTransform(dpr, 0, 0, dpr, -ox, -oy);
    const [sx, sy, sw, sh] = [ox / dpr, oy / dpr, cw / dpr, ch / dpr];
    this.#colorBar(ctx, ml + w * cell + 8, mt, Math.max(100, Math.min(h * cell, 160)), scale);
    ctx.fillStyle = '#fff';
    // (the strips end where the cells' pixels begin: x0, y0)
    const [stripW, stripH] = [x0 / dpr, y0 / dpr];
    if (sx > 0) ctx.fillRect(sx, sy, stripW, sh);
    if (sy > 0) ctx.fillRect(sx, sy, sw, stripH);
    const reach = Math.max(cell, 10); // a label reaches ~5 px either side of its cell's middle
    const shown = (at, from, size) => at > from - reach && at < from + size + reach;
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    ctx.fillStyle = '#333';
    ctx.textAlign = 'right';
    for (let r = 0; r < h; r += every) if (shown(mt + (r + 0.5) * cell, sy + mt, sh - mt)) ctx.fillText(rows[r * block] ?? '', sx + ml - 4, mt + (r + 0.5) * cell);
    ctx.save();
    ctx.textAlign = 'left';
    for (let c = 0; c < w; c += every) {
      if (!shown(ml + (c + 0.5) * cell, sx + ml, sw - ml)) continue;
      ctx.setTransform(dpr, 0, 0, dpr, (ml + (c + 0.5) * cell) * dpr - ox, (sy + mt - 4) * dpr - oy);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(cols[c * block] ?? '', 0, 0);
    }
    ctx.restore();
    if (sx > 0 || sy > 0) {
      ctx.fillStyle = '#fff'; // the corner: the labels that ran into it
      ctx.fillRect(sx, sy, stripW, stripH);
    }
    ctx.fillStyle = '#333';
    ctx.textAlign = 'left';
    ctx.font = `bold ${FONT}`;
    ctx.fillText(L.title, sx + 2, sy + 9);
    if (block > 1) {
      ctx.font = FONT;
      ctx.fillStyle = '#666';
      ctx.fillText(`max-pooled: ${block}×${block} cells per block${every > 1 ? '' : ' (one label per block)'}`, sx + 2, L.H - 6);
    }
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
    ctx.textBaseline = 'middle'; // (its own: a new or resized canvas has the default)
    ctx.textAlign = 'left';
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
    ctx.fillText(FLOORS[scale] ?? '0', x + 13, y + height - 4); // the log scale floors at 1e-4
    ctx.fillText(scale, x - 2, y + height + 12);
  }

  /** The value of cell (q, k) as drawn: { q, k, value } (null above the diagonal), or null outside the map. */
  cellAt(q, k) {
    const L = this.layout;
    if (!L || q < 0 || k < 0 || q >= L.nq || k >= L.nk) return null;
    const row = L.row(q);
    return { q, k, value: k < row.length ? row[k] : null };
  }

  /** The cell under a pointer event: { q, k, value } (the block's first cell when pooled), or null. */
  hit(event) {
    const L = this.layout;
    if (!L || !L.w || !L.h) return null;
    const rect = this.canvas.getBoundingClientRect(); // (the window: its corner at L.ox, L.oy)
    // (in the window, the labels keep its first ml px across and mt down)
    if (event.clientX - rect.left < L.ml || event.clientY - rect.top < L.mt) return null;
    const x = event.clientX - rect.left + L.ox / L.dpr - L.ml;
    const y = event.clientY - rect.top + L.oy / L.dpr - L.mt;
    const c = Math.floor(x / L.cell);
    const r = Math.floor(y / L.cell);
    if (x < 0 || y < 0 || c >= L.w || r >= L.h) return null;
    return this.cellAt(r * L.block, c * L.block);
  }

  /** Scrolls the map's box so that row q (and key k, if given) is in view. */
  scrollTo(q, k = null) {
    const L = this.layout;
    const box = this.box ?? this.canvas.parentElement;
    if (!L || !box) return;
    const y = L.mt + Math.floor(q / L.block) * L.cell;
    if (y < box.scrollTop + L.mt || y + L.cell > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, y - box.clientHeight / 2);
    if (k !== null) {
      const x = L.ml + Math.floor(k / L.block) * L.cell;
      if (x < box.scrollLeft + L.ml || x + L.cell > box.scrollLeft + box.clientWidth) box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
    }
  }

  /** Highlights: { row, col } (the hovered token's query row and key column), { cell } ({ q, k }). */
  mark(marks) {
    this.marks = marks;
    this.#drawOverlay();
  }

  #drawOverlay() {
    const ctx = this.overlay.getContext('2d');
    if (this.overlayInk) {
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
      this.overlayInk = false;
    }
    const L = this.layout;
    const { row, col, cell } = this.marks;
    if (!L || (row == null && col == null && cell == null)) return;
    ctx.setTransform(L.dpr, 0, 0, L.dpr, -L.ox, -L.oy);
    this.overlayInk = true;
    // over the cells only: not over the labels at the window's edges
    const [sx, sy] = [L.ox / L.dpr, L.oy / L.dpr];
    ctx.save();
    ctx.beginPath();
    ctx.rect(sx + L.ml - 1, sy + L.mt - 1, this.overlay.width, this.overlay.height);
    ctx.clip();
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
    if (cell && cell.q < L.nq && cell.k < L.nk) {
      const cx = L.ml + Math.floor(cell.k / L.block) * L.cell;
      const cy = L.mt + Math.floor(cell.q / L.block) * L.cell;
      ctx.strokeStyle = 'rgba(0,0,0,0.35)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(L.ml, cy + L.cell / 2);
      ctx.lineTo(L.ml + bw, cy + L.cell / 2);
      ctx.moveTo(cx + L.cell / 2, L.mt);
      ctx.lineTo(cx + L.cell / 2, L.mt + bh);
      ctx.stroke();
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      ctx.strokeRect(cx, cy, L.cell, L.cell); // the cell itself: where the keyboard cursor is
    }
    ctx.restore();
  }
}
