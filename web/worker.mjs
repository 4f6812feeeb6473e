// The demo's module worker: it owns the model, so the page stays responsive while weights load
// and tokens decode. The messages it takes and sends are defined in protocol.mjs.
import { STOPPED, TO_WORKER, toPage, transfers } from './protocol.mjs';
import { importInstance, importOpen, importRest } from './worker-modules.mjs';

/** A time on every thread's common clock (ms since the epoch), for the 'phases' messages. */
const epoch = (t = performance.now()) => performance.timeOrigin + t;
const scriptStart = epoch(); // (the worker's timeOrigin is when the page created it)

// The library's modules are requested at once (worker-modules.mjs): those that open the model
// first (the Cache API's first open, cold, is the slowest step before the download starts, and
// it proceeds while the warm-up runs), then those that start the wasm instance, the rest once
// the page's 'prepare' has started it. loadModel is what the worker calls. (Not awaited at the
// top: messages that arrive before onmessage is set would be lost.)
const openModules = importOpen();
const instanceModules = importInstance();
const library = instanceModules.then((instance) => {
  warmUp(instance);
  return importRest();
});
openModules.catch(() => {}); // reported by the load that awaits the library
library.catch(() => {}); // reported by the load that awaits it
let libraryReady = null;
library.then(() => (libraryReady = epoch()), () => {});
// Chat templates are rendered by @huggingface/jinja, imported when a chat first needs it: import
// maps do not reach workers, so the worker passes the module to model.chat itself.
const jinjaUrl = new URL('../node_modules/@huggingface/jinja/dist/index.js', import.meta.url).href;

let model = null;
let loading = null; // AbortController of the running load
let generation = null; // AbortController of the running generation

const stopped = () => new DOMException('stopped', 'AbortError');

/** Starts opening `url` for a load of it through the download cache (src/js/preopen.mjs). */
const preopen = (url) => openModules.then((m) => m.preopen(url, { cache: true }), () => {});

onmessage = ({ data }) => {
  if (data.type === TO_WORKER.LOAD) load(data);
  else if (data.type === TO_WORKER.GENERATE) generate(data);
  else if (data.type === TO_WORKER.STOP) generation?.abort(stopped());
  else if (data.type === TO_WORKER.PROBE) probe(data);
  else if (data.type === TO_WORKER.PREPARE) prepare(data);
  else if (data.type === TO_WORKER.PREOPEN) preopen(data.url);
};

let prepared = null; // the 'prepare' message's { threads }, until its warm-up has started

/** The wasm instance and its thread pool of the runtime a load with `threads` gets, started as soon as its modules are in, and parked for it. */
function prepare({ threads }) {
  prepared = { threads };
  instanceModules.then(warmUp, () => {}); // (at once when they are in already)
}

/** Starts the prepared warm-up (instantiate.mjs's warmUp) with importInstance's modules. */
function warmUp({ instantiate, runtime }) {
  if (!prepared) return;
  const { threads } = prepared;
  prepared = null;
  try {
    instantiate.warmUp(runtime.chooseRuntime({ threads }));
  } catch {
    // the load that follows reports it
  }
}

// The page may name the warm-up and the model it will load in the worker's URL (?prepare=THREADS,
// ?open=URL; index.html does): they start as this script runs. Messages that the page posts
// before the worker runs are forwarded only once the page's own thread is free, which on a cold
// load is tens of milliseconds later.
const startup = new URLSearchParams(globalThis.location?.search);
if (startup.get('open')) preopen(startup.get('open'));
if (startup.has('prepare')) prepare({ threads: Number(startup.get('prepare')) || undefined });

/** What the last generation evaluated: { ids, source }, for the probes to read its rows again. */
let evaluated = null;
/** The ids of the decoder tokens whose self rows this model's generations sent the page, row q token q's. */
let sentIds = [];

async function probe({ id, what, args }) {
  // a probe that generates (compare) is the running generation from its message on: Stop and a
  // load end it, also while the unbundled worker still fetches worker-probe.mjs, where a Stop
  // sent right after the probe would otherwise find no generation to end
  const controller = new AbortController();
  if (what === 'compare') {
    generation?.abort(stopped());
    generation = controller;
  }
  try {
    if (!model) throw new Error('no model is loaded');
    const { PROBES } = await import('./worker-probe.mjs'); // (imported when the page first looks inside)
    if (!Object.hasOwn(PROBES, what)) throw new Error(`unknown probe '${what}'`);
    postMessage(toPage.result(id, await PROBES[what](model, args, { label, evaluated, signal: controller.signal })));
  } catch (e) {
    fail(id, e);
  } finally {
    if (generation === controller) generation = null;
  }
}

