// Colours for attention weights: a 256-entry lookup table (viridis-like: dark blue → green →
// yellow; perceptually ordered, readable in grey) and the value scales the views offer. Every
// view colours a weight through these, so one colour means one weight everywhere.

// Anchors of matplotlib's viridis at 0, 1/8, …, 1.
const ANCHORS = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [110, 206, 88], [253, 231, 37],
];

/** Packed RGBA (little-endian, for a Uint32Array view of ImageData) per level 0..255. */
export const LUT = (() => {
  const lut = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (ANCHORS.length - 1);
    const a = Math.min(ANCHORS.length - 2, Math.floor(x));
    const t = x - a;
    const [r, g, b] = ANCHORS[a].map((c, j) => Math.round(c + (ANCHORS[a + 1][j] - c) * t));
    lut[i] = (255 << 24) | (b << 16) | (g << 8) | r;
  }
  return lut;
})();

/** CSS colour of a level 0..1. */
export function cssColor(v) {
  const c = LUT[Math.max(0, Math.min(255, Math.round(v * 255)))];
  return `rgb(${c & 255},${(c >> 8) & 255},${(c >> 16) & 255})`;
}

/** Value → level 0..1. 'sqrt' and 'log' lift the small weights that most of a map is made of. */
export const SCALES = {
  linear: (v) => v,
  sqrt: (v) => Math.sqrt(v),
  log: (v) => (v <= 1e-4 ? 0 : 1 + Math.log10(v) / 4), // 1e-4 … 1
};

/** What the bottom of each scale's colour bar stands for: the log scale floors at 1e-4. */
export const FLOORS = { linear: '0', sqrt: '0', log: '≤1e-4' };

/** CSS colour of a weight through a scale (the heatmap's colour of that weight). */
export function cssWeight(v, scale) {
  const f = SCALES[scale] ?? SCALES.linear;
  return cssColor(Math.max(0, Math.min(1, f(v))));
}

/** value → packed RGBA through a scale (clamped to 0..1). */
export function colorizer(scale) {
  const f = SCALES[scale] ?? SCALES.linear;
  return (v) => LUT[Math.max(0, Math.min(255, (f(v) * 255 + 0.5) | 0))];
}
