// Inside one row of attention, and what a head does: the row panel (the scores q·k/√d the C core
// captured before softmax, the softmax with Σ = 1, an attention temperature τ and a switch that
// removes the 1/√d, the formula in the same symbols), the neuron view (q, each k, q ⊙ k and the
// dot per key as colour strips, after BertViz's neuron view), and the ablation comparison (the
// same seed with and without the chosen heads, and the next-token bars with the sampler's cut-offs).
// Every number comes from the library in the model worker (web/worker-probe.mjs).

const fmt = (x) => (x === -Infinity ? '−∞' : Math.abs(x) >= 1e4 || (x !== 0 && Math.abs(x) < 1e-3) ? x.toExponential(2) : x.toFixed(4));
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
};

/** Blue (negative) – white – red (positive), |x| / max → strength. */
function diverging(x, max) {
  const t = max > 0 ? Math.max(-1, Math.min(1, x / max)) : 0;
  const a = Math.round(255 * (1 - Math.abs(t)));
  return t >= 0 ? `rgb(255,${a},${a})` : `rgb(${a},${a},255)`;
}

export class RowPanel {
  /** `box`: the panel element; `probe(what, args)`: the worker's probes (client.probe). */
  constructor(box, probe) {
    this.box = box;
    this.probe = probe;
    this.row = null;
    this.tau = 1;
    this.unscaled = false;
    this.seq = 0;
    this.draws = 0;
  }

  close() {
    this.box.hidden = true;
    this.row = null;
  }

