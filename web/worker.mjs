// The demo's module worker: it owns the model, so the page stays responsive while weights load
// and tokens decode. The messages it takes and sends are defined in protocol.mjs.
import { openModel } from './model-cache.mjs';
import { STOPPED, TO_WORKER, toPage, transfers } from './protocol.mjs';

// Under the service worker shim the library is imported through its mount inside the shim's
// scope (coi-serviceworker.js explains why); otherwise from where it lies.
// (Not awaited at the top: messages that arrive before onmessage is set would be lost.)
const library = new URL(import.meta.url).searchParams.has('shim')
  ? import('./__root__/src/js/index.mjs')
  : import('../src/js/index.mjs');
library.catch(() => {}); // reported by the load that awaits it

let model = null;
let loading = null; // AbortController of the running load
let generation = null; // AbortController of the running generation

const stopped = () => new DOMException('stopped', 'AbortError');

onmessage = ({ data }) => {
  if (data.type === TO_WORKER.LOAD) load(data);
  else if (data.type === TO_WORKER.GENERATE) generate(data);
  else if (data.type === TO_WORKER.STOP) generation?.abort(stopped());
};

const fail = (id, e) => postMessage(toPage.error(id, e));

// -------------------------------------------------------------------------------------------
// Loading
// -------------------------------------------------------------------------------------------

async function load({ id, url, file, threads }) {
  loading?.abort(stopped());
  generation?.abort(stopped());
  model?.dispose();
  model = null;
  const controller = new AbortController();
  loading = controller;
  const { signal } = controller;
  const t0 = performance.now();
  let opened = null;
  try {
    let source;
    let from = 'file';
    if (file) source = file;
    else {
      opened = await openModel(url, { signal });
      source = opened.body;
      from = opened.from;
      opened.stored.then((note) => postMessage(toPage.cache(id, note)));
    }
    const onProgress = ({ loaded, total }) => postMessage(toPage.progress(id, { phase: from, loaded, total }));
    const options = { onProgress, signal };
    if (threads) options.threads = threads;
    const { loadModel } = await library;
    const loaded = await loadModel(source, options);
    if (loading !== controller) {
      loaded.dispose(); // a newer load started meanwhile
      return;
    }
    model = loaded;
    const { tensors, metadata, ...info } = model.info;
    postMessage(toPage.loaded(id, { info, name: metadata['general.name'] ?? '', runtime: { ...model.runtime }, from,
      bytes: file?.size ?? opened?.size ?? null, ms: performance.now() - t0 }));
  } catch (e) {
    if (e?.name === 'SaccadeError' && e.code === 'SAC_ERR_FORMAT') opened?.forget();
    if (loading === controller) fail(id, e);
  } finally {
    if (loading === controller) loading = null;
  }
}

// -------------------------------------------------------------------------------------------
// Generation: the prompt's attention once (after the first step has evaluated it), then one
// query row per token. Rows travel as { query, self, cross }: self holds layers × heads ×
// (query + 1) floats, cross layers × heads × nSource (encoder–decoder models).
// -------------------------------------------------------------------------------------------

/** The text each id adds: the difference of detokenized prefixes (keeps SentencePiece spaces). */
function pieces(ids) {
  if (!model.info.hasTokenizer) return ids.map(() => '');
  const out = [];
  let before = '';
  for (let i = 0; i < ids.length; i++) {
    const text = model.detokenize(ids.slice(0, i + 1)).replace(/\uFFFD$/, ''); // a character still incomplete
    out.push(text.startsWith(before) ? text.slice(before.length) : model.detokenize([ids[i]]));
    before = text;
  }
  return out;
}

/** A short name for an id, for axis labels: its text, or the special token's name. */
function label(id, text) {
  const { bosId, eosId, hasTokenizer } = model.info;
  if (id === eosId) return '<eos>'; // (GPT-2's one special token is both)
  if (id === bosId) return '<bos>';
  if (text) return text;
  return hasTokenizer ? model.detokenize([id]) || `⟨${id}⟩` : `⟨${id}⟩`;
}

const rowOf = (a) => (a instanceof Float32Array ? a : a?.data ?? null);

