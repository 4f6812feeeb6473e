// The demo page: picks and loads a model (in a Web Worker, see worker.mjs), streams a
// generation, and draws its attention live. Reading order: page state → loading → runtime
// status → generating → the views (rendered once per animation frame) → hover → export.
//
// URL parameters: ?model=URL (any GGUF), ?source=a|b (the model switch), ?threads=N, ?prompt=TEXT,
// ?max=N (max tokens), ?seed=N, ?run (generate as soon as the model is loaded). Sampling inputs
// left empty take the library's defaults.
import { ModelClient } from './client.mjs';
import { MODELS } from './config.mjs';
import { REASONS } from './protocol.mjs';
import { cachedModels, clearModelCache } from './model-cache.mjs';
import { AlignmentView } from './views/alignment.mjs';
import { HeatmapView, shortLabel } from './views/heatmap.mjs';
import { hoverWeights } from './views/hover.mjs';
import { AGGREGATES, AttentionStore, aggregatesFor, selectionTitle } from './views/store.mjs';
import { ModelView } from './views/thumbnails.mjs';
import { TokenLine } from './views/tokens.mjs';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const client = new ModelClient();

/** Everything the page shows; `window.saccadeDemo` exposes it (and timings) for tests and benchmarks. */
const state = {
  model: null, // the worker's 'loaded' message: { info, name, runtime, from, bytes, ms }
  store: null,
  generation: 0, // increments with every generation (the views' pooled rows are keyed by it)
  running: false,
  kind: 'self',
  layer: 0,
  head: 0, // a head number or an aggregate name
  scale: 'linear',
  hover: null, // { side: 'output' | 'source', index }
  cell: null, // the heatmap cell under the pointer
};
const stats = { navigationToFirstToken: null, renderMs: [], tokens: 0, tokensPerSecond: null };
window.saccadeDemo = { state, stats };

// -------------------------------------------------------------------------------------------
// Loading
// -------------------------------------------------------------------------------------------

const mb = (n) => `${(n / 1048576).toFixed(n < 10485760 ? 2 : 1)} MB`;
let ranOnce = false; // ?run generates once, after the first load

const PHASES = { network: 'Downloading', cache: 'Reading from the browser cache', file: 'Reading the file' };

function showProgress({ phase, loaded, total }) {
  const bar = $('progress');
  if (total) {
    bar.value = loaded / total;
    $('progress-text').textContent = `${PHASES[phase]}: ${mb(loaded)} / ${mb(total)} (${Math.floor((100 * loaded) / total)}%)`;
  } else {
    bar.removeAttribute('value'); // indeterminate
    $('progress-text').textContent = `${PHASES[phase]}: ${mb(loaded)}`;
  }
}

async function load(source, what) {
  if (state.running) client.stop();
  state.model = null;
  setRunning(false);
  $('generate').disabled = true;
  $('progress').value = 0;
  $('progress-text').textContent = `Loading ${what}…`;
  $('model-info').textContent = '';
  $('cache-note').textContent = '';
  const threads = Number($('threads').value) || undefined;
  try {
    const loaded = await client.load(source, {
      threads,
      onProgress: showProgress,
      onCache: (note) => {
        $('cache-note').textContent = note;
        $('cache-note').dataset.note = note;
      },
    });
    state.model = loaded;
    const { info, runtime, from, bytes, ms } = loaded;
    $('progress').value = 1;
    const size = bytes ? `${mb(bytes)} ` : '';
    $('progress-text').textContent = `Loaded ${what}: ${size}from ${from === 'cache' ? 'the browser cache' : from === 'file' ? 'the file' : 'the network'} in ${Math.round(ms)} ms`;
    showRuntime(runtime);
    showModel(loaded);
    $('generate').disabled = false;
    if (params.has('run') && !ranOnce) {
      ranOnce = true;
      generate();
    }
  } catch (e) {
    $('progress-text').textContent = `Could not load ${what}: ${e.message}`;
    $('progress-text').classList.add('error');
    console.warn(`saccade: ${e.message}`);
    return;
  }
  $('progress-text').classList.remove('error');
}

