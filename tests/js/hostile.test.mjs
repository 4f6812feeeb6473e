// The hostile-file differential test: every file of tests/hostile/corpus.mjs goes through the
// native CLI (build/saccade), the Node CLI on each wasm build (src/js/cli.mjs: 'st' by default,
// 'mt' with --threads 2) and the JS API on each build (tests/hostile/api-run.mjs), each in a
// process of its own with a timeout. On every surface, for every file:
//   - no crash: no signal, exit status 0 or 1; a CLI failure is one line "saccade: <message>"
//     on stderr (no stack trace), an API failure a SaccadeError (no RangeError, TypeError, ...);
//   - no hang: each process is killed after TIMEOUT_MS and that fails the test;
//   - no non-finite output: every JSON printed parses (C's "nan" does not), logits are finite,
//     and every captured attention row sums to 1;
// and the verdict the corpus asks for is the same everywhere:
//   { error: words }  every surface fails at load with the same message (byte for byte after
//                     the "saccade: " prefix), which contains every word (the key or tensor);
//   { ok: true }      every surface succeeds: `info` prints the same text on the three CLIs and
//                     the API's info agrees with it; `generate` (greedy) gives the same prompt
//                     tokens, tokens and text; `logits` agree to 1e-4 (wasm and native round
//                     differently);
//   { agree: true }   either of the two above, but the same on every surface.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { hostileCases } from '../hostile/corpus.mjs';
import { relativeError, root } from './helpers.mjs';

const TIMEOUT_MS = 120_000;
const dir = path.join(root, 'build/hostile');
const nativeCli = path.join(root, 'build/saccade');
const nodeCli = path.join(root, 'src/js/cli.mjs');
const apiRun = path.join(root, 'tests/hostile/api-run.mjs');

function run(cmd, args) {
  return new Promise((resolve) => {
    execFile(cmd, args.map(String), { timeout: TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 64 << 20 },
      (e, stdout, stderr) => resolve({ status: e ? e.code ?? null : 0, signal: e?.signal ?? null, killed: e?.killed, stdout, stderr }));
  });
}

const cliSurfaces = {
  native: (args) => run(nativeCli, args),
  'node-st': (args) => run(process.execPath, [nodeCli, ...args]),
  // info takes no --threads (it makes no context)
  'node-mt': (args) => run(process.execPath, [nodeCli, ...args, ...(args[0] === 'info' ? [] : ['--threads', 2])]),
};
const apiSurfaces = ['st', 'mt'];

/** A CLI result as { ok, out } or { ok: false, message }, after the crash/hang checks. */
function cliVerdict(where, r) {
  assert.ok(!r.killed, `${where}: timed out after ${TIMEOUT_MS} ms`);
  assert.equal(r.signal, null, `${where}: killed by ${r.signal}\n${r.stderr}`);
  assert.ok(r.status === 0 || r.status === 1, `${where}: exit status ${r.status}\n${r.stderr}`);
  if (r.status === 0) return { ok: true, out: r.stdout };
  assert.match(r.stderr, /^saccade: [^\n]+\n$/, `${where}: not a one-line message (a crash or an uncaught error?)`);
  return { ok: false, message: r.stderr.slice('saccade: '.length, -1) };
}

function apiVerdict(where, r) {
  assert.ok(!r.killed, `${where}: timed out after ${TIMEOUT_MS} ms`);
  assert.equal(r.signal, null, `${where}: killed by ${r.signal}\n${r.stderr}`);
  assert.equal(r.status, 0, `${where}: the process died (status ${r.status}) — a trap?\n${r.stderr}`);
  const out = JSON.parse(r.stdout);
  if (out.status === 'error') {
    assert.equal(out.name, 'SaccadeError', `${where}: ${out.name} at ${out.stage}: ${out.message}`);
    return { ok: false, stage: out.stage, message: out.message };
  }
  return { ok: true, out };
}

/** Every surface's verdicts on one file. */
async function verdicts(file) {
  const cli = {};
  for (const [name, runCli] of Object.entries(cliSurfaces)) {
    const info = cliVerdict(`${name} info`, await runCli(['info', file]));
    cli[name] = { info };
    if (!info.ok) continue;
    cli[name].generate = cliVerdict(`${name} generate`,
      await runCli(['generate', file, '--prompt', 'AB', '-n', 8, '--temp', 0, '--ignore-eos']));
    const source = JSON.parse(info.out).architecture === 'encdec' ? ['--source', '1,2,3'] : [];
    cli[name].logits = cliVerdict(`${name} logits`, await runCli(['logits', file, '--tokens', '1,2,3', ...source]));
  }
  const api = {};
  for (const variant of apiSurfaces)
    api[variant] = apiVerdict(`api-${variant}`, await run(process.execPath, [apiRun, file, variant]));
  return { cli, api };
}

