#!/usr/bin/env node
// Benchmark (not a test): what prompt reuse saves a conversation's next turn, in Node. A
// generation leaves its prompt and the tokens it evaluated in the context; the next one whose
// prompt starts with them keeps them (GenerateOptions.reuse). Each round completes a
// conversation of N prompt tokens (16 generated, greedy), then the next turn — that
// conversation, its reply and 24 new tokens — once with reuse and, after the first turn again,
// once without; it prints both turns' prompt times (timings.promptMs: the wait before the first
// token) and whether they generated the same tokens (they must: reuse changes no bit).
//
//   node scripts/bench-chat-reuse.mjs [MODEL.gguf] [--tokens 552,1000] [--threads 2] [--rounds 3]
//
// MODEL defaults to build/bench-models/gpt2-small-q8_0-tok.gguf (make bench-wasm writes it);
// the conversations are token ids, so any model with a large enough vocabulary and context will do.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { loadModel } from '../src/js/index.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tokens: { type: 'string', default: '552,1000' },
    threads: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
  },
});
const file = positionals[0] ?? path.join(root, 'build/bench-models/gpt2-small-q8_0-tok.gguf');
if (!existsSync(file)) {
  console.error(`${file} is missing: give a model, or run make bench-wasm once (it writes the bench models)`);
  process.exit(2);
}
const REPLY = 16, NEW = 24;
const model = await loadModel(file, { threads: Number(opts.threads) });
const { vocabSize } = model.info;
const greedy = { temperature: 0, ignoreEos: true, maxTokens: REPLY };
const ms = (x) => x.toFixed(1);

console.log(`${path.basename(file)}, ${model.runtime.threads} thread(s); prompt ms of the next turn, with reuse / evaluated fresh`);
for (const total of opts.tokens.split(',').map(Number)) {
  const n = total - REPLY - NEW; // the first turn's prompt: the next turn's is n + REPLY + NEW
  if (n < 1) throw new Error(`--tokens ${total} leaves no first turn (it must exceed ${REPLY + NEW})`);
  const first = Array.from({ length: n }, (_, i) => 100 + ((i * 37) % (vocabSize - 200)));
  for (let round = 1; round <= Number(opts.rounds); round++) {
    const a = await model.complete(first, greedy);
    const next = [...first, ...a.tokens, ...Array.from({ length: NEW }, (_, i) => 200 + i)];
    const kept = await model.complete(next, greedy);
    await model.complete(first, greedy);
    const fresh = await model.complete(next, { ...greedy, reuse: false });
    const same = kept.tokens.length === fresh.tokens.length && kept.tokens.every((id, i) => id === fresh.tokens[i]);
    console.log(`  ${next.length} tokens, round ${round}: ${ms(kept.timings.promptMs)} ms (evaluated ` +
      `${kept.timings.promptTokens}, kept ${kept.timings.reusedTokens}) / ${ms(fresh.timings.promptMs)} ms ` +
      `(evaluated ${fresh.timings.promptTokens}); same tokens: ${same}`);
    if (!same) process.exitCode = 1;
  }
}
model.dispose();