function showModel({ info, name, runtime, defaults }) {
  const encdec = info.architecture === 'encdec';
  const types = Object.entries(info.tensorTypes).map(([t, n]) => `${t}×${n}`).join(' ');
  const size = info.parameters >= 1e6 ? `${(info.parameters / 1e6).toFixed(1)}M` : `${(info.parameters / 1e3).toFixed(0)}k`;
  const stack = encdec ? `${info.encoderLayers} encoder + ${info.layers} decoder layers` : `${info.layers} layers`;
  $('model-info').textContent = `${name || '(unnamed)'} · ${info.architecture} · ${stack} × ${info.heads} heads · ` +
    `${size} parameters · ${types} · context ${contextText(runtime.contextLength, info.contextLength)} · ` +
    `vocabulary ${info.vocabSize}` +
    (info.hasTokenizer ? '' : ' · no tokenizer: type token ids, e.g. 1, 2, 3');
  // an empty input means the library's default: show its value
  for (const [id, name] of Object.entries(SAMPLING_INPUTS)) if (name in defaults) $(id).placeholder = String(defaults[name]);
  state.store = new AttentionStore(info);
  state.kind = 'self';
  state.layer = 0;
  state.head = 0;
  $('source-box').hidden = !encdec;
  $('alignment-box').hidden = !encdec;
  $('prompt-label').textContent = encdec ? 'Source (encoded, then translated)' : 'Prompt';
  $('output-title').textContent = encdec ? 'Output' : 'Text';
  $('kind').replaceChildren(...state.store.kinds.map((k) => new Option(k === 'self' && encdec ? 'decoder self' : k, k)));
  fillSelections();
  $('output').replaceChildren();
  $('source').replaceChildren();
  $('speed').textContent = '';
  $('export-png').disabled = $('export-json').disabled = true;
  clearViews();
}

function fillSelections() {
  const { store, kind } = state;
  const layers = store.layersOf(kind);
  $('layer').replaceChildren(...Array.from({ length: layers }, (_, l) => new Option(String(l), String(l))));
  state.layer = Math.min(state.layer, layers - 1);
  $('layer').value = String(state.layer);
  const heads = Array.from({ length: store.heads }, (_, h) => new Option(String(h), String(h)));
  const aggregates = aggregatesFor(kind);
  $('head').replaceChildren(...heads, ...aggregates.map((name) => new Option(AGGREGATES[name].option, name)));
  if (typeof state.head != 'number' && !aggregates.includes(state.head)) state.head = 'mean';
  $('head').value = String(state.head);
}

function pickModel(key) {
  const choice = MODELS[key];
  const prompt = $('prompt');
  // the example prompt follows the model unless the user wrote their own
  if (!prompt.value || Object.values(MODELS).some((m) => m.prompt === prompt.value)) prompt.value = choice.prompt;
  load(choice.url, choice.label);
}

// -------------------------------------------------------------------------------------------
// Runtime status, and the optional service worker that isolates pages on hosts without headers
// -------------------------------------------------------------------------------------------

const SW_NAME = 'coi-serviceworker.js';
const shimActive = () => Boolean(navigator.serviceWorker?.controller?.scriptURL.endsWith(`/${SW_NAME}`));

function showRuntime(runtime) {
  const { variant, threads, isolated, reason } = runtime;
  const how = isolated
    ? `cross-origin isolated${shimActive() ? ' (by the service worker shim)' : ''}`
    : 'not cross-origin isolated';
  $('status-text').textContent = `Runtime: ${threads} thread${threads === 1 ? '' : 's'} ` +
    `(${variant === 'mt' ? 'threaded' : 'single-threaded'} build) · SIMD128 · ${how} — ${reason}.`;
  $('status').classList.toggle('single', !isolated);
  const canShim = 'serviceWorker' in navigator && window.isSecureContext;
  $('coi-on').hidden = isolated || !canShim;
  $('coi-off').hidden = !shimActive();
}

