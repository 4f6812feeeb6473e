// The Ideas page (web/explore.html) and its embeddable elements (web/explore/elements.mjs) in
// headless Chromium: every section computes through the attention primitive in wasm, and the
// controls change what is drawn — dragging a point moves the fit and the weights, learning w
// lowers the held-out loss, a larger d saturates the unscaled dot product's rows but not the scaled
// ones, masked cells are drawn as masked, and Model A without positions is equivariant.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { canvasStats, frames, screenshot, openPage, useBrowser, withPage } from './helpers.mjs';

const env = useBrowser();

/** Waits until every section of `sections` (an expression in the page) has computed and, for positions, loaded the model. */
const settled = (page, expr) => page.waitForFunction((expr) => {
  const s = new Function(`return ${expr}`)();
  if (!s) return false;
  for (const section of Object.values(s)) {
    const err = section.root.querySelector('.error:not([hidden])');
    if (err) throw new Error(err.textContent);
    if (!(section.state.computed > 0)) return false;
  }
  return !s.positions || s.positions.state.equivariance !== null;
}, expr, { timeout: 60_000 });

async function openIdeas(mode = 'isolated', viewport = { width: 1280, height: 1000 }) {
  const opened = await openPage(env, { viewport });
  const { page } = opened;
  await page.goto(`${env.srv[mode].url}/web/explore.html`);
  await settled(page, 'window.saccadeIdeas');
  await frames(page);
  return opened;
}

/**
 * Pixels of a cell of a MatrixView (`view`: an expression in the page): the fraction that is grey
 * (the masked hatching; no colour of the map is grey) and the fraction that is white.
 */
const cellPixels = (page, view, r, c) => page.evaluate(({ view, r, c }) => {
  const v = new Function(`return ${view}`)();
  const { x, y, w, h } = v.cellRect(r, c);
  const s = v.canvas.width / v.layout.width;
  const inset = Math.max(1, Math.floor(w * s * 0.15));
  const data = v.canvas.getContext('2d').getImageData(Math.round(x * s) + inset, Math.round(y * s) + inset,
    Math.max(1, Math.round(w * s) - 2 * inset), Math.max(1, Math.round(h * s) - 2 * inset)).data;
  let grey = 0;
  for (let i = 0; i < data.length; i += 4) {
    const spread = Math.max(data[i], data[i + 1], data[i + 2]) - Math.min(data[i], data[i + 1], data[i + 2]);
    if (spread < 30) grey++;
  }
  return grey / (data.length / 4);
}, { view, r, c });

/** Moves the mouse over the centre of a MatrixView's cell (r, c) (`view`: an expression in the page). */
async function hoverCell(page, view, r, c) {
  await page.evaluate((view) => new Function(`return ${view}`)().canvas.scrollIntoView({ block: 'center' }), view);
  const at = await page.evaluate(({ view, r, c }) => {
    const v = new Function(`return ${view}`)();
    const { x, y, w, h } = v.cellRect(r, c);
    const rect = v.canvas.getBoundingClientRect();
    const s = rect.width / v.layout.width;
    return [rect.left + (x + w / 2) * s, rect.top + (y + h / 2) * s];
  }, { view, r, c });
  await page.mouse.move(...at);
}

test('the Ideas page: every section computes in wasm, the demo links to it', async () => {
  const { context, page, errors } = await openIdeas();
  const headings = await page.$$eval('.explore-section h2', (hs) => hs.map((h) => h.textContent));
  assert.equal(headings.length, 4);
  assert.match(headings[0], /^Kernel regression/);
  assert.match(headings[1], /^Score functions/);
  assert.match(headings[2], /^Masks/);
  assert.match(headings[3], /^Positions/);
  for (const id of ['kernel', 'scores', 'masks', 'positions']) {
    const canvases = await page.$$eval(`#${id} canvas`, (cs) => cs.length);
    assert.ok(canvases > 0, id);
  }
  // every formula and control is labelled
  const unlabelled = await page.$$eval('.explore-section input, .explore-section select', (els) =>
    els.filter((el) => !el.closest('label') && !el.getAttribute('aria-label')).length);
  assert.equal(unlabelled, 0);
  assert.ok((await canvasStats(page, '#scores canvas')).colored > 0.2);

  await page.goto(`${env.srv.isolated.url}/web/`);
  assert.equal(await page.getAttribute('nav a[href="explore.html"]', 'href'), 'explore.html');
  assert.deepEqual(errors, []);
  await context.close();
});

