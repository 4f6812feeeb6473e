// The model picker's real models (web/config.mjs's REAL_MODELS, web/model-picker.mjs): the list
// itself, the memory check made before a download, and the download meter; then the page in
// Chromium with every Hugging Face address answered by Playwright from random-weight stand-ins of
// the listed architectures that the test writes (nothing is fetched from outside): a real model
// loads with bytes, speed and time left shown, and a model that cannot fit is refused with its
// reason before any request for its file is made.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { buildInMemory } from '../../scripts/bundle-web.mjs';
import { checkFileSize } from '../../src/js/budget.mjs';
import { REAL_MODELS } from '../../web/config.mjs';
import {
  DownloadMeter, SILENT_MS, announcedSize, formatBytes, memoryRefusal, rateText, refusalBeforeDownload, silenceText,
} from '../../web/model-picker.mjs';
import { withCharTokenizer } from '../js/gguf.mjs';
import { frames, root, useBrowser, watchErrors } from './helpers.mjs';

const GB = 2 ** 30;
const HF = 'https://huggingface.co/';

// ---------------------------------------------------------------------------------------------
// The list and the checks, in Node
// ---------------------------------------------------------------------------------------------

describe('the real models list', () => {
  test('every entry is a public Hugging Face file of an architecture saccade loads, with its published size', () => {
    assert.ok(Object.keys(REAL_MODELS).length >= 3);
    for (const [key, m] of Object.entries(REAL_MODELS)) {
      assert.match(m.url, /^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+-GGUF\/resolve\/main\/[\w.-]+\.gguf$/, key);
      assert.ok(Number.isSafeInteger(m.bytes) && m.bytes > 1e6, key);
      assert.ok(['llama', 'qwen2', 'gemma', 'phi3', 'gpt2'].includes(m.architecture), key);
      assert.ok(m.label && m.quant && m.prompt, key);
      // each fits the library's budget and a device that reports 8 GB (Chrome's cap)
      assert.equal(memoryRefusal(m.bytes, 8), null, key);
    }
    assert.equal(REAL_MODELS['qwen2.5-0.5b'].bytes, 491_400_032);
    assert.equal(formatBytes(REAL_MODELS['qwen2.5-0.5b'].bytes), '468.6 MB');
  });

  test('a file above one WebAssembly allocation is refused with the message loadModel gives', () => {
    const bytes = 3 * GB;
    const expected = (() => { try { checkFileSize(bytes); } catch (e) { return e.message; } })();
    assert.match(expected, /more than the 2047\.9 MB one WebAssembly allocation can hold/);
    assert.equal(memoryRefusal(bytes, undefined), expected);
    assert.equal(memoryRefusal(bytes, 8), expected);
  });

  test('navigator.deviceMemory: the download and its wasm copy must fit half the device', () => {
    const qwen = REAL_MODELS['qwen2.5-0.5b'].bytes; // twice: 937 MB
    assert.match(memoryRefusal(qwen, 1), /937\.3 MB, more than half of the 1 GB this device reports \(navigator\.deviceMemory\)/);
    assert.equal(memoryRefusal(qwen, 2), null);
    assert.equal(memoryRefusal(qwen, undefined), null); // browsers that do not say: the library's limits only
  });

  test('a URL is sized by a HEAD request; no size, no refusal (the library checks the download)', async () => {
    const calls = [];
    const fake = (length, { ok = true, fails = false } = {}) => async (url, init) => {
      calls.push(init?.method ?? 'GET');
      if (fails) throw new TypeError('Failed to fetch');
      return new Response(null, { status: ok ? 200 : 405, headers: length === null ? {} : { 'content-length': String(length) } });
    };
    assert.equal(await announcedSize('https://x/m.gguf', fake(1234)), 1234);
    assert.match(await refusalBeforeDownload('https://x/m.gguf', { askSize: true }, fake(3 * GB)), /one WebAssembly allocation/);
    assert.equal(await refusalBeforeDownload('https://x/m.gguf', { askSize: true }, fake(1234)), null);
    assert.equal(await refusalBeforeDownload('https://x/m.gguf', { askSize: true }, fake(null)), null);
    assert.equal(await refusalBeforeDownload('https://x/m.gguf', { askSize: true }, fake(3 * GB, { ok: false })), null);
    assert.equal(await refusalBeforeDownload('https://x/m.gguf', { askSize: true }, fake(0, { fails: true })), null);
    assert.deepEqual([...new Set(calls)], ['HEAD'], 'only HEAD requests');
    calls.length = 0;
    // a listed size is used as published, without a request
    assert.match(await refusalBeforeDownload('https://x/m.gguf', { bytes: 3 * GB }, fake(1)), /one WebAssembly allocation/);
    assert.equal(await refusalBeforeDownload('https://x/m.gguf', { bytes: 1e6, askSize: true }, fake(3 * GB)), null);
    assert.deepEqual(calls, []);
  });

  test('the download meter: MB/s over the last seconds and the time left', () => {
    let now = 0;
    const meter = new DownloadMeter(() => now, 3000);
    now = 1000;
    let r = meter.update('network', 10 * 2 ** 20, 100 * 2 ** 20);
    assert.equal(r.bytesPerSecond, 10 * 2 ** 20);
    assert.equal(r.secondsLeft, 9);
    assert.equal(rateText(r), '10.0 MB/s · 9 s left');
    now = 5000; // 4 s later at 1 MB/s: the window forgets the fast start
    r = meter.update('network', 14 * 2 ** 20, 100 * 2 ** 20);
    assert.equal(rateText(r), '1.0 MB/s · 1 min 26 s left');
    r = meter.update('cache', 2 ** 20, 100 * 2 ** 20); // a new phase starts a new measurement
    assert.equal(r.bytesPerSecond, null);
    assert.equal(rateText(r), '');
    now = 6000;
    assert.equal(rateText(meter.update('cache', 2 * 2 ** 20, null)), '2.0 MB/s'); // no total: no time left
  });

  test('a silent server: said once nothing has come for SILENT_MS, in whole seconds', () => {
    assert.equal(silenceText(SILENT_MS - 1), '');
    assert.equal(silenceText(NaN), '');
    assert.equal(silenceText(SILENT_MS), `nothing received for ${SILENT_MS / 1000} s: still waiting (pick another model to give up)`);
    assert.match(silenceText(SILENT_MS + 2500), new RegExp(`^nothing received for ${SILENT_MS / 1000 + 2} s:`));
  });
});

