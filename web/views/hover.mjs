// The one convention that ties tokens to query rows, and what a hovered token lights up in a map.
//
// A decoder's query row q (self- and cross-attention) sits at token q and is the step that wrote
// token q + 1 — the library's generate steps carry the same row with the token they produced. So
// a token is tied to the row that wrote it (token 0 was written by none), and every label says
// both ends: "at 'x' → wrote 'y'". An encoder's row q is its source token q.
//
// Tokens sit on two lines: 'output' (the prompt and generated text, or a decoder's tokens) and
// 'source' (an encoder–decoder model's input).

/** Which line holds the rows and which the columns of a kind. */
export function sides(kind) {
  return { rows: kind === 'encoder' ? 'source' : 'output', cols: kind === 'self' ? 'output' : 'source' };
}

/** The token (on its line) that row q is tied to: the one it wrote, or an encoder's own token. */
export const tokenOfRow = (kind, q) => (kind === 'encoder' ? q : q + 1);

/** The row tied to token `index` of line `side` in a kind's map, or null (token 0 was written by no row). */
export function rowOf(kind, side, index) {
  if (side !== sides(kind).rows) return null;
  return kind === 'encoder' ? index : index > 0 ? index - 1 : null;
}

/**
 * `hover`: { side, index } or null. Returns, per line, { to, from, hovered } for TokenLine.highlight
 * (weights indexed by the line's tokens), and { row, col } for HeatmapView.mark. `to`: what the
 * row tied to the hovered token attends to; `from`: the hovered token's column, each row's weight
 * shown on the token that row is tied to.
 */
export function hoverWeights(matrix, kind, hover) {
  const { rows, cols } = sides(kind);
  const lines = { output: { to: null, from: null, hovered: null }, source: { to: null, from: null, hovered: null } };
  const marks = { row: null, col: null };
  if (!hover) return { lines, marks };
  lines[hover.side].hovered = hover.index;
  const row = rowOf(kind, hover.side, hover.index);
  if (row !== null && row < matrix.nq) {
    lines[cols].to = matrix.row(row);
    marks.row = row;
  }
  if (hover.side === cols) {
    const from = new Float32Array(tokenOfRow(kind, matrix.nq - 1) + 1);
    for (let q = 0; q < matrix.nq; q++) {
      const r = matrix.row(q);
      from[tokenOfRow(kind, q)] = hover.index < r.length ? r[hover.index] : 0;
    }
    lines[rows].from = from;
    marks.col = hover.index;
  }
  return { lines, marks };
}