/**
 * Rows 0..n-1 of one kind, read from the full matrices, packed row after row: row q holds
 * layers × heads × keys(q) floats (layer-major), keys(q) = q + 1 for 'self', nSource for 'cross'.
 */
function packRows(kind, n) {
  const { layers, heads } = model.info;
  if (n === 0) return null;
  const mats = [];
  for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) mats.push(model.attention(l, h, { kind }));
  const keysOf = (q) => (kind === 'self' ? q + 1 : mats[0].keys);
  let total = 0;
  for (let q = 0; q < n; q++) total += layers * heads * keysOf(q);
  const out = new Float32Array(total);
  let at = 0;
  for (let q = 0; q < n; q++) {
    const k = keysOf(q);
    for (const m of mats) {
      out.set(m.data.subarray(q * m.keys, q * m.keys + k), at);
      at += k;
    }
  }
  return out;
}

/** The encoder's self-attention, every layer and head: encoderLayers × heads × S × S floats. */
function encoderMaps(S) {
  const { encoderLayers, heads } = model.info;
  const out = new Float32Array(encoderLayers * heads * S * S);
  for (let l = 0; l < encoderLayers; l++)
    for (let h = 0; h < heads; h++) out.set(model.attention(l, h, { kind: 'encoder' }).data, (l * heads + h) * S * S);
  return out;
}

async function generate({ id, prompt, options }) {
  if (!model) return fail(id, new Error('no model is loaded'));
  generation?.abort(stopped());
  const controller = new AbortController();
  generation = controller;
  const { layers, heads, architecture, addBos, eosId, bosId } = model.info;
  const encdec = architecture === 'encdec';
  const t0 = performance.now();
  let count = 0;
  let lastId = -1;
  try {
    if (encdec && !('sourceIds' in model))
      throw new Error('this version of the saccade library cannot generate with encoder–decoder models yet');
    let input = prompt;
    if (!encdec && typeof prompt == 'string') input = model.tokenize(prompt, { bos: addBos });
    if (input.length === 0) throw new Error('the prompt is empty');
    const steps = model.generate(input, { ...options, signal: controller.signal, attention: true });
    for await (const step of steps) {
      const self = rowOf(step.attention);
      const cross = rowOf(step.cross);
      const query = self.length / (layers * heads) - 1;
      if (count === 0) {
        // The prompt is evaluated now: send its tokens and the rows before this step's query.
        const ids = encdec ? (query === 0 ? [bosId] : null) : input;
        if (!ids || ids.length !== query + 1) throw new Error(`unexpected first query row ${query}`);
        const texts = pieces(ids);
        const tokens = ids.map((t, i) => ({ id: t, text: texts[i], label: label(t, texts[i]) }));
        let source = null;
        if (encdec) {
          const sourceIds = Array.from(model.sourceIds);
          const sourceTexts = pieces(sourceIds);
          source = sourceIds.map((t, i) => ({ id: t, text: sourceTexts[i], label: label(t, sourceTexts[i]) }));
        }
        const msg = toPage.start(id, { tokens, source, self: packRows('self', query),
          cross: encdec ? packRows('cross', query) : null, encoder: encdec ? encoderMaps(source.length) : null });
        postMessage(msg, transfers(msg));
      }
      count++;
      lastId = step.id;
      const token = { id: step.id, text: step.text, label: label(step.id, step.text) };
      const msg = toPage.token(id, { token, query, self, cross, ms: performance.now() - t0 });
      postMessage(msg, transfers(msg));
    }
    const reason = lastId === eosId && !options.ignoreEos ? 'end of sequence'
      : count >= (options.maxTokens ?? 64) ? 'max tokens' : options.stop ? 'stop sequence or full context' : 'context full';
    postMessage(toPage.done(id, { reason, count, ms: performance.now() - t0 }));
  } catch (e) {
    if (controller.signal.aborted) postMessage(toPage.done(id, { reason: STOPPED, count, ms: performance.now() - t0 }));
    else fail(id, e);
  } finally {
    if (generation === controller) generation = null;
  }
}
