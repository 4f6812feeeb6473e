// Drawing for the Ideas page: canvases sized for the screen's pixel ratio, a small x–y plot and a
// matrix heatmap in the demo's colours (web/views/colormap.mjs), rows = queries, columns = keys,
// with masked cells drawn as grey hatching so that they can never be read as a weight.
import { LUT, cssColor } from '../views/colormap.mjs';

export const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
export const MONO = '10px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
export const INK = '#1d2129';
export const MUTED = '#667085';
export const ACCENT = '#ff7a00';
export const ACCENT2 = '#0a84ff';
/** Masked cells: a light grey with darker grey hatching (no colour of the map is grey). */
export const MASK_FILL = '#e4e7ec';
export const MASK_HATCH = '#9aa3b2';

/**
 * Gives `canvas` a CSS size of width × height and matching device pixels; returns its 2D context in
 * CSS px. The height is set as an aspect ratio, so that a canvas the page scales down to fit a
 * narrow screen (explore.css) keeps its shape; pointers map back through getBoundingClientRect.
 */
export function setupCanvas(canvas, width, height) {
  const dpr = Math.min(3, globalThis.devicePixelRatio || 1);
  canvas.style.width = `${width}px`;
  canvas.style.aspectRatio = `${width} / ${height}`;
  const w = Math.round(width * dpr);
  const h = Math.round(height * dpr);
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, h);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** Tick values for [lo, hi]: about `count` round numbers. */
export function ticks(lo, hi, count = 5) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

const fmt = (v) => (Number.isInteger(v) ? String(v) : Math.abs(v) >= 100 ? v.toFixed(0) : String(+v.toPrecision(3)));

/**
 * An x–y plot on a canvas: axes with ticks, then lines and points in data coordinates.
 * `draw({ x: [lo, hi], y: [lo, hi], xLabel, yLabel, title })` clears and draws the frame; `line`,
 * `points` and `hline` draw over it; `toData(clientX, clientY)` maps the pointer back.
 */
export class Plot {
  constructor(canvas, { width = 480, height = 280, margin = { l: 40, r: 12, t: 20, b: 30 } } = {}) {
    this.canvas = canvas;
    this.width = width;
    this.height = height;
    this.m = margin;
  }

  resize(width, height) {
    this.width = width;
    this.height = height;
  }

  get innerWidth() {
    return this.width - this.m.l - this.m.r;
  }

  get innerHeight() {
    return this.height - this.m.t - this.m.b;
  }

  px(x) {
    return this.m.l + ((x - this.x[0]) / (this.x[1] - this.x[0])) * this.innerWidth;
  }

  py(y) {
    return this.m.t + (1 - (y - this.y[0]) / (this.y[1] - this.y[0])) * this.innerHeight;
  }

  /** Pointer position → data coordinates (unclamped). */
  toData(clientX, clientY) {
    const r = this.canvas.getBoundingClientRect();
    const sx = r.width / this.width || 1;
    const sy = r.height / this.height || 1;
    const cx = (clientX - r.left) / sx;
    const cy = (clientY - r.top) / sy;
    return {
      x: this.x[0] + ((cx - this.m.l) / this.innerWidth) * (this.x[1] - this.x[0]),
      y: this.y[0] + (1 - (cy - this.m.t) / this.innerHeight) * (this.y[1] - this.y[0]),
    };
  }

