// Inside a row and what a head does, on the demo page (Model A): the row panel opened from the
// keyboard (scores captured before softmax, the softmax with Σ = 1 equal to the map's row, the
// temperature slider, the 1/√d switch, the formula, the neuron view) and head ablation (heads
// toggled from the keyboard, the same seed regenerated with and without them, checked against
// the library in Node, and the top-10 bars with the top-k cut-off).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { loadModel } from '../../src/js/index.mjs';
import { frames, modelA, modelB, openPage, useBrowser } from './helpers.mjs';

const A = modelA();
const B = modelB();
const env = useBrowser();

const loaded = (page) => page.waitForFunction(() => !document.getElementById('generate').disabled, null, { timeout: 30_000 });
const finished = (page) => page.waitForFunction(() => document.getElementById('stop').disabled &&
  / · [a-z ]+$/.test(document.getElementById('speed').textContent), null, { timeout: 30_000 });
/** A fresh page on `query` that has generated with these inputs (input id → value): { context, page, errors }. */
async function generated(query, inputs) {
  const opened = await openPage(env, { viewport: { width: 1280, height: 1000 } });
  const { page } = opened;
  await page.goto(`${env.srv.isolated.url}/web/?${query}`);
  await loaded(page);
  for (const [id, value] of Object.entries(inputs)) await page.fill(`#${id}`, value);
  await page.focus('#prompt');
  await page.keyboard.press('Control+Enter');
  await finished(page);
  await frames(page);
  return opened;
}

const num = (s) => (s === '−∞' ? -Infinity : Number(s));

