// Source ↔ output alignment of an encoder–decoder model: the source tokens along the top, the
// output tokens along the bottom, and a line from each output token to every source token that
// the row which wrote it weighs (the convention of hover.mjs). A line's colour is its weight in
// the heatmap's colours and scale, on the colour of a zero weight, so both views read alike; its
// thickness is relative to that output's largest weight, so a diffuse row still shows its peak.
import { cssColor, cssWeight } from './colormap.mjs';
import { shortLabel } from './heatmap.mjs';

const FONT = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
const MIN_GAP = 16; // CSS px per label: every token labelled; a wider canvas scrolls instead

export class AlignmentView {
  constructor(canvas) {
    this.canvas = canvas;
    this.links = 0;
    this.peaks = []; // per output: the source index of its largest weight (or -1)
  }

  /**
   * `matrix`: cross-attention ({ nq, nk, row(q) }); `source`, `output`: labels, where
   * output[q] is the token written by query row q, and `at[q]` the token that row sits at.
   * `focus`: an output index to single out; `scale`: the heatmap's scale.
   */
  render({ matrix, source, output, at = [], title, focus = null, scale = 'linear' }) {
    const dpr = Math.min(3, globalThis.devicePixelRatio || 1);
    const avail = Math.round(this.canvas.parentElement?.clientWidth || this.canvas.getBoundingClientRect().width || 240);
    const n = Math.min(matrix.nq, output.length);
    const W = Math.max(240, avail - 2, 24 + MIN_GAP * Math.max(source.length, n));
    const H = 190;
    if (this.canvas.width !== Math.round(W * dpr) || this.canvas.height !== Math.round(H * dpr)) {
      this.canvas.width = Math.round(W * dpr);
      this.canvas.height = Math.round(H * dpr);
    }
    this.canvas.style.width = `${W}px`;
    this.canvas.style.height = `${H}px`;
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = cssColor(0); // the colour of a zero weight
    ctx.fillRect(0, 0, W, H);
    ctx.font = `bold ${FONT}`;
    ctx.fillStyle = '#fff';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    ctx.fillText(title, 4, 10);

    const xs = (count, i) => 12 + ((W - 24) * (i + 0.5)) / Math.max(1, count);
    const topY = 40;
    const bottomY = H - 24;
    ctx.font = FONT;
    ctx.textAlign = 'center';
    for (let k = 0; k < source.length; k++) ctx.fillText(shortLabel(source[k]), xs(source.length, k), topY - 12);
    for (let q = 0; q < n; q++) ctx.fillText(shortLabel(output[q]), xs(n, q), bottomY + 12);

    let links = 0;
    this.peaks = [];
    ctx.lineCap = 'round';
    for (let q = 0; q < n; q++) {
      const row = matrix.row(q);
      let max = 0;
      let peak = -1;
      for (let k = 0; k < row.length; k++) if (row[k] > max) (max = row[k]), (peak = k);
      this.peaks.push(peak);
      if (!(max > 0)) continue;
      const faded = focus != null && focus !== q;
      for (let k = 0; k < row.length; k++) {
        const w = row[k] / max;
        if (!(w >= 0.15)) continue;
        ctx.strokeStyle = cssWeight(row[k], scale);
        ctx.globalAlpha = faded ? 0.12 : 1;
        ctx.lineWidth = 0.5 + 2.5 * w;
        ctx.beginPath();
        ctx.moveTo(xs(source.length, k), topY);
        ctx.lineTo(xs(n, q), bottomY);
        ctx.stroke();
        links++;
      }
    }
    ctx.globalAlpha = 1;
    this.links = links;
    // for screen readers: each output and where the row that wrote it looks most
    this.canvas.setAttribute('aria-label', `${title}. ` + this.peaks.map((p, q) =>
      `at '${at[q] ?? ''}' → wrote '${output[q]}': looks most at ${p < 0 ? 'nothing' : `'${source[p]}' (#${p}, ${matrix.row(q)[p].toFixed(2)})`}`).join('; '));
  }
}
