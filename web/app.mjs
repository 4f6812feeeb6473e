// The demo page: picks and loads a model (in a Web Worker, see worker.mjs), streams a
// generation, and draws its attention live. Reading order: page state → loading → runtime
// status → generating → the views (drawn at most once per animation frame, paced while tokens
// stream) → hover → export.
//
// URL parameters: ?model=URL (any GGUF), ?source=a|b or a real model's key (the model switch),
// ?threads=N, ?prompt=TEXT, ?max=N (max tokens), ?seed=N, ?run (generate as soon as the model is
// loaded). Sampling inputs left empty take the library's defaults.
import { bootPhases, client } from './boot.mjs';
import { ChatMode } from './chat.mjs';
import { ALIGNMENT_LESSON, LIBRARY_VERSION, MODELS, REAL_MODELS } from './config.mjs';
import { REASONS } from './protocol.mjs';
import { DownloadMeter, addRealModels, rateText, refusalBeforeDownload, showOpenedModel, silenceText } from './model-picker.mjs';
import { AlignmentView } from './views/alignment.mjs';
import { HeatmapView, shortLabel } from './views/heatmap.mjs';
import { hoverWeights, rowOf, sides } from './views/hover.mjs';
import { RenderPace, TEXT_EVERY_MS, VIEWS_SHARE } from './views/pace.mjs';
import { AGGREGATES, AttentionStore, HEAD_EXPLAIN, aggregatesFor, selectionTitle } from './views/store.mjs';
import { RowPanel, renderComparison } from './views/probe.mjs';
import { ModelView } from './views/thumbnails.mjs';
import { TokenLine } from './views/tokens.mjs';

const scriptStart = performance.now(); // every module above is fetched and evaluated
const $ = (id) => document.getElementById(id);
/** Writes an element's text only when it changes: a write, even of the same text, makes the next frame restyle the page. */
const setText = (id, text) => {
  if ($(id).textContent !== text) $(id).textContent = text;
};
const params = new URLSearchParams(location.search);

/** Everything the page shows; `window.saccadeDemo` exposes it (and timings) for tests and benchmarks. */
const state = {
  model: null, // the worker's 'loaded' message: { info, name, runtime, from, bytes, ms }
  store: null,
  generation: 0, // increments with every generation (the row panel is keyed by it)
  running: false,
  kind: 'self',
  layer: 0,
  head: 0, // a head number or an aggregate name
  scale: 'linear',
  hover: null, // { side: 'output' | 'source', index }
  cell: null, // { q, k }: the heatmap cell under the pointer or the keyboard cursor
  source: null, // what the model was loaded from (a URL or a File), for the export
  run: null, // the last generation's settings: { prompt, options }, for the export
  speed: null, // the streaming generation's speed line, shown when its text is drawn
  lessonGreedy: false, // the alignment lesson set temperature 0
  ablate: { kind: 'self', heads: [] }, // heads to ablate in the comparison (web/views/probe.mjs)
};
const stats = {
  navigationToFirstToken: null, renderMs: [], tokens: 0, tokensPerSecond: null,
  textAt: [], // when the text was drawn while state.running (a generation or a comparison), performance.now()
  // where the time to the first token went: name → { start, end } in ms since navigation (scripts/bench-web.mjs)
  phases: { ...bootPhases, 'page-modules': { start: 0, end: scriptStart } }, firstTokenPainted: null,
  keptRows: 0, // the last generation's self rows kept from the one before (its prompt began with their tokens)
};
const chat = new ChatMode({ bar: $('chat-bar'), turns: $('chat-turns'), prompt: $('prompt'), label: $('prompt-label'),
  onNew: () => { // the views showed the old conversation: empty them, as a new generation would
    state.store.clear();
    forgetRun();
  } });
window.saccadeDemo = { state, stats, chat };

// -------------------------------------------------------------------------------------------
// Loading
// -------------------------------------------------------------------------------------------

const mb = (n) => `${(n / 1048576).toFixed(n < 10485760 ? 2 : 1)} MB`;

/**
 * What the first token does not need comes after it: "Watch it learn" (web/train/section.mjs and
 * the trainer's modules) is imported once the first model is loaded (with ?run, once its first
 * token is drawn), so that its fetches do not share the connections with the model's; at the
 * latest after DEFER_MAX_MS (a long download).
 */
const DEFER_MAX_MS = 3000;
let deferredStarted = false;
function startDeferred() {
  if (deferredStarted) return;
  deferredStarted = true;
  import('./train/section.mjs').catch((e) => console.warn(`saccade: "Watch it learn" did not load: ${e.message}`));
}
setTimeout(startDeferred, DEFER_MAX_MS);

