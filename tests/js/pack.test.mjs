// The package as users get it: `npm pack`, install the tarball into a fresh project, import
// 'saccade' and generate, run `npx saccade`, and type-check against the declarations.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { fixture, nativeText, root } from './helpers.mjs';

const exec = promisify(execFile);
const npm = (args, cwd) => exec('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd });

let dir;
let pack;
before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'saccade-pack-'));
  const { stdout } = await npm(['pack', '--json', '--pack-destination', dir], root);
  pack = JSON.parse(stdout.slice(stdout.indexOf('[')))[0];
  const project = path.join(dir, 'project');
  writeFileSync(path.join(dir, 'package.json'), '{}'); // keep npm from walking up to the repo
  await exec('mkdir', ['-p', project]);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await npm(['install', '--offline', path.join(dir, pack.filename)], project);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('the tarball holds the library, the declarations, the CLI, the wasm builds (SIMD128 and relaxed SIMD), the embed and the shipped models, and no tests', () => {
  const files = pack.files.map((f) => f.path).sort();
  for (const f of ['package.json', 'LICENSE', 'README.md', 'CHANGELOG.md', 'src/js/index.mjs', 'src/js/index.d.ts',
    'src/js/cli.mjs', 'dist/package.json', 'dist/saccade-mt.mjs', 'dist/saccade-mt.wasm', 'dist/saccade-mt.worker.js', 'dist/saccade-mt.worker.mjs',
    'dist/saccade-st.mjs', 'dist/saccade-st.wasm', 'dist/saccade-layout.mjs', 'src/js/model.mjs', 'src/js/load.mjs',
    'dist/saccade-relaxed-mt.mjs', 'dist/saccade-relaxed-mt.wasm', 'dist/saccade-relaxed-mt.worker.js',
    'dist/saccade-relaxed-mt.worker.mjs', 'dist/saccade-relaxed-st.mjs', 'dist/saccade-relaxed-st.wasm',
    'web/embed.mjs', 'web/worker.mjs', 'web/client.mjs', 'web/views/heatmap.mjs', 'models/shakespeare-char-q8_0.gguf',
    'models/dates-q8_0.gguf', 'models/README.md', 'docs/performance.md'])
    assert.ok(files.includes(f), `${f} is missing from ${files.join(', ')}`);
  assert.ok(!files.some((f) => f.startsWith('tests/') || f.startsWith('scripts/') || f.endsWith('.c') ||
    f.startsWith('build/') || f === 'web/index.html' || f === 'web/serve.mjs'), files.join(', '));
});