// ---------------------------------------------------------------------------------------------
// The page, with Hugging Face answered from stand-ins
// ---------------------------------------------------------------------------------------------

/** Stand-ins of the listed architectures and types (random weights, a character vocabulary). */
const STAND_INS = {
  'smollm2-135m': ['--arch', 'llama', '--type', 'q8_0'],
  'qwen2.5-0.5b': ['--arch', 'qwen2', '--type', 'q4_k'],
  'tinyllama-1.1b': ['--arch', 'llama', '--type', 'q4_k'],
};

function standIn(key) {
  const dir = path.join(root, 'build/web-models');
  const file = path.join(dir, `realmodels-${key}.gguf`);
  const tmp = `${file}.${process.pid}.tmp`;
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync(path.join(root, 'build/tools/make_model'), [tmp, ...STAND_INS[key]]);
    writeFileSync(tmp, withCharTokenizer(readFileSync(tmp), 97));
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  return readFileSync(file);
}

const env = useBrowser();

/**
 * A browser context whose requests to huggingface.co are answered from `files` (URL → bytes, or
 * { head: size } for a file that only answers HEAD) and recorded; a URL not in `files` gets 404.
 * `init` runs in the page before its scripts.
 */
async function openPage(query, files, { init, config, clock = false } = {}) {
  const context = await env.browser.newContext();
  const requests = [];
  await context.route(`${HF}**`, (route) => {
    const req = route.request();
    requests.push({ method: req.method(), url: req.url() });
    const file = files[req.url()];
    const cors = { 'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin' };
    if (!file) return route.fulfill({ status: 404, headers: cors, body: 'not found' });
    if (file.silent) return; // a server that takes the request and never answers
    if (file.head !== undefined)
      return req.method() === 'HEAD'
        ? route.fulfill({ status: 200, headers: { ...cors, 'content-length': String(file.head) }, body: '' })
        : route.abort();
    return route.fulfill({ status: 200, headers: { ...cors, 'content-type': 'application/octet-stream' }, body: file });
  });
  if (config) {
    // the page's list with stand-in entries added: the page's bundle, built with a line added to web/config.mjs
    const built = await buildInMemory({ patch: (file, text) => (file === 'web/config.mjs' ? text + config : text) });
    const app = built.find((f) => f.path.endsWith('/app.mjs'));
    await context.route('**/web/bundle/app.mjs', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: Buffer.from(app.contents) }));
  }
  const page = await context.newPage();
  const errors = watchErrors(page);
  if (init) await page.addInitScript(init);
  if (clock) await page.clock.install();
  await page.addInitScript(() => {
    window.__rates = [];
    new MutationObserver(() => {
      const rate = document.getElementById('progress-rate');
      const text = document.getElementById('progress-text');
      if (rate && text) window.__rates.push({ text: text.textContent, rate: rate.textContent });
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(`${env.srv.isolated.url}/web/${query}`);
  return { context, page, requests, errors };
}

const settled = (page) => page.waitForFunction(() => {
  const t = document.getElementById('progress-text').textContent;
  return /^Could not load/.test(t) || !document.getElementById('generate').disabled;
}, null, { timeout: 30_000 });

describe('the page: real models', () => {
  test('the picker lists each real model with its size; one loads from its URL with bytes, speed and time left shown', async () => {
    await env.ready;
    const files = Object.fromEntries(Object.keys(STAND_INS).map((key) => [REAL_MODELS[key].url, standIn(key)]));
    const { context, page, requests, errors } = await openPage('?source=qwen2.5-0.5b', files);
    try {
      await settled(page);
      assert.match(await page.textContent('#progress-text'), /^Loaded Qwen2\.5 0\.5B Instruct: .* from the network in \d+ ms$/);
      const options = await page.$$eval('#real-models option', (os) => os.map((o) => [o.value, o.textContent]));
      assert.deepEqual(options.map(([v]) => v), Object.keys(REAL_MODELS));
      for (const [key, text] of options)
        assert.ok(text.includes(formatBytes(REAL_MODELS[key].bytes)) && text.includes(REAL_MODELS[key].architecture), text);
      assert.equal(await page.$eval('#model-select', (s) => s.value), 'qwen2.5-0.5b');
      assert.equal(await page.evaluate(() => window.saccadeDemo.state.model.info.architecture), 'qwen2');

      // while downloading: "Downloading: loaded / total (n%)" beside "x MB/s · n s left"
      const rates = await page.evaluate(() => window.__rates);
      const shown = rates.filter((r) => /^Downloading: [\d.]+ MB \/ [\d.]+ MB \(\d+%\)$/.test(r.text) && /^[\d.]+ MB\/s · \d+ s left$/.test(r.rate));
      assert.ok(shown.length > 0, `no bytes with speed and time left in ${JSON.stringify(rates.slice(-6))}`);
      assert.equal(await page.textContent('#progress-rate'), '', 'the rate is cleared once loaded');

      const url = REAL_MODELS['qwen2.5-0.5b'].url;
      assert.ok(requests.some((r) => r.method === 'GET' && r.url === url), JSON.stringify(requests));
      assert.ok(requests.every((r) => r.url === url), `only the picked model is fetched: ${JSON.stringify(requests)}`);

      // the stand-in generates: the architecture really loaded
      await page.fill('#max-tokens', '4');
      await page.fill('#seed', '1');
      await page.click('#generate');
      await page.waitForFunction(() => document.getElementById('stop').disabled && !document.getElementById('generate').disabled
        && /tokens? ·/.test(document.getElementById('speed').textContent), null, { timeout: 30_000 });
      await frames(page); // the token line is drawn in the next animation frame
      assert.ok((await page.$$('#output .tok')).length >= 4);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('a listed model larger than one WebAssembly allocation is refused before any request for it', async () => {
    await env.ready;
    const url = `${HF}example/Huge-GGUF/resolve/main/huge-q8_0.gguf`;
    const config = `\nREAL_MODELS['huge-stand-in'] = { label: 'Huge stand-in', url: '${url}', bytes: ${3 * GB}, ` +
      "architecture: 'llama', quant: 'Q8_0', prompt: 'x' };\n";
    const { context, page, requests } = await openPage('?source=huge-stand-in', {}, { config });
    try {
      await settled(page);
      assert.match(await page.textContent('#progress-text'),
        /^Could not load Huge stand-in: the model is 3072\.0 MB: more than the 2047\.9 MB one WebAssembly allocation can hold .*\(refused before downloading\)$/);
      assert.ok(await page.$eval('#progress-text', (e) => e.classList.contains('error')));
      assert.ok(await page.$eval('#real-models', (g) => g.textContent.includes('Huge stand-in — llama, Q8_0, 3.00 GB')));
      assert.deepEqual(requests, [], 'no request for the file');
      assert.ok(await page.$eval('#generate', (b) => b.disabled));
    } finally {
      await context.close();
    }
  });

  test('on a device that reports little memory, a real model is refused before download with that reason', async () => {
    await env.ready;
    const init = () => Object.defineProperty(Navigator.prototype, 'deviceMemory', { get: () => 0.5, configurable: true });
    const { context, page, requests } = await openPage('?source=tinyllama-1.1b', {}, { init });
    try {
      await settled(page);
      assert.match(await page.textContent('#progress-text'),
        /^Could not load TinyLlama 1\.1B Chat v1\.0: the model is 637\.8 MB: loading holds it twice .* more than half of the 0\.5 GB this device reports \(navigator\.deviceMemory\).*\(refused before downloading\)$/);
      assert.deepEqual(requests, [], 'no request for the file');
    } finally {
      await context.close();
    }
  });

  test('a URL whose HEAD announces more than fits is refused: a HEAD request, no download', async () => {
    await env.ready;
    const url = `${HF}example/Big-GGUF/resolve/main/big.gguf`;
    const { context, page, requests } = await openPage(`?model=${encodeURIComponent(url)}`, { [url]: { head: 3 * GB } });
    try {
      await settled(page);
      assert.match(await page.textContent('#progress-text'),
        /^Could not load https:\/\/huggingface\.co\/example\/Big-GGUF\/resolve\/main\/big\.gguf: the model is 3072\.0 MB: .*\(refused before downloading\)$/);
      assert.deepEqual(requests.map((r) => r.method), ['HEAD']);
    } finally {
      await context.close();
    }
  });

  test('a server that never answers: the page says nothing has come, and a listed model then loads', async () => {
    await env.ready;
    const url = `${HF}example/Silent-GGUF/resolve/main/silent.gguf`;
    const listed = REAL_MODELS['smollm2-135m'].url;
    const { context, page, requests } = await openPage(`?model=${encodeURIComponent(url)}`,
      { [url]: { silent: true }, [listed]: standIn('smollm2-135m') }, { clock: true });
    try {
      await page.waitForFunction((u) => document.getElementById('progress-text').textContent === `Loading ${u}…`, url);
      await page.clock.fastForward(SILENT_MS - 2000);
      assert.equal(await page.textContent('#progress-rate'), '');
      await page.clock.fastForward(3000);
      await page.waitForFunction(() => document.getElementById('progress-rate').textContent !== '');
      assert.match(await page.textContent('#progress-rate'),
        /^nothing received for 1\d s: still waiting \(pick another model to give up\)$/);
      assert.deepEqual(requests.map((r) => [r.method, r.url]), [['HEAD', url]]);
      await page.selectOption('#model-select', 'smollm2-135m');
      await settled(page);
      assert.match(await page.textContent('#progress-text'), /^Loaded SmolLM2 135M/);
      await page.clock.fastForward(SILENT_MS + 1000);
      assert.equal(await page.textContent('#progress-rate'), '', 'the silent load\'s watch ended with it');
    } finally {
      await context.close();
    }
  });
});