describe('the row panel and head ablation (Model A)', () => {
  let context;
  let page;
  let errors;
  const prompt = 'ROMEO:';
  before(async () => ({ context, page, errors } = await generated(A.query,
    { prompt, 'max-tokens': '6', seed: '11', temperature: '0.9', 'top-k': '3' })));
  after(() => context?.close());

  test('Enter on a row opens its arithmetic: captured scores, softmax Σ = 1 equal to the map, τ and 1/√d', async () => {
    await page.focus('#heatmap');
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowUp');
    const q = await page.evaluate(() => window.saccadeDemo.state.cell.q);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#row-sum');
    assert.match(await page.textContent('#row-title'), new RegExp(`^row ${q}: at .* → wrote .* · layer 0, head 0`));
    const table = () => page.$$eval('.row-table tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    let rows = await table();
    assert.equal(rows.length, q + 1, 'one line per key of the row');
    assert.equal(await page.textContent('#row-sum'), 'Σ = 1.0000');
    assert.match(await page.textContent('#row-note'), /bit for bit/);
    // the weights are the map's row (layer 0, head 0)
    const mapRow = await page.evaluate((r) => Array.from(window.saccadeDemo.state.store.matrix('self', 0, 0).row(r)), q);
    rows.forEach((r, j) => assert.ok(Math.abs(Number(r[4].trim().split(' ').pop()) - mapRow[j]) < 6e-5, `key ${j}`));
    // s = q·k / √d, with the √d of the model's head size
    const formula = await page.textContent('#row-formula');
    const [, d, inv] = /d = (\d+), 1\/√d = ([\d.]+)/.exec(formula);
    assert.ok(Math.abs(Number(inv) - 1 / Math.sqrt(Number(d))) < 1e-4);
    for (const r of rows) assert.ok(Math.abs(num(r[3]) - num(r[2]) * Number(inv)) < 2e-3 * Math.max(1, Math.abs(num(r[3]))), r.join(' '));
    const peak1 = Math.max(...rows.map((r) => Number(r[4].trim().split(' ').pop())));

    // τ = 2 from the keyboard: a flatter row that still sums to 1
    await page.focus('#row-tau');
    for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => /τ = 2\.00/.test(document.getElementById('row-formula').textContent));
    rows = await table();
    const w2 = rows.map((r) => Number(r[4].trim().split(' ').pop()));
    const s = rows.map((r) => num(r[3]));
    const max = Math.max(...s);
    const e = s.map((x) => Math.exp((x - max) / 2));
    const z = e.reduce((a, b) => a + b, 0);
    w2.forEach((w, j) => assert.ok(Math.abs(w - e[j] / z) < 2e-4, `softmax(s / 2) at key ${j}: ${w} vs ${e[j] / z}`));
    assert.ok(Math.max(...w2) < peak1 || q === 0, 'a higher temperature flattens the row');
    assert.equal(await page.textContent('#row-sum'), 'Σ = 1.0000');

    // without the 1/√d: s is the raw q·k
    await page.focus('#row-unscaled');
    await page.keyboard.press('Space');
    await page.waitForFunction(() => /removed/.test(document.getElementById('row-formula').textContent));
    rows = await table();
    for (const r of rows) assert.equal(r[3], r[2]);
    assert.equal(await page.$$eval('.row-table thead th', (t) => t[3].textContent), 's = q · k');
    assert.equal(await page.getAttribute('#neurons', 'role'), 'img');
    assert.match(await page.getAttribute('#neurons', 'aria-label'), new RegExp(`query vector of row ${q}`));

    // another head: the panel follows the map
    await page.selectOption('#head', '1');
    await page.waitForFunction(() => /head 1/.test(document.getElementById('row-title')?.textContent ?? ''));
    await page.click('.row-close');
    assert.equal(await page.isVisible('#row-panel'), false);
  });

  test('heads toggled from the keyboard; the same seed with and without them, as the library gives it', async () => {
    const selected = await page.evaluate(() => [window.saccadeDemo.state.layer, window.saccadeDemo.state.head]);
    await page.focus('#ablate-mode');
    await page.keyboard.press('Space');
    await page.focus('#thumbnails');
    await page.keyboard.press('Enter'); // layer 0 head 0
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter'); // layer 0 head 1
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter'); // toggled twice: not ablated
    assert.equal(await page.textContent('#ablate-list'), 'Ablated (self): layer 0 head 0, layer 0 head 1.');
    const s = await page.evaluate(() => [window.saccadeDemo.state.layer, window.saccadeDemo.state.head]);
    assert.deepEqual(s, selected, 'toggling does not change the selected map');
    await page.fill('#ablate-step', '2');
    await page.focus('#ablate-compare');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#compare-ablated', { timeout: 30_000 });
    const shown = await page.$$eval('#output .tok.gen', (t) => t.map((x) => x.textContent).join(''));
    const plain = await page.textContent('#compare-plain .compare-text');
    const ablated = await page.textContent('#compare-ablated .compare-text');

    const options = { maxTokens: 6, seed: 11, temperature: 0.9, topK: 3 };
    const m = await loadModel(A.file, { variant: 'st', ablate: [[0, 0], [0, 1]] });
    try {
      const ids = m.tokenize(prompt, { bos: m.info.addBos });
      const texts = async () => {
        let t = '';
        for await (const step of m.generate(ids, options)) t += step.text;
        return t;
      };
      assert.equal(ablated, await texts(), 'the ablated text is the library\'s with those heads ablated');
      // the bars at step 2: softmax(logits / 0.9) after the prompt and the first two tokens
      const gen = [];
      for await (const step of m.generate(ids, options)) gen.push(step.id);
      const logits = m.forward([...ids, ...gen.slice(0, 2)]);
      const mx = Math.max(...logits);
      const e = Array.from(logits, (x) => Math.exp((x - mx) / 0.9));
      const z = e.reduce((a, b) => a + b, 0);
      const top = e.map((x, id) => [x / z, id]).sort((a, b) => b[0] - a[0]).slice(0, 3);
      const bars = await page.$$eval('#compare-ablated .top-bars li:not(.cut-line)', (li) => li.map((x) => x.textContent));
      top.forEach(([p], i) => assert.ok(bars[i].endsWith(` ${(100 * p).toFixed(1)}%`), `bar ${i}: ${bars[i]} vs ${(100 * p).toFixed(1)}%`));
      m.setAblation([]);
      const expected = await texts();
      assert.equal(plain, expected, 'the unablated text is the library\'s');
      assert.equal(shown.replace(/<eos>$/, ''), expected.slice(0, shown.replace(/<eos>$/, '').length));
    } finally {
      m.dispose();
    }
    // top-10 bars with the top-k cut after the third; ablation moved the distribution
    const items = await page.$$eval('#compare-ablated .top-bars li', (li) => li.map((x) => [x.className, x.textContent]));
    const plainItems = await page.$$eval('#compare-plain .top-bars li', (li) => li.map((x) => [x.className, x.textContent]));
    assert.notDeepEqual(items, plainItems, 'the ablated heads change the next-token distribution');
    assert.equal(items.filter(([c]) => c !== 'cut-line').length, 10);
    assert.match(items[3][1], /top-k = 3/);
    assert.ok(items.slice(4).every(([c]) => c === 'cut-k'));
    assert.match(await page.textContent('#compare-ablated'), /next token at step 2 \(temperature 0\.9, top-k 3, top-p 0\.95\)/);
    // the row panel still reads the page's generation afterwards
    await page.focus('#heatmap');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#row-sum');
    await page.focus('#row-unscaled');
    await page.keyboard.press('Space'); // back to the scaled scores
    await page.focus('#row-tau');
    for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowLeft'); // back to τ = 1
    await page.waitForFunction(() => /bit for bit/.test(document.getElementById('row-note')?.textContent ?? ''));
    const { q, layer, head } = await page.evaluate(() => ({ q: window.saccadeDemo.state.cell.q, ...window.saccadeDemo.state }));
    const mapRow = await page.evaluate(([r, l, h]) => Array.from(window.saccadeDemo.state.store.matrix('self', l, h).row(r)), [q, layer, head]);
    const weights = await page.$$eval('.row-table tbody tr', (rows) => rows.map((r) => Number(r.children[4].textContent.trim().split(' ').pop())));
    weights.forEach((w, j) => assert.ok(Math.abs(w - mapRow[j]) < 6e-5, `after the comparison, key ${j}: ${w} vs ${mapRow[j]}`));
    assert.deepEqual(errors, []);
  });

  test('Stop ends a comparison; so does loading another model (its "generating twice" stayed for good)', async () => {
    await page.fill('#prompt', 'JULIET:'); // not the last run's prompt: the inputs' settings, many tokens
    await page.fill('#max-tokens', '5000');
    // Each action in the same task of the page as the click that starts the comparison, so that
    // it comes while the comparison runs however fast the machine (Model A's comparison fills
    // its context in a fraction of a second): Stop as the worker receives the probe.
    const stopped = await page.evaluate(() => {
      document.getElementById('ablate-compare').click();
      const shown = document.getElementById('compare-result').textContent;
      document.getElementById('stop').click();
      return shown;
    });
    assert.match(stopped, /^generating twice/);
    await page.waitForFunction(() => /^not compared: /.test(document.getElementById('compare-result').textContent), null, { timeout: 10_000 });
    assert.equal(await page.isDisabled('#generate'), false);
    // another model's load (Model A again, from a file the page holds already)
    await page.evaluate(() => document.body.append(Object.assign(document.createElement('input'), { type: 'file', id: 'next-model', hidden: true })));
    await page.setInputFiles('#next-model', A.file);
    const loading = await page.evaluate(() => {
      document.getElementById('ablate-compare').click();
      const shown = document.getElementById('compare-result').textContent;
      const files = new DataTransfer();
      files.items.add(document.getElementById('next-model').files[0]);
      const input = document.getElementById('model-file');
      input.files = files.files;
      input.dispatchEvent(new Event('change'));
      return shown;
    });
    assert.match(loading, /^generating twice/);
    await page.waitForFunction(() => /^not compared: /.test(document.getElementById('compare-result').textContent), null, { timeout: 10_000 });
    await page.waitForFunction(() => /^Loaded /.test(document.getElementById('progress-text').textContent), null, { timeout: 30_000 });
    assert.deepEqual(errors, []);
  });
});

