// The package in the bundlers web projects use, driven as a user would: `npm pack`, install the
// tarball into fresh sample apps (offline), build each once — Vite 8 (default settings), esbuild,
// webpack 5 — and run the production build in headless Chromium, served with and without
// COOP/COEP. Each page loads the shipped model, generates 8 tokens with attention, reads an
// attention matrix and trains 5 steps with train() (the trainer's own wasm module, loaded the
// same way). Isolated pages must run the threaded builds on 2 threads, the others the
// single-threaded ones, and no page may hang (every wait is bounded). The Vite app also runs under
// `vite dev`, which rewrites the JavaScript it serves.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { launch, root, watchErrors } from '../web/helpers.mjs';
import { ISOLATION_HEADERS, serve } from '../../web/serve.mjs';

const exec = promisify(execFile);
const npm = (args, cwd) => exec('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd });
const MODEL = path.join(root, 'models/shakespeare-char-q8_0.gguf');

let dir;
let browser;
const builds = {}; // bundler → { out } or { error }

/** Builds the app of `name` into dir/out/<name> with `build(appDir, out)`; records a failure instead of throwing. */
async function buildApp(name, build) {
  const app = path.join(dir, 'apps', name);
  const out = path.join(dir, 'out', name);
  mkdirSync(out, { recursive: true });
  try {
    await build(app, out);
    cpSync(MODEL, path.join(out, 'model.gguf'));
    builds[name] = { out };
  } catch (e) {
    builds[name] = { error: e };
  }
}

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'saccade-bundlers-'));
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', dir, '--loglevel=error'], { cwd: root });
  const tarball = path.join(dir, JSON.parse(stdout.slice(stdout.indexOf('[')))[0].filename);
  // fresh apps outside the repository: the tarball is their only saccade
  const apps = path.join(dir, 'apps');
  for (const name of ['app', 'vite', 'esbuild', 'webpack'])
    cpSync(path.join(root, 'tests/bundlers', name), path.join(apps, name), { recursive: true });
  writeFileSync(path.join(apps, 'package.json'), JSON.stringify({ name: 'saccade-sample-apps', private: true, type: 'module' }));
  await npm(['install', tarball], apps);
  mkdirSync(path.join(apps, 'vite/public'));
  cpSync(MODEL, path.join(apps, 'vite/public/model.gguf')); // for the dev server

  // the bundlers come from the repository's devDependencies
  await buildApp('vite', async (app, out) => {
    const { build } = await import('vite');
    await build({ root: app, configFile: false, logLevel: 'error', build: { outDir: out, emptyOutDir: true } });
  });
  await buildApp('esbuild', async (app, out) => {
    const esbuild = await import('esbuild');
    const options = (await import(path.join(app, 'build.mjs'))).default(out);
    await esbuild.build(options);
    cpSync(path.join(app, 'index.html'), path.join(out, 'index.html'));
    cpSync(path.join(apps, 'node_modules/saccade/dist'), path.join(out, 'saccade'), { recursive: true });
  });
  await buildApp('webpack', async (app, out) => {
    const webpack = (await import('webpack')).default;
    const config = (await import(path.join(app, 'webpack.config.mjs'))).default(out);
    const stats = await new Promise((resolve, reject) => webpack(config, (e, s) => (e ? reject(e) : resolve(s))));
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
    cpSync(path.join(app, 'index.html'), path.join(out, 'index.html'));
  });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Opens `url` and checks the run's outcome for an `isolated` page or not. */
async function check(url, isolated) {
  const page = await browser.newPage();
  try {
    const errors = watchErrors(page);
    await page.goto(url);
    // bounded: a load that never settles fails here instead of hanging the suite
    await page.waitForFunction(() => window.result, null, { timeout: 60_000 });
    const result = await page.evaluate(() => window.result);
    assert.equal(result.error, undefined, `${result.error}\n${errors.join('\n')}`);
    assert.equal(result.isolated, isolated);
    assert.deepEqual([result.variant, result.threads], isolated ? ['mt', 2] : ['st', 1], result.reason);
    // Chromium runs the relaxed-SIMD build: the bundle found its files too
    assert.equal(result.relaxed, true, result.relaxedReason);
    assert.ok(result.text.length > 0);
    assert.equal(result.rows, 8);
    assert.ok(Math.abs(result.lastRowSum - 1) < 1e-3, `attention row sums to ${result.lastRowSum}`);
    const { trained } = result;
    assert.deepEqual([trained.variant, trained.threads], isolated ? ['mt', 2] : ['st', 1]);
    assert.equal(trained.steps, 5);
    assert.ok(Number.isFinite(trained.loss) && trained.loss > 0, `training loss ${trained.loss}`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
}

for (const bundler of ['vite', 'esbuild', 'webpack']) {
  for (const isolated of [true, false]) {
    test(`${bundler}: the production build generates with attention (${isolated ? 'cross-origin isolated: 2 threads' : 'not isolated: 1 thread'})`, async () => {
      const built = builds[bundler];
      if (built.error) throw built.error;
      const server = await serve({ root: built.out, isolated, allow: ['/'] });
      try {
        await check(`${server.url}/index.html`, isolated);
      } finally {
        await server.close();
      }
    });
  }
}

for (const isolated of [true, false]) {
  test(`vite dev: the app generates with attention (${isolated ? 'cross-origin isolated: 2 threads' : 'not isolated: 1 thread'})`, async () => {
    const { createServer } = await import('vite');
    const server = await createServer({ root: path.join(dir, 'apps/vite'), configFile: false, logLevel: 'error',
      server: { port: 0, host: '127.0.0.1', headers: isolated ? ISOLATION_HEADERS : {} } });
    await server.listen();
    try {
      await check(`${server.resolvedUrls.local[0]}index.html`, isolated);
    } finally {
      await server.close();
    }
  });
}
