// The loss curve of "Watch it learn": training loss (a smoothed line over every step) and
// held-out loss (dots), log-scaled, on one canvas redrawn from the records.

const TRAIN = '#0a84ff';
const VAL = '#ff7a00';

/** Exponential moving average of the training loss, so that the line shows the trend. */
function smoothed(records, alpha = 0.1) {
  let s = null;
  return records.map((r) => (s = s === null ? r.loss : s + alpha * (r.loss - s)));
}

/** Draws `records` ({ step, loss, valLoss? }) for a run of `steps` steps. */
export function drawLossChart(canvas, records, steps) {
  const dpr = Math.min(3, globalThis.devicePixelRatio || 1);
  const { width, height } = canvas.getBoundingClientRect();
  const W = Math.max(200, Math.round(width)), H = Math.max(120, Math.round(height));
  if (canvas.width !== Math.round(W * dpr)) canvas.width = Math.round(W * dpr);
  if (canvas.height !== Math.round(H * dpr)) canvas.height = Math.round(H * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, W, H);
  ctx.font = '10px ui-monospace, Menlo, Consolas, monospace';
  const left = 40, right = 8, top = 8, bottom = 18;
  const values = records.flatMap((r) => (r.valLoss === undefined ? [r.loss] : [r.loss, r.valLoss]))
    .filter((v) => v > 0 && Number.isFinite(v));
  if (values.length === 0) {
    ctx.fillStyle = '#667085';
    ctx.fillText('the loss appears here once training runs', left, H / 2);
    return;
  }
  const lo = Math.log10(Math.max(1e-4, Math.min(...values))), hi = Math.log10(Math.max(...values)) + 0.05;
  const x = (step) => left + ((W - left - right) * step) / Math.max(1, steps);
  const y = (v) => top + ((H - top - bottom) * (hi - Math.log10(Math.max(1e-4, v)))) / Math.max(1e-6, hi - lo);
  // axes and decades
  ctx.strokeStyle = '#dde1e8';
  ctx.fillStyle = '#667085';
  ctx.lineWidth = 1;
  for (let d = Math.floor(lo); d <= Math.ceil(hi); d++)
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** d;
      if (Math.log10(v) < lo || Math.log10(v) > hi) continue;
      ctx.beginPath();
      ctx.moveTo(left, y(v));
      ctx.lineTo(W - right, y(v));
      ctx.stroke();
      ctx.fillText(String(Number(v.toPrecision(1))), 2, y(v) + 3);
    }
  ctx.fillText(`step ${steps}`, W - right - 56, H - 4);
  // training loss
  const s = smoothed(records);
  ctx.strokeStyle = TRAIN;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  records.forEach((r, i) => (i ? ctx.lineTo(x(r.step), y(s[i])) : ctx.moveTo(x(r.step), y(s[i]))));
  ctx.stroke();
  // held-out loss
  ctx.fillStyle = VAL;
  for (const r of records)
    if (r.valLoss !== undefined) {
      ctx.beginPath();
      ctx.arc(x(r.step), y(r.valLoss), 2.5, 0, 2 * Math.PI);
      ctx.fill();
    }
  ctx.fillStyle = TRAIN;
  ctx.fillText('train', left + 6, top + 10);
  ctx.fillStyle = VAL;
  ctx.fillText('held-out', left + 44, top + 10);
}