/**
 * Every figure of the page: its width, its canvas's and caption's boxes (CSS px), and the size the
 * canvas was drawn for (own: its style width, draw.mjs; ratio: height / width of its pixels).
 */
const figureSizes = (page) => page.$$eval('.explore-section figure', (figs) => figs.map((f) => {
  const el = f.querySelector('canvas');
  const canvas = el.getBoundingClientRect();
  const caption = f.querySelector('figcaption').getBoundingClientRect();
  return { k: el.dataset.k, own: parseFloat(el.style.width), ratio: el.height / el.width, figure: f.getBoundingClientRect().width,
    canvas: { left: canvas.left, right: canvas.right, width: canvas.width, height: canvas.height }, caption: { right: caption.right, width: caption.width } };
}));

test('figures on a wide screen: each canvas at its own size, its caption wrapped to it', async () => {
  const { context, page, errors } = await openIdeas();
  const figures = await figureSizes(page);
  assert.equal(figures.length, 17);
  for (const f of figures) {
    assert.ok(Math.abs(f.canvas.width - f.own) < 0.5, `${f.k}: the canvas is ${f.canvas.width} px wide, drawn for ${f.own}`);
    assert.ok(Math.abs(f.canvas.height - f.own * f.ratio) < 0.5, `${f.k}: the canvas is ${f.canvas.height} px high, drawn for ${f.own * f.ratio}`);
    // the caption wraps to the canvas (and is at least its min-width, 180 px)
    assert.ok(Math.abs(f.caption.width - Math.max(f.own, 180)) < 0.5, `${f.k}: the caption is ${f.caption.width} px wide, the canvas ${f.own}`);
    assert.ok(Math.abs(f.figure - f.caption.width) < 0.5, f.k);
  }
  assert.equal(figures.find((f) => f.k === 'plot').own, 420);
  assert.deepEqual(errors, []);
  await context.close();
});