/**
 * Records phases of the way to the first token; the worker's times are epoch ms. Once it is
 * painted, only phases not yet recorded are added: the thread pool's, which the load does not wait for.
 */
function notePhases(list, { epoch = false } = {}) {
  const painted = stats.firstTokenPainted !== null;
  const shift = epoch ? performance.timeOrigin : 0;
  for (const { name, start, end } of list)
    if (start != null && end != null && !(painted && name in stats.phases))
      stats.phases[name] = { start: start - shift, end: end - shift };
}
let ranOnce = false; // ?run generates once, after the first load

const PHASES = { network: 'Downloading', cache: 'Reading from the browser cache', file: 'Reading the file' };

const meter = new DownloadMeter();
let loadCount = 0; // a load that awaited its size check gives way to a later one

let news = { at: 0, complete: false }; // when the load last reported progress (or began), and whether all had come

/**
 * While a model comes from a URL, says when nothing has arrived for a while (a server that
 * accepts the request and never answers would leave "Loading…" for good). Returns the stop.
 */
function watchSilence() {
  news = { at: performance.now(), complete: false };
  const timer = setInterval(() => {
    const text = news.complete ? '' : silenceText(performance.now() - news.at); // (once all came, the model is being opened)
    if (text) $('progress-rate').textContent = text;
  }, 1000);
  return () => clearInterval(timer);
}

function showProgress({ phase, loaded, total }) {
  news = { at: performance.now(), complete: total > 0 && loaded >= total };
  $('progress-rate').textContent = rateText(meter.update(phase, loaded, total));
  const bar = $('progress');
  if (total) {
    bar.value = loaded / total;
    $('progress-text').textContent = `${PHASES[phase]}: ${mb(loaded)} / ${mb(total)} (${Math.floor((100 * loaded) / total)}%)`;
  } else {
    bar.removeAttribute('value'); // indeterminate
    $('progress-text').textContent = `${PHASES[phase]}: ${mb(loaded)}`;
  }
}

/**
 * Loads a model. Its size is checked against this device before anything is downloaded: `bytes`
 * (a listed model's published size), a File's size, or with `askSize` a HEAD request's answer.
 */
async function load(source, what, { bytes, askSize = false } = {}) {
  if (state.running) client.stop();
  state.model = null;
  setRunning(false);
  if (state.store) { // the last run's text and maps were the old model's: a load that fails must not leave them
    state.store.clear();
    forgetRun();
    chat.setModel(null);
  }
  // until a model is loaded there is no run to export (the old one's model is gone)
  $('generate').disabled = $('export-png').disabled = $('export-json').disabled = true;
  $('progress').value = 0;
  $('progress-text').textContent = `Loading ${what}…`;
  $('model-info').textContent = '';
  $('cache-note').textContent = '';
  $('progress-rate').textContent = '';
  meter.reset();
  const count = ++loadCount;
  state.source = source;
  stopSilenceWatch();
  if (typeof source == 'string') stopSilenceWatch = watchSilence();
  try {
    await loadFrom(source, what, { bytes, askSize, count });
  } finally {
    if (count === loadCount) stopSilenceWatch();
  }
}

let stopSilenceWatch = () => {};

async function loadFrom(source, what, { bytes, askSize, count }) {
  const refusal = await refusalBeforeDownload(source, { bytes, askSize });
  if (count !== loadCount) return;
  if (refusal) {
    $('progress-text').textContent = `Could not load ${what}: ${refusal} (refused before downloading)`;
    $('progress-text').classList.add('error');
    startDeferred();
    return;
  }
  const threads = Number($('threads').value) || undefined;
  const requested = performance.now();
  notePhases([{ name: 'page-setup', start: scriptStart, end: requested }]);
  try {
    const loaded = await client.load(source, {
      threads,
      onPhases: (list) => notePhases(list, { epoch: true }),
      onProgress: showProgress,
      onCache: (note) => {
        $('cache-note').textContent = note;
        $('cache-note').dataset.note = note;
      },
      // (after 'loaded': the thread pool could not start all its threads)
      onThreads: (runtime) => {
        if (count !== loadCount) return;
        state.model.runtime = runtime;
        showRuntime(runtime);
      },
    });
    state.model = loaded;
    notePhases([{ name: 'loaded-message', start: requested, end: performance.now() }]);
    const { info, runtime, from, bytes, ms } = loaded;
    $('progress').value = 1;
    $('progress-rate').textContent = '';
    const size = bytes ? `${mb(bytes)} ` : '';
    $('progress-text').textContent = `Loaded ${what}: ${size}from ${from === 'cache' ? 'the browser cache' : from === 'file' ? 'the file' : 'the network'} in ${Math.round(ms)} ms`;
    showRuntime(runtime);
    showModel(loaded);
    $('generate').disabled = false;
    if (params.has('run') && !ranOnce) {
      ranOnce = true;
      generate();
    } else startDeferred();
  } catch (e) {
    $('progress-text').textContent = `Could not load ${what}: ${e.message}`;
    $('progress-text').classList.add('error');
    $('progress-rate').textContent = ''; // the failed download's, not a current one
    console.warn(`saccade: ${e.message}`);
    startDeferred();
    return;
  }
  $('progress-text').classList.remove('error');
}

