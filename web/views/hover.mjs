// What a hovered token lights up in a map: its row (what it attends to) and its column (what
// attends to it). Tokens sit on two lines: 'output' (the prompt and generated text, or a
// decoder's tokens) and 'source' (an encoder–decoder model's input).

/** Which line holds the rows and which the columns of a kind. */
export function sides(kind) {
  return { rows: kind === 'encoder' ? 'source' : 'output', cols: kind === 'self' ? 'output' : 'source' };
}

/**
 * `hover`: { side, index } or null. Returns, per line, { to, from, hovered } for TokenLine.highlight,
 * and { row, col } for HeatmapView.mark.
 */
export function hoverWeights(matrix, kind, hover) {
  const { rows, cols } = sides(kind);
  const lines = { output: { to: null, from: null, hovered: null }, source: { to: null, from: null, hovered: null } };
  const marks = { row: null, col: null };
  if (!hover) return { lines, marks };
  lines[hover.side].hovered = hover.index;
  if (hover.side === rows && hover.index < matrix.nq) {
    lines[cols].to = matrix.row(hover.index);
    marks.row = hover.index;
  }
  if (hover.side === cols) {
    const from = new Float32Array(matrix.nq);
    for (let q = 0; q < matrix.nq; q++) {
      const r = matrix.row(q);
      from[q] = hover.index < r.length ? r[hover.index] : 0;
    }
    lines[rows].from = from;
    marks.col = hover.index;
  }
  return { lines, marks };
}
