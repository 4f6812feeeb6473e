// webpack 5's production defaults; the test sets output.path.
export default (outPath) => ({
  mode: 'production',
  context: import.meta.dirname,
  entry: './main.mjs',
  output: { path: outPath, filename: 'main.js' },
  performance: { hints: false },
});
