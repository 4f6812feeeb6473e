// The page's data side in Node, against straightforward reference computations: pooling past
// screen resolution, the head aggregates and attention rollout, hover weights, the JSON export.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { hoverWeights } from '../../web/views/hover.mjs';
import { blockSize, Pooled } from '../../web/views/pool.mjs';
import { AttentionStore } from '../../web/views/store.mjs';

/** A deterministic pseudo-random generator (xorshift32) in [0, 1). */
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** A causal softmax-like row: q + 1 positive weights summing to 1. */
function row(rand, q) {
  const r = Array.from({ length: q + 1 }, () => rand() ** 3 + 1e-3);
  const sum = r.reduce((a, b) => a + b, 0);
  return r.map((v) => v / sum);
}

/** A store filled as the worker fills it: `prompt` rows in one packed block, then one row per token. */
function filledStore({ layers = 3, heads = 4, prompt = 5, generated = 6, seed = 7, beforeTokens } = {}) {
  const rand = rng(seed);
  const store = new AttentionStore({ layers, heads });
  const full = []; // full[q][l][h] = row
  const rowBlock = (q) => {
    const r = [];
    for (let l = 0; l < layers; l++) {
      r.push([]);
      for (let h = 0; h < heads; h++) r[l].push(row(rand, q));
    }
    full[q] = r;
    return Float32Array.from(r.flat(2));
  };
  const packed = [];
  for (let q = 0; q < prompt - 1; q++) packed.push(...rowBlock(q));
  const tokens = Array.from({ length: prompt }, (_, i) => ({ id: i, text: `p${i}`, label: `p${i}` }));
  store.start({ tokens, self: Float32Array.from(packed), cross: null, source: null, encoder: null });
  beforeTokens?.(store);
  for (let g = 0; g < generated; g++) {
    const q = prompt - 1 + g;
    store.add({ token: { id: 100 + g, text: `g${g}`, label: `g${g}` }, query: q, self: rowBlock(q), cross: null });
  }
  return { store, full, layers, heads };
}

test('pooling: max over blocks, the same whether rows come at once or one by one, and regrown when the map outgrows it', () => {
  const n = 10;
  const rand = rng(3);
  const rows = Array.from({ length: n }, (_, q) => Float32Array.from(row(rand, q)));
  const m = (nq) => ({ nq, nk: nq, row: (q) => rows[q] });
  const once = new Pooled(4);
  once.update(m(n));
  assert.equal(once.block, 3);
  assert.deepEqual([once.w, once.h], [4, 4]);
  for (let r = 0; r < 4; r++)
    for (let c = 0; c < 4; c++) {
      let expect = -1;
      for (let q = r * 3; q < Math.min(n, r * 3 + 3); q++)
        for (let k = c * 3; k < Math.min(q + 1, c * 3 + 3); k++) expect = Math.max(expect, rows[q][k]);
      assert.equal(once.data[r * 4 + c], Math.fround(expect), `block ${r},${c}`);
    }
  const incremental = new Pooled(4);
  for (let nq = 1; nq <= n; nq++) incremental.update(m(nq)); // the block size grows from 1 to 3 on the way
  assert.deepEqual(incremental.data, once.data);

  // painting: colours per block, stretched; no data → the empty colour
  const pixels = new Uint32Array(8 * 8);
  once.paint(pixels, 8, 0, 0, 8, 8, (v) => Math.round(v * 1000) + 1, 0xdead, 'k');
  assert.equal(pixels[0], Math.round(once.data[0] * 1000) + 1);
  assert.equal(pixels[7], 0xdead, 'above the diagonal');
  assert.equal(pixels[63], Math.round(once.data[15] * 1000) + 1);
});

