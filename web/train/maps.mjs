// The probe's attention maps in "Watch it learn": one small heatmap per layer × head (queries
// down, keys across), with the probe's characters as labels, in the page's colour map.
import { LUT } from '../views/colormap.mjs';
import { shortLabel } from '../views/heatmap.mjs';

/**
 * Fills `box` with a canvas per layer and head of `probe` ({ kind, layers, heads, queries,
 * keys, maps }), each row scaled to its largest weight so that where a query looks shows
 * however flat the row is.
 */
export function drawProbeMaps(box, probe) {
  const { layers, heads, queries, keys, maps } = probe;
  const nq = queries.length, nk = keys.length;
  const cell = Math.max(6, Math.min(18, Math.floor(220 / Math.max(nq, nk))));
  const labelW = 34, labelH = 14;
  let canvases = [...box.querySelectorAll('canvas')];
  if (canvases.length !== layers * heads) {
    box.replaceChildren();
    canvases = [];
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++) {
        const figure = document.createElement('figure');
        const canvas = document.createElement('canvas');
        const caption = document.createElement('figcaption');
        caption.textContent = `layer ${l} · head ${h}`;
        figure.append(canvas, caption);
        box.append(figure);
        canvases.push(canvas);
      }
  }
  for (let l = 0; l < layers; l++)
    for (let h = 0; h < heads; h++) {
      const canvas = canvases[l * heads + h];
      const W = labelW + nk * cell, H = labelH + nq * cell;
      if (canvas.width !== W || canvas.height !== H) {
        canvas.width = W;
        canvas.height = H;
      }
      const ctx = canvas.getContext('2d');
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, W, H);
      const image = ctx.createImageData(nk * cell, nq * cell);
      const px = new Uint32Array(image.data.buffer);
      const at = (l * heads + h) * nq * nk;
      for (let q = 0; q < nq; q++) {
        const row = maps.subarray(at + q * nk, at + (q + 1) * nk);
        const max = Math.max(1e-9, ...row);
        for (let k = 0; k < nk; k++) {
          const c = probe.kind === 'self' && k > q ? 0xfff4f1f0 : LUT[Math.min(255, Math.round((255 * row[k]) / max))];
          for (let dy = 0; dy < cell; dy++) px.fill(c, (q * cell + dy) * nk * cell + k * cell, (q * cell + dy) * nk * cell + (k + 1) * cell);
        }
      }
      ctx.putImageData(image, labelW, labelH);
      ctx.fillStyle = '#1d2129';
      ctx.font = `${Math.min(11, cell)}px ui-monospace, Menlo, Consolas, monospace`;
      ctx.textAlign = 'center';
      if (cell >= 8) keys.forEach((t, k) => ctx.fillText(shortLabel(t).slice(0, 1), labelW + k * cell + cell / 2, labelH - 3));
      ctx.textAlign = 'right';
      if (cell >= 8) queries.forEach((t, q) => ctx.fillText(shortLabel(t).slice(0, 5), labelW - 3, labelH + q * cell + cell - 3));
    }
  box.dataset.probes = String(Number(box.dataset.probes ?? 0) + 1);
}