  draw({ x, y, xLabel = '', yLabel = '', title = '', xLog = false }) {
    this.x = x;
    this.y = y;
    const ctx = (this.ctx = setupCanvas(this.canvas, this.width, this.height));
    const { l, t } = this.m;
    const w = this.innerWidth;
    const h = this.innerHeight;
    ctx.font = FONT;
    ctx.strokeStyle = '#e6e9ef';
    ctx.fillStyle = MUTED;
    ctx.lineWidth = 1;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const segment = (x0, y0, x1, y1) => {
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1, y1);
      ctx.stroke();
    };
    for (const v of ticks(x[0], x[1], Math.max(2, Math.round(w / 70)))) {
      const X = Math.round(this.px(v)) + 0.5;
      segment(X, t, X, t + h);
      ctx.fillText(xLog ? fmt(10 ** v) : fmt(v), X, t + h + 4);
    }
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const v of ticks(y[0], y[1], Math.max(2, Math.round(h / 40)))) {
      const Y = Math.round(this.py(v)) + 0.5;
      segment(l, Y, l + w, Y);
      ctx.fillText(fmt(v), l - 4, Y);
    }
    ctx.strokeStyle = '#98a2b3';
    ctx.strokeRect(l + 0.5, t + 0.5, w, h);
    ctx.fillStyle = INK;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    if (title) {
      ctx.font = `600 ${FONT}`;
      ctx.fillText(title, l, t - 6);
      ctx.font = FONT;
    }
    ctx.fillStyle = MUTED;
    ctx.textAlign = 'right';
    if (xLabel) ctx.fillText(xLabel, l + w, this.height - 3);
    ctx.textAlign = 'left';
    if (yLabel) ctx.fillText(yLabel, 2, t - 6);
  }

  /** A polyline through (xs[i], ys[i]); non-finite points break it. */
  line(xs, ys, { color = INK, width = 2, dash = [] } = {}) {
    const ctx = this.ctx;
    ctx.save();
    ctx.beginPath();
    ctx.rect(this.m.l, this.m.t, this.innerWidth, this.innerHeight);
    ctx.clip();
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.setLineDash(dash);
    ctx.beginPath();
    let pen = false;
    for (let i = 0; i < xs.length; i++) {
      if (!Number.isFinite(xs[i]) || !Number.isFinite(ys[i])) {
        pen = false;
        continue;
      }
      const X = this.px(xs[i]);
      const Y = this.py(ys[i]);
      if (pen) ctx.lineTo(X, Y);
      else ctx.moveTo(X, Y);
      pen = true;
    }
    ctx.stroke();
    ctx.restore();
  }

  hline(y, style) {
    this.line(this.x, [y, y], style);
  }

  /** Circles at (xs[i], ys[i]); `selected` (an index) gets a ring. */
  points(xs, ys, { color = ACCENT2, radius = 4, selected = -1, fill = true } = {}) {
    const ctx = this.ctx;
    for (let i = 0; i < xs.length; i++) {
      ctx.beginPath();
      ctx.arc(this.px(xs[i]), this.py(ys[i]), radius, 0, 2 * Math.PI);
      ctx.fillStyle = color;
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 1;
      if (fill) ctx.fill();
      ctx.stroke();
      if (i === selected) {
        ctx.beginPath();
        ctx.arc(this.px(xs[i]), this.py(ys[i]), radius + 3, 0, 2 * Math.PI);
        ctx.strokeStyle = INK;
        ctx.lineWidth = 1.5;
        ctx.stroke();
      }
    }
  }
}

/** Draws the masked-cell pattern in the rectangle (x, y, w, h) (CSS px). */
export function hatch(ctx, x, y, w, h) {
  ctx.save();
  ctx.fillStyle = MASK_FILL;
  ctx.fillRect(x, y, w, h);
  ctx.beginPath();
  ctx.rect(x, y, w, h);
  ctx.clip();
  ctx.strokeStyle = MASK_HATCH;
  ctx.lineWidth = 1;
  ctx.beginPath();
  const step = 4;
  for (let d = -h; d < w; d += step) {
    ctx.moveTo(x + d, y + h);
    ctx.lineTo(x + d + h, y);
  }
  ctx.stroke();
  ctx.restore();
}

/**
 * A matrix heatmap: rows down, columns across (for attention: queries × keys, as the model
 * views draw them), the value → colour map over `range`, masked cells hatched, labels on both
 * axes, a colour bar. `draw` takes { rows, cols, value(r, c) (null: masked), range: [lo, hi],
 * rowLabels, colLabels, rowTitle, colTitle, title, size (the matrix's longer side, CSS px) } and
 * returns the layout, which `cellRect(r, c)` and `hit(event)` read.
 */
export class MatrixView {
  constructor(canvas) {
    this.canvas = canvas;
    this.layout = null;
    this.cells = document.createElement('canvas'); // one pixel per cell, scaled up
  }