async function enableShim() {
  $('coi-on').disabled = true;
  $('status-text').textContent = 'Installing the service worker that adds COOP/COEP headers, then reloading…';
  await navigator.serviceWorker.register(new URL(`./${SW_NAME}`, import.meta.url), { scope: './' });
  if (navigator.serviceWorker.controller) location.reload();
  else navigator.serviceWorker.addEventListener('controllerchange', () => location.reload(), { once: true });
}

async function disableShim() {
  for (const r of await navigator.serviceWorker.getRegistrations())
    if (r.active?.scriptURL.endsWith(`/${SW_NAME}`)) await r.unregister();
  location.reload();
}

// -------------------------------------------------------------------------------------------
// Generating
// -------------------------------------------------------------------------------------------

function setRunning(running) {
  state.running = running;
  $('generate').disabled = running || !state.model;
  $('stop').disabled = !running;
}

/** The context in use, and the trained length when the library chose less (the device's default). */
const contextText = (used, trained) => used === trained ? `${used}` : `${used} (trained for ${trained})`;

/** The sampling inputs: input id → generate's option name. An empty input leaves the library's default. */
const SAMPLING_INPUTS = { temperature: 'temperature', 'top-k': 'topK', 'top-p': 'topP', 'max-tokens': 'maxTokens', seed: 'seed' };

function samplingOptions() {
  const options = {};
  for (const [id, name] of Object.entries(SAMPLING_INPUTS)) {
    const input = $(id);
    if (input.value !== '' && Number.isFinite(input.valueAsNumber)) options[name] = input.valueAsNumber;
  }
  options.seed ??= Math.floor(Math.random() * 2 ** 32); // drawn here so that the page can show it
  return options;
}

/** Token ids typed as "1, 2, 3" — for models without a tokenizer. */
function promptInput(text) {
  if (state.model.info.hasTokenizer) return text;
  const ids = text.split(/[\s,]+/).filter(Boolean).map(Number);
  if (!ids.length || ids.some((x) => !Number.isInteger(x))) throw new Error('this model has no tokenizer: type token ids, e.g. 1, 2, 3');
  return ids;
}

async function generate() {
  if (!state.model || state.running) return;
  const options = samplingOptions();
  let prompt;
  try {
    prompt = promptInput($('prompt').value);
  } catch (e) {
    $('speed').textContent = e.message;
    return;
  }
  state.generation++;
  state.store.clear();
  state.hover = null;
  clearViews();
  setRunning(true);
  $('speed').textContent = `generating (seed ${options.seed})…`;
  let first = null;
  let last = null;
  let count = 0;
  try {
    const done = await client.generate(prompt, options, {
      onStart: (msg) => {
        state.store.start(msg);
        scheduleRender();
      },
      onToken: (msg) => {
        state.store.add(msg);
        count++;
        last = msg.ms;
        if (first === null) {
          first = msg.ms;
          stats.navigationToFirstToken ??= performance.now();
        }
        stats.tokens = count;
        stats.tokensPerSecond = count > 1 ? ((count - 1) * 1000) / (last - first) : null;
        $('speed').textContent = speedText(count, first, last, options.seed);
        scheduleRender();
      },
    });
    $('speed').textContent = `${speedText(count, first, last, options.seed)} · ${REASONS[done.reason]}`;
  } catch (e) {
    $('speed').textContent = `error: ${e.message}`;
    console.warn(`saccade: ${e.message}`);
  } finally {
    setRunning(false);
    $('export-png').disabled = $('export-json').disabled = state.store.queries('self') === 0;
    scheduleRender();
  }
}

function speedText(count, first, last, seed) {
  if (count === 0) return `0 tokens · seed ${seed}`;
  const rate = count > 1 ? ` · ${(((count - 1) * 1000) / (last - first)).toFixed(1)} tokens/s` : '';
  return `${count} token${count === 1 ? '' : 's'}${rate} · first after ${Math.round(first)} ms · seed ${seed}`;
}