describe('cross-attention rows and cross heads ablated (Model B)', () => {
  let context;
  let page;
  let errors;
  before(async () => ({ context, page, errors } = await generated(B.query, { prompt: 'nov 21, 2026', 'max-tokens': '12', seed: '5' })));
  after(() => context?.close());

  test('a cross row has one key per source token; an aggregate says to pick a head', async () => {
    await page.selectOption('#kind', 'cross');
    await page.selectOption('#head', 'mean');
    await page.focus('#heatmap');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /single head/.test(document.getElementById('row-panel').textContent));
    await page.selectOption('#head', '2');
    await page.waitForSelector('#row-sum');
    const { q, source } = await page.evaluate(() => ({ q: window.saccadeDemo.state.cell.q, source: window.saccadeDemo.state.store.source.length }));
    assert.equal(await page.$$eval('.row-table tbody tr', (r) => r.length), source);
    assert.equal(await page.textContent('#row-sum'), 'Σ = 1.0000');
    assert.match(await page.textContent('#row-note'), /bit for bit/);
    const layer = await page.evaluate(() => window.saccadeDemo.state.layer);
    const mapRow = await page.evaluate(([r, l]) => Array.from(window.saccadeDemo.state.store.matrix('cross', l, 2).row(r)), [q, layer]);
    const weights = await page.$$eval('.row-table tbody tr', (rows) => rows.map((r) => Number(r.children[4].textContent.trim().split(' ').pop())));
    weights.forEach((w, j) => assert.ok(Math.abs(w - mapRow[j]) < 6e-5, `key ${j}: ${w} vs ${mapRow[j]}`));
  });

  test('shift-click toggles a cross head; the comparison ablates cross-attention', async () => {
    const box = await page.$('#thumbnails');
    await box.scrollIntoViewIfNeeded();
    const b = await box.boundingBox();
    const before = await page.evaluate(() => [window.saccadeDemo.state.layer, window.saccadeDemo.state.head]);
    await page.keyboard.down('Shift');
    await page.mouse.click(b.x + 26 + 5, b.y + 14 + 5); // layer 0, head 0 (the grid's first cell)
    await page.keyboard.up('Shift');
    assert.equal(await page.textContent('#ablate-list'), 'Ablated (cross): layer 0 head 0.');
    assert.deepEqual(await page.evaluate(() => [window.saccadeDemo.state.layer, window.saccadeDemo.state.head]), before);
    await page.click('#ablate-compare');
    await page.waitForFunction(() => /ablated:|error/.test(document.getElementById('compare-result').textContent), null, { timeout: 30_000 });
    assert.doesNotMatch(await page.textContent('#compare-result'), /error/);
    const shown = await page.$$eval('#output .tok.gen', (t) => t.map((x) => x.textContent).join(''));
    const plain = await page.textContent('#compare-plain .compare-text');
    assert.equal(plain, shown.replace(/<eos>$/, ''), 'the unablated run is the page\'s generation');
    const m = await loadModel(B.file, { variant: 'st' });
    try {
      m.setAblation([[0, 0]], { kind: 'cross' });
      let t = '';
      for await (const step of m.generate('nov 21, 2026', { maxTokens: 12, seed: 5 })) t += step.text;
      assert.equal(await page.textContent('#compare-ablated .compare-text'), t);
    } finally {
      m.dispose();
    }
    assert.deepEqual(errors, []);
  });
});