  draw({ rows, cols, value, range = [0, 1], rowLabels = null, colLabels = null, rowTitle = '', colTitle = '', title = '',
    size = 240, colorBar = true, labelEvery = 0 }) {
    const labelSpace = (labels) => (labels ? 6 + Math.min(48, Math.max(...labels.map((s) => String(s).length), 1) * 6.2) : 4);
    const ml = 14 + labelSpace(rowLabels);
    const mt = 18 + (colLabels ? labelSpace(colLabels) : 4) + (colTitle ? 12 : 0);
    const cell = Math.max(1, size / Math.max(rows, cols, 1));
    const w = cell * cols;
    const h = cell * rows;
    const mr = colorBar ? 52 : 6;
    const width = Math.ceil(ml + w + mr);
    const height = Math.ceil(mt + h + 8);
    const ctx = setupCanvas(this.canvas, width, height);

    // the colours, one pixel per cell, drawn scaled without smoothing
    this.cells.width = Math.max(1, cols);
    this.cells.height = Math.max(1, rows);
    const cctx = this.cells.getContext('2d');
    const image = cctx.createImageData(this.cells.width, this.cells.height);
    const px = new Uint32Array(image.data.buffer);
    const [lo, hi] = range;
    const masked = [];
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = value(r, c);
        if (v === null || v === undefined) {
          masked.push([r, c]);
          px[r * cols + c] = 0xffffffff;
          continue;
        }
        const level = hi > lo ? (v - lo) / (hi - lo) : 0;
        px[r * cols + c] = LUT[Math.max(0, Math.min(255, Math.round(level * 255)))];
      }
    }
    cctx.putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.cells, ml, mt, w, h);
    for (const [r, c] of masked) hatch(ctx, ml + c * cell, mt + r * cell, cell, cell);
    if (cell >= 6 && rows * cols <= 4096) {
      // cell borders make small matrices countable
      ctx.strokeStyle = 'rgba(255,255,255,0.6)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let r = 1; r < rows; r++) {
        ctx.moveTo(ml, mt + r * cell);
        ctx.lineTo(ml + w, mt + r * cell);
      }
      for (let c = 1; c < cols; c++) {
        ctx.moveTo(ml + c * cell, mt);
        ctx.lineTo(ml + c * cell, mt + h);
      }
      ctx.stroke();
    }

    // labels: every one that fits (one per 10 px)
    const every = labelEvery || Math.max(1, Math.ceil(10 / cell));
    ctx.font = MONO;
    ctx.fillStyle = INK;
    ctx.textBaseline = 'middle';
    if (rowLabels) {
      ctx.textAlign = 'right';
      for (let r = 0; r < rows; r += every) ctx.fillText(String(rowLabels[r] ?? ''), ml - 4, mt + (r + 0.5) * cell);
    }
    if (colLabels) {
      ctx.save();
      ctx.textAlign = 'left';
      for (let c = 0; c < cols; c += every) {
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        const dpr = this.canvas.width / width;
        ctx.setTransform(dpr, 0, 0, dpr, (ml + (c + 0.5) * cell) * dpr, (mt - 4) * dpr);
        ctx.rotate(-Math.PI / 2);
        ctx.fillText(String(colLabels[c] ?? ''), 0, 0);
      }
      ctx.restore();
    }
    ctx.font = FONT;
    ctx.fillStyle = MUTED;
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    if (colTitle) ctx.fillText(`${colTitle} →`, ml, 26);
    if (rowTitle) {
      ctx.save();
      ctx.translate(10, mt + h / 2);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'center';
      ctx.fillText(`← ${rowTitle}`, 0, 0);
      ctx.restore();
    }
    if (title) {
      ctx.font = `600 ${FONT}`;
      ctx.fillStyle = INK;
      ctx.fillText(title, 2, 12);
    }
    if (colorBar) this.#colorBar(ctx, ml + w + 10, mt, Math.max(40, Math.min(h, 140)), range);
    this.layout = { ml, mt, cell, rows, cols, width, height, value };
    return this.layout;
  }

  #colorBar(ctx, x, y, height, [lo, hi]) {
    for (let i = 0; i < height; i++) {
      ctx.fillStyle = cssColor(1 - i / (height - 1));
      ctx.fillRect(x, y + i, 10, 1);
    }
    ctx.font = FONT;
    ctx.fillStyle = INK;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    ctx.fillText(fmt(+hi.toPrecision(3)), x + 13, y + 4);
    ctx.fillText(fmt(+((lo + hi) / 2).toPrecision(3)), x + 13, y + height / 2);
    ctx.fillText(fmt(+lo.toPrecision(3)), x + 13, y + height - 4);
  }

  /** The cell (r, c) in CSS px of the canvas: { x, y, w, h }. */
  cellRect(r, c) {
    const L = this.layout;
    return { x: L.ml + c * L.cell, y: L.mt + r * L.cell, w: L.cell, h: L.cell };
  }

  /** The cell under a pointer event: { r, c, value } or null. */
  hit(event) {
    const L = this.layout;
    if (!L) return null;
    const rect = this.canvas.getBoundingClientRect();
    const s = rect.width / L.width || 1;
    const c = Math.floor(((event.clientX - rect.left) / s - L.ml) / L.cell);
    const r = Math.floor(((event.clientY - rect.top) / s - L.mt) / L.cell);
    if (r < 0 || c < 0 || r >= L.rows || c >= L.cols) return null;
    return { r, c, value: L.value(r, c) };
  }
}

/** A legend swatch for masked cells, as a small canvas. */
export function maskSwatch(canvas, size = 14) {
  const ctx = setupCanvas(canvas, size, size);
  hatch(ctx, 0, 0, size, size);
}

/** A horizontal colour bar from lo to hi, for legends: a small canvas. */
export function colorRamp(canvas, width = 120, height = 10) {
  const ctx = setupCanvas(canvas, width, height);
  for (let i = 0; i < width; i++) {
    ctx.fillStyle = cssColor(i / (width - 1));
    ctx.fillRect(i, 0, 1, height);
  }
}