test('on a 320 px phone nothing is wider than the screen: canvases scale down, and the pointer still finds its cell and its point', async () => {
  const { context, page, errors } = await openIdeas('isolated', { width: 320, height: 700 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 320, 'the page scrolls sideways');
  const figures = await figureSizes(page);
  for (const f of figures) {
    assert.ok(f.canvas.left >= 0 && f.canvas.right <= 320 && f.caption.right <= 320, `${f.k} leaves the screen: ${JSON.stringify(f)}`);
    assert.ok(Math.abs(f.canvas.height / f.canvas.width - f.ratio) < 0.01, `${f.k}: the scaled canvas lost its shape`);
    assert.ok(f.caption.width <= Math.max(f.canvas.width, 180) + 0.5, `${f.k}: the caption is wider than the canvas`);
  }
  const scaled = (k) => figures.find((f) => f.k === k);
  assert.ok(scaled('plot').canvas.width < 300 && scaled('heatmap').canvas.width < scaled('heatmap').own, 'the kernel canvases are scaled down');

  // hovering a cell near the heatmap's far corner reads that cell (an unscaled mapping would be cells off)
  const K = 'window.saccadeIdeas.kernel';
  const [r, c] = await page.evaluate((K) => {
    const { layout } = new Function(`return ${K}`)().heatmap;
    return [layout.rows - 4, layout.cols - 3];
  }, K);
  await hoverCell(page, `${K}.heatmap`, r, c);
  const point = await page.evaluate(([K, c]) => new Function(`return ${K}`)().state.result.order[c] + 1, [K, c]);
  const readout = await page.textContent('#kernel [data-k=hover]');
  assert.ok(readout.startsWith(`query x = ${r / 10}, key xᵢ = `) && readout.includes(`(point ${point})`), `cell (${r}, ${c}) read as: ${readout}`);

  // dragging a point of the scaled plot moves that point to where it is dropped
  const at = await page.evaluate((K) => {
    const k = new Function(`return ${K}`)();
    k.plot.canvas.scrollIntoView({ block: 'center' });
    const i = k.state.train.x.indexOf(Math.max(...k.state.train.x)); // the rightmost point: where an unscaled mapping is furthest off
    const rect = k.plot.canvas.getBoundingClientRect();
    const s = rect.width / k.plot.width;
    const x = k.state.train.x[i];
    const y = k.state.train.y[i];
    return { i, x, y, from: [rect.left + k.plot.px(x) * s, rect.top + k.plot.py(y) * s], to: [rect.left + k.plot.px(x - 1) * s, rect.top + k.plot.py(y + 1) * s] };
  }, K);
  await page.mouse.move(...at.from);
  await page.mouse.down();
  await page.mouse.move(...at.to, { steps: 4 });
  await page.mouse.up();
  await frames(page);
  const moved = await page.evaluate(([K, i]) => {
    const { state } = new Function(`return ${K}`)();
    return [state.selected, state.train.x[i], state.train.y[i]];
  }, [K, at.i]);
  assert.equal(moved[0], at.i, 'the drag picked another point');
  assert.ok(Math.abs(moved[1] - (at.x - 1)) < 0.05 && Math.abs(moved[2] - (at.y + 1)) < 0.1, `point ${at.i} moved to (${moved[1]}, ${moved[2]}), expected (${at.x - 1}, ${at.y + 1})`);
  await screenshot(page, 'explore-phone');

  // the embeddable elements on their example page, in their shadow roots
  await page.goto(`${env.srv.isolated.url}/web/explore-embed-example.html`);
  await page.waitForFunction(() => ['kernel', 'scores', 'masks', 'positions'].every((id) => document.getElementById(id).section?.state.computed > 0),
    null, { timeout: 60_000 });
  await frames(page);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 320, 'the elements\' example page scrolls sideways');
  assert.deepEqual(errors, []);
  await context.close();
});

