#!/usr/bin/env node
// The demo page's bundles (web/bundle/, built by `make web-bundle`): the page's modules (web/app.mjs
// and everything it imports) as one file, and the model worker with the library (web/worker.mjs and
// src/js/) as another, so that the way to the first token is a handful of requests (the page, its CSS,
// two bundles, then the wasm, its glue and the model) instead of ~40 modules fetched in waves.
//
//   node scripts/bundle-web.mjs            writes web/bundle/{app,worker}.mjs (+ .map) and
//                                          build/web-bundle.d (the make rule's inputs)
//   node scripts/bundle-web.mjs --check    exits 1 when a bundle on disk differs from a fresh build
//   node scripts/bundle-web.mjs --watch -- CMD…   rebuilds on every source change while CMD runs
//                                          (`make demo`: edit a module, reload the page)
//
// The sources are unchanged by bundling: each bundled module's import.meta.url is its own file's
// URL, computed from the bundle's (the bundle keeps its place relative to them), so every
// new URL(…, import.meta.url) in them — the wasm and its glue in dist/, the service worker, the
// trainer's worker — names what it names unbundled, also under the service worker shim's mount.
// Imports by a computed URL (the Emscripten glue, the chat templates' @huggingface/jinja) stay
// imports at run time.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = path.join(root, 'web/bundle');
const DEPFILE = path.join(root, 'build/web-bundle.d');

/** Entry points → bundle names: the page's app (boot.mjs first among its imports) and the model worker. */
export const ENTRIES = { app: 'web/app.mjs', worker: 'web/worker.mjs' };

/**
 * Gives each bundled module its own import.meta.url, as a URL relative to the bundle's; `patch`
 * (a test's): (path relative to the repository, text) → the text to bundle instead.
 */
const ownImportMetaUrl = (patch) => ({
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.m?js$/ }, (args) => {
      const original = readFileSync(args.path, 'utf8');
      const text = patch ? patch(path.relative(root, args.path).split(path.sep).join('/'), original) : original;
      if (text === original && !text.includes('import.meta.url')) return undefined;
      const rel = path.relative(OUT_DIR, args.path).split(path.sep).join('/');
      const own = `new URL(${JSON.stringify(rel)}, import.meta.url).href`;
      return { contents: text.replace(/\bimport\.meta\.url\b/g, own), loader: 'js' };
    });
  },
});

/** esbuild's options for all bundles; `write: false` builds them in memory. */
export function options({ write = true, patch } = {}) {
  return {
    absWorkingDir: root,
    entryPoints: Object.entries(ENTRIES).map(([out, entry]) => ({ out, in: entry })),
    outdir: OUT_DIR,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    // the library's own fallback import for chat templates (the worker passes the module instead)
    external: ['@huggingface/jinja'],
    sourcemap: 'linked',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    write,
    plugins: [ownImportMetaUrl(patch)],
  };
}

/** The make rule's prerequisites: every file a bundle was built from. */
function writeDepfile(metafile) {
  const inputs = Object.keys(metafile.inputs).sort();
  const targets = Object.keys(ENTRIES).map((name) => `web/bundle/${name}.mjs`).join(' ');
  mkdirSync(path.dirname(DEPFILE), { recursive: true });
  writeFileSync(DEPFILE, `${targets}: ${inputs.join(' ')}\n${inputs.map((f) => `${f}:`).join('\n')}\n`);
}

/** The bundles, built in memory: [{ path, contents (Uint8Array) }]; `patch` as ownImportMetaUrl's. */
export async function buildInMemory({ patch } = {}) {
  const result = await esbuild.build(options({ write: false, patch }));
  return result.outputFiles;
}

const args = process.argv.slice(2);
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (args.includes('--check')) {
    const stale = [];
    for (const file of await buildInMemory()) {
      let onDisk = null;
      try {
        onDisk = readFileSync(file.path);
      } catch {
        // missing
      }
      if (!onDisk || !onDisk.equals(Buffer.from(file.contents))) stale.push(path.relative(root, file.path));
    }
    if (stale.length) {
      console.error(`stale or missing (run make web-bundle): ${stale.join(', ')}`);
      process.exit(1);
    }
  } else if (args.includes('--watch')) {
    const command = args.slice(args.indexOf('--') + 1);
    const ctx = await esbuild.context({
      ...options(),
      plugins: [...options().plugins, { name: 'depfile', setup: (b) => b.onEnd((r) => r.metafile && writeDepfile(r.metafile)) }],
    });
    await ctx.watch();
    if (args.includes('--') && command.length) {
      const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
      // (a signal for this process, e.g. kill, goes to the command too; Ctrl+C reaches both anyway)
      for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
      child.on('exit', async (code, signal) => {
        await ctx.dispose();
        process.exit(code ?? (signal ? 1 : 0));
      });
    }
  } else {
    const result = await esbuild.build(options());
    writeDepfile(result.metafile);
    for (const [name, out] of Object.entries(result.metafile.outputs))
      if (name.endsWith('.mjs')) console.log(`${name} ${(out.bytes / 1024).toFixed(0)} kB`);
  }
}
