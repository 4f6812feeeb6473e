// esbuild's options for the sample app (the test runs esbuild.build with them): a browser ESM
// bundle, no special flags for saccade.
export default (outdir) => ({
  entryPoints: [new URL('main.mjs', import.meta.url).pathname],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  minify: true,
  outdir,
  logLevel: 'error',
});