test('kernel regression: dragging a point moves the fit and the weights; learning w lowers the held-out loss', async () => {
  const { context, page, errors } = await openIdeas();
  const K = 'window.saccadeIdeas.kernel';
  const snapshot = () => page.evaluate((K) => {
    const k = new Function(`return ${K}`)();
    return { fit: Array.from(k.state.result.fit), computed: k.state.computed };
  }, K);
  const before = await snapshot();
  const heatBefore = await canvasStats(page, '#kernel [data-k=heatmap]');

  // drag training point 10 right by 0.6 and up by 2 (data units) with the mouse: its key and its value change
  const at = await page.evaluate((K) => {
    const k = new Function(`return ${K}`)();
    const i = 10;
    const r = k.plot.canvas.getBoundingClientRect();
    const s = r.width / k.plot.width;
    const x = k.state.train.x[i];
    const y = k.state.train.y[i];
    return { from: [r.left + k.plot.px(x) * s, r.top + k.plot.py(y) * s], to: [r.left + k.plot.px(x + 0.6) * s, r.top + k.plot.py(y + 2) * s], x, y };
  }, K);
  await page.mouse.move(...at.from);
  await page.mouse.down();
  await page.mouse.move(at.from[0], (at.from[1] + at.to[1]) / 2, { steps: 3 });
  await page.mouse.move(...at.to, { steps: 3 });
  await page.mouse.up();
  await page.waitForFunction(([K, n]) => new Function(`return ${K}`)().state.computed > n, [K, before.computed]);
  await frames(page);
  const after = await snapshot();
  const [mx, moved] = await page.evaluate((K) => {
    const { train } = new Function(`return ${K}`)().state;
    return [train.x[10], train.y[10]];
  }, K);
  assert.ok(Math.abs(mx - (at.x + 0.6)) < 0.05 && Math.abs(moved - (at.y + 2)) < 0.1, `the point moved to (${mx}, ${moved}), expected (${at.x + 0.6}, ${at.y + 2})`);
  const change = Math.max(...after.fit.map((v, i) => Math.abs(v - before.fit[i])));
  assert.ok(change > 0.05, `the fit moved by ${change}`);
  const heatAfter = await canvasStats(page, '#kernel [data-k=heatmap]');
  assert.notEqual(heatAfter.hash, heatBefore.hash);

  // the keyboard moves the selected point too
  const y0 = moved;
  await page.focus('#kernel [data-k=plot]');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(([K, y]) => new Function(`return ${K}`)().state.train.y[10] < y - 0.05, [K, y0]);

  // learn w: the loss falls, w moves, the heatmap changes
  const widthBefore = await page.$eval('#kernel [data-k=width-out]', (o) => o.textContent);
  const learned = page.evaluate(() => new Promise((resolve) => document.getElementById('kernel')
    .addEventListener('learned', (e) => resolve({ width: e.detail.width, losses: Array.from(e.detail.losses) }), { once: true })));
  await page.getByRole('button', { name: 'Learn w' }).click();
  const { width, losses } = await learned;
  await frames(page);
  assert.ok(losses.length > 2);
  assert.ok(losses.at(-1) < losses[0] * 0.98, `the held-out loss went from ${losses[0]} to ${losses.at(-1)}`);
  for (let i = 1; i < losses.length; i++) assert.ok(Number.isFinite(losses[i]));
  assert.notEqual(await page.$eval('#kernel [data-k=width-out]', (o) => o.textContent), widthBefore);
  assert.match(await page.$eval('#kernel [data-k=loss-text]', (el) => el.textContent), new RegExp(`^step ${losses.length - 1} of ${losses.length - 1}: w = `));
  assert.ok(Math.abs(width - Number(await page.$eval('#kernel [data-k=width-out]', (o) => o.textContent))) / width < 0.01);
  assert.notEqual((await canvasStats(page, '#kernel [data-k=heatmap]')).hash, heatAfter.hash);
  assert.ok((await canvasStats(page, '#kernel [data-k=loss]')).colored > 0.005);
  await screenshot(page, 'explore-kernel');
  assert.deepEqual(errors, []);
  await context.close();
});

test('scores: a larger d saturates the unscaled dot product (its row entropy falls) but not the scaled one', async () => {
  const { context, page, errors } = await openIdeas();
  const entropy = (score) => page.$eval(`#scores [data-k=h-${score}]`, (el) => Number(/H = ([\d.]+)/.exec(el.textContent)[1]));
  const slider = page.locator('#scores [data-k=d]');
  const at = async (key) => {
    const n = await page.evaluate(() => window.saccadeIdeas.scores.state.computed);
    await slider.focus();
    await page.keyboard.press(key); // the slider is keyboard-operable
    await page.waitForFunction((n) => window.saccadeIdeas.scores.state.computed > n, n);
    await frames(page);
    return { d: Number(await page.$eval('#scores [data-k=d-out]', (o) => o.textContent)), dot: await entropy('dot'), scaled: await entropy('scaledDot') };
  };
  const small = await at('Home');
  const large = await at('End');
  assert.equal(small.d, 1);
  assert.equal(large.d, 512);
  assert.ok(large.dot < small.dot - 0.5, `dot-product entropy ${small.dot} at d = 1, ${large.dot} at d = 512`);
  assert.ok(large.dot < 0.5, `dot-product rows at d = 512 are not saturated: H = ${large.dot}`);
  assert.ok(Math.abs(large.scaled - small.scaled) < 0.6, `scaled entropy ${small.scaled} at d = 1, ${large.scaled} at d = 512`);
  assert.ok(large.scaled > 1, `scaled rows at d = 512 saturated: H = ${large.scaled}`);
  // every row of every score's weights sums to 1
  const sums = await page.evaluate(() => Object.values(window.saccadeIdeas.scores.state.results).map((r) => {
    let worst = 0;
    for (let q = 0; q < r.queries; q++) worst = Math.max(worst, Math.abs(r.row(0, 0, q).reduce((a, b) => a + b, 0) - 1));
    return worst;
  }));
  assert.equal(sums.length, 5);
  for (const s of sums) assert.ok(s < 1e-5);

  // temperature: τ → small makes the scaled rows sharper
  const tau = page.locator('#scores [data-k=tau]');
  const n = await page.evaluate(() => window.saccadeIdeas.scores.state.computed);
  await tau.focus();
  await page.keyboard.press('Home');
  await page.waitForFunction((n) => window.saccadeIdeas.scores.state.computed > n, n);
  await frames(page);
  assert.ok(await entropy('scaledDot') < large.scaled - 0.5);
  await screenshot(page, 'explore-scores');
  assert.deepEqual(errors, []);
  await context.close();
});