  /**
   * Opens the panel on one row: { kind, layer, head, query, title, keyLabels }. A head must be a
   * number (an aggregate has no scores of its own).
   */
  async open({ kind, layer, head, query, title, keyLabels }) {
    this.box.hidden = false;
    const seq = ++this.seq;
    if (typeof head != 'number') {
      this.box.replaceChildren(this.#header(title), el('p', { class: 'muted', text:
        'Pick a single head (not an aggregate) to see its scores: an average of heads has no q·k of its own.' }));
      return;
    }
    this.box.replaceChildren(this.#header(title), el('p', { class: 'muted', text: 'reading the row…' }));
    let row;
    try {
      row = await this.probe('row', { kind, layer, head, query });
    } catch (e) {
      if (seq === this.seq) this.box.replaceChildren(this.#header(title), el('p', { class: 'error', text: e.message }));
      return;
    }
    if (seq !== this.seq) return;
    this.row = { ...row, title, keyLabels };
    await this.#draw();
  }

  #header(title) {
    const close = el('button', { type: 'button', class: 'row-close', 'aria-label': 'Close the row panel', text: '×' });
    close.addEventListener('click', () => this.close());
    return el('h2', { id: 'row-title' }, title, ' ', close);
  }

  /** The scores the softmax reads: as captured, or without the 1/√d. */
  #scores(unscaled) {
    const { scores, scale } = this.row;
    return unscaled ? scores.map((s) => (s === -Infinity ? s : s / scale)) : scores;
  }

  /** Redraws with the controls as they are now. Draws overlap (each waits for the worker's
   * softmax, and a slider sends many): only the latest one lands, with the τ it computed. */
  async #draw() {
    const r = this.row;
    const seq = this.seq, draw = ++this.draws;
    const tau = this.tau, unscaled = this.unscaled;
    const scores = this.#scores(unscaled);
    const weights = await this.probe('softmax', { scores, temperature: tau });
    if (seq !== this.seq || this.row !== r || draw !== this.draws) return;
    const sum = weights.reduce((a, b) => a + b, 0);
    const d = r.headDim;
    const dots = Array.from({ length: r.keys }, (_, j) => {
      let s = 0;
      for (let i = 0; i < d; i++) s += r.q[i] * r.k[j * d + i];
      return s;
    });

    const parts = this.#parts();
    parts.formula.innerHTML = `a<sub>j</sub> = softmax(s / τ)<sub>j</sub> = exp(s<sub>j</sub> / τ) / Σ<sub>i</sub> exp(s<sub>i</sub> / τ), ` +
      (unscaled ? 's<sub>j</sub> = q · k<sub>j</sub> &nbsp;(the 1/√d removed)'
        : `s<sub>j</sub> = q · k<sub>j</sub> / √d &nbsp;(d = ${d}, 1/√d = ${r.scale.toPrecision(4)})`) +
      ` &nbsp;·&nbsp; τ = ${tau.toFixed(2)}`;
    parts.tauValue.textContent = tau.toFixed(2);

    const body = el('tbody');
    const same = tau === 1 && !unscaled && weights.every((w, j) => Math.fround(w) === Math.fround(r.probs[j]));
    for (let j = 0; j < r.keys; j++) {
      const masked = scores[j] === -Infinity;
      const bar = el('span', { class: 'row-bar' });
      bar.style.width = `${(100 * weights[j]).toFixed(1)}%`;
      body.append(el('tr', { class: masked ? 'masked' : '' },
        el('td', { text: String(j) }), el('td', { text: r.keyLabels[j] ?? '' }),
        el('td', { text: masked ? '—' : fmt(dots[j]) }), el('td', { class: 'row-score', text: fmt(scores[j]) }),
        el('td', { class: 'row-weight' }, el('span', { class: 'row-bar-box' }, bar), ' ', fmt(weights[j]))));
    }
    const table = el('table', { class: 'row-table', 'aria-label': 'the row over its keys' },
      el('thead', {}, el('tr', {}, ...['#', 'key', 'q · k', unscaled ? 's = q · k' : 's = q · k / √d', 'a = softmax(s / τ)']
        .map((t) => el('th', { scope: 'col', text: t })))),
      body,
      el('tfoot', {}, el('tr', {}, el('td', { colspan: '4', text: '' }), el('td', { id: 'row-sum', text: `Σ = ${sum.toFixed(4)}` }))));
    const note = el('p', { class: 'muted', id: 'row-note', text: (same ? 'At τ = 1 with the 1/√d this is the map\'s row, bit for bit. ' : '') +
      '−∞ marks a key this query does not see (padding): exp(−∞) = 0. The scores are captured by the C core before softmax.' });

    parts.table.replaceWith(table);
    parts.table = table;
    parts.note.replaceWith(note);
    parts.note = note;
    if (parts.neuronsFor !== r) {
      const n = this.#neurons(dots);
      parts.neurons.replaceWith(n);
      parts.neurons = n;
      parts.neuronsFor = r;
    }
  }

  /** The panel's parts for the current row, made once so that the controls keep the focus while they redraw it. */
  #parts() {
    if (this.parts?.row === this.row) return this.parts;
    const slider = el('input', { type: 'range', id: 'row-tau', min: '0.05', max: '4', step: '0.05', value: String(this.tau),
      'aria-label': 'attention temperature τ' });
    slider.addEventListener('input', () => {
      this.tau = slider.valueAsNumber;
      this.#draw();
    });
    const toggle = el('input', { type: 'checkbox', id: 'row-unscaled' });
    toggle.checked = this.unscaled;
    toggle.addEventListener('change', () => {
      this.unscaled = toggle.checked;
      this.#draw();
    });
    const tauValue = el('output', { id: 'row-tau-value' });
    const parts = {
      row: this.row, formula: el('p', { class: 'formula', id: 'row-formula' }), table: el('table'), note: el('p'),
      neurons: el('figure'), neuronsFor: null, tauValue,
    };
    const controls = el('div', { class: 'row-controls' },
      el('label', {}, 'temperature τ ', slider, ' ', tauValue), el('label', {}, toggle, ' remove the 1/√d'));
    this.box.replaceChildren(this.#header(this.row.title), parts.formula, controls, parts.table, parts.note, parts.neurons);
    this.parts = parts;
    return parts;
  }

  /** q, then per key: k, q ⊙ k, and the dot — colour strips, one cell per dimension. */
  #neurons(dots) {
    const r = this.row;
    const d = r.headDim;
    const cw = Math.max(3, Math.min(10, Math.floor(360 / d)));
    const h = 9;
    const left = 70;
    const rows = 1 + 2 * r.keys;
    const canvas = el('canvas', { id: 'neurons', role: 'img', 'aria-label':
      `neuron view: the query vector of row ${r.query}, each key vector, their elementwise product, and the dot product per key ` +
      `(largest: key #${dots.indexOf(Math.max(...dots))})` });
    const W = left + d * cw + 90;
    const H = rows * (h + 2) + 8;
    const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
    canvas.width = W * dpr;
    canvas.height = H * dpr;
    canvas.style.width = `${W}px`;
    canvas.style.height = `${H}px`;
    const ctx = canvas.getContext('2d');
    ctx.scale(dpr, dpr);
    ctx.font = '9px ui-monospace, monospace';
    ctx.textBaseline = 'middle';
    const maxAbs = (xs) => xs.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    const vmax = Math.max(maxAbs(r.q), maxAbs(r.k));
    const prod = (j) => r.q.map((x, i) => x * r.k[j * d + i]);
    let pmax = 0;
    for (let j = 0; j < r.keys; j++) pmax = Math.max(pmax, maxAbs(prod(j)));
    const dmax = maxAbs(dots);
    const strip = (y, label, xs, max, value) => {
      ctx.fillStyle = '#333';
      ctx.fillText(label, 2, y + h / 2);
      xs.forEach((x, i) => {
        ctx.fillStyle = diverging(x, max);
        ctx.fillRect(left + i * cw, y, cw - (cw > 4 ? 1 : 0), h);
      });
      if (value !== undefined) {
        ctx.fillStyle = diverging(value, dmax);
        ctx.fillRect(left + d * cw + 6, y, 24, h);
        ctx.fillStyle = '#333';
        ctx.fillText(fmt(value), left + d * cw + 34, y + h / 2);
      }
    };
    strip(2, `q (row ${r.query})`, r.q, vmax);
    for (let j = 0; j < r.keys; j++) {
      const y = 2 + (1 + 2 * j) * (h + 2);
      strip(y, `k${j} ${(r.keyLabels[j] ?? '').slice(0, 6)}`, r.k.slice(j * d, (j + 1) * d), vmax);
      strip(y + h + 2, `q⊙k${j}`, prod(j), pmax, dots[j]);
    }
    return el('figure', { class: 'neurons' }, el('figcaption', { class: 'muted', text:
      'Neuron view: q, each key k, their elementwise product q ⊙ k (red positive, blue negative) and its sum q · k per key.' }),
    el('div', { class: 'neurons-scroll' }, canvas));
  }
}