function showModel({ info, name, runtime, defaults }) {
  state.ablate = { kind: 'self', heads: [] }; // probe hook: another model, other heads
  rowPanel.close();
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
  // Model B opens as the alignment lesson: cross-attention at the layer that aligns best
  const lesson = encdec && state.source === MODELS.b.url;
  state.kind = lesson ? 'cross' : 'self';
  state.layer = lesson ? ALIGNMENT_LESSON.layer : 0;
  state.head = lesson ? 'mean' : 0;
  state.cell = null;
  $('lesson').hidden = $('lesson-bar').hidden = !lesson;
  // the lesson decodes greedily, as the model card uses Model B; another model gets its default back
  if (lesson && $('temperature').value === '') {
    $('temperature').value = '0';
    state.lessonGreedy = true;
  } else if (!lesson && state.lessonGreedy) {
    if ($('temperature').value === '0') $('temperature').value = '';
    state.lessonGreedy = false;
  }
  $('source-box').hidden = !encdec;
  $('alignment-box').hidden = !encdec;
  $('prompt-label').textContent = encdec ? 'Source (encoded, then translated)' : 'Prompt';
  $('output-title').textContent = encdec ? 'Output' : 'Text';
  chat.setModel({ info });
  $('kind').replaceChildren(...state.store.kinds.map((k) => new Option(k === 'self' && encdec ? 'decoder self' : k, k)));
  $('kind').value = state.kind;
  fillSelections();
  $('output').replaceChildren();
  $('source').replaceChildren();
  forgetRun();
}

/** Nothing of the last run on screen: its text and maps (as the store now holds them), its speed, its export. */
function forgetRun() {
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

/** A model of the switch by its key: MODELS (shipped) or REAL_MODELS; undefined for others. */
const choiceOf = (key) =>
  (Object.hasOwn(MODELS, key) ? MODELS[key] : Object.hasOwn(REAL_MODELS, key) ? REAL_MODELS[key] : undefined);
const isExamplePrompt = (text) => [MODELS, REAL_MODELS].some((list) => Object.values(list).some((m) => m.prompt === text));

function pickModel(key) {
  const choice = choiceOf(key);
  const prompt = $('prompt');
  // the example prompt follows the model unless the user wrote their own
  if (!prompt.value || isExamplePrompt(prompt.value)) prompt.value = choice.prompt;
  load(choice.url, choice.label, { bytes: choice.bytes });
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
    `(${variant === 'mt' ? 'threaded' : 'single-threaded'} build) · ${runtime.relaxed ? 'relaxed SIMD' : 'SIMD128'} · ${how} — ${reason}.`;
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
  // a reply under way belongs to its conversation: a new chat starts once it ends (or is stopped)
  $('chat-new').disabled = running;
  showAblation(); // probe hook
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
    prompt = chat.active ? chat.request($('prompt').value) : promptInput($('prompt').value);
  } catch (e) {
    $('speed').textContent = e.message;
    return;
  }
  state.generation++;
  const held = state.store.held(); // rows a prompt that begins with the same tokens keeps (a chat's next turn)
  state.store.clear();
  stats.keptRows = 0;
  state.hover = null;
  state.run = { prompt: $('prompt').value, options };
  clearViews();
  setRunning(true);
  $('speed').textContent = `generating (seed ${options.seed})…`;
  state.speed = null;
  let first = null;
  let last = null;
  let count = 0;
  const requested = performance.now();
  try {
    const done = await client.generate(prompt, options, {
      held: held.ids,
      onPhases: (list) => notePhases(list, { epoch: true }),
      onStart: (msg) => {
        if (!state.model) return; // a load began: what is still in flight from the old model is not shown
        chat.started(msg);
        state.store.start(msg, held);
        stats.keptRows = msg.keep;
        scheduleRender();
      },
      onToken: (msg) => {
        if (!state.model) return;
        state.store.add(msg);
        chat.reply(msg.token.text);
        count++;
        last = msg.ms;
        if (first === null) {
          first = msg.ms;
          stats.navigationToFirstToken ??= performance.now();
          notePhases([{ name: 'first-token-message', start: requested, end: performance.now() }]);
        }
        stats.tokens = count;
        stats.tokensPerSecond = count > 1 ? ((count - 1) * 1000) / (last - first) : null;
        state.speed = speedText(count, first, last, options.seed); // (shown with the text: a DOM change is a frame's layout)
        scheduleRender({ newToken: count > 1 }); // (a generation's first token is drawn at once)
      },
    });
    $('speed').textContent = `${speedText(count, first, last, options.seed)} · ${REASONS[done.reason]}`;
    chat.finish(true);
  } catch (e) {
    chat.finish(false);
    $('speed').textContent = `error: ${e.message}`;
    console.warn(`saccade: ${e.message}`);
  } finally {
    state.speed = null; // (an ablation comparison runs too, and must not bring it back)
    setRunning(false);
    // (a load stopped this generation: its model is gone, so there is nothing to export)
    $('export-png').disabled = $('export-json').disabled = !state.model || state.store.queries('self') === 0;
    scheduleRender();
    startDeferred(); // (a generation that ended before its first token)
  }
}

