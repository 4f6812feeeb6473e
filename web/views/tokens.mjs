// A line of tokens as hoverable, focusable spans (the prompt and the generated text, or a model's
// source). Highlights are two CSS variables per span: --to (what the hovered token's row attends
// to) and --from (what attends to the hovered token), each 0..1.
//
// Keyboard: the line is one tab stop (a roving tabindex); ←/→ (and Home/End) move between tokens,
// and the focused token is hovered. A click or tap on a token calls `onPick` (the page scrolls its
// row into view on phones).

export class TokenLine {
  /**
   * `onHover(index | null)`: the pointer or the focus enters and leaves tokens. `onPick(index)`:
   * a click or tap. `describe(tokens, i)`: the token's accessible name.
   */
  constructor(element, { onHover, onPick, describe } = {}) {
    this.element = element;
    this.spans = [];
    this.lit = new Set();
    this.current = 0; // the span that holds the tab stop
    this.describe = describe ?? ((tokens, i) => `#${i} ${JSON.stringify(tokens[i].text || tokens[i].label)}`);
    const indexOf = (e) => {
      const span = e.target.closest?.('.tok');
      return span && element.contains(span) ? Number(span.dataset.i) : null;
    };
    element.addEventListener('mouseover', (e) => {
      const i = indexOf(e);
      if (i !== null) onHover?.(i);
    });
    element.addEventListener('mouseleave', () => {
      if (!element.contains(document.activeElement)) onHover?.(null);
    });
    element.addEventListener('focusin', (e) => {
      const i = indexOf(e);
      if (i === null) return;
      this.#rove(i);
      onHover?.(i);
    });
    element.addEventListener('focusout', (e) => {
      if (!element.contains(e.relatedTarget)) onHover?.(null);
    });
    element.addEventListener('click', (e) => {
      const i = indexOf(e);
      if (i !== null) onPick?.(i);
    });
    element.addEventListener('keydown', (e) => {
      const i = indexOf(e);
      if (i === null) return;
      const last = this.spans.length - 1;
      const to = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: last }[e.key];
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        onPick?.(i);
        return;
      }
      if (to === undefined) return;
      e.preventDefault();
      this.focus(Math.max(0, Math.min(last, to)));
    });
  }

  clear() {
    this.element.replaceChildren();
    this.spans = [];
    this.lit.clear();
    this.current = 0;
  }

  /** Moves the tab stop to span i. */
  #rove(i) {
    if (this.spans[this.current]) this.spans[this.current].tabIndex = -1;
    this.current = i;
    if (this.spans[i]) this.spans[i].tabIndex = 0;
  }

  /** Focuses token i (which hovers it). */
  focus(i) {
    if (!this.spans[i]) return;
    this.#rove(i);
    this.spans[i].focus();
    this.spans[i].scrollIntoView?.({ block: 'nearest', inline: 'nearest' });
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
      span.tabIndex = i === this.current ? 0 : -1;
      if (t.text) span.textContent = t.text;
      else {
        span.textContent = t.label; // a special token, or a byte of a character still incomplete
        span.classList.add('special');
      }
      const name = this.describe(tokens, i);
      span.title = `${name} · id ${t.id}`;
      span.setAttribute('aria-label', name);
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
