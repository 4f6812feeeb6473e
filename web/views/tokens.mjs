// A line of tokens as hoverable spans (the prompt and the generated text, or a model's source).
// Highlights are two CSS variables per span: --to (what the hovered token attends to) and
// --from (what attends to the hovered token), each 0..1.

export class TokenLine {
  /** `onHover(index | null)` is called as the pointer enters and leaves tokens. */
  constructor(element, { onHover } = {}) {
    this.element = element;
    this.spans = [];
    this.lit = new Set();
    element.addEventListener('mouseover', (e) => {
      const span = e.target.closest?.('.tok');
      if (span && element.contains(span)) onHover?.(Number(span.dataset.i));
    });
    element.addEventListener('mouseleave', () => onHover?.(null));
  }

  clear() {
    this.element.replaceChildren();
    this.spans = [];
    this.lit.clear();
  }

  /** Appends spans for the tokens not shown yet ({ text, label, generated }). */
  sync(tokens) {
    if (tokens.length < this.spans.length) this.clear();
    const fragment = document.createDocumentFragment();
    for (let i = this.spans.length; i < tokens.length; i++) {
      const t = tokens[i];
      const span = document.createElement('span');
      span.className = t.generated ? 'tok gen' : 'tok';
      span.dataset.i = String(i);
      if (t.text) span.textContent = t.text;
      else {
        span.textContent = t.label; // a special token, or a byte of a character still incomplete
        span.classList.add('special');
      }
      span.title = `#${i} · id ${t.id} · ${JSON.stringify(t.text || t.label)}`;
      this.spans.push(span);
      fragment.append(span);
    }
    this.element.append(fragment);
  }

  /**
   * Sets the highlight of every span: `to` and `from` are arrays of weights (or null), scaled so
   * that each array's largest weight is fully lit; `hovered` gets an outline.
   */
  highlight({ to = null, from = null, hovered = null } = {}) {
    for (const i of this.lit) {
      const s = this.spans[i];
      if (!s) continue;
      s.style.removeProperty('--to');
      s.style.removeProperty('--from');
      s.classList.remove('hovered');
    }
    this.lit.clear();
    const apply = (weights, prop) => {
      if (!weights) return;
      let max = 0;
      for (let i = 0; i < weights.length; i++) if (weights[i] > max) max = weights[i];
      if (max <= 0) return;
      for (let i = 0; i < weights.length && i < this.spans.length; i++) {
        if (!(weights[i] > 0)) continue;
        this.spans[i].style.setProperty(prop, (weights[i] / max).toFixed(3));
        this.lit.add(i);
      }
    };
    apply(to, '--to');
    apply(from, '--from');
    if (hovered != null && this.spans[hovered]) {
      this.spans[hovered].classList.add('hovered');
      this.lit.add(hovered);
    }
  }
}
