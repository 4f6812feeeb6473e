// What the sections share: the attention primitive's wasm instance (one per page), building a
// section's DOM into a host (a page <section> or an element's shadow root), labelled controls,
// and redraws coalesced to one per animation frame.
import { createAttention } from '../../src/js/index.mjs';

let shared = null;

/** The page's one wasm instance of the attention primitive (single-threaded; every call is synchronous). */
export function attention() {
  shared ??= createAttention();
  shared.catch(() => {
    shared = null; // a later section may try again
  });
  return shared;
}

/**
 * Fills `host` with `html` inside a <div class="explore-section"> and returns { root, $ }:
 * `$('name')` finds the element whose data-k is `name`.
 */
export function build(host, html) {
  const root = document.createElement('div');
  root.className = 'explore-section';
  root.innerHTML = html;
  host.append(root);
  const $ = (name) => root.querySelector(`[data-k="${name}"]`);
  return { root, $ };
}

/** A slider with its label and value: `<label>text <input type=range> <output></label>`. */
export function slider(k, label, { min, max, step = 1, value }) {
  return `<label class="ctl">${label} <input data-k="${k}" type="range" min="${min}" max="${max}" step="${step}" value="${value}">
    <output data-k="${k}-out"></output></label>`;
}

export function select(k, label, options, value) {
  const opts = options.map(([v, text]) => `<option value="${v}"${v === value ? ' selected' : ''}>${text}</option>`).join('');
  return `<label class="ctl">${label} <select data-k="${k}">${opts}</select></label>`;
}

export function checkbox(k, label, checked = false) {
  // (the text in one span: one flex item, which wraps as a whole on a narrow screen)
  return `<label class="ctl"><input data-k="${k}" type="checkbox"${checked ? ' checked' : ''}> <span>${label}</span></label>`;
}

/** Calls `draw` once in the next animation frame however often it is asked for. */
export function scheduler(draw) {
  let frame = 0;
  return () => {
    if (!frame) frame = requestAnimationFrame(() => {
      frame = 0;
      draw();
    });
  };
}

/** Shows an error of the primitive (or null to clear) in the section's alert line. */
export function showError(el, error) {
  el.hidden = !error;
  el.textContent = error ? `error: ${error.message ?? error}` : '';
}

/**
 * Runs `compute` (the section's calls of the primitive): a success counts in state.computed (the
 * tests wait on it) and clears the alert line, a failure is shown there. Returns whether it succeeded.
 */
export function attempt(state, errorEl, compute) {
  try {
    compute();
    state.computed++;
    showError(errorEl, null);
    return true;
  } catch (e) {
    showError(errorEl, e);
    return false;
  }
}

/**
 * Shows the value of the cell under the pointer of a MatrixView in `el`: `describe(r, c, value)`
 * gives the text (value is null for a masked cell); leaving the map clears it.
 */
export function hoverReadout(view, el, describe) {
  view.canvas.addEventListener('pointermove', (e) => {
    const hit = view.hit(e);
    el.textContent = hit ? describe(hit.r, hit.c, hit.value) : '';
  });
  view.canvas.addEventListener('pointerleave', () => {
    el.textContent = '';
  });
}

/** A number for display: 3 significant digits, or exponent form when tiny. */
export const num = (v, digits = 3) => (v !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(1) : (+v.toPrecision(digits)).toString());
