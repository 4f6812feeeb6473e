// Memory stays bounded across models: load → generate (with attention) → dispose, many times,
// reporting the process's peak RSS (the kernel's high-water mark) and the RSS along the way.
// Slow (minutes), so not part of the test suite:
//
//   node scripts/memory-cycles.mjs [--variant mt|st] [--threads 2] [--cycles 1000] [--tokens 32]
//                                  [--model models/shakespeare-char-q8_0.gguf]
//
// Prints one JSON line: { variant, threads, cycles, tokens, peakRssMB, rssMB: [every 100 cycles] }.
import { parseArgs } from 'node:util';

import { loadModel } from '../src/js/index.mjs';

const { values: o } = parseArgs({
  options: {
    variant: { type: 'string', default: 'mt' },
    threads: { type: 'string', default: '2' },
    cycles: { type: 'string', default: '1000' },
    tokens: { type: 'string', default: '32' },
    model: { type: 'string', default: new URL('../models/shakespeare-char-q8_0.gguf', import.meta.url).pathname },
  },
});
const cycles = Number(o.cycles);
const tokens = Number(o.tokens);
const threads = o.variant === 'st' ? 1 : Number(o.threads);
const mb = (bytes) => Math.round(bytes / 2 ** 20);

const rssMB = [];
const t0 = performance.now();
for (let i = 1; i <= cycles; i++) {
  const model = await loadModel(o.model, { variant: o.variant, threads });
  let n = 0;
  for await (const step of model.generate('ROMEO:\n', { maxTokens: tokens, seed: i, attention: true, ignoreEos: true }))
    n += step.attention.data.length > 0;
  if (n !== tokens) throw new Error(`cycle ${i}: ${n} tokens`);
  model.dispose();
  if (i % 100 === 0) rssMB.push(mb(process.memoryUsage().rss));
}
console.log(JSON.stringify({
  variant: o.variant, threads, cycles, tokens, peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024), rssMB,
  seconds: Math.round((performance.now() - t0) / 1000),
}));