test('a part of the map painted alone is that part of the whole painting (the page draws a window at a time)', () => {
  const rand = rng(11);
  const n = 23;
  const rows = Array.from({ length: n }, (_, q) => Float32Array.from(row(rand, q)));
  const color = (v) => Math.round(v * 1e6) + 1;
  for (const [capacity, width, height] of [[32, 61, 47], [7, 50, 50], [5, 13, 29]]) {
    const map = new Pooled(capacity);
    map.update({ nq: n, nk: n, row: (q) => rows[q] });
    const whole = new Uint32Array(width * height);
    map.paint(whole, width, 0, 0, width, height, color, 0xdead, 'k');
    for (const part of [{ left: 0, top: 0, width, height }, { left: 3, top: 5, width: Math.min(17, width - 3), height: Math.min(11, height - 5) }, { left: width - 9, top: height - 2, width: 9, height: 2 }, { left: 11, top: 0, width: 1, height: height }]) {
      // painted into a larger canvas at (2, 1), the rest left as it was
      const stride = part.width + 4;
      const pixels = new Uint32Array(stride * (part.height + 3)).fill(7);
      map.paint(pixels, stride, 2, 1, width, height, color, 0xdead, 'k', part);
      for (let y = 0; y < part.height + 3; y++)
        for (let x = 0; x < stride; x++) {
          const inside = x >= 2 && x < 2 + part.width && y >= 1 && y < 1 + part.height;
          const expect = inside ? whole[(part.top + y - 1) * width + part.left + x - 2] : 7;
          if (pixels[y * stride + x] !== expect) assert.fail(`capacity ${capacity}, part ${JSON.stringify(part)}: pixel (${x}, ${y}) ${pixels[y * stride + x]}, expected ${expect}`);
        }
    }
  }
});

test('stepped block sizes: 1-4, then 2^e × 1, 1.25, 1.5 (the next at least the need)', () => {
  const sizes = new Set(Array.from({ length: 200 }, (_, i) => blockSize(i + 1, true)));
  assert.deepEqual([...sizes], [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256]);
  for (let need = 1; need < 300; need++) assert.ok(blockSize(need, true) >= need && blockSize(need, true) < 1.5 * need + 1);
  assert.equal(blockSize(21, false), 21);
});

test('pooled maps across generations: the rows a start kept stay pooled, only the others are pooled again, the same as afresh', () => {
  for (const stepped of [false, true])
    for (const keep of [0, 1, 17, 24, 40]) {
      const { store, layers, heads } = filledStore({ prompt: 40, generated: 3 });
      const pooled = new Pooled(8, { stepped });
      pooled.update(store.matrix('self', 1, 2));
      const blockBefore = pooled.block;
      const held = store.held();
      store.clear(); // the page clears the store before the worker's 'start'
      assert.equal(pooled.update(store.matrix('self', 1, 2)), false, 'an emptied store leaves the pooled rows');
      assert.deepEqual([pooled.w, pooled.h], [0, 0]);
      const rand = rng(keep + 5);
      const sent = [];
      for (let q = keep; q < 44; q++) for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) sent.push(...row(rand, q));
      const tokens = Array.from({ length: 45 }, (_, i) => ({ id: i < keep ? i : 90 + i, text: `n${i}`, label: `n${i}` }));
      store.start({ tokens, self: Float32Array.from(sent), keep }, keep ? held : null);
      const m = store.matrix('self', 1, 2);
      const read = new Set();
      pooled.update({ ...m, row: (q) => (read.add(q), m.row(q)) });
      const fresh = new Pooled(8, { stepped });
      fresh.update(m);
      assert.deepEqual(pooled.data, fresh.data, `keep ${keep}`);
      assert.equal(pooled.block, fresh.block);
      // rows before the kept rows' last whole block were not read again (the block size stayed)
      assert.equal(pooled.block, blockBefore);
      const first = Math.min(...read);
      assert.equal(first, Math.floor(keep / pooled.block) * pooled.block, `keep ${keep}: from row ${first}`);
    }
  // a map not drawn during a turn: the next turn's kept rows are the skipped turn's, not its own
  // (the skipped one kept only 4 of the rows it pooled); a turn whose block size changes; the
  // colours painted after each equal a fresh map's
  const rowFor = (ids, q) => {
    let x = 7;
    for (let i = 0; i <= q; i++) x = (x * 31 + ids[i]) % 1000003;
    return Array.from({ length: q + 1 }, (_, k) => ((x + k * 13) % 101) / 101);
  };
  const turn = (store, ids, keep) => {
    const held = store.held();
    store.clear();
    const self = Float32Array.from(Array.from({ length: ids.length - 1 - keep }, (_, i) => rowFor(ids, keep + i)).flat());
    store.start({ tokens: ids.map((id) => ({ id, text: '', label: '' })), self, keep }, held);
  };
  const painted = (p) => {
    const pixels = new Uint32Array(16 * 16);
    p.paint(pixels, 16, 0, 0, 16, 16, (v) => Math.round(v * 1000) + 1, 0xdead, 'k');
    return pixels;
  };
  for (const stepped of [false, true]) {
    const store = new AttentionStore({ layers: 1, heads: 1 });
    const a = Array.from({ length: 12 }, (_, i) => i + 1);
    turn(store, a, 0);
    const map = new Pooled(4, { stepped });
    map.update(store.matrix('self', 0, 0));
    const b = [1, 2, 3, 4, 9, 9, 9, 9, 9, 9, 9, 9, 9];
    turn(store, b, 4); // not drawn
    turn(store, [...b.slice(0, 12), 5], 11);
    const fresh = () => {
      const f = new Pooled(4, { stepped });
      f.update(store.matrix('self', 0, 0));
      return f;
    };
    map.update(store.matrix('self', 0, 0));
    assert.deepEqual(map.data, fresh().data, 'after a turn the map missed');
    assert.deepEqual(painted(map), painted(fresh()));
    const grown = Array.from({ length: 30 }, (_, i) => (i < 13 ? [...b.slice(0, 12), 5][i] : 40 + i));
    turn(store, grown, 12); // 12 rows kept, the block size grows
    map.update(store.matrix('self', 0, 0));
    assert.deepEqual([map.block, map.data], [fresh().block, fresh().data], 'after a turn that changed the block size');
    assert.deepEqual(painted(map), painted(fresh()));
  }

  // a store of another model: its rows are never taken for those pooled from the first one
  const a = filledStore({ prompt: 10, generated: 0 }).store;
  const b = filledStore({ prompt: 10, generated: 0, seed: 9 }).store;
  assert.notEqual(a.lineage, b.lineage);
  const pooled = new Pooled(4);
  pooled.update(a.matrix('self', 0, 0));
  const read = new Set();
  const mb = b.matrix('self', 0, 0);
  pooled.update({ ...mb, row: (q) => (read.add(q), mb.row(q)) });
  assert.equal(read.size, 9);
});

