// <saccade-attention>: a compact generate-and-heatmap widget for documentation pages, loaded by
// one script tag:
//
//   <script type="module" src="https://cdn.jsdelivr.net/npm/saccade@0.1/web/embed.mjs"></script>
//   (or, bundled: import 'saccade/embed';)
//   <saccade-attention src="models/shakespeare-char-q8_0.gguf" prompt="ROMEO:" max-tokens="40"
//                      layer="3" head="mean" seed="1" autoplay></saccade-attention>
//
// Attributes: src (a GGUF URL, relative to the page; absent or empty: the demo's Model A), prompt,
// max-tokens (32), temperature, top-k, top-p (default: the library's), seed (default: random), kind
// ('self'; 'cross' or 'encoder' for encoder–decoder models), layer (default: the last), head (a
// number, or 'mean' | 'max' | 'all' | 'rollout'; default 'mean'), scale ('linear' | 'sqrt' |
// 'log'), threads, autoplay (generate once the widget is on screen).
// The model loads when the widget first scrolls into view; weights are cached as on the demo page.
// From another origin (a CDN) the files need CORS headers (and Cross-Origin-Resource-Policy on an
// isolated page); the model then runs on threads when the embedding page is cross-origin
// isolated: the library starts its workers from same-origin blobs.
// Events, which bubble out of the shadow root (composed): 'saccade-load' (detail: { info,
// runtime, … }), 'saccade-generated' (detail: { count, reason: the library's finishReason, or
// 'stopped' }), 'saccade-error' (detail: the error).
import { ModelClient } from './client.mjs';
import { DEFAULT_MODEL } from './config.mjs';
import { REASONS } from './protocol.mjs';
import { HeatmapView } from './views/heatmap.mjs';
import { hoverWeights } from './views/hover.mjs';
import { RenderPace } from './views/pace.mjs';
import { AGGREGATES, AttentionStore, aggregatesFor, selectionTitle } from './views/store.mjs';
import { TokenLine } from './views/tokens.mjs';

const STYLE = `
:host { display: block; max-width: 440px; font: 13px/1.4 system-ui, sans-serif; color: #1d2129;
  border: 1px solid #dde1e8; border-radius: 8px; padding: 10px; background: #fff; }
[hidden] { display: none !important; }
form { display: flex; gap: 6px; }
input[name=prompt] { flex: 1; font: 12px ui-monospace, Menlo, Consolas, monospace; min-width: 0; }
button, select { font: inherit; }
.tokens { font: 13px/1.7 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-word;
  margin: 8px 0; min-height: 1.7em; max-height: 9em; overflow-y: auto; }
.source { color: #555; border-bottom: 1px dashed #dde1e8; }
.tok { border-radius: 2px; background: rgba(255,122,0,calc(var(--to,0)*.8)); box-shadow: inset 0 -3px 0 rgba(10,132,255,var(--from,0)); }
.tok.gen { color: #0b4fa8; }
.tok.special { color: #98a2b3; font-size: .8em; }
.tok.hovered { outline: 1px solid #1d2129; }
.row { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; font-size: 12px; }
.map { position: relative; width: 100%; aspect-ratio: 1 / 1; margin-top: 6px; }
.map canvas { position: absolute; inset: 0; width: 100%; height: 100%; }
.map canvas + canvas { pointer-events: none; }
.status { font-size: 11px; color: #667085; margin-top: 4px; min-height: 1.4em; }
progress { width: 100%; height: 6px; }
`;

/** Attributes given to generate: attribute → option name. Those absent take the library's defaults. */
const SAMPLING_ATTRIBUTES = { 'max-tokens': 'maxTokens', temperature: 'temperature', 'top-k': 'topK', 'top-p': 'topP', seed: 'seed' };

export class SaccadeAttention extends HTMLElement {
  static observedAttributes = ['src', 'prompt'];