test('masks: toggling the causal and padding masks draws exactly the masked cells as masked', async () => {
  const { context, page, errors } = await openIdeas();
  const map = (b) => `window.saccadeIdeas.masks.maps[${b}]`;
  const toggle = async (name) => {
    const n = await page.evaluate(() => window.saccadeIdeas.masks.state.computed);
    await page.locator(`#masks [data-k=${name}]`).focus();
    await page.keyboard.press('Space');
    await page.waitForFunction((n) => window.saccadeIdeas.masks.state.computed > n, n);
    await frames(page);
  };
  // the page opens with the padding mask: sequence 2 has length 4 of 6, so keys 4 and 5 are masked
  assert.equal(await page.evaluate(() => window.saccadeIdeas.masks.state.mask), 'padding');
  assert.ok(await cellPixels(page, map(1), 0, 5) > 0.95);
  assert.ok(await cellPixels(page, map(1), 5, 4) > 0.95);
  assert.ok(await cellPixels(page, map(1), 0, 1) < 0.05); // a key within the length: a weight's colour
  assert.ok(await cellPixels(page, map(0), 0, 5) < 0.05); // sequence 1 is full length
  // hovering a cell reads it out
  await hoverCell(page, map(1), 0, 5);
  assert.equal(await page.textContent('#masks [data-k=hover]'), 'sequence 2: query 1 “a”, key 6 “⟨pad⟩”: masked (score −∞, weight 0)');
  await hoverCell(page, map(1), 2, 1);
  assert.match(await page.textContent('#masks [data-k=hover]'), /^sequence 2: query 3 “ran”, key 2 “dog”: α = 0\.\d+$/);

  await toggle('causal');
  assert.equal(await page.evaluate(() => window.saccadeIdeas.masks.state.mask), 'causal+padding');
  assert.ok(await cellPixels(page, map(0), 0, 1) > 0.95); // above the diagonal
  assert.ok(await cellPixels(page, map(0), 3, 3) < 0.05); // the diagonal is seen
  assert.ok(await cellPixels(page, map(0), 5, 0) < 0.05);

  await toggle('padding');
  assert.equal(await page.evaluate(() => window.saccadeIdeas.masks.state.mask), 'causal');
  assert.ok(await cellPixels(page, map(1), 5, 5) < 0.05); // padding attended to
  assert.ok(await cellPixels(page, map(1), 0, 1) > 0.95);

  await toggle('causal');
  assert.equal(await page.evaluate(() => window.saccadeIdeas.masks.state.mask), 'none');
  const anyMasked = await page.evaluate(() => window.saccadeIdeas.masks.state.result.scores.some((s) => s === -Infinity));
  assert.equal(anyMasked, false);
  for (const b of [0, 1, 2]) assert.ok(await cellPixels(page, map(b), 0, 5) < 0.05);
  // the legend shows the masked pattern
  assert.ok((await canvasStats(page, '#masks [data-k=swatch]')).colored > 0.5);
  // a length out of range, entered, shows as the length drawn
  for (const [typed, shown] of [['99', '6'], ['0', '1'], ['-5', '1'], ['2.6', '3']]) {
    const n = await page.evaluate(() => window.saccadeIdeas.masks.state.computed);
    await page.fill('#masks [data-k=len-1]', typed);
    await page.locator('#masks [data-k=len-1]').press('Enter'); // (a number box commits on Enter: 'change')
    await page.waitForFunction((n) => window.saccadeIdeas.masks.state.computed > n, n);
    assert.equal(await page.inputValue('#masks [data-k=len-1]'), shown, typed);
    assert.equal(await page.evaluate(() => window.saccadeIdeas.masks.state.lengths[1]), Number(shown), typed);
  }
  await screenshot(page, 'explore-masks');
  assert.deepEqual(errors, []);
  await context.close();
});