test('the store keeps rows in order, and head rows are views of what the worker sent', () => {
  const { store, full, layers, heads } = filledStore();
  assert.equal(store.queries('self'), 10);
  assert.equal(store.tokens.length, 11);
  assert.equal(store.tokens.filter((t) => t.generated).length, 6);
  for (let q = 0; q < 10; q++)
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++)
        assert.deepEqual(Array.from(store.headRow('self', l, h, q)), full[q][l][h].map(Math.fround));
  assert.deepEqual(store.labels('self').rows.slice(0, 2), ['p0', 'p1']);
});

test('a start that keeps the held rows: they and their aggregates stay, the rest come in its block, and a block mostly left behind is not held', () => {
  const { store, full, layers, heads } = filledStore({ prompt: 40, generated: 3 });
  store.matrix('self', 1, 'rollout'); // aggregates of every row, kept with them
  const held = store.held();
  assert.equal(held.rows.length, 42);
  assert.deepEqual(held.ids, store.tokens.slice(0, 42).map((t) => t.id));
  const startBlock = held.rows[0].buffer; // the first 39 rows came in one block
  // a prompt whose first 5 tokens are the held ones: rows 0-4 kept, 5-8 sent
  const rand = rng(11);
  const sent = [];
  for (let q = 5; q < 9; q++)
    for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) sent.push(...row(rand, q));
  const tokens = Array.from({ length: 10 }, (_, i) => ({ id: i < 5 ? i : 50 + i, text: `n${i}`, label: `n${i}` }));
  store.start({ tokens, self: Float32Array.from(sent), keep: 5 }, held);
  assert.equal(store.queries('self'), 9);
  for (let q = 0; q < 5; q++) {
    for (let l = 0; l < layers; l++)
      for (let h = 0; h < heads; h++) assert.deepEqual(Array.from(store.headRow('self', l, h, q)), full[q][l][h].map(Math.fround));
    assert.notEqual(store.rows.self[q].buffer, startBlock, 'row copied out of the block it no longer fills');
  }
  // aggregates as a store given all nine rows at once computes them
  const fresh = new AttentionStore({ layers, heads });
  const all = new Float32Array(store.rows.self.reduce((n, r) => n + r.length, 0));
  store.rows.self.reduce((at, r) => (all.set(r, at), at + r.length), 0);
  fresh.start({ tokens, self: all });
  for (const selection of ['mean', 'rollout'])
    for (let l = 0; l < layers; l++)
      for (let q = 0; q < 9; q++)
        assert.deepEqual(store.matrix('self', l, selection).row(q), fresh.matrix('self', l, selection).row(q));
  assert.throws(() => store.start({ tokens, self: null, keep: 20 }, store.held()), /kept 20 rows/);
});