function speedText(count, first, last, seed) {
  if (count === 0) return `0 tokens · seed ${seed}`;
  const rate = count > 1 ? ` · ${(((count - 1) * 1000) / (last - first)).toFixed(1)} tokens/s` : '';
  return `${count} token${count === 1 ? '' : 's'}${rate} · first after ${Math.round(first)} ms · seed ${seed}`;
}

// -------------------------------------------------------------------------------------------
// Views: text, heatmap, model view, alignment — redrawn at most once per animation frame.
// Every view ties a token to the query row that wrote it (views/hover.mjs): row q sits at
// token q and wrote token q + 1, and labels say both ("at 'x' → wrote 'y'").
// -------------------------------------------------------------------------------------------

const READOUT_HELP = 'Rows are queries (the row at a token is the step that wrote the next one), columns are keys.';
const quote = (label) => JSON.stringify(shortLabel(label ?? ''));

/** A decoder token's accessible name: what it is, and the row that wrote it. */
function describeToken(tokens, i) {
  const t = tokens[i];
  const self = `#${i} ${quote(t.text || t.label)}`;
  if (i === 0) return `${self} — the first token: no row wrote it`;
  return `${self} — ${t.generated ? 'written' : 'predicted (prompt)'} by the row at ${quote(tokens[i - 1].text || tokens[i - 1].label)}`;
}

const output = new TokenLine($('output'), {
  onHover: (i) => hover(i === null ? null : { side: 'output', index: i }),
  onPick: (i) => pick({ side: 'output', index: i }),
  describe: describeToken,
});
const source = new TokenLine($('source'), {
  onHover: (i) => hover(i === null ? null : { side: 'source', index: i }),
  onPick: (i) => pick({ side: 'source', index: i }),
});
const heatmap = new HeatmapView($('heatmap'), $('heatmap-overlay'), { scroll: true });
const alignment = new AlignmentView($('alignment'));
const modelView = new ModelView($('thumbnails'), {
  onSelect: ({ layer, head }) => {
    if ($('ablate-mode').checked || shiftClick) return toggleAblation(layer, head); // probe hook
    state.layer = layer;
    state.head = head;
    $('layer').value = String(layer);
    $('head').value = String(head);
    scheduleRender();
  },
  onCursor: (c) => {
    if (c) $('readout').textContent = `model view: layer ${c.layer}, head ${c.head} — Enter shows it`;
    scheduleRender();
  },
});
Object.assign(window.saccadeDemo, { heatmap, alignment, modelView });

