// The model view: every layer × head of one attention kind as a thumbnail, one canvas for all,
// updated incrementally as rows arrive. A click selects a layer and head.
import { colorizer } from './colormap.mjs';
import { Pooled } from './pool.mjs';

const EMPTY = 0xfff4f1f0;
const WHITE = 0xffffffff;
const GAP = 3;
const LEFT = 26;
const TOP = 14;

export class ModelView {
  constructor(canvas, { onSelect } = {}) {
    this.canvas = canvas;
    this.cells = [];
    this.keys = [];
    this.layout = null;
    canvas.addEventListener('click', (e) => {
      const hit = this.hit(e);
      if (hit) onSelect?.(hit);
    });
    canvas.addEventListener('mousemove', (e) => {
      const hit = this.hit(e);
      canvas.title = hit ? `layer ${hit.layer}, head ${hit.head} — click to select` : '';
    });
  }

  hit(event) {
    const L = this.layout;
    if (!L) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - LEFT;
    const y = event.clientY - rect.top - TOP;
    const head = Math.floor(x / (L.cell + GAP));
    const layer = Math.floor(y / (L.cell + GAP));
    if (x < 0 || y < 0 || head >= L.heads || layer >= L.layers) return null;
    return { layer, head };
  }

  /** Draws every head of `kind`; `generation` changes when the store starts a new generation. */
  render(store, kind, { layer: selLayer, head: selHead }, scale, generation) {
    const layers = store.layersOf(kind);
    const heads = store.heads;
    const dpr = Math.min(3, globalThis.devicePixelRatio || 1);
    const width = Math.max(120, Math.round(this.canvas.parentElement?.clientWidth || this.canvas.clientWidth || 480));
    const cell = Math.max(18, Math.min(64, Math.floor((width - LEFT) / heads) - GAP));
    const W = LEFT + heads * (cell + GAP);
    const H = TOP + layers * (cell + GAP);
    if (this.canvas.width !== Math.round(W * dpr) || this.canvas.height !== Math.round(H * dpr)) {
      this.canvas.width = Math.round(W * dpr);
      this.canvas.height = Math.round(H * dpr);
      this.canvas.style.width = `${W}px`;
      this.canvas.style.height = `${H}px`;
    }
    const cellPx = Math.round(cell * dpr);
    if (this.scale !== scale) this.color = colorizer((this.scale = scale));
    if (this.image?.width !== this.canvas.width || this.image?.height !== this.canvas.height) {
      this.image = new ImageData(this.canvas.width, this.canvas.height);
      this.pixels = new Uint32Array(this.image.data.buffer);
      this.pixels.fill(WHITE); // the gaps; the cells are painted over every time
    }
    const { image, pixels, color } = this;
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++) {
        const i = l * heads + h;
        const key = `${generation}/${kind}/${l}/${h}`;
        if (!this.cells[i] || this.cells[i].capacity !== cellPx) this.cells[i] = new Pooled(cellPx);
        if (this.keys[i] !== key) {
          this.cells[i].reset();
          this.keys[i] = key;
        }
        const m = store.matrix(kind, l, h);
        this.cells[i].update(m);
        const x = Math.round((LEFT + h * (cell + GAP)) * dpr);
        const y = Math.round((TOP + l * (cell + GAP)) * dpr);
        this.cells[i].paint(pixels, this.canvas.width, x, y, cellPx, cellPx, color, EMPTY, scale);
      }
    const ctx = this.canvas.getContext('2d');
    ctx.putImageData(image, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '10px ui-monospace, Menlo, Consolas, monospace';
    ctx.fillStyle = '#555';
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'center';
    const every = Math.ceil(14 / (cell + GAP));
    for (let h = 0; h < heads; h += every) ctx.fillText(`h${h}`, LEFT + h * (cell + GAP) + cell / 2, TOP / 2);
    ctx.textAlign = 'right';
    for (let l = 0; l < layers; l++) ctx.fillText(`L${l}`, LEFT - 4, TOP + l * (cell + GAP) + cell / 2);
    if (selLayer < layers && typeof selHead == 'number') {
      ctx.strokeStyle = '#ff7a00';
      ctx.lineWidth = 2;
      ctx.strokeRect(LEFT + selHead * (cell + GAP) - 1, TOP + selLayer * (cell + GAP) - 1, cell + 2, cell + 2);
    } else if (selLayer < layers) {
      ctx.strokeStyle = '#ff7a00';
      ctx.lineWidth = 2;
      ctx.strokeRect(LEFT - 1, TOP + selLayer * (cell + GAP) - 1, heads * (cell + GAP) - GAP + 2, cell + 2);
    }
    this.layout = { cell, layers, heads };
  }
}