test('aggregates: mean and max over heads, the mean of everything', () => {
  const { store, full, layers, heads } = filledStore();
  for (let l = 0; l < layers; l++) {
    const mean = store.matrix('self', l, 'mean');
    const max = store.matrix('self', l, 'max');
    for (let q = 0; q < mean.nq; q++)
      for (let k = 0; k <= q; k++) {
        const vs = full[q][l].map((r) => r[k]);
        assert.ok(Math.abs(mean.row(q)[k] - vs.reduce((a, b) => a + b, 0) / heads) < 1e-6);
        assert.equal(max.row(q)[k], Math.fround(Math.max(...vs)));
      }
  }
  const all = store.matrix('self', 0, 'all');
  const q = 7;
  for (let k = 0; k <= q; k++) {
    const expect = full[q].flat().reduce((a, r) => a + r[k], 0) / (layers * heads);
    assert.ok(Math.abs(all.row(q)[k] - expect) < 1e-6);
  }
});

test('rollout equals the product of the residual-augmented head means, also when extended token by token', () => {
  let early;
  const { store, full, layers, heads } = filledStore({
    beforeTokens: (s) => (early = s.matrix('self', 2, 'rollout').nq), // rows of the prompt, cached before the tokens come
  });
  assert.equal(early, 4);
  const n = store.queries('self');
  store.matrix('self', 0, 'rollout').row(n - 1); // and once more in between
  const mean = (l) => Array.from({ length: n }, (_, q) => Array.from({ length: n }, (_, k) =>
    (k <= q ? full[q][l].reduce((a, r) => a + r[k], 0) / heads : 0)));
  const residual = (l) => mean(l).map((r, q) => {
    const a = r.map((v, k) => 0.5 * v + (k === q ? 0.5 : 0));
    const sum = a.reduce((x, y) => x + y, 0);
    return a.map((v) => v / sum);
  });
  const mul = (A, B) => A.map((r) => B[0].map((_, j) => r.reduce((sum, v, i) => sum + v * B[i][j], 0)));
  let R = residual(0);
  for (let l = 0; l < layers; l++) {
    if (l > 0) R = mul(residual(l), R);
    const m = store.matrix('self', l, 'rollout');
    assert.equal(m.nq, n);
    for (let q = 0; q < n; q++)
      for (let k = 0; k <= q; k++) assert.ok(Math.abs(m.row(q)[k] - R[q][k]) < 1e-5, `layer ${l} [${q}][${k}]`);
  }
});

