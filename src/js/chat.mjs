// Chat: a conversation rendered with the model's chat template (tokenizer.chat_template, Jinja)
// by @huggingface/jinja, as transformers.js renders it, then generated like any prompt.
//
// - The template gets messages, add_generation_prompt, bos_token and eos_token (the tokens'
//   spellings) and options.templateArgs; raise_exception(message) refuses the
//   conversation with a SaccadeError that quotes the template's message.
// - The rendered text is tokenized with its special tokens parsed ("<|im_start|>" is one id),
//   and BOS is added when the model asks for it unless the text already starts with it
//   (templates that write bos_token themselves), as llama.cpp does: never two BOS.
// - The reply stops at any end-of-generation token of the vocabulary (EOS, <|im_end|>,
//   <|eot_id|>, <end_of_turn>, ...: sac_token_eog), with finishReason 'eos'.
// - A conversation longer than the context loses its oldest exchanges (dropOldest, on by
//   default): see fitConversation.
// - A file without a template gets the contents joined by newlines, and says so.
// @huggingface/jinja is imported only when a template is rendered, so the library loads
// without it (a browser without a bundler or import map, or a worker, which import maps do
// not reach, passes the module as options.jinja).
import { disposedError, fail, SaccadeError } from './errors.mjs';
import { abortedStep, GENERATE_OPTIONS, generateOptions } from './generate.mjs';
import { constants } from './layout.mjs';
import { bool, optionsOf } from './options.mjs';

const CHAT_ONLY = ['addGenerationPrompt', 'template', 'templateArgs', 'jinja', 'dropOldest'];

export const NO_TEMPLATE_NOTE = 'the model has no chat template (tokenizer.chat_template): the turns are plain text, one per line';

/** What the CLIs say when a turn left messages out (the native CLI's words are the same). */
export const droppedNote = (dropped, nCtx) =>
  `the conversation outgrew the context (${nCtx} tokens): its ${dropped === 1 ? 'oldest message is' : `${dropped} oldest messages are`} left out`;

let jinjaImport = null; // the import of @huggingface/jinja, once it succeeded or is under way

function importJinja() {
  jinjaImport ??= import('@huggingface/jinja').catch((e) => {
    jinjaImport = null;
    throw new SaccadeError(`chat templates need @huggingface/jinja, which could not be imported (${e.message}): ` +
      'install it, let a bundler resolve it, map it in an import map, or pass the module as options.jinja ' +
      '(e.g. { jinja: await import("/node_modules/@huggingface/jinja/dist/index.js") })', 'SAC_ERR_STATE');
  });
  return jinjaImport;
}

/** Thrown by the template's raise_exception(), to tell a refusal from a template that is broken. */
class Refusal extends Error {}

/** Every end-of-generation token id (sac_token_eog). */
export function endOfGeneration(engine) {
  const { M, heap, scratch: s } = engine;
  const status = M._sac_token_eog(engine.model, 0, 0, s); // SAC_ERR_ARG: the count is in *s
  if (status !== constants.SAC_ERR_ARG) engine.check(status, 'model');
  const n = heap.i32(s);
  if (n === 0) return [];
  const out = heap.malloc(4 * n);
  try {
    engine.check(M._sac_token_eog(engine.model, out, n, s), 'model');
    return Array.from(new Int32Array(heap.buffer, out, n));
  } finally {
    heap.free(out);
  }
}

function checkMessages(messages) {
  if (!Array.isArray(messages)) fail(`messages must be an array of { role, content }, got ${typeof messages}`);
  if (messages.length === 0) fail('the conversation is empty: give at least one message');
  return messages.map((m, i) => {
    if (m === null || typeof m != 'object') fail(`messages[${i}] must be an object { role, content }`);
    if (typeof m.role != 'string' || m.role === '') fail(`messages[${i}].role must be a non-empty string`);
    if (typeof m.content != 'string') fail(`messages[${i}].content must be a string, got ${typeof m.content}`);
    return { ...m };
  });
}

/** Values every range() of one rendering may give together: chat templates count messages. */
export const RANGE_BUDGET = 100_000;

/**
 * The library's range(), within RANGE_BUDGET values per rendering. A file's template runs here:
 * `range(2000000000)` built an array V8 cannot hold (a fatal error that ends the process, not
 * an exception), and nested ranges ran for hours.
 */