  #client = null;
  #store = null;
  #model = null;
  #generation = 0;
  #running = false;
  #hover = null;
  #pace = new RenderPace(() => this.#render());
  #visible = null;
  #loaded = null; // the src attribute last loaded ('' for none): null before the first load, and off the page
  #loads = 0; // counts loads: a load that a newer one (or leaving the page) superseded reports nothing
  #leaving = null; // the teardown pending since the widget was taken off the page (disconnectedCallback)
  #ui;
  #line;
  #sourceLine;
  #heatmap;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.innerHTML = `<style>${STYLE}</style>
      <form part="form"><input name="prompt" aria-label="prompt" spellcheck="false">
        <button name="go" type="submit" disabled>Generate</button><button name="stop" type="button" disabled>Stop</button></form>
      <progress value="0" max="1"></progress>
      <div class="tokens source" hidden></div>
      <div class="tokens output"></div>
      <div class="row"><label>layer <select name="layer"></select></label><label>head <select name="head"></select></label></div>
      <div class="map"><canvas part="heatmap"></canvas><canvas></canvas></div>
      <div class="status" part="status"></div>`;
    const q = (s) => root.querySelector(s);
    this.#ui = {
      form: q('form'), prompt: q('input'), go: q('[name=go]'), stop: q('[name=stop]'), progress: q('progress'),
      layer: q('[name=layer]'), head: q('[name=head]'), status: q('.status'), source: q('.source'), output: q('.output'),
    };
    const [map, overlay] = root.querySelectorAll('.map canvas');
    this.#heatmap = new HeatmapView(map, overlay);
    this.#line = new TokenLine(this.#ui.output, { onHover: (i) => this.#setHover(i === null ? null : { side: 'output', index: i }) });
    this.#sourceLine = new TokenLine(this.#ui.source, { onHover: (i) => this.#setHover(i === null ? null : { side: 'source', index: i }) });
    this.#ui.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.generate();
    });
    this.#ui.stop.addEventListener('click', () => this.#client?.stop());
    for (const s of [this.#ui.layer, this.#ui.head]) s.addEventListener('change', () => this.#schedule());
  }

  connectedCallback() {
    if (this.#leaving) {
      this.#leaving = null; // moved, not taken off: its load, model and generation go on (and its prompt stays)
      return;
    }
    this.#ui.prompt.value = this.getAttribute('prompt') ?? '';
    // load when first on screen: a page of examples does not start every model at once
    this.#visible = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        this.#visible.disconnect();
        this.#load();
      }
    });
    this.#visible.observe(this);
  }

  disconnectedCallback() {
    // a move (off and back on in the same task: appendChild to another parent) calls connectedCallback
    // before this runs, which cancels it: a move would otherwise stop the load, with an error, and start it over
    const leaving = (this.#leaving = {});
    queueMicrotask(() => {
      if (this.#leaving !== leaving) return;
      this.#leaving = null;
      this.#leave();
    });
  }

  /** Taken off the page: the worker and its model go (they hold memory a detached widget has no use for). */
  #leave() {
    this.#visible?.disconnect();
    this.#pace.cancel();
    this.#client?.terminate(); // (a generation under way ends with its error, and the widget can generate again)
    this.#client = null;
    this.#loaded = null;
    this.#model = null; // (it lived in that worker; the widget loads it again when back on the page)
    this.#ui.go.disabled = this.#ui.stop.disabled = true;
  }

  attributeChangedCallback(name, before, after) {
    if (name === 'prompt' && after !== null) this.#ui.prompt.value = after;
    if (name === 'src' && this.#loaded !== null && before !== after) this.#load();
  }

  /** The map's labels as drawn: { rows, cols } (a row reads "at→wrote"), null before the first map. */
  get mapLabels() {
    const layout = this.#heatmap?.layout;
    return layout ? { rows: [...layout.rows], cols: [...layout.cols] } : null;
  }

  /** The runtime and model, once loaded: { info, runtime }. */
  get model() {
    return this.#model;
  }

  /** Fires 'saccade-<name>': namespaced (a plain 'load' or 'error' is the DOM's), bubbling and composed. */
  #emit(name, detail) {
    this.dispatchEvent(new CustomEvent(`saccade-${name}`, { detail, bubbles: true, composed: true }));
  }

  #status(text) {
    this.#ui.status.textContent = text;
  }

  /**
   * The model's URL: src relative to the page; without src, or with an empty one, the default model
   * (an empty src would otherwise name the page, or the script, which is no model). Throws, as a
   * load that fails, for an src that is no URL.
   */
  #source() {
    const src = this.getAttribute('src');
    if (!src) return new URL(DEFAULT_MODEL, import.meta.url).href;
    try {
      return new URL(src, document.baseURI).href;
    } catch {
      throw new Error('src is not a valid URL');
    }
  }

  /** Drops the model and what it generated: a widget loading another src shows nothing of the old one's. */
  #forget() {
    this.#model = null; // (the worker drops it too as the next load starts: generating waits for the new one)
    this.#ui.go.disabled = true;
    this.#generation++; // (a generation under way was the old model's: its last tokens are not drawn)
    this.#hover = null;
    this.#line.clear();
    this.#sourceLine.clear();
    if (!this.#store) return;
    this.#store.clear();
    this.#schedule(); // an empty map in place of the old one
  }

  async #load() {
    const load = ++this.#loads;
    this.#loaded = this.getAttribute('src') ?? '';
    this.#forget();
    this.#ui.progress.hidden = false;
    this.#status('loading the model…');
    const threads = Number(this.getAttribute('threads')) || undefined;
    let src = this.#loaded;
    try {
      src = this.#source(); // (in the try: an src that is no URL fails as any other, in the status and an event)
      this.#client ??= new ModelClient();
      const m = await this.#client.load(src, {
        threads,
        onProgress: ({ loaded, total }) => {
          if (total) this.#ui.progress.value = loaded / total;
          this.#status(`loading: ${(loaded / 1048576).toFixed(2)} MB${total ? ` (${Math.floor((100 * loaded) / total)}%)` : ''}`);
        },
        // (after 'loaded': the thread pool could not start all its threads; the status says so from the next generation)
        onThreads: (runtime) => {
          if (load === this.#loads && this.#model) this.#model = { ...this.#model, runtime };
        },
      });
      if (load !== this.#loads) return; // (an src that is no URL does not reach the worker, which may finish the load before)
      this.#model = m;
      this.#ui.progress.value = 1;
      this.#ui.progress.hidden = true;
      this.#store = new AttentionStore(m.info);
      this.#fillSelections();
      this.#ui.source.hidden = !this.#store.encdec;
      this.#ui.go.disabled = false;
      this.#status(this.#runtimeText());
      this.#schedule(); // (an empty map: one drawn before, off the page, had no size)
      this.#emit('load', m);
      if (this.hasAttribute('autoplay')) this.generate();
    } catch (e) {
      if (load !== this.#loads) return;
      this.#ui.progress.hidden = true; // nothing is loading any more
      this.#status(`could not load ${src}: ${e.message}`);
      this.#emit('error', e);
    }
  }

  #runtimeText() {
    const { runtime, info } = this.#model;
    return `${info.architecture} · ${info.layers} layers × ${info.heads} heads · ${runtime.threads} thread${runtime.threads === 1 ? '' : 's'}` +
      `${runtime.isolated ? '' : ' (page not cross-origin isolated)'} · ${runtime.relaxed ? 'relaxed SIMD' : 'SIMD128'}`;
  }

  #kind() {
    const kind = this.getAttribute('kind') ?? 'self';
    return this.#store.kinds.includes(kind) ? kind : 'self';
  }

  #fillSelections() {
    const kind = this.#kind();
    const layers = this.#store.layersOf(kind);
    const layer = Math.min(layers - 1, Math.max(0, Number(this.getAttribute('layer') ?? layers - 1) || 0));
    this.#ui.layer.replaceChildren(...Array.from({ length: layers }, (_, l) => new Option(String(l), String(l))));
    this.#ui.layer.value = String(layer);
    this.#ui.head.replaceChildren(
      ...Array.from({ length: this.#store.heads }, (_, h) => new Option(String(h), String(h))),
      ...aggregatesFor(kind).map((name) => new Option(AGGREGATES[name].short, name)),
    );
    const head = this.getAttribute('head') ?? 'mean';
    this.#ui.head.value = [...this.#ui.head.options].some((o) => o.value === head) ? head : 'mean';
  }

  #selection() {
    const v = this.#ui.head.value;
    return { kind: this.#kind(), layer: Number(this.#ui.layer.value), head: /^\d+$/.test(v) ? Number(v) : v };
  }

  /** The generate options from the attributes. */
  #options() {
    const options = { maxTokens: 32 }; // a short text fits the widget
    for (const [attribute, name] of Object.entries(SAMPLING_ATTRIBUTES)) {
      const v = Number(this.getAttribute(attribute));
      if (this.hasAttribute(attribute) && Number.isFinite(v)) options[name] = v;
    }
    options.seed ??= Math.floor(Math.random() * 2 ** 32);
    return options;
  }

  #fail(e) {
    this.#status(`error: ${e.message}`);
    this.#emit('error', e);
  }

  /** Generates from the prompt box; resolves when the generation ends. */
  async generate() {
    if (!this.#model || this.#running) return;
    const options = this.#options();
    // the library takes 0 but runs no step, so the generation would end with no reason to give
    if (options.maxTokens === 0) return this.#fail(new Error('max-tokens is 0: there is nothing to generate (give 1 or more)'));
    let prompt = this.#ui.prompt.value;
    if (!this.#model.info.hasTokenizer) prompt = prompt.split(/[\s,]+/).filter(Boolean).map(Number);
    this.#running = true;
    this.#ui.go.disabled = true;
    this.#ui.stop.disabled = false;
    const generation = ++this.#generation;
    const current = () => generation === this.#generation; // (a load of another src makes this one stale)
    this.#store.clear();
    this.#line.clear();
    this.#sourceLine.clear();
    let count = 0;
    let first = 0;
    let last = 0;
    try {
      const done = await this.#client.generate(prompt, options, {
        onStart: (msg) => {
          if (!current()) return;
          this.#store.start(msg);
          this.#schedule();
        },
        onToken: (msg) => {
          if (!current()) return;
          this.#store.add(msg);
          if (count++ === 0) first = msg.ms;
          last = msg.ms;
          this.#schedule({ newToken: count > 1 }); // (a generation's first token is drawn at once)
        },
      });
      const rate = count > 1 ? ` · ${(((count - 1) * 1000) / (last - first)).toFixed(0)} tokens/s` : '';
      // (stale: the load that stopped it says how it goes)
      if (current()) this.#status(`${this.#runtimeText()} · ${count} tokens${rate} · ${REASONS[done.reason]}`);
      this.#emit('generated', { count, reason: done.reason });
    } catch (e) {
      this.#fail(e);
    } finally {
      this.#running = false;
      this.#ui.go.disabled = !this.#model;
      this.#ui.stop.disabled = true;
      if (this.isConnected) this.#schedule(); // (off the page its box has no size to draw in)
    }
  }

  #setHover(hover) {
    this.#hover = hover;
    this.#applyHover();
  }

  #applyHover() {
    if (!this.#store) return;
    const { kind, layer, head } = this.#selection();
    const { lines, marks } = hoverWeights(this.#store.matrix(kind, layer, head), kind, this.#hover);
    this.#line.highlight(lines.output);
    this.#sourceLine.highlight(lines.source);
    this.#heatmap.mark(marks);
  }

  /** Draws at the next frame; a new token's drawing is paced while tokens stream (views/pace.mjs). */
  #schedule({ newToken = false } = {}) {
    this.#pace.request({ newToken });
  }

  #render() {
    const store = this.#store;
    if (!store) return;
    const t0 = performance.now();
    const streaming = this.#running;
    if (!this.#pace.textDue(t0, streaming)) return;
    const grew = store.tokens.length > this.#line.spans.length; // (the end's drawing may add the last tokens)
    this.#line.sync(store.tokens);
    this.#sourceLine.sync(store.source);
    if (streaming || grew) this.#ui.output.scrollTop = this.#ui.output.scrollHeight;
    if (!this.#pace.viewsDue(t0, streaming)) {
      if (this.#hover) this.#applyHover(); // the new tokens' highlights
      return;
    }
    const { kind, layer, head } = this.#selection();
    const labels = store.labels(kind);
    this.#heatmap.render({
      matrix: store.matrix(kind, layer, head),
      key: `${this.#generation}/${kind}/${layer}/${head}`,
      rowLabels: labels.rows,
      colLabels: labels.cols,
      rowWrote: labels.wrote, // rows read "at→wrote", as the page's do
      title: `${kind} · ${selectionTitle(head, layer)}`,
      scale: this.getAttribute('scale') ?? 'linear',
    });
    this.#applyHover();
    this.#pace.viewsDrawn(t0, performance.now() - t0, streaming);
  }
}

if (!customElements.get('saccade-attention')) customElements.define('saccade-attention', SaccadeAttention);