test('encoder–decoder rows: cross rows over the source, the encoder square, rollout over the encoder', () => {
  const [L, H, S] = [2, 2, 3];
  const rand = rng(11);
  const store = new AttentionStore({ layers: L, heads: H, encoderLayers: L });
  const encoder = new Float32Array(L * H * S * S); // rows in the captured layout: [query][layer][head][key]
  for (let i = 0; i < L * H * S; i++) {
    const r = Array.from({ length: S }, () => rand() + 0.01);
    const s = r.reduce((a, b) => a + b, 0);
    encoder.set(r.map((v) => v / s), i * S);
  }
  const source = [0, 1, 2].map((i) => ({ id: i, text: `s${i}`, label: `s${i}` }));
  store.start({ tokens: [{ id: 1, text: '', label: '<s>' }], self: null, cross: null, source, encoder });
  for (let q = 0; q < 4; q++) {
    const cross = Float32Array.from({ length: L * H * S }, () => 1 / S);
    store.add({ token: { id: 50 + q, text: 'x', label: 'x' }, query: q, self: Float32Array.from({ length: L * H * (q + 1) }, () => 1 / (q + 1)), cross });
  }
  assert.deepEqual(store.kinds, ['self', 'cross', 'encoder']);
  assert.equal(store.queries('cross'), 4);
  assert.equal(store.keys('cross'), S);
  assert.equal(store.queries('encoder'), S);
  // query 2, layer 1, head 1: row 2 starts L·H·S·2 floats in, its (layer 1, head 1) part (1·H + 1)·S after that
  const at = L * H * S * 2 + (1 * H + 1) * S;
  assert.deepEqual(Array.from(store.headRow('encoder', 1, 1, 2)), Array.from(encoder.subarray(at, at + S)));
  assert.throws(() => store.add({ token: { id: 1, text: '', label: '' }, query: 4, self: new Float32Array(3), cross: null }),
    /3 floats are not whole self rows from row 4/);
  const rollout = store.matrix('encoder', 1, 'rollout');
  for (let q = 0; q < S; q++) assert.ok(Math.abs(rollout.row(q).reduce((a, b) => a + b, 0) - 1) < 1e-5);
  assert.throws(() => store.matrix('cross', 0, 'rollout'), /rollout is not defined for cross attention/);
  const doc = JSON.parse(JSON.stringify(store));
  assert.equal(doc.source.length, S);
  assert.equal(doc.maps.cross.data[1][1].length, 4);
  assert.equal(doc.maps.encoder.data[0][0][0].length, S);
});

test('hover: a token lights what the row that wrote it attends to, and its column is shown on the tokens each row wrote', () => {
  const { store } = filledStore();
  const m = store.matrix('self', 0, 0);
  // token 4 was written by row 3 (the row at token 3), as the library's generate steps say
  const { lines, marks } = hoverWeights(m, 'self', { side: 'output', index: 4 });
  assert.deepEqual(Array.from(lines.output.to), Array.from(m.row(3)));
  assert.equal(lines.output.from.length, m.nq + 1);
  assert.equal(lines.output.from[4], 0, 'row 3 (which wrote token 4) cannot see key 4');
  assert.equal(lines.output.from[5], m.row(4)[4], 'row 4 sees key 4 and wrote token 5');
  assert.equal(lines.output.from[7], m.row(6)[4]);
  assert.deepEqual(marks, { row: 3, col: 4 });
  // token 0 was written by no row
  assert.deepEqual(hoverWeights(m, 'self', { side: 'output', index: 0 }).marks, { row: null, col: 0 });
  assert.equal(hoverWeights(m, 'self', { side: 'output', index: 0 }).lines.output.to, null);
  // cross-attention: a source token's column lands on the outputs its rows wrote
  const cross = hoverWeights({ nq: 2, nk: 3, row: (q) => Float32Array.of(q, 1, 2 + q) }, 'cross', { side: 'source', index: 2 });
  assert.deepEqual(Array.from(cross.lines.output.from), [0, 2, 3]);
  assert.equal(cross.lines.source.to, null);
  const out = hoverWeights({ nq: 2, nk: 3, row: (q) => Float32Array.of(q, 1, 2 + q) }, 'cross', { side: 'output', index: 2 });
  assert.deepEqual(Array.from(out.lines.source.to), [1, 1, 3]);
  assert.equal(out.marks.row, 1);
  // an encoder row is its own source token
  const enc = hoverWeights({ nq: 3, nk: 3, row: (q) => Float32Array.of(q, 1, 2) }, 'encoder', { side: 'source', index: 2 });
  assert.equal(enc.marks.row, 2);
  assert.deepEqual(Array.from(enc.lines.source.from), [2, 2, 2]);
  assert.deepEqual(hoverWeights(m, 'self', null).marks, { row: null, col: null });
});

test('labels and export: each decoder row names the token it wrote', () => {
  const { store } = filledStore();
  const labels = store.labels('self');
  assert.equal(labels.wrote[3], store.tokens[4].label);
  assert.equal(labels.wrote.length, store.queries('self'));
  const doc = store.toJSON();
  assert.equal(doc.tokens[0].writtenByRow, null);
  assert.equal(doc.tokens[5].writtenByRow, 4);
  assert.match(doc.convention, /wrote tokens\[q \+ 1\]/);
});