test('positions: without positions Model A is equivariant to a shuffle of the prompt; with them it is not', async () => {
  const { context, page, errors } = await openIdeas();
  const eq = () => page.evaluate(() => {
    const e = window.saccadeIdeas.positions.state.equivariance;
    return { removed: e.removed, deltas: e.deltas, equal: e.equal, perm: e.perm, layer: e.layer.delta };
  });
  const removed = await eq();
  assert.equal(removed.removed, true);
  assert.ok(removed.perm.some((p, i) => p !== i), 'the shuffle is not the identity');
  assert.ok(removed.deltas[0] < 1e-4, `layer 0 differs by ${removed.deltas[0]} without positions`);
  assert.match(await page.$eval('#positions [data-k=verdict]', (el) => el.textContent), /^Positions removed: equal up to the shuffle/);
  // one unmasked layer over Model A's vectors: every output row equal up to the shuffle
  assert.ok(removed.layer < 1e-4, `one layer without positions differs by ${removed.layer}`);
  assert.match(await page.$eval('#positions [data-k=layer-verdict]', (el) => el.textContent), /equal up to the shuffle/);
  console.log(`largest differences without positions: layer 0 ${removed.deltas[0]}, every layer ${removed.deltas.join(', ')}, one unmasked layer ${removed.layer}`);

  const n = await page.evaluate(() => window.saccadeIdeas.positions.state.computed);
  await page.locator('#positions [data-k=off]').uncheck();
  await page.waitForFunction((n) => window.saccadeIdeas.positions.state.computed > n, n);
  const trained = await eq();
  assert.equal(trained.removed, false);
  assert.ok(trained.deltas[0] > 1e-3, `layer 0 differs by only ${trained.deltas[0]} with positions`);
  assert.match(await page.$eval('#positions [data-k=verdict]', (el) => el.textContent), /^Positions as trained: different/);
  assert.ok(trained.layer > 2e-4, `one layer with positions differs by only ${trained.layer}`);
  assert.match(await page.$eval('#positions [data-k=layer-verdict]', (el) => el.textContent), /: different/);
  console.log(`largest differences with positions: every layer ${trained.deltas.join(', ')}, one unmasked layer ${trained.layer}`);

  // the sinusoids' dot products depend on i − j only; the learned table is Model A's
  const { spread, learned } = await page.evaluate(() => {
    const s = window.saccadeIdeas.positions.state;
    return { spread: s.sinusoid.spread, learned: { rows: s.learned.rows, diag: s.learned.cos[0] } };
  });
  assert.ok(spread < 1e-3, `PE(i)·PE(j) is not a function of i − j: ${spread}`);
  assert.ok(learned.rows >= 64);
  assert.ok(Math.abs(learned.diag - 1) < 1e-4);
  await screenshot(page, 'explore-positions');

  // prompts that cannot be shuffled: said, and the last prompt's results leave the screen
  for (const [prompt, message] of [['ab', /at least 3 characters/], ['€€€€', /leaves this prompt as it was/], ['aaaa', /leaves this prompt as it was/]]) {
    const before = await page.evaluate(() => window.saccadeIdeas.positions.state.computed);
    await page.locator('#positions [data-k=prompt]').fill(prompt);
    await page.waitForFunction((source) => new RegExp(source).test(document.querySelector('#positions [data-k=error]').textContent),
      message.source, { timeout: 10_000 });
    assert.equal(await page.evaluate(() => window.saccadeIdeas.positions.state.computed), before);
    assert.equal(await page.$eval('#positions [data-k=verdict]', (el) => el.textContent), '');
    assert.equal(await page.$eval('#positions [data-k=texts]', (el) => el.textContent), '');
  }
  // "abc" has one shuffle that keeps c last and changes it: every seed finds it (half of them
  // drew the identity and blamed the characters)
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    // from a prompt refused for its length, so that the wait below cannot take a refusal still on
    // screen from the prompt before ('aaaa' is refused in the words it waits for) as abc's
    await page.locator('#positions [data-k=prompt]').fill('ab');
    await page.waitForFunction(() => /at least 3 characters/.test(document.querySelector('#positions [data-k=error]').textContent));
    await page.evaluate((seed) => { window.saccadeIdeas.positions.state.seed = seed; }, seed);
    const before = await page.evaluate(() => window.saccadeIdeas.positions.state.computed);
    await page.locator('#positions [data-k=prompt]').fill('abc');
    await page.waitForFunction((n) => window.saccadeIdeas.positions.state.computed > n
      || /leaves this prompt/.test(document.querySelector('#positions [data-k=error]').textContent), before, { timeout: 10_000 });
    assert.equal(await page.$eval('#positions [data-k=error]', (el) => el.textContent), '', `seed ${seed}`);
    assert.match(await page.$eval('#positions [data-k=texts]', (el) => el.textContent), /shuffle: .*bac/, `seed ${seed}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

const ELEMENTS = {
  'saccade-kernel-regression': 'kernel="epanechnikov" width="1.5"',
  'saccade-scores': 'd="64"',
  'saccade-masks': 'causal',
  'saccade-positions': 'positions="32" dims="32"',
};

test('each embeddable element renders standalone, without COOP/COEP', async () => {
  await withPage(env, async ({ page, errors }) => {
    const base = `${env.srv.plain.url}/web/`;
    for (const [name, attributes] of Object.entries(ELEMENTS)) {
      // a page holding only this element and the one script tag
      await page.route(`${base}standalone.html`, (route) => route.fulfill({
        contentType: 'text/html; charset=utf-8',
        body: `<!doctype html><html><head><link rel="icon" href="data:,"><script type="module" src="explore/elements.mjs"></script></head>` +
          `<body><${name} ${attributes}></${name}></body></html>`,
      }));
      await page.goto(`${base}standalone.html`);
      await page.waitForFunction((name) => {
        const s = document.querySelector(name)?.section;
        const err = s?.root.querySelector('.error:not([hidden])');
        if (err) throw new Error(err.textContent);
        return s && s.state.computed > 0 && (name !== 'saccade-positions' || s.state.equivariance);
      }, name, { timeout: 60_000 });
      await frames(page);
      const canvases = await page.$eval(name, (el) => el.shadowRoot.querySelectorAll('canvas').length);
      assert.ok(canvases >= 3, name);
      const stats = await canvasStats(page, 'canvas', name);
      assert.ok(stats.colored > 0.02, `${name}'s first canvas is blank: ${stats.colored}`);
      // the page's stylesheet applies inside the shadow root
      const styled = await page.$eval(name, (el) => getComputedStyle(el.shadowRoot.querySelector('.formula') ?? el.shadowRoot.querySelector('h2')).fontSize);
      assert.notEqual(styled, '');
      await page.unroute(`${base}standalone.html`);
    }
    // the attributes reached the sections
    await page.goto(`${base}explore-embed-example.html`);
    await page.waitForFunction(() => ['kernel', 'scores', 'masks', 'positions'].every((id) => document.getElementById(id).section?.state.computed > 0),
      null, { timeout: 60_000 });
    assert.equal(await page.evaluate(() => document.getElementById('kernel').section.state.result.kernel), 'epanechnikov');
    assert.equal(await page.evaluate(() => document.getElementById('scores').section.state.d), 64);
    assert.equal(await page.evaluate(() => document.getElementById('masks').section.state.mask), 'causal+padding');
    await page.waitForFunction(() => document.getElementById('positions').section.state.equivariance, null, { timeout: 60_000 });
    assert.equal(await page.evaluate(() => document.getElementById('positions').section.state.sinusoid.n), 32);
    await screenshot(page, 'explore-embed');
    assert.deepEqual(errors, []);
  }, { viewport: { width: 1100, height: 900 } });
});
