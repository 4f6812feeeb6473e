// Source ↔ output alignment of an encoder–decoder model: the source tokens along the top, the
// output tokens along the bottom, and a line from each output token to every source token its
// cross-attention weighs (the row of the step that produced the token), drawn darker and
// thicker for larger weights — relative to that output's largest weight, so that a diffuse row
// still shows where it peaks.
import { cssColor } from './colormap.mjs';
import { shortLabel } from './heatmap.mjs';

const FONT = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

export class AlignmentView {
  constructor(canvas) {
    this.canvas = canvas;
    this.links = 0;
  }

  /**
   * `matrix`: cross-attention ({ nq, nk, row(q) }); `source`, `output`: labels, where
   * output[q] is the token produced from query row q. `focus`: an output index to single out.
   */
  render({ matrix, source, output, title, focus = null }) {
    const dpr = Math.min(3, globalThis.devicePixelRatio || 1);
    const { width } = this.canvas.getBoundingClientRect();
    const W = Math.max(240, Math.round(width));
    const H = 190;
    if (this.canvas.width !== Math.round(W * dpr) || this.canvas.height !== Math.round(H * dpr)) {
      this.canvas.width = Math.round(W * dpr);
      this.canvas.height = Math.round(H * dpr);
      this.canvas.style.height = `${H}px`;
    }
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    ctx.font = `bold ${FONT}`;
    ctx.fillStyle = '#222';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'left';
    ctx.fillText(title, 4, 10);

    const n = Math.min(matrix.nq, output.length);
    const xs = (count, i) => 12 + ((W - 24) * (i + 0.5)) / Math.max(1, count);
    const topY = 40;
    const bottomY = H - 24;
    ctx.font = FONT;
    ctx.textAlign = 'center';
    const every = (count) => Math.max(1, Math.ceil(28 / ((W - 24) / Math.max(1, count))));
    const s = every(source.length);
    for (let k = 0; k < source.length; k += s) ctx.fillText(shortLabel(source[k]), xs(source.length, k), topY - 12);
    const o = every(n);
    for (let q = 0; q < n; q += o) ctx.fillText(shortLabel(output[q]), xs(n, q), bottomY + 12);

    let links = 0;
    ctx.lineCap = 'round';
    for (let q = 0; q < n; q++) {
      const row = matrix.row(q);
      let max = 0;
      for (let k = 0; k < row.length; k++) max = Math.max(max, row[k]);
      if (!(max > 0)) continue;
      const faded = focus != null && focus !== q;
      for (let k = 0; k < row.length; k++) {
        const w = row[k] / max; // each output's weights relative to its largest
        if (!(w >= 0.15)) continue;
        ctx.strokeStyle = cssColor(0.9 * (1 - w));
        ctx.globalAlpha = faded ? 0.06 : 0.1 + 0.9 * w * w;
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
  }
}