// While tokens stream, drawing is paced (web/views/pace.mjs): the text at most every
// TEXT_EVERY_MS, the views (12-17 ms a frame at 600 tokens of GPT-2 small) again only once their
// last drawing is at most VIEWS_SHARE of the time since it began. On 2 cores that took decode
// there from 52-64 to 74-85 tokens/s (at 50 tokens from 75-80 to 89-99; 97-103 drawing nothing).
window.saccadeDemo.renderPace = { TEXT_EVERY_MS, VIEWS_SHARE }; // (for tests)
const pace = new RenderPace(render);
function scheduleRender({ newToken = false } = {}) {
  pace.request({ newToken }); // (not the event a listener passes)
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

/** The legend beside the map: masked cells, what a row sums to, what the selection is. */
function showLegend() {
  $('legend-masked').hidden = state.kind !== 'self';
  setText('legend-floor', state.scale === 'log' ? 'The log scale floors at 1e-4: smaller weights share the bottom colour.' : '');
  setText('legend-selection', typeof state.head == 'number' ? HEAD_EXPLAIN : AGGREGATES[state.head].explain);
}

const argmax = (row) => row.reduce((best, v, k) => (v > row[best] ? k : best), 0);

/** After a preset: how many of the output's digits peak in their own source field, per decoder layer. */
function showLessonScore() {
  const { store } = state;
  const preset = ALIGNMENT_LESSON.presets.find((p) => p.text === state.run?.prompt);
  const digits = ALIGNMENT_LESSON.digits.filter(([q]) => q < store.queries('cross'));
  let text = '';
  if (!$('lesson').hidden && preset && !state.running && digits.length && store.source.length === preset.fields.length) {
    const per = Array.from({ length: store.layers }, (_, l) => {
      const m = store.matrix('cross', l, 'mean');
      return digits.filter(([q, field]) => preset.fields[argmax(m.row(q))] === field).length;
    });
    text = `This input, ${JSON.stringify(preset.text)}: ${per.map((n, l) => `layer ${l} ${n}/${digits.length}`).join(', ')} ` +
      'digits peak in their own field (mean over heads).';
  }
  setText('lesson-input', text);
}

/** The text: the token lines, a chat's reply so far, and while tokens stream, their speed. */
function drawText(store) {
  output.sync(store.tokens);
  source.sync(store.source);
  chat.drawReply();
  if (state.running && state.speed !== null) setText('speed', state.speed);
}

function render() {
  const { store } = state;
  if (!store) return;
  if (stats.firstTokenPainted === null && (state.running || stats.navigationToFirstToken !== null)) {
    // Until the page's first token is drawn, only text. Before it, the views would be drawn
    // empty (tens of ms on a cold page), holding this thread when the token comes; the token's
    // frame draws its text, the next one the views, which it need not wait for.
    drawText(store);
    if (stats.navigationToFirstToken === null) return;
    notePhases([{ name: 'first-token-render', start: stats.navigationToFirstToken, end: performance.now() }]);
    stats.firstTokenPainted = performance.now(); // (the browser paints when this returns)
    startDeferred();
    scheduleRender();
    return;
  }
  const t0 = performance.now();
  if (!pace.textDue(t0, state.running)) return;
  const grew = store.tokens.length > output.spans.length; // (the end's drawing may add the last tokens)
  drawText(store);
  if (state.running || grew) $('output').scrollTop = $('output').scrollHeight;
  if (state.running) stats.textAt.push(t0);
  if (!pace.viewsDue(t0, state.running)) {
    if (state.hover || state.cell) applyHover(); // the new tokens' highlights and the readout
    return;
  }
  const m = currentMatrix();
  const labels = store.labels(state.kind);
  heatmap.render({
    matrix: m,
    key: `${state.kind}/${state.layer}/${state.head}`,
    rowLabels: labels.rows,
    colLabels: labels.cols,
    rowWrote: labels.wrote,
    title: viewTitle(),
    scale: state.scale,
  });
  modelView.setAblated(state.ablate.kind === state.kind ? state.ablate.heads : []); // probe hook
  modelView.render(store, state.kind, state, state.scale);
  syncRowPanel(); // probe hook
  if (store.encdec) {
    const useSelection = state.kind === 'cross';
    alignment.render({
      matrix: useSelection ? m : store.matrix('cross', 0, 'all'),
      source: store.source.map((t) => t.label),
      output: store.tokens.slice(1).map((t) => t.label),
      at: store.tokens.map((t) => t.label),
      title: useSelection ? viewTitle() : `cross-attention · ${AGGREGATES.all.title}`,
      focus: state.hover?.side === 'output' ? rowOf('cross', 'output', state.hover.index) : null,
      scale: state.scale,
    });
  }
  showLegend();
  showLessonScore();
  applyHover();
  const ms = performance.now() - t0;
  pace.viewsDrawn(t0, ms, state.running);
  if (store.queries('self') > 0) stats.renderMs.push({ ms, context: store.tokens.length, at: t0, streaming: state.running });
}

// -------------------------------------------------------------------------------------------
// Hover: a token in the text (the row that wrote it: what it attended to; its column: what
// attends to it), and a cell of the heatmap (pointer or keyboard). The readout (an aria-live
// region) says what is singled out, recomputed whenever the view changes, never stale.
// -------------------------------------------------------------------------------------------

function hover(target) {
  state.hover = target;
  if (target) state.cell = null; // the readout turns to the token
  applyHover();
  if (state.store?.encdec) scheduleRender(); // the alignment view singles out the hovered output
}

/** On a narrow screen the map sits below the text: a tapped token brings its row into view. */
function pick(target) {
  hover(target);
  if (!matchMedia('(max-width: 1000px)').matches) return;
  const row = rowOf(state.kind, target.side, target.index);
  if (row === null) return;
  heatmap.scrollTo(row);
  $('heatmap-box').scrollIntoView({ block: 'nearest' });
}

/** "row 6: at '1' → wrote '1'" (or "row 3: 'v'" for an encoder row). */
function rowText(q) {
  const labels = state.store.labels(state.kind);
  return labels.wrote ? `row ${q}: at ${quote(labels.rows[q])} → wrote ${quote(labels.wrote[q])}` : `row ${q}: ${quote(labels.rows[q])}`;
}

function readoutText(m) {
  const { store, kind, cell, hover: h } = state;
  if (cell && cell.q < m.nq && cell.k < m.nk) {
    const row = m.row(cell.q);
    const value = cell.k < row.length ? row[cell.k].toFixed(4) : '— masked (a later position)';
    return `${rowText(cell.q)} · key #${cell.k} ${quote(store.labels(kind).cols[cell.k])}: ${value}`;
  }
  if (!h) return '';
  const q = rowOf(kind, h.side, h.index);
  if (q === null || q >= m.nq) {
    // a key: the row that weighs it most
    if (h.side !== sides(kind).cols) return `${h.side} #${h.index}: not in this view`;
    let best = -1;
    for (let r = 0; r < m.nq; r++) if (h.index < m.row(r).length && (best < 0 || m.row(r)[h.index] > m.row(best)[h.index])) best = r;
    const key = `key #${h.index} ${quote(store.labels(kind).cols[h.index])}`;
    return best < 0 ? `${key}: no row sees it yet` : `${key} · weighed most by ${rowText(best)}: ${m.row(best)[h.index].toFixed(4)}`;
  }
  const row = m.row(q);
  let peak = 0;
  for (let k = 1; k < row.length; k++) if (row[k] > row[peak]) peak = k;
  return `${rowText(q)} · looks most at key #${peak} ${quote(store.labels(kind).cols[peak])}: ${row[peak].toFixed(4)}`;
}

function applyHover() {
  const { store, hover: h, kind } = state;
  if (!store) return;
  const m = currentMatrix();
  const { lines, marks } = hoverWeights(m, kind, h);
  output.highlight(lines.output);
  source.highlight(lines.source);
  heatmap.mark({ ...marks, cell: state.cell });
  const text = readoutText(m) || READOUT_HELP;
  setText('readout', text);
}

$('heatmap-box').addEventListener('mousemove', (e) => {
  const cell = heatmap.hit(e);
  state.cell = cell && { q: cell.q, k: cell.k };
  applyHover();
});
$('heatmap-box').addEventListener('mouseleave', () => {
  if (document.activeElement === $('heatmap')) return; // the keyboard cursor stays
  state.cell = null;
  applyHover();
});

// The keyboard cursor: arrows move it, Home/End go to the row's ends, PageUp/PageDown by 10 rows.
$('heatmap').addEventListener('keydown', (e) => {
  const m = state.store && currentMatrix();
  if (!m?.nq) return;
  const { q, k } = state.cell ?? { q: 0, k: 0 };
  const width = (r) => m.row(r).length;
  const moves = {
    ArrowUp: [q - 1, k], ArrowDown: [q + 1, k], ArrowLeft: [q, k - 1], ArrowRight: [q, k + 1],
    Home: [q, 0], End: [q, width(q) - 1], PageUp: [q - 10, k], PageDown: [q + 10, k],
  };
  if (!(e.key in moves)) return;
  e.preventDefault();
  const nq = Math.max(0, Math.min(m.nq - 1, moves[e.key][0]));
  state.cell = { q: nq, k: Math.max(0, Math.min(m.nk - 1, moves[e.key][1])) };
  heatmap.scrollTo(state.cell.q, state.cell.k);
  applyHover();
});
$('heatmap').addEventListener('focus', () => {
  const m = state.store && currentMatrix();
  if (m?.nq && !state.cell) state.cell = { q: m.nq - 1, k: 0 };
  applyHover();
});

// -------------------------------------------------------------------------------------------
// Export: the current view as PNG; every captured map as JSON, with what reproduces the run.
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
  heatmap.wholeCanvas().toBlob((blob) => download(blob, `${fileStem()}.png`), 'image/png');
});