/** The ablation comparison: renders the worker's 'compare' answer. */
export function renderComparison(box, result) {
  const side = (title, run, id) => {
    const { top } = run;
    const list = el('ol', { class: 'top-bars', 'aria-label': `${title}: the ten most likely tokens at step ${run.step}` });
    top.bars.forEach((b, i) => {
      const cut = i >= top.kCut ? 'cut-k' : i >= top.pCut ? 'cut-p' : '';
      const bar = el('span', { class: 'top-bar' });
      bar.style.width = `${(100 * b.p).toFixed(1)}%`;
      const item = el('li', { class: cut }, el('span', { class: 'top-label', text: b.label }), el('span', { class: 'top-box' }, bar),
        ` ${(100 * b.p).toFixed(1)}%`);
      list.append(item);
      if (i + 1 === top.kCut && i + 1 < top.bars.length) list.append(el('li', { class: 'cut-line', text: `— top-k = ${top.topK}: below this line is cut` }));
      if (i + 1 === top.pCut && top.pCut < top.kCut && i + 1 < top.bars.length)
        list.append(el('li', { class: 'cut-line', text: `— top-p = ${top.topP}: below this line is outside the nucleus` }));
    });
    const params = top.greedy ? 'greedy (temperature 0: the first bar wins; bars at τ = 1)'
      : `temperature ${top.temperature}, top-k ${top.topK || 'off'}, top-p ${top.topP}`;
    return el('div', { class: 'compare-side', id },
      el('h3', { text: title }),
      el('p', { class: 'compare-text', text: run.tokens.map((t) => t.text).join('') }), // the library's text
      el('p', { class: 'muted', text: `next token at step ${run.step} (${params}):` }),
      list);
  };
  const heads = result.heads.map(([l, h]) => `L${l}H${h}`).join(', ') || 'none';
  box.replaceChildren(
    el('p', { text: `Same prompt, options and seed; ablated: ${heads}.` }),
    el('div', { class: 'compare' }, side('as trained', result.plain, 'compare-plain'), side('heads ablated', result.ablated, 'compare-ablated')));
}
