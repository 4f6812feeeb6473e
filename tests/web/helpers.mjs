// Shared by the page tests: which models to use (the shipped ones when present, generated
// stand-ins otherwise), the static servers (isolated or not), headless Chromium, console-error
// collection, canvas pixel statistics and screenshots (kept in build/test-artifacts/).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { after, before } from 'node:test';

import { chromium } from 'playwright-core';

import { DEFAULT_MODEL, MODEL_B } from '../../web/config.mjs';
import { serve } from '../../web/serve.mjs';
import { devDir, devModel, root } from './dev-models.mjs';

export { root };
export const artifacts = path.join(root, 'build/test-artifacts');
mkdirSync(artifacts, { recursive: true });

/**
 * A model for the page: its configured path (web/config.mjs: the shipped models) when that
 * file exists, else a generated random-weight stand-in. Returns { query: what to add to the
 * page's URL ('' or the model B switch for the configured model), file, shipped }.
 */
function pick(configured, devName, what, query) {
  const file = fileURLToPath(new URL(configured, new URL('../../web/', import.meta.url)));
  const isDev = file.startsWith(devDir + path.sep);
  if (isDev) devModel(devName); // the configured model is the stand-in: write it
  if (existsSync(file)) {
    const kind = isDev ? 'a generated random-weight stand-in (the shipped model is not configured yet)' : 'the shipped model';
    console.log(`${what}: ${path.relative(root, file)} — ${kind}`);
    return { query, file, shipped: !isDev };
  }
  const stand = devModel(devName);
  console.log(`${what}: ${path.relative(root, file)} is missing — using the generated stand-in ${path.relative(root, stand)}`);
  return { query: `model=/${path.relative(root, stand)}`, file: stand, shipped: false };
}

export const modelA = () => pick(DEFAULT_MODEL, 'gpt2-char-q8_0', 'Model A', '');
export const modelB = () => pick(MODEL_B, 'encdec-char-q8_0', 'Model B', 'source=b');

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--headless=new', '--disable-gpu'];

/** True in the demo page once its generation has ended and its speed line says how (an expression to evaluate there). */
export const DEMO_GENERATION_DONE =
  "document.getElementById('stop').disabled && / · [a-z ]+$/.test(document.getElementById('speed').textContent)";
/** True in the demo page when it read its model from the browser cache (a warm load), as its progress line says. */
export const DEMO_READ_FROM_CACHE = "/from the browser cache/.test(document.getElementById('progress-text').textContent)";

/** Headless Chromium; `extraArgs` after the usual ones (e.g. --js-flags for V8). */
export function launch(extraArgs = []) {
  if (!existsSync('/usr/bin/chromium')) throw new Error('/usr/bin/chromium is missing: apt-get install -y chromium');
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/** Servers of the repository root: { isolated, plain } (COOP/COEP on and off). */
export async function servers(handler) {
  return {
    isolated: await serve({ root, isolated: true, handler: handler?.(true) }),
    plain: await serve({ root, isolated: false, handler: handler?.(false) }),
    async close() {
      await this.isolated.close();
      await this.plain.close();
    },
  };
}

/**
 * For a test file: starts the servers and Chromium before its tests and stops them after.
 * Returns { browser, srv, ready }: filled in once `ready` resolves (Node 20 runs a file's
 * top-level `before` hooks concurrently, so another one must await `ready`).
 */
export function useBrowser() {
  let settle;
  const env = { browser: null, srv: null, ready: new Promise((resolve, reject) => { settle = { resolve, reject }; }) };
  env.ready.catch(() => {}); // a failed start is reported by the hook itself
  before(async () => {
    try {
      env.srv = await servers();
      env.browser = await launch();
      settle.resolve();
    } catch (e) {
      settle.reject(e);
      throw e;
    }
  });
  after(async () => {
    await env.browser?.close();
    await env.srv?.close();
  });
  return env;
}

/**
 * A page of a new browser context (`options`: those of newContext) once `env` (useBrowser) is
 * ready: { context, page, errors } (errors: watchErrors). The caller closes the context.
 */
export async function openPage(env, options = {}) {
  await env.ready;
  const context = await env.browser.newContext(options);
  try {
    const page = await context.newPage();
    return { context, page, errors: watchErrors(page) };
  } catch (e) {
    await context.close();
    throw e;
  }
}

/** Runs `fn({ context, page, errors })` on openPage(env, options), closing the context after, whatever happens. */
export async function withPage(env, fn, options = {}) {
  const opened = await openPage(env, options);
  try {
    return await fn(opened);
  } finally {
    await opened.context.close();
  }
}

/** Records console errors and uncaught exceptions of a page (and its workers). */
export function watchErrors(page) {
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()} (${m.location()?.url ?? ''})`);
  });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('worker', (w) => w.on('console', (m) => {
    if (m.type() === 'error') errors.push(`worker console.error: ${m.text()}`);
  }));
  return errors;
}

/**
 * Pixel statistics of a canvas (in the page or a shadow root): { width, height, colored (the
 * fraction of pixels that are neither white nor the empty-cell grey), hash }.
 */
export function canvasStats(page, selector, host = null) {
  return page.evaluate(({ selector, host }) => {
    const scope = host ? document.querySelector(host).shadowRoot : document;
    const canvas = scope.querySelector(selector);
    const { data, width, height } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let colored = 0;
    let hash = 2166136261;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
      const blank = a === 0 || (r === 255 && g === 255 && b === 255) || (r === 0xf0 && g === 0xf1 && b === 0xf4);
      if (!blank) colored++;
      hash = Math.imul(hash ^ (r | (g << 8) | (b << 16)), 16777619) >>> 0;
    }
    return { width, height, colored: colored / (width * height), hash };
  }, { selector, host });
}

export async function screenshot(page, name) {
  const file = path.join(artifacts, `web-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Waits for two animation frames (the views draw once per frame). */
export const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/**
 * A request handler that passes requests to `files`, except that the first GET of each path
 * under /flaky/ (the path without that prefix) stops halfway, as a dropped connection does.
 */
export function cutOnce(files, root) {
  const cut = new Set();
  return (req, res) => {
    const u = new URL(req.url, 'http://x');
    if (!u.pathname.startsWith('/flaky/')) return files(req, res);
    req.url = u.pathname.slice('/flaky'.length);
    if (req.method !== 'GET' || cut.has(req.url)) return files(req, res);
    cut.add(req.url);
    const bytes = readFileSync(path.join(root, req.url));
    res.writeHead(200, { 'content-length': bytes.length, 'content-type': 'application/octet-stream',
      'cross-origin-resource-policy': 'same-origin' });
    res.write(bytes.subarray(0, bytes.length >> 1), () => setTimeout(() => res.destroy(), 50));
  };
}