const fail = (id, e) => postMessage(toPage.error(id, e));

// -------------------------------------------------------------------------------------------
// Loading
// -------------------------------------------------------------------------------------------

async function load({ id, url, file, threads }) {
  loading?.abort(stopped());
  generation?.abort(stopped());
  model?.dispose();
  model = null;
  sentIds = [];
  const controller = new AbortController();
  loading = controller;
  const { signal } = controller;
  const t0 = performance.now();
  try {
    // a URL goes through the library's download cache; a picked file is read as it is
    const onProgress = ({ loaded, total, from }) =>
      postMessage(toPage.progress(id, { phase: file ? 'file' : from, loaded, total }));
    // (scores, q and k for the row panel are captured from the first time a row is opened: worker-probe.mjs)
    // The first tokens need not wait for the thread pool: the model runs on one thread until it has.
    const options = { onProgress, signal, cache: !file, waitForThreads: false };
    if (threads) options.threads = threads;
    // the download (or cache read) starts now, while the rest of the library may still be loading
    if (!file) await preopen(url);
    const { loadModel } = await library;
    const loadStart = performance.now();
    const loaded = await loadModel(file ?? url, options);
    if (loading !== controller) {
      loaded.dispose(); // a newer load started meanwhile
      return;
    }
    postMessage(toPage.phases(id, [
      { name: 'worker-script', start: epoch(0), end: scriptStart },
      { name: 'library-import', start: scriptStart, end: libraryReady },
      { name: 'await-library', start: epoch(t0), end: epoch(loadStart) },
      ...libraryMeasures(),
    ]));
    model = loaded;
    const { tensors, metadata, ...info } = model.info;
    info.chatTemplate = Boolean(metadata['tokenizer.chat_template']); // the page offers chat (an empty template is none)
    const { from, bytes } = model.sourceInfo;
    postMessage(toPage.loaded(id, { info, name: metadata['general.name'] ?? '', runtime: { ...model.runtime },
      defaults: { ...model.samplingDefaults }, from: file ? 'file' : from, bytes, ms: performance.now() - t0 }));
    // the final note, once the download's cache copy is written (the page listens after 'loaded')
    if (!file) loaded.cached.then((cache) => postMessage(toPage.cache(id, cache.message)));
    // the thread pool, which the load did not wait for: its phase, and fewer threads should it fail
    const planned = loaded.runtime.threads;
    loaded.threadsReady.then((threads) => {
      const measures = libraryMeasures();
      if (measures.length) postMessage(toPage.phases(id, measures));
      if (threads !== planned) postMessage(toPage.threads(id, { ...loaded.runtime }));
    });
  } catch (e) {
    if (loading === controller) fail(id, e);
  } finally {
    if (loading === controller) loading = null;
  }
}

let measuredUpTo = 0; // the library's measures before this were sent with an earlier load

/** The library's phases since the last load (src/js/timing.mjs; a prepare's among them), on the common clock. */
function libraryMeasures() {
  const since = measuredUpTo;
  measuredUpTo = performance.now();
  // (a measure is recorded as it ends: those ending after the last call are the new ones, such as
  // the thread pool's, which started before it)
  return performance.getEntriesByType('measure').filter((m) => m.name.startsWith('saccade:') && m.startTime + m.duration > since)
    .map((m) => ({ name: m.name.slice('saccade:'.length), start: epoch(m.startTime), end: epoch(m.startTime + m.duration) }));
}

// -------------------------------------------------------------------------------------------
// Generation: the prompt's attention once (after the first step has evaluated it), then the
// query row each step carries. Rows are forwarded as the library gives them (protocol.mjs).
// -------------------------------------------------------------------------------------------

/** [{ id, text, label }] of `ids`: each id's text from the library in one pass. */
function tokensOf(ids) {
  const texts = model.info.hasTokenizer ? model.pieces(ids) : ids.map(() => '');
  return ids.map((t, i) => ({ id: t, text: texts[i], label: label(t, texts[i]) }));
}

/**
 * A short name for an id, for axis labels: its text; for what adds no text (a control token,
 * the byte of a character the next token completes) the vocabulary's spelling ('<|im_start|>',
 * '<0xE2>'); an id without either, ⟨id⟩.
 */
function label(id, text) {
  const { bosId, eosId, hasTokenizer } = model.info;
  if (id === eosId) return '<eos>'; // (GPT-2's one special token is both)
  if (id === bosId) return '<bos>';
  if (text) return text;
  return (hasTokenizer && model.spellings([id])[0]) || `⟨${id}⟩`;
}