test('the package declares its licence and its entry points, and no file in it has a top-level await', async () => {
  const meta = JSON.parse(readFileSync(path.join(dir, 'project/node_modules/saccade/package.json'), 'utf8'));
  assert.equal(meta.license, 'MIT');
  assert.equal(meta.exports['./embed'], './web/embed.mjs');
  // a module with a top-level await cannot be require()d, and some bundlers' outputs cannot hold one
  const ts = (await import('typescript')).default;
  const installed = path.join(dir, 'project/node_modules/saccade');
  const found = [];
  for (const f of pack.files.map((f) => f.path).filter((f) => /\.(mjs|js)$/.test(f))) {
    const source = ts.createSourceFile(f, readFileSync(path.join(installed, f), 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isFunctionLike(node)) return; // an await inside a function is not at the top level
      if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier))
        found.push(`${f}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  assert.deepEqual(found, []);
});

test("import { loadModel } from 'saccade' and generate, in both variants", async () => {
  const project = path.join(dir, 'project');
  writeFileSync(path.join(project, 'run.mjs'), `
    import { loadModel } from 'saccade';
    const out = [];
    for (const threads of [1, 2]) {
      const model = await loadModel(${JSON.stringify(fixture('gpt2-q8_0'))}, { threads });
      const ids = [];
      for await (const { id } of model.generate([1, 2, 3], { maxTokens: 8, temperature: 0, ignoreEos: true })) ids.push(id);
      out.push({ variant: model.runtime.variant, ids });
      model.dispose();
    }
    console.log(JSON.stringify(out));`);
  const { stdout } = await exec(process.execPath, ['run.mjs'], { cwd: project, timeout: 60_000 });
  const [st, mt] = JSON.parse(stdout);
  const ref = JSON.parse(nativeText('generate', fixture('gpt2-q8_0'), '--tokens', '1,2,3', '-n', 8, '--temp', 0, '--ignore-eos'));
  assert.deepEqual(st, { variant: 'st', ids: ref.tokens });
  assert.deepEqual(mt, { variant: 'mt', ids: ref.tokens });
});

test("require('saccade') works from CommonJS (no top-level await in the package)", async () => {
  const project = path.join(dir, 'project');
  writeFileSync(path.join(project, 'run.cjs'), `
    const { loadModel, configure } = require('saccade');
    (async () => {
      const model = await loadModel(${JSON.stringify(fixture('gpt2-q8_0'))}, { threads: 2 });
      const ids = [];
      for await (const { id } of model.generate([1, 2, 3], { maxTokens: 4, temperature: 0, ignoreEos: true })) ids.push(id);
      console.log(JSON.stringify({ variant: model.runtime.variant, ids, configure: typeof configure }));
      model.dispose();
    })();`);
  const { stdout } = await exec(process.execPath, ['run.cjs'], { cwd: project, timeout: 60_000 });
  const ref = JSON.parse(nativeText('generate', fixture('gpt2-q8_0'), '--tokens', '1,2,3', '-n', 4, '--temp', 0, '--ignore-eos'));
  assert.deepEqual(JSON.parse(stdout), { variant: 'mt', ids: ref.tokens, configure: 'function' });
});

test('npx saccade info prints what the native CLI prints', async () => {
  const project = path.join(dir, 'project');
  const { stdout } = await exec('npx', ['--no', 'saccade', 'info', fixture('llama-q4_0')], { cwd: project });
  assert.equal(stdout, nativeText('info', fixture('llama-q4_0')));
});

test('the declarations type-check a strict TypeScript consumer', async () => {
  const project = path.join(dir, 'project');
  writeFileSync(path.join(project, 'use.ts'), `
    import { clearCachedModels, DEFAULT_CACHE, listCachedModels, loadModel, SaccadeError, type GenerateStep, type Model } from 'saccade';
    const model: Model = await loadModel(new URL('file:///m.gguf'), { threads: 2, onProgress: ({ loaded, total }) => {
      const fraction: number | null = total === null ? null : loaded / total;
      void fraction;
    } });
    const info: string = model.info.architecture + model.runtime.variant;
    const logits: Float32Array = model.forward([1, 2], { allLogits: true });
    for await (const step of model.generate('hi', { maxTokens: 4, seed: 1n, stop: ['\\n', 2] })) {
      const s: GenerateStep = step;
      const row: Float32Array | undefined = s.attention?.data;
      void row;
    }
    for await (const step of model.generate('hi', { maxTokens: 4 })) {
      // the aborted step has no token: narrowing by finishReason
      const id: number | null = step.id;
      if (step.finishReason !== 'aborted') {
        const tokenId: number = step.id;
        void tokenId;
      }
      void id;
    }
    const done = await model.complete('hi', { stop: ['\\n'] });
    const why: 'eos' | 'stop' | 'contextFull' | 'maxTokens' | 'aborted' = done.finishReason;
    const ms: number = done.timings.promptMs + done.timings.generateMs + done.timings.totalMs + done.tokens.length;
    const stopped: boolean = model.stop();
    const from: 'cache' | 'network' | 'file' | 'memory' = model.sourceInfo.from;
    const status: string = model.sourceInfo.cache.status;
    void [why, ms, stopped, from, status, done.text];
    const split = await loadModel(['a-00001-of-00002.gguf', new Uint8Array(1)], { cache: 'mine', onProgress: (p) => void p.shard });
    split[Symbol.dispose]();
    const cached: { url: string; bytes: number; stored: Date | null }[] = await listCachedModels({ cache: DEFAULT_CACHE });
    const cleared: number = await clearCachedModels(cached.map((c) => c.url), { cache: 'mine' }) + await clearCachedModels();
    void cleared;
    const a = model.attention(0, 0);
    const n: number = a.queries * a.keys + a.data.length + logits.length + info.length;
    try { model.dispose(); } catch (e) { if (e instanceof SaccadeError) console.log(e.code, n); }
    // @ts-expect-error: temperature is a number
    model.generate([1], { temperature: 'hot' });
    // @ts-expect-error: stop() takes no reason
    model.stop(new Error('x'));
  `);
  writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022',
      lib: ['es2022', 'dom', 'dom.iterable', 'dom.asynciterable'], types: [] },
    files: ['use.ts'],
  }));
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  await exec(process.execPath, [tsc, '-p', project]).catch((e) => assert.fail(e.stdout + e.stderr));
});