function boundedRange() {
  let left = RANGE_BUDGET;
  return (start, stop, step = 1) => { // the library's loop, counted
    if (stop === undefined) [start, stop] = [0, start];
    if (step === 0) throw new Error('range() step must not be zero');
    const values = [];
    for (let i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (--left < 0) throw new Error(`its range() calls give more than ${RANGE_BUDGET} values`);
      values.push(i);
    }
    return values;
  };
}

/**
 * Template.render with our raise_exception and range in place of the library's (its
 * raise_exception throws a plain Error that cannot be told from a broken template's).
 * render() declares its globals, then our variables, and refuses to declare a name twice: for
 * this one synchronous call, a declaration of either replaces the global instead.
 */
function renderWith(jinja, compiled, vars) {
  const proto = jinja.Environment?.prototype;
  const set = proto?.set;
  if (typeof set != 'function') return compiled.render(vars);
  proto.set = function (name, value) {
    if (name === 'raise_exception' || name === 'range') this.variables?.delete(name);
    return set.call(this, name, value);
  };
  try {
    return compiled.render(vars);
  } finally {
    proto.set = set;
  }
}

/** The prompt text: the template rendered, or (no template, or an empty one, as in C) the contents one per line. */
async function render(model, engine, messages, o) {
  const template = o.template ?? model.info.metadata['tokenizer.chat_template'];
  if (!template) return { text: messages.map((m) => m.content).join('\n'), template: false };
  const jinja = o.jinja ?? await importJinja();
  if (model.disposed) throw disposedError(); // (while the import was awaited)
  if (typeof jinja?.Template != 'function') fail('options.jinja must be the @huggingface/jinja module (it has no Template class)');
  const where = o.template === undefined ? 'the model\'s chat template' : 'options.template';
  const code = o.template === undefined ? 'SAC_ERR_MODEL' : 'SAC_ERR_ARG';
  let compiled;
  try {
    compiled = new jinja.Template(template);
  } catch (e) {
    fail(`${where} could not be parsed: ${e.message}`, code);
  }
  const { bosId, eosId } = model.info;
  const spelled = (id) => (id < 0 ? '' : engine.spelling(id)); // ('' when the vocabulary has no such token)
  const vars = {
    bos_token: spelled(bosId), eos_token: spelled(eosId),
    ...o.templateArgs,
    messages, add_generation_prompt: o.addGenerationPrompt,
    range: boundedRange(),
    raise_exception: (message) => {
      throw new Refusal(String(message));
    },
  };
  try {
    const text = renderWith(jinja, compiled, vars);
    return { text: String(text), template: true };
  } catch (e) {
    if (e instanceof Refusal) fail(`the chat template refused the conversation: ${e.message}`);
    fail(`${where} failed to render: ${e.message}`, code);
  }
}

/** Prompt ids: special tokens parsed, BOS added only when the model asks and the text lacks it. */
function promptIds(model, text) {
  const ids = model.tokenize(text, { special: true });
  const { addBos, bosId } = model.info;
  if (addBos && bosId >= 0 && ids[0] !== bosId) ids.unshift(bosId);
  return ids;
}

/**
 * The conversation as the model will read it: all of it while its prompt leaves the reply room
 * (min(maxTokens, half the context)); else without its oldest exchanges — a user message and
 * what follows it up to the next one, after the leading system messages — as few as bring the
 * prompt down to half the context, so that the next turns, sent without them, keep the rest
 * (prompt reuse) until the context fills again. The last user message's exchange always stays;
 * when it and the system messages alone are too long, generate refuses the prompt as it would.
 * Returns { text, ids, template, messages, dropped }.
 */