/** Captured rows [from, to) of `kind` as one block (a copy the message can transfer), or null. */
const rows = (kind, to, from = 0) => (to > from ? model.attentionRows(kind, from, to).data : null);

/** How many of `ids` the page's `held` tokens begin with. */
function sharedPrefix(held, ids) {
  let n = 0;
  while (n < held.length && n < ids.length && held[n] === ids[n]) n++;
  return n;
}

/**
 * The 'start' message: the decoder's `ids` (the first step's query row is ids.length - 1) and the
 * rows before it, but for the self rows the page holds (`held`, its tokens): a row depends only
 * on the tokens up to its own, so those of a shared beginning are the page's already (if this
 * worker sent them: the page's word alone is not taken).
 */
function startMessage(id, ids, encdec, held, dropped = 0) {
  const query = ids.length - 1;
  const keep = encdec || !Array.isArray(held) ? 0 : Math.min(sharedPrefix(held, ids), sharedPrefix(sentIds, ids), query);
  sentIds = encdec ? [] : ids.slice(0, query);
  if (!encdec) {
    const self = rows('self', query, keep);
    return toPage.start(id, { tokens: tokensOf(ids), source: null, self, cross: null, encoder: null, keep, dropped });
  }
  const source = tokensOf(model.sourceIds);
  return toPage.start(id, { tokens: tokensOf(ids), source, self: rows('self', query), cross: rows('cross', query),
    encoder: rows('encoder', model.capturedRows('encoder')) });
}

/** `prompt`: text or ids, or { messages } for a chat turn (model.chat: its prompt ids come with the first step). */
async function generate({ id, prompt, options, held }) {
  if (!model) return fail(id, new Error('no model is loaded'));
  generation?.abort(stopped());
  const controller = new AbortController();
  generation = controller;
  const { architecture, addBos, bosId } = model.info;
  const encdec = architecture === 'encdec';
  const t0 = performance.now();
  let count = 0;
  let reason = null;
  const phases = []; // where the time to the first token went
  try {
    let decoderIds = null; // what the decoder evaluates first
    let steps;
    if (prompt?.messages) {
      steps = model.chat(prompt.messages, { ...options, signal: controller.signal, attention: true, jinja: await import(jinjaUrl) });
    } else {
      let input = prompt;
      const tokenizing = performance.now();
      if (!encdec && typeof prompt == 'string') input = model.tokenize(prompt, { bos: addBos });
      phases.push({ name: 'tokenize', start: epoch(tokenizing), end: epoch() });
      if (input.length === 0) throw new Error('the prompt is empty');
      decoderIds = encdec ? [bosId] : Array.from(input);
      steps = model.generate(input, { ...options, ...(encdec && { decoderStart: decoderIds }), signal: controller.signal,
        attention: true });
    }
    evaluated = decoderIds ? { ids: [...decoderIds], source: null } : null; // the source: the library's ids, after the first step
    const evaluating = performance.now();
    for await (const step of steps) {
      if (step.finishReason === 'aborted') {
        reason = STOPPED; // the step that says so carries no token
        break;
      }
      decoderIds ??= step.prompt.ids;
      evaluated ??= { ids: [...decoderIds], source: null }; // a chat's prompt: the ids its first step reports
      const { query } = step.attention;
      if (count === 0) {
        postMessage(toPage.phases(id, [...phases, { name: 'first-eval', start: epoch(evaluating), end: epoch() }]));
        if (encdec) evaluated.source = model.sourceIds;
        if (query !== decoderIds.length - 1) throw new Error(`the first step's query row is ${query}, not ${decoderIds.length - 1}`);
        const msg = startMessage(id, decoderIds, encdec, held, step.prompt?.dropped);
        postMessage(msg, transfers(msg));
      }
      count++;
      if (!encdec && step.attention) sentIds.push(evaluated.ids[query]); // row `query` goes with this token
      if (!step.finishReason) evaluated.ids.push(step.id); // the next step evaluates it
      reason = step.finishReason;
      const token = { id: step.id, text: step.text, label: label(step.id, step.text) };
      const msg = toPage.token(id, { token, query, self: step.attention.data, cross: step.cross?.data ?? null,
        ms: performance.now() - t0 });
      postMessage(msg, transfers(msg));
    }
    // (maxTokens 0 has no steps: it ended at its maximum, as complete() says)
    postMessage(toPage.done(id, { reason: reason ?? 'maxTokens', count, ms: performance.now() - t0 }));
  } catch (e) {
    if (controller.signal.aborted) postMessage(toPage.done(id, { reason: STOPPED, count, ms: performance.now() - t0 }));
    else fail(id, e);
  } finally {
    if (generation === controller) generation = null;
  }
}