function expectAllFail({ cli, api }, words) {
  const messages = new Map();
  for (const [name, v] of Object.entries(cli)) {
    assert.equal(v.info.ok, false, `${name}: loads, but the file must be refused`);
    messages.set(name, v.info.message);
  }
  for (const [variant, v] of Object.entries(api)) {
    assert.equal(v.ok, false, `api-${variant}: loads, but the file must be refused`);
    assert.equal(v.stage, 'load', `api-${variant}: fails at ${v.stage}, not at load: ${v.message}`);
    messages.set(`api-${variant}`, v.message);
  }
  const [first] = messages.values();
  for (const [name, m] of messages) {
    assert.equal(m, first, `${name} says something else than native:\n  ${m}\n  ${first}`);
    for (const w of words) assert.ok(m.includes(w), `${name}: '${m}' does not name '${w}'`);
  }
}

function expectAllSucceed({ cli, api }, { captureRefused = false } = {}) {
  const ref = cli.native;
  for (const [name, v] of Object.entries(cli)) {
    for (const cmd of ['info', 'generate', 'logits'])
      assert.ok(v[cmd]?.ok, `${name} ${cmd} fails: ${v[cmd]?.message}`);
    assert.equal(v.info.out, ref.info.out, `${name} info differs from native`);
    const strip = (s) => JSON.stringify({ ...JSON.parse(s), timings: undefined });
    assert.equal(strip(v.generate.out), strip(ref.generate.out), `${name} generate differs from native`);
    const logits = JSON.parse(v.logits.out).logits.flat();
    assert.ok(logits.every(Number.isFinite), `${name}: non-finite logits`);
    assert.ok(relativeError(logits, JSON.parse(ref.logits.out).logits.flat()) <= 1e-4, `${name} logits differ`);
  }
  const info = JSON.parse(ref.info.out);
  const gen = JSON.parse(ref.generate.out);
  const logits = JSON.parse(ref.logits.out).logits.flat();
  for (const [variant, v] of Object.entries(api)) {
    assert.ok(v.ok, `api-${variant} fails at ${v.stage}: ${v.message}`);
    const o = v.out;
    assert.deepEqual([o.info.architecture, o.info.name, o.info.vocabSize, o.info.contextLength, o.info.layers],
      [info.architecture, info.name, info.n_vocab, info.n_ctx, info.n_layer], `api-${variant} info differs`);
    assert.deepEqual(o.info.metadata, info.metadata, `api-${variant} metadata differs from native info`);
    assert.deepEqual(o.generate.prompt_tokens, gen.prompt_tokens, `api-${variant} prompt tokens differ`);
    assert.deepEqual(o.generate.tokens, gen.tokens, `api-${variant} tokens differ`);
    assert.equal(o.generate.text, gen.text ?? '', `api-${variant} text differs`);
    assert.ok(o.logitsFinite, `api-${variant}: non-finite logits`);
    assert.ok(relativeError(o.logits, logits) <= 1e-4, `api-${variant} logits differ`);
    if (captureRefused) {
      assert.match(o.attention.refused ?? '', /needs \d+ bytes .*shorter context/,
        `api-${variant}: a capture that cannot fit must be refused with its size and what to change`);
      continue;
    }
    assert.ok(o.attention.rows > 0 && o.attention.worstRowSumError < 1e-3,
      `api-${variant}: attention rows do not sum to 1 (worst error ${o.attention.worstRowSumError}${o.attention.refused ?? ''})`);
  }
}

const cases = hostileCases();
mkdirSync(dir, { recursive: true });

describe('hostile GGUF files: the same verdict on every surface', { concurrency: 2 }, () => {
  for (const c of cases) {
    test(`${c.name}: ${c.note}`, async () => {
      const file = path.join(dir, `${c.name}.gguf`);
      writeFileSync(file, c.bytes);
      const v = await verdicts(file);
      if (c.expect.error) expectAllFail(v, c.expect.error);
      else if (c.expect.ok) expectAllSucceed(v, c.expect);
      else if (v.cli.native.info.ok) expectAllSucceed(v);
      else expectAllFail(v, []);
    });
  }
});
