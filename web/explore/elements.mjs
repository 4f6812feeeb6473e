// The Ideas page's sections as custom elements for documentation pages, one script tag:
//
//   <script type="module" src="https://example.org/saccade/web/explore/elements.mjs"></script>
//   <saccade-kernel-regression kernel="gaussian" width="1"></saccade-kernel-regression>
//   <saccade-scores d="16" temperature="1"></saccade-scores>
//   <saccade-masks causal></saccade-masks>
//   <saccade-positions src="/models/shakespeare-char-q8_0.gguf"></saccade-positions>
//
// Each element draws its section in its own shadow root, with the page's stylesheet, and computes
// through the attention primitive in wasm (one single-threaded instance shared by the page).
// Attributes are read when the element is connected:
//   saccade-kernel-regression: kernel (gaussian | boxcar | epanechnikov | flat), width, noise, points, seed
//   saccade-scores: d (1 … 512), temperature, seed
//   saccade-masks: padding (present: on; padding="off": off), causal, seed
//   saccade-positions: positions, dims, src (a GGUF with learned positions; default: Model A), prompt, seed
// `element.section` is the mounted section ({ root, state, ready, … }); `ready` resolves once it
// has computed. Events: 'ready' when it has, 'learned' (kernel regression) after "Learn w".
import { mountKernel } from './kernel.mjs';
import { mountMasks } from './masks.mjs';
import { mountPositions } from './positions.mjs';
import { mountScores } from './scores.mjs';

const CSS = new URL('explore.css', import.meta.url).href;

const number = (el, name) => {
  const v = Number(el.getAttribute(name));
  return el.hasAttribute(name) && Number.isFinite(v) ? v : undefined;
};
const flag = (el, name) => (el.hasAttribute(name) ? el.getAttribute(name) !== 'off' && el.getAttribute(name) !== 'false' : undefined);
const text = (el, name) => el.getAttribute(name) ?? undefined;

/** Drops the options left undefined, so that the section's defaults apply. */
const defined = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

function define(name, mount, options) {
  class Section extends HTMLElement {
    section = null;

    connectedCallback() {
      if (this.section) return;
      const shadow = this.shadowRoot ?? this.attachShadow({ mode: 'open' });
      shadow.innerHTML = `<link rel="stylesheet" href="${CSS}"><style>:host { display: block; }</style>`;
      this.section = mount(shadow, defined(options(this)));
      Promise.resolve(this.section.ready).then(() => this.dispatchEvent(new CustomEvent('ready')));
    }

    disconnectedCallback() {
      this.section?.dispose?.();
      this.section = null;
      this.shadowRoot.replaceChildren();
    }
  }
  if (!customElements.get(name)) customElements.define(name, Section);
  return Section;
}

export const SaccadeKernelRegression = define('saccade-kernel-regression', mountKernel, (el) => ({
  kernel: text(el, 'kernel'), width: number(el, 'width'), noise: number(el, 'noise'), points: number(el, 'points'), seed: number(el, 'seed'),
}));
export const SaccadeScores = define('saccade-scores', mountScores, (el) => ({
  d: number(el, 'd'), temperature: number(el, 'temperature'), seed: number(el, 'seed'),
}));
export const SaccadeMasks = define('saccade-masks', mountMasks, (el) => ({
  padding: flag(el, 'padding'), causal: flag(el, 'causal'), seed: number(el, 'seed'),
}));
export const SaccadePositions = define('saccade-positions', mountPositions, (el) => ({
  positions: number(el, 'positions'), dims: number(el, 'dims'), src: text(el, 'src'), prompt: text(el, 'prompt'), seed: number(el, 'seed'),
}));