async function fitConversation(model, engine, turns, o, maxTokens) {
  const read = async (kept) => {
    const { text, template } = await render(model, engine, kept, o);
    return { text, ids: promptIds(model, text), template, messages: kept };
  };
  const all = await read(turns);
  const nCtx = model.runtime.contextLength; // (not the engine's: the model may be disposed by now)
  const half = Math.floor(nCtx / 2);
  const room = Math.min(maxTokens, half);
  if (all.ids.length + room <= nCtx) return { ...all, dropped: 0 };
  if (!o.dropOldest)
    fail(`the conversation takes ${all.ids.length} of the context's ${nCtx} tokens, leaving the reply fewer than ` +
      `min(maxTokens, half the context) = ${room}, and dropOldest is false: none of it is left out`);
  let head = 0;
  while (head < turns.length && turns[head].role === 'system') head++;
  const starts = []; // where each exchange after the leading system messages begins
  for (let i = head; i < turns.length; i++) if (turns[i].role === 'user') starts.push(i);
  if (starts.length < 2) return { ...all, dropped: 0 }; // the last exchange stays
  const without = (j) => read([...turns.slice(0, head), ...turns.slice(starts[j])]); // exchanges 0..j-1 left out
  // the fewest exchanges to leave out (1 .. last) that bring the prompt to half the context, or
  // (none does) all that may go: the prompt shortens as exchanges go, so a binary search finds it
  const last = starts.length - 1;
  let lo = 1;
  let hi = last;
  let best = null;
  while (lo <= hi) {
    const j = (lo + hi) >> 1;
    const candidate = await without(j);
    if (candidate.ids.length <= half || j === last) {
      best = { ...candidate, dropped: starts[j] - head };
      hi = j - 1;
    } else lo = j + 1;
  }
  return best;
}

/**
 * model.chat(messages, options): the steps of generate for the conversation's next turn. The
 * first step also carries `prompt: { text, ids, template, messages, dropped }` (template false:
 * no template, the turns were joined as plain text; messages: the ones the model read, dropped:
 * how many it did not, see fitConversation).
 */
export function chat(model, engine, messages, options, claim) {
  // chat is for decoder-only models: decoderStart is not one of its options, but gets its reason
  if (options?.decoderStart !== undefined) fail('decoderStart is for encoder–decoder models; chat is for decoder-only ones');
  const all = optionsOf(options, [...GENERATE_OPTIONS.filter((k) => k !== 'decoderStart'), ...CHAT_ONLY], 'chat');
  const o = {};
  const gen = {};
  for (const [k, v] of Object.entries(all)) (CHAT_ONLY.includes(k) ? o : gen)[k] = v;
  if (!model.info.hasTokenizer) fail('chat needs a tokenizer; the file has no tokenizer.ggml.* metadata', 'SAC_ERR_STATE');
  if (model.info.architecture === 'encdec') fail('chat needs a decoder-only model; this model is encdec');
  o.addGenerationPrompt = o.addGenerationPrompt === undefined ? true : bool('addGenerationPrompt', o.addGenerationPrompt);
  if (o.template !== undefined && typeof o.template != 'string') fail(`template must be a string, got ${typeof o.template}`);
  if (o.templateArgs !== undefined && (o.templateArgs === null || typeof o.templateArgs != 'object'))
    fail('templateArgs must be an object of extra template variables');
  o.dropOldest = o.dropOldest === undefined ? true : bool('dropOldest', o.dropOldest);
  const turns = checkMessages(messages);
  const checked = generateOptions(model.samplingDefaults, gen, 'chat', model.info.vocabSize); // bad options throw here, at the call
  // (the first step carries the prompt: with none there would be nothing to say what was read)
  if (checked.maxTokens === 0) fail('chat needs maxTokens of at least 1: a turn with no reply');
  const eog = checked.ignoreEos ? [] : endOfGeneration(engine);
  const userStops = gen.stop === undefined ? [] : Array.isArray(gen.stop) ? gen.stop : [gen.stop];
  // the seed drawn for an unseeded call, so that the check above and the run agree
  const run = { ...gen, seed: checked.seed, stop: [...userStops, ...eog] };
  const eogIds = new Set(eog.filter((id) => !userStops.includes(id)));
  // the call takes the context, as generate's does: rendering happens at the first step, and
  // a call made before it supersedes this chat (model.stop() aborts it)
  const hold = claim();
  return (async function* steps() {
    let prompt;
    let generation;
    try {
      hold.live();
      prompt = await fitConversation(model, engine, turns, o, checked.maxTokens);
      hold.live();
      if (!hold.aborted() && !checked.signal?.aborted) generation = model.generate(prompt.ids, run); // takes over from hold
    } finally {
      if (!generation) hold.end(); // refused, failed or aborted before it began: nothing is left running
    }
    if (!generation) {
      yield { ...abortedStep(''), prompt };
      return;
    }
    let first = true;
    for await (const step of generation) {
      const out = step.finishReason === 'stop' && eogIds.has(step.id) ? { ...step, finishReason: 'eos' } : step;
      if (first) out.prompt = prompt;
      first = false;
      yield out;
    }
  })();
}
