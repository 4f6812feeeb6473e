// Downsampling past screen resolution: a map of n × n cells drawn into p pixels is max-pooled
// into blocks of ⌈n / p⌉ × ⌈n / p⌉ cells (a sharp peak stays visible). Rows are pooled as they
// arrive, and block colours are kept: a new token costs one row of blocks, unless the block size
// grows, which re-pools everything (each time the context passes a multiple of p; with `stepped`
// blocks, sizes of 1-4 then 2^e × 1, 1.25 or 1.5, only each time it grows by at least a fifth).
// A new generation whose store kept the first rows (a chat's next turn: matrix.kept) keeps their
// blocks too, and pools only the rows after them.

/** The block size for `need` cells per block: itself, or (stepped) the next of 1-4, 5, 6, 8, 10, 12, 16, 20, 24, 32, … */
export function blockSize(need, stepped) {
  if (!stepped || need <= 4) return need;
  const e = 2 ** Math.floor(Math.log2(need));
  return [e, e * 1.25, e * 1.5, e * 2].find((b) => b >= need);
}

export class Pooled {
  /** `capacity`: the most blocks per side (the pixels the map is drawn into); `stepped`: see blockSize. */
  constructor(capacity, { stepped = false } = {}) {
    this.stepped = stepped;
    this.capacity = Math.max(1, Math.floor(capacity));
    this.data = new Float32Array(this.capacity * this.capacity); // -1: no data (above the diagonal)
    this.colors = new Uint32Array(this.capacity * this.capacity);
    this.colorKey = null;
    this.reset();
  }

  reset() {
    this.block = 0;
    this.rowsDone = 0;
    this.w = 0;
    this.h = 0;
    this.data.fill(-1);
    this.dirtyRow = 0; // block rows from here on need colouring
    this.coloredW = 0; // block columns coloured in the rows above dirtyRow
  }

  /** Forgets the rows from `rows` on: the block rows that hold any of them. */
  #truncate(rows) {
    if (!this.block || rows === 0) return this.reset();
    const b0 = Math.floor(rows / this.block);
    this.data.fill(-1, b0 * this.capacity);
    this.rowsDone = Math.min(this.rowsDone, b0 * this.block);
    this.dirtyRow = Math.min(this.dirtyRow, b0);
  }

  /**
   * Pools the rows of `m` ({ nq, nk, row(q), and from a store lineage, kept }) not seen yet.
   * Returns whether it pooled any.
   */
  update(m) {
    if (m.lineage !== undefined && m.lineage !== this.lineage) {
      // other rows than those pooled: an emptied store (a generation about to start) leaves them
      // for what comes next; rows the next store kept (m.kept) stay pooled, the rest go
      if (m.nq === 0) {
        this.w = this.h = 0;
        return false;
      }
      const kept = m.kept && m.kept.lineage === this.lineage ? m.kept.rows : 0;
      this.lineage = m.lineage;
      if (kept < this.rowsDone) this.#truncate(kept);
    }
    const block = blockSize(Math.max(1, Math.ceil(Math.max(m.nq, m.nk) / this.capacity)), this.stepped);
    if (block !== this.block || m.nq < this.rowsDone) {
      this.reset();
      this.block = block;
    }
    this.w = Math.ceil(m.nk / block);
    this.h = Math.ceil(m.nq / block);
    if (this.rowsDone === m.nq) return false;
    const stride = this.capacity;
    const data = this.data;
    this.dirtyRow = Math.min(this.dirtyRow, Math.floor(this.rowsDone / block));
    for (let q = this.rowsDone; q < m.nq; q++) {
      const row = m.row(q);
      const base = Math.floor(q / block) * stride;
      if (block === 1) {
        for (let k = 0; k < row.length; k++) if (row[k] > data[base + k]) data[base + k] = row[k];
      } else {
        for (let i = base, k = 0; k < row.length; i++) {
          const end = Math.min(row.length, k + block);
          let max = data[i];
          for (; k < end; k++) if (row[k] > max) max = row[k];
          data[i] = max;
        }
      }
    }
    this.rowsDone = m.nq;
    return true;
  }

  /** Colours the blocks that changed since the last call (all of them when the colours changed). */
  #color(color, empty, colorKey) {
    const { w, h, data, colors, capacity } = this;
    if (colorKey !== this.colorKey) {
      this.colorKey = colorKey;
      this.dirtyRow = 0;
    }
    const paint = (r, from, to) => {
      for (let c = from, i = r * capacity + from; c < to; c++, i++) colors[i] = data[i] < 0 ? empty : color(data[i]);
    };
    for (let r = 0; r < Math.min(this.dirtyRow, h); r++) if (this.coloredW < w) paint(r, this.coloredW, w);
    for (let r = this.dirtyRow; r < h; r++) paint(r, 0, w);
    this.dirtyRow = h;
    this.coloredW = w;
  }

  /**
   * Paints the pooled blocks, stretched to `width` × `height` pixels, into `pixels` (a Uint32Array
   * over ImageData of row length `stride`) at (x, y); `color(v)` gives packed RGBA, `empty` is
   * painted where there is no data; `colorKey` names the colouring (scale). `part` ({ left, top,
   * width, height }, within the stretched map) paints only that part, its corner at (x, y): a
   * map larger than its window is drawn a window at a time.
   */
  paint(pixels, stride, x, y, width, height, color, empty, colorKey, part = { left: 0, top: 0, width, height }) {
    const { w, h, colors, capacity } = this;
    if (w === 0 || h === 0) {
      for (let py = 0; py < part.height; py++) pixels.fill(empty, (y + py) * stride + x, (y + py) * stride + x + part.width);
      return;
    }
    this.#color(color, empty, colorKey);
    const cols = new Int32Array(part.width);
    for (let px = 0; px < part.width; px++) cols[px] = Math.min(w - 1, Math.floor(((part.left + px) * w) / width));
    let lastSrc = -1;
    let lastDst = 0;
    for (let py = 0; py < part.height; py++) {
      const src = Math.min(h - 1, Math.floor(((part.top + py) * h) / height)) * capacity;
      const dst = (y + py) * stride + x;
      if (src === lastSrc) pixels.copyWithin(dst, lastDst, lastDst + part.width);
      else for (let px = 0; px < part.width; px++) pixels[dst + px] = colors[src + cols[px]];
      lastSrc = src;
      lastDst = dst;
    }
  }
}
