// The inputs the sections feed to the attention primitive: seeded random numbers (so that a
// seed gives the same picture everywhere), the kernel-regression example's data, and row
// entropy, the summary the Scores section reads its weights by.

/** A seeded generator of uniform numbers in [0, 1) (mulberry32). */
export function uniform(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded generator of standard normal numbers (Box–Muller over `uniform`). */
export function normal(seed) {
  const u = uniform(seed);
  let spare = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let a;
    do a = u(); while (a <= 1e-12);
    const b = u();
    const r = Math.sqrt(-2 * Math.log(a));
    spare = r * Math.sin(2 * Math.PI * b);
    return r * Math.cos(2 * Math.PI * b);
  };
}

/** `n` standard normal numbers × `scale`, as float32. */
export function normals(rand, n, scale = 1) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rand() * scale;
  return out;
}

/** The classic kernel-regression example's generating function: f(x) = 2 sin x + x^0.8. */
export const truth = (x) => 2 * Math.sin(x) + Math.max(0, x) ** 0.8;
export const X_RANGE = [0, 5];

/**
 * The training set: n inputs uniform in X_RANGE (sorted), targets f(x) + noise of standard
 * deviation `noise`. Returns { x: Float32Array, y: Float32Array }.
 */
export function trainingSet({ n = 50, noise = 0.5, seed = 1 } = {}) {
  const u = uniform(seed);
  const g = normal(seed ^ 0x9e3779b9);
  const x = Float32Array.from({ length: n }, () => X_RANGE[0] + u() * (X_RANGE[1] - X_RANGE[0])).sort();
  const y = x.map((v) => truth(v) + noise * g());
  return { x, y };
}

/** The test inputs 0, 0.1, …, 4.9 (the rows of the weight heatmap). */
export const testInputs = () => Float32Array.from({ length: 50 }, (_, i) => i / 10);

/** Entropy (nats) of each row of a rows × cols weight matrix, and their mean. */
export function rowEntropy(weights, rows, cols) {
  const each = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let h = 0;
    for (let c = 0; c < cols; c++) {
      const p = weights[r * cols + c];
      if (p > 0) h -= p * Math.log(p);
    }
    each[r] = h;
  }
  const mean = rows ? each.reduce((a, b) => a + b, 0) / rows : 0;
  return { each, mean };
}