// -------------------------------------------------------------------------------------------
// Views: text, heatmap, model view, alignment — redrawn at most once per animation frame.
// -------------------------------------------------------------------------------------------

const output = new TokenLine($('output'), { onHover: (i) => hover(i === null ? null : { side: 'output', index: i }) });
const source = new TokenLine($('source'), { onHover: (i) => hover(i === null ? null : { side: 'source', index: i }) });
const heatmap = new HeatmapView($('heatmap'), $('heatmap-overlay'));
const alignment = new AlignmentView($('alignment'));
const modelView = new ModelView($('thumbnails'), {
  onSelect: ({ layer, head }) => {
    state.layer = layer;
    state.head = head;
    $('layer').value = String(layer);
    $('head').value = String(head);
    scheduleRender();
  },
});

let frame = 0;
function scheduleRender() {
  if (!frame) frame = requestAnimationFrame(render);
}

function clearViews() {
  output.clear();
  source.clear();
  scheduleRender();
}

function currentMatrix() {
  return state.store.matrix(state.kind, state.layer, state.head);
}

function viewTitle() {
  const { kind, layer, head, store } = state;
  const name = kind === 'self' ? (store.encdec ? 'decoder self-attention' : 'self-attention') : kind === 'cross' ? 'cross-attention' : 'encoder self-attention';
  return `${name} · ${selectionTitle(head, layer)}`;
}

function render() {
  frame = 0;
  const { store } = state;
  if (!store) return;
  const t0 = performance.now();
  output.sync(store.tokens);
  source.sync(store.source);
  if (state.running) $('output').scrollTop = $('output').scrollHeight;
  const m = currentMatrix();
  const labels = store.labels(state.kind);
  heatmap.render({
    matrix: m,
    key: `${state.generation}/${state.kind}/${state.layer}/${state.head}`,
    rowLabels: labels.rows,
    colLabels: labels.cols,
    title: viewTitle(),
    scale: state.scale,
  });
  modelView.render(store, state.kind, state, state.scale, state.generation);
  if (store.encdec) {
    const useSelection = state.kind === 'cross';
    alignment.render({
      matrix: useSelection ? m : store.matrix('cross', 0, 'all'),
      source: store.source.map((t) => t.label),
      output: store.tokens.slice(1).map((t) => t.label),
      title: useSelection ? viewTitle() : `cross-attention · ${AGGREGATES.all.title}`,
      focus: state.hover?.side === 'output' && state.hover.index > 0 ? state.hover.index - 1 : null,
    });
  }
  applyHover();
  if (store.queries('self') > 0) stats.renderMs.push({ ms: performance.now() - t0, context: store.tokens.length });
}

// -------------------------------------------------------------------------------------------
// Hover: a token in the text (its row: what it attends to; its column: what attends to it),
// and a cell of the heatmap.
// -------------------------------------------------------------------------------------------

function hover(target) {
  state.hover = target;
  applyHover();
  if (state.store?.encdec) scheduleRender(); // the alignment view singles out the hovered output
}

function applyHover() {
  const { store, hover: h, kind } = state;
  if (!store) return;
  const { lines, marks } = hoverWeights(currentMatrix(), kind, h);
  output.highlight(lines.output);
  source.highlight(lines.source);
  heatmap.mark({ ...marks, cell: state.cell });
}

$('heatmap-overlay').parentElement.addEventListener('mousemove', (e) => {
  const cell = heatmap.hit(e);
  state.cell = cell;
  const labels = state.store?.labels(state.kind);
  $('readout').textContent = cell && labels
    ? `query #${cell.q} ${JSON.stringify(shortLabel(labels.rows[cell.q] ?? ''))} → key #${cell.k} ` +
      `${JSON.stringify(shortLabel(labels.cols[cell.k] ?? ''))}: ${cell.value === null ? '— (a later position)' : cell.value.toFixed(4)}`
    : '';
  applyHover();
});
$('heatmap-overlay').parentElement.addEventListener('mouseleave', () => {
  state.cell = null;
  applyHover();
});

// -------------------------------------------------------------------------------------------
// Export: the current view as PNG, every captured map as JSON.
// -------------------------------------------------------------------------------------------