$('export-json').addEventListener('click', () => {
  const { info, name, runtime, defaults } = state.model;
  const { tensors, tensorTypes, ...shape } = info;
  const src = state.source;
  const doc = {
    format: 'saccade-attention/1',
    library: { name: 'saccade', version: LIBRARY_VERSION },
    model: { name, source: typeof src == 'string' ? new URL(src, location.href).href : { file: src?.name, bytes: src?.size }, ...shape, tensorTypes },
    runtime,
    prompt: state.run?.prompt ?? $('prompt').value,
    // every sampling setting of the run: the ones typed, else the library's defaults
    sampling: { ...defaults, ...state.run?.options },
    view: { kind: state.kind, layer: state.layer, selection: state.head, scale: state.scale },
    ...state.store.toJSON(),
  };
  download(new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'saccade-attention.json');
});

// -------------------------------------------------------------------------------------------
// The alignment lesson (Model B): presets and the measured per-field alignment; the first-visit hint
// -------------------------------------------------------------------------------------------

$('lesson-presets').replaceChildren(...ALIGNMENT_LESSON.presets.map(({ text, shows }) => {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.title = shows;
  b.setAttribute('aria-label', `${text}: ${shows}`);
  b.addEventListener('click', () => {
    $('prompt').value = text;
    $('lesson-shows').textContent = shows;
    generate();
  });
  return b;
}));
$('lesson-layer').textContent = String(ALIGNMENT_LESSON.layer);
$('lesson-measured').textContent = ALIGNMENT_LESSON.measured;
$('lesson-fields').replaceChildren(...ALIGNMENT_LESSON.fields.map(([field, share]) => {
  const tr = document.createElement('tr');
  const th = document.createElement('th');
  th.scope = 'row';
  th.textContent = field;
  const td = document.createElement('td');
  td.textContent = `${share.toFixed(1)}%`;
  tr.append(th, td);
  return tr;
}));

