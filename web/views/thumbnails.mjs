// The model view: every layer × head of one attention kind as a thumbnail, one canvas for all,
// updated incrementally as rows arrive. A click selects a layer and head; from the keyboard, the
// arrow keys move a cursor over the heads and Enter or Space selects the one under it.
import { colorizer } from './colormap.mjs';
import { Pooled } from './pool.mjs';

const EMPTY = 0xfff4f1f0;
const WHITE = 0xffffffff;
const GAP = 3;
const LEFT = 26;
const TOP = 14;

export class ModelView {
  /** `onSelect({ layer, head })`: a head chosen; `onCursor({ layer, head })`: the keyboard cursor moved. */
  constructor(canvas, { onSelect, onCursor } = {}) {
    this.canvas = canvas;
    this.cells = [];
    this.keys = [];
    this.layout = null;
    this.cursor = null; // { layer, head } under the keyboard
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'application');
    canvas.setAttribute('aria-roledescription', 'grid of attention heads');
    canvas.addEventListener('click', (e) => {
      const hit = this.hit(e);
      if (hit) onSelect?.(hit);
    });
    canvas.addEventListener('keydown', (e) => {
      const L = this.layout;
      if (!L) return;
      // (within the model shown: a cursor left on layer 3 of the last model may be past this one's)
      const c = this.#within(this.cursor ?? { layer: 0, head: 0 });
      const move = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
      if (move) {
        e.preventDefault();
        this.cursor = {
          layer: Math.max(0, Math.min(L.layers - 1, c.layer + move[0])),
          head: Math.max(0, Math.min(L.heads - 1, c.head + move[1])),
        };
        this.#label();
        onCursor?.(this.cursor);
      } else if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        this.cursor = c;
        onSelect?.(c);
      }
    });
    canvas.addEventListener('focus', () => {
      this.cursor = this.#within(this.cursor ?? { layer: 0, head: 0 });
      this.#label();
      onCursor?.(this.cursor);
    });
    canvas.addEventListener('blur', () => onCursor?.(null));
    canvas.addEventListener('mousemove', (e) => {
      const hit = this.hit(e);
      canvas.title = hit ? `layer ${hit.layer}, head ${hit.head} — click to select` : '';
    });
  }

  /** `c` moved into the grid drawn last (as it is when nothing is drawn yet). */
  #within(c) {
    const L = this.layout;
    if (!L) return c;
    return { layer: Math.min(c.layer, L.layers - 1), head: Math.min(c.head, L.heads - 1) };
  }

  #label() {
    const c = this.cursor;
    this.canvas.setAttribute('aria-label', `Model view: every layer and head${c ? `; layer ${c.layer}, head ${c.head}` : ''}. ` +
      'Arrow keys move, Enter selects.');
  }

  /** A dashed outline around the keyboard cursor's head while the canvas has the focus. */
  #drawCursor(ctx) {
    const L = this.layout;
    const c = this.cursor;
    if (!c || document.activeElement !== this.canvas || c.layer >= L.layers || c.head >= L.heads) return;
    ctx.strokeStyle = '#000';
    ctx.setLineDash([3, 2]);
    ctx.lineWidth = 2;
    ctx.strokeRect(LEFT + c.head * (L.cell + GAP) - 3, TOP + c.layer * (L.cell + GAP) - 3, L.cell + 6, L.cell + 6);
    ctx.setLineDash([]);
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

  /**
   * Draws every head of `kind`. The thumbnails' pooled rows follow the store (pool.mjs: a new
   * generation keeps those its store kept); their block sizes are stepped, so that a chat's next
   * turn seldom re-pools all 144 maps of a 12 × 12 model.
   */
  render(store, kind, { layer: selLayer, head: selHead }, scale) {
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
        const key = `${kind}/${l}/${h}`;
        if (!this.cells[i] || this.cells[i].capacity !== cellPx) this.cells[i] = new Pooled(cellPx, { stepped: true });
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
    if (!this.canvas.hasAttribute('aria-label')) this.#label();
    this.#drawCursor(ctx);
    this.#drawAblated(ctx);
  }

  /** Heads shown as ablated (crossed out): [layer, head] pairs, until the next call. */
  setAblated(heads) {
    this.ablated = heads;
  }

  #drawAblated(ctx) {
    const L = this.layout;
    ctx.strokeStyle = '#c00';
    ctx.lineWidth = 2;
    for (const [l, h] of this.ablated ?? []) {
      if (l >= L.layers || h >= L.heads) continue;
      const x = LEFT + h * (L.cell + GAP);
      const y = TOP + l * (L.cell + GAP);
      ctx.beginPath();
      ctx.moveTo(x + 2, y + 2);
      ctx.lineTo(x + L.cell - 2, y + L.cell - 2);
      ctx.moveTo(x + L.cell - 2, y + 2);
      ctx.lineTo(x + 2, y + L.cell - 2);
      ctx.stroke();
    }
  }
}