function download(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

const fileStem = () => `saccade-${state.kind}-L${state.layer}-${typeof state.head == 'number' ? `h${state.head}` : state.head}`;

$('export-png').addEventListener('click', () => {
  $('heatmap').toBlob((blob) => download(blob, `${fileStem()}.png`), 'image/png');
});

$('export-json').addEventListener('click', () => {
  const { info, name, runtime } = state.model;
  const { tensors, tensorTypes, ...shape } = info;
  const doc = {
    format: 'saccade-attention/1',
    model: { name, ...shape, tensorTypes },
    runtime,
    prompt: $('prompt').value,
    ...state.store.toJSON(),
  };
  download(new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'saccade-attention.json');
});

// -------------------------------------------------------------------------------------------
// Controls
// -------------------------------------------------------------------------------------------

$('model-select').addEventListener('change', () => {
  const v = $('model-select').value;
  $('url-form').hidden = v !== 'url';
  if (v === 'file') $('model-file').click();
  else if (v in MODELS) pickModel(v);
});
$('model-file').addEventListener('change', () => {
  const file = $('model-file').files[0];
  if (file) load(file, file.name);
});
$('url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const url = $('model-url').value.trim();
  if (url) load(url, url);
});
$('threads').addEventListener('change', () => {
  const v = $('model-select').value;
  if (v in MODELS) pickModel(v);
  else if (v === 'url' && $('model-url').value) load($('model-url').value, $('model-url').value);
  else if (v === 'file' && $('model-file').files[0]) load($('model-file').files[0], $('model-file').files[0].name);
});
$('clear-cache').addEventListener('click', async () => {
  const n = (await cachedModels()).length;
  await clearModelCache();
  $('cache-note').textContent = `cleared ${n} cached model${n === 1 ? '' : 's'}`;
});
$('gen-form').addEventListener('submit', (e) => {
  e.preventDefault();
  generate();
});
$('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    generate();
  }
});
$('stop').addEventListener('click', () => client.stop());
$('kind').addEventListener('change', () => {
  state.kind = $('kind').value;
  fillSelections();
  scheduleRender();
});
$('layer').addEventListener('change', () => {
  state.layer = Number($('layer').value);
  scheduleRender();
});
$('head').addEventListener('change', () => {
  const v = $('head').value;
  state.head = /^\d+$/.test(v) ? Number(v) : v;
  scheduleRender();
});
$('scale').addEventListener('change', () => {
  state.scale = $('scale').value;
  scheduleRender();
});
$('coi-on').addEventListener('click', enableShim);
$('coi-off').addEventListener('click', disableShim);
addEventListener('resize', scheduleRender);

// -------------------------------------------------------------------------------------------
// Start: the model from ?model=, else Model A (or B with ?source=b).
// -------------------------------------------------------------------------------------------

for (const [key, m] of Object.entries(MODELS)) $('model-select').querySelector(`option[value="${key}"]`).textContent = m.label;
if (params.has('threads')) $('threads').value = params.get('threads');
if (params.has('max')) $('max-tokens').value = params.get('max');
if (params.has('seed')) $('seed').value = params.get('seed');
$('status-text').textContent = `Runtime: not loaded yet · this page is ${crossOriginIsolated ? '' : 'not '}cross-origin isolated.`;
if (params.get('model')) {
  $('model-select').value = 'url';
  $('url-form').hidden = false;
  $('model-url').value = params.get('model');
  if (!$('prompt').value) $('prompt').value = params.get('prompt') ?? MODELS.a.prompt;
  load(params.get('model'), params.get('model'));
} else {
  const key = params.get('source') === 'b' ? 'b' : 'a';
  $('model-select').value = key;
  if (params.get('prompt')) $('prompt').value = params.get('prompt');
  pickModel(key);
}

// A model trained on this page ("Watch it learn", web/train/section.mjs) opens here like a file.
document.addEventListener('saccade:open-model', ({ detail }) => load(detail.file, detail.name));