const HINT_KEY = 'saccade-hint-seen';
const hintSeen = () => {
  try {
    return localStorage.getItem(HINT_KEY) === '1';
  } catch {
    return false; // storage blocked: show it
  }
};
$('hint').hidden = hintSeen();
$('hint-close').addEventListener('click', () => {
  $('hint').hidden = true;
  try {
    localStorage.setItem(HINT_KEY, '1');
  } catch {} // storage blocked: hidden for this visit only
});

// -------------------------------------------------------------------------------------------
// Controls
// -------------------------------------------------------------------------------------------

$('model-select').addEventListener('change', () => {
  const v = $('model-select').value;
  $('url-form').hidden = v !== 'url';
  if (v === 'file') $('model-file').click();
  else if (choiceOf(v)) pickModel(v);
});
$('model-file').addEventListener('change', () => {
  const file = $('model-file').files[0];
  if (file) load(file, file.name);
});
$('url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const url = $('model-url').value.trim();
  if (url) load(url, url, { askSize: true });
});
$('threads').addEventListener('change', () => {
  const v = $('model-select').value;
  if (choiceOf(v)) pickModel(v);
  else if (v === 'url' && $('model-url').value) load($('model-url').value, $('model-url').value, { askSize: true });
  else if (v === 'file' && $('model-file').files[0]) load($('model-file').files[0], $('model-file').files[0].name);
  else if (v === 'opened' && opened) load(opened.file, opened.name);
});
$('clear-cache').addEventListener('click', async () => {
  // (imported on the first click: the first token does not wait for these modules)
  const { cachedModels, clearModelCache } = await import('./model-cache.mjs');
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
$('kind').addEventListener('change', () => (state.cell = null)); // another map: its own cells
$('coi-on').addEventListener('click', enableShim);
$('coi-off').addEventListener('click', disableShim);
addEventListener('resize', scheduleRender);

// -------------------------------------------------------------------------------------------
// Start: the model from ?model=, else Model A (or ?source=b, or a real model by its key).
// -------------------------------------------------------------------------------------------

for (const [key, m] of Object.entries(MODELS)) $('model-select').querySelector(`option[value="${key}"]`).textContent = m.label;
addRealModels($('model-select'), REAL_MODELS, $('model-select').querySelector('option[value="file"]'));
if (params.has('threads')) $('threads').value = params.get('threads');
if (params.has('max')) $('max-tokens').value = params.get('max');
if (params.has('seed')) $('seed').value = params.get('seed');
$('status-text').textContent = `Runtime: not loaded yet · this page is ${crossOriginIsolated ? '' : 'not '}cross-origin isolated.`;
if (params.get('model')) {
  $('model-select').value = 'url';
  $('url-form').hidden = false;
  $('model-url').value = params.get('model');
  if (!$('prompt').value) $('prompt').value = params.get('prompt') ?? MODELS.a.prompt;
  load(params.get('model'), params.get('model'), { askSize: true });
} else {
  const key = choiceOf(params.get('source')) ? params.get('source') : 'a';
  $('model-select').value = key;
  if (params.get('prompt')) $('prompt').value = params.get('prompt');
  pickModel(key);
}

// A model trained on this page ("Watch it learn", web/train/section.mjs) opens here like a file,
// and the picker names it (a change of threads reloads it).
let opened = null;
document.addEventListener('saccade:open-model', ({ detail }) => {
  opened = detail;
  $('url-form').hidden = true;
  showOpenedModel($('model-select'), detail.name, $('model-select').querySelector('option[value="file"]'));
  load(detail.file, detail.name);
});

// -------------------------------------------------------------------------------------------
// Inside a row (click a row of the map, or Enter on the keyboard cursor's row), and head
// ablation (heads in the model view toggle when the switch is on or with shift-click).
// -------------------------------------------------------------------------------------------

const rowPanel = new RowPanel($('row-panel'), (what, args) => client.probe(what, args));
let shiftClick = false;
let panelKey = null; // the map and row the open panel shows
window.saccadeDemo.rowPanel = rowPanel;

function openRow(q) {
  const { store, kind, layer, head } = state;
  if (!store || q >= store.queries(kind)) return;
  panelKey = `${state.generation}/${kind}/${layer}/${head}/${q}`;
  const headText = typeof head == 'number' ? `head ${head}` : selectionTitle(head, layer);
  rowPanel.open({ kind, layer, head, query: q, title: `${rowText(q)} · layer ${layer}, ${headText}`, keyLabels: store.labels(kind).cols });
}

/** The open panel follows the map: another layer, head or kind reopens it on the same row. */
function syncRowPanel() {
  if ($('row-panel').hidden || !rowPanel.row && panelKey === null) return;
  const q = Number(panelKey?.split('/').pop());
  const key = `${state.generation}/${state.kind}/${state.layer}/${state.head}/${q}`;
  if (key === panelKey || state.running) return;
  if (q < state.store.queries(state.kind)) openRow(q);
  else rowPanel.close();
}

$('heatmap-box').addEventListener('click', (e) => {
  const cell = heatmap.hit(e);
  if (cell) openRow(cell.q);
});
$('heatmap').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && state.cell) {
    e.preventDefault();
    openRow(state.cell.q);
  }
});
$('thumbnails').addEventListener('pointerdown', (e) => (shiftClick = e.shiftKey));
$('thumbnails').addEventListener('keydown', () => (shiftClick = false));

