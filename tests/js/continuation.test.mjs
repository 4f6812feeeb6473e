// Generated text continues the prompt: prompt + text is the detokenized prompt and generated ids
// together, on every surface. With a SentencePiece (llama) vocabulary the first generated token's
// leading space is part of the continuation, not the start of a new text (stories260K, greedy:
// "Once upon a time," is followed by " there was ...").
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { root } from './helpers.mjs';

const stories = path.join(root, '../shared/data/models/stories260K.gguf');
const skip = existsSync(stories) ? false : `${stories} is absent (../shared)`;
const prompt = 'Once upon a time,';

test('generate, complete and both CLIs keep the first generated token\'s leading space', { skip }, async () => {
  const model = await loadModel(stories, { threads: 1 });
  try {
    const opts = { maxTokens: 8, temperature: 0 };
    let text = '';
    const ids = [];
    for await (const step of model.generate(prompt, opts)) {
      text += step.text;
      if (step.id !== null) ids.push(step.id);
    }
    const promptIds = model.tokenize(prompt, { bos: true });
    assert.ok(text.startsWith(' there'), JSON.stringify(text));
    assert.equal(prompt + text, model.detokenize([...promptIds, ...ids]));
    assert.equal((await model.complete(prompt, opts)).text, text);
    const args = ['generate', stories, '--prompt', prompt, '-n', '8', '--temp', '0', '--threads', '1'];
    const node = JSON.parse(execFileSync(process.execPath, [path.join(root, 'src/js/cli.mjs'), ...args], { encoding: 'utf8' }));
    const native = JSON.parse(execFileSync(path.join(root, 'build/saccade'), args, { encoding: 'utf8' }));
    assert.equal(node.text, text);
    assert.equal(native.text, text);
  } finally {
    model.dispose();
  }
});