function toggleAblation(layer, head) {
  shiftClick = false;
  if (state.ablate.kind !== state.kind) state.ablate = { kind: state.kind, heads: [] };
  const heads = state.ablate.heads;
  const i = heads.findIndex(([l, h]) => l === layer && h === head);
  if (i >= 0) heads.splice(i, 1);
  else heads.push([layer, head]);
  heads.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  showAblation();
  scheduleRender();
}

function showAblation() {
  const { heads, kind } = state.ablate;
  $('ablate-list').textContent = heads.length
    ? `Ablated (${kind}): ${heads.map(([l, h]) => `layer ${l} head ${h}`).join(', ')}.` : 'No head ablated.';
  $('ablate-compare').disabled = !heads.length || !state.model || state.running;
}

$('ablate-compare').addEventListener('click', async () => {
  if (!state.model || state.running || !state.ablate.heads.length) return;
  let prompt;
  try {
    prompt = promptInput($('prompt').value);
  } catch (e) {
    $('compare-result').textContent = e.message;
    return;
  }
  // the last generation's settings (its seed) when the prompt is the same, else the inputs'
  const options = state.run?.prompt === $('prompt').value ? { ...state.run.options } : samplingOptions();
  setRunning(true);
  $('ablate-compare').disabled = true;
  $('compare-result').textContent = `generating twice (seed ${options.seed})…`;
  try {
    const result = await client.probe('compare', { prompt, options, heads: state.ablate.heads, kind: state.ablate.kind,
      step: Math.max(0, $('ablate-step').valueAsNumber || 0) });
    renderComparison($('compare-result'), result);
  } catch (e) {
    // Stop, or another model's load, ended it
    $('compare-result').textContent = e.name === 'AbortError' ? `not compared: ${e.message}` : `error: ${e.message}`;
  } finally {
    setRunning(false);
    showAblation();
  }
});
$('ablate-mode').addEventListener('change', () => showAblation());
