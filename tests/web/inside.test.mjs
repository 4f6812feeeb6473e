// Inside the attention views: one convention (a token is tied to the query row that wrote it)
// in the hover, the readout, the alignment and the export; Model B as an alignment lesson; and
// legibility and keyboard access (every label drawn, legends, no stale readout, the model view,
// the first-visit hint, phones, an export that reproduces the run). Keyboard paths use only keys.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ALIGNMENT_LESSON, LIBRARY_VERSION } from '../../web/config.mjs';
import { MIN_CELL } from '../../web/views/heatmap.mjs';
import { artifacts, frames, modelA, modelB, root, screenshot, openPage, useBrowser } from './helpers.mjs';

const A = modelA();
const B = modelB();
const env = useBrowser();

/** A fresh context with the page open on `query`, its model loaded: { context, page, errors }. */
async function open(query, options = {}) {
  const opened = await openPage(env, { viewport: { width: 1280, height: 1000 }, acceptDownloads: true, ...options });
  const { page } = opened;
  await page.goto(`${env.srv.isolated.url}/web/?${query}`);
  await loaded(page);
  return opened;
}

/** Waits until the model is loaded. */
const loaded = (page) => page.waitForFunction(() => !document.getElementById('generate').disabled, null, { timeout: 30_000 });

/** Waits until the current generation has finished. */
const finished = (page) => page.waitForFunction(() => document.getElementById('stop').disabled &&
  / · [a-z ]+$/.test(document.getElementById('speed').textContent), null, { timeout: 30_000 });

/** The index of the largest --to highlight on a token line, or -1. */
const brightest = (page, line) => page.$$eval(`#${line} .tok`, (spans) => {
  let best = -1;
  let max = 0;
  for (const s of spans) {
    const v = Number(s.style.getPropertyValue('--to'));
    if (v > max) (max = v), (best = Number(s.dataset.i));
  }
  return best;
});

/**
 * The heatmap's canvases are a window the size of its box onto the whole drawing, redrawn where
 * the box scrolls to: scrolled to the far right (`down`: and to the bottom), the window shows the
 * whole drawing's cells there, with the labels of their rows and columns kept at its left and top
 * edges.
 */
async function windowShowsTheWhole(page, { down }) {
  const seen = await page.evaluate(async (down) => {
    const { heatmap } = window.saccadeDemo;
    const box = document.getElementById('heatmap-box');
    const canvas = document.getElementById('heatmap');
    box.scrollTo(box.scrollWidth, down ? box.scrollHeight : 0);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const L = heatmap.layout;
    const whole = heatmap.wholeCanvas().getContext('2d');
    const [cw, ch] = [canvas.width, canvas.height];
    const shown = canvas.getContext('2d').getImageData(0, 0, cw, ch).data;
    // the whole drawing's parts the window should show: its cells (and colour bar) where the box
    // has scrolled to, the row labels of those rows at the left, the column labels of those
    // columns at the top, the title above them (its band: 22 px) at the left
    const [ml, mt, band] = [Math.round(L.ml * L.dpr), Math.round(L.mt * L.dpr), Math.round(22 * L.dpr)];
    const part = (x, y, w, h) => ({ w, data: whole.getImageData(x, y, w, h).data });
    const cells = part(L.ox + ml, L.oy + mt, cw - ml, ch - mt);
    const rows = part(0, L.oy + mt, ml, ch - mt);
    const cols = part(L.ox + ml, 0, cw - ml, mt);
    const corner = part(0, 0, cw, mt); // the title's band, and left of the column labels
    const mapEnd = Math.round((L.ml + L.w * L.cell) * L.dpr) - L.ox;
    let all = 0;
    for (let y = 0; y < ch; y++)
      for (let x = 0; x < cw; x++) {
        const p = y >= mt ? (x >= ml ? cells : rows) : x >= ml && y >= band ? cols : corner;
        if (p === cols && x >= mapEnd && down) continue; // (the colour bar's top label: scrolled away, in the whole drawing's label band)
        const j = 4 * ((y - (y >= mt ? mt : 0)) * p.w + x - (p === cells || p === cols ? ml : 0));
        const i = 4 * (y * cw + x);
        if (shown[i] === p.data[j] && shown[i + 1] === p.data[j + 1] && shown[i + 2] === p.data[j + 2]) continue;
        all++;
      }
    const rect = canvas.getBoundingClientRect();
    const boxRect = box.getBoundingClientRect();
    return { ox: L.ox, oy: L.oy, scrolled: [box.scrollLeft, box.scrollTop], dpr: L.dpr,
      window: [canvas.width, canvas.height], client: [box.clientWidth, box.clientHeight], wholeSize: [whole.canvas.width, whole.canvas.height],
      extent: [box.scrollWidth, box.scrollHeight], WH: [L.W, L.H], all,
      corner: [rect.left - boxRect.left - box.clientLeft, rect.top - boxRect.top - box.clientTop] };
  }, down);
  assert.ok(seen.scrolled[0] > 0 && (seen.scrolled[1] > 0) === down, `scrolled: ${seen.scrolled}`);
  assert.deepEqual([seen.ox, seen.oy], seen.scrolled.map((s) => Math.round(s * seen.dpr)), 'the window drawn is where the box is');
  assert.deepEqual(seen.window, seen.client.map((c) => Math.round(c * seen.dpr)), 'the canvas is the box\'s size');
  assert.deepEqual(seen.corner, [0, 0], 'and stays in its view');
  assert.deepEqual(seen.extent, seen.WH, 'the box scrolls over the whole map');
  assert.deepEqual(seen.wholeSize, seen.WH.map((s) => Math.round(s * seen.dpr)));
  assert.ok(seen.wholeSize[0] > seen.window[0] && seen.wholeSize[1] > seen.window[1]);
  assert.equal(seen.all, 0, 'the window shows the whole drawing\'s cells there, and their labels');
}

test('the page names the library version that package.json gives', () => {
  assert.equal(LIBRARY_VERSION, JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version);
});

// The right answers are known only for the trained model, not for a random-weight stand-in.
describe('Model B: the alignment lesson and the one convention', { skip: B.shipped ? false : 'needs the shipped Model B' }, () => {
  let context;
  let page;
  let errors;
  before(async () => ({ context, page, errors } = await open(B.query)));
  after(() => context?.close());

  test('opens on cross-attention at the measured layer, beside the measured per-field alignment', async () => {
    const s = await page.evaluate(() => ({ ...window.saccadeDemo.state, store: null, model: null }));
    assert.deepEqual([s.kind, s.layer, s.head], ['cross', ALIGNMENT_LESSON.layer, 'mean']);
    assert.equal(await page.inputValue('#kind'), 'cross');
    assert.equal(await page.inputValue('#layer'), String(ALIGNMENT_LESSON.layer));
    assert.equal(await page.isVisible('#lesson'), true);
    assert.deepEqual(await page.$$eval('#lesson-fields tr', (r) => r.map((x) => x.textContent)),
      ALIGNMENT_LESSON.fields.map(([f, v]) => `${f}${v.toFixed(1)}%`));
    assert.deepEqual(await page.$$eval('#lesson-presets button', (b) => b.map((x) => x.textContent)),
      ALIGNMENT_LESSON.presets.map((p) => p.text));
  });

  test('a month digit: keyboard to the token, and hover, readout and alignment agree on the row that wrote it', async () => {
    await page.click('#lesson-presets button:has-text("sat 21 nov 2026")');
    await finished(page);
    await frames(page);
    assert.equal(await page.$$eval('#output .tok.gen', (s) => s.map((x) => x.textContent).join('')), '2026-11-21<eos>');
    // <bos> 2 0 2 6 - 1 1 - 2 1: the month's second digit is token 7, written by row 6 (the row at token 6)
    await page.focus('#output .tok[data-i="0"]');
    for (let i = 0; i < 7; i++) await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.i), '7');
    await frames(page);
    const readout = await page.textContent('#readout');
    const m = readout.match(/^row 6: at "1" → wrote "1" · looks most at key #(\d+) "(.)": (0\.\d{4})$/);
    assert.ok(m, readout);
    const month = 'sat 21 nov 2026'.indexOf('nov');
    assert.ok(Number(m[1]) >= month && Number(m[1]) < month + 3, `row 6 looks most at ${m[2]}, outside "nov"`);
    assert.equal(await brightest(page, 'source'), Number(m[1]));
    const { peaks, markRow } = await page.evaluate(() => ({
      peaks: window.saccadeDemo.alignment.peaks, markRow: window.saccadeDemo.heatmap.marks.row,
    }));
    assert.equal(markRow, 6);
    assert.equal(peaks[6], Number(m[1]), 'the alignment line of "1" starts from the same row');
    assert.match(await page.getAttribute('#output .tok[data-i="7"]', 'aria-label'), /^#7 "1" — written by the row at "1"$/);

    // every output: the token's hover peak is the alignment's peak of the row that wrote it
    const n = await page.$$eval('#output .tok', (s) => s.length);
    for (let i = 1; i < n; i++) {
      await page.hover(`#output .tok[data-i="${i}"]`);
      assert.equal(await brightest(page, 'source'), peaks[i - 1], `token ${i}`);
    }
    // a source key: the readout names the row that weighs it most — one that wrote a month digit
    await page.hover(`#source .tok[data-i="${month + 2}"]`);
    assert.match(await page.textContent('#readout'), /^key #9 "v" · weighed most by row [56]: at ".*" → wrote "1": 0\.\d{4}$/);
    await screenshot(page, 'inside-model-b');
  });

  test('the alignment is drawn in the heatmap\'s colours (a zero weight has the same colour in both)', async () => {
    const [alignZero, lutZero] = await page.evaluate(async () => {
      const { LUT } = await import('./views/colormap.mjs');
      const c = document.getElementById('alignment');
      const d = c.getContext('2d').getImageData(c.width - 2, c.height / 2, 1, 1).data;
      return [[d[0], d[1], d[2]], [LUT[0] & 255, (LUT[0] >> 8) & 255, (LUT[0] >> 16) & 255]];
    });
    assert.deepEqual(alignZero, lutZero);
  });

  test('each preset translates, and the lesson\'s layer aligns its digits with their fields at least as well as any other', async () => {
    for (const { text, fields } of ALIGNMENT_LESSON.presets) {
      await page.click(`#lesson-presets button:text-is(${JSON.stringify(text)})`);
      await finished(page);
      await frames(page);
      const { out, inField } = await page.evaluate(([fields, digits]) => {
        const { store } = window.saccadeDemo.state;
        const out = store.tokens.slice(1).map((t) => t.text).join('');
        const inField = [];
        for (let l = 0; l < store.layers; l++) {
          const m = store.matrix('cross', l, 'mean');
          let hits = 0;
          // row q wrote output character q (its ISO position)
          for (const [q, want] of digits) {
            const row = m.row(q);
            let peak = 0;
            for (let k = 1; k < row.length; k++) if (row[k] > row[peak]) peak = k;
            hits += fields[peak] === want;
          }
          inField.push(hits);
        }
        return { out, inField };
      }, [fields, ALIGNMENT_LESSON.digits]);
      assert.match(out, /^\d{4}-\d\d-\d\d/, text);
      assert.equal(await page.textContent('#lesson-input'), `This input, ${JSON.stringify(text)}: ` +
        `${inField.map((n, l) => `layer ${l} ${n}/8`).join(', ')} digits peak in their own field (mean over heads).`);
      assert.equal(Math.max(...inField), inField[ALIGNMENT_LESSON.layer], `${text}: digits in their field per layer ${inField}`);
    }
    assert.deepEqual(errors, []);
  });
});

describe('legibility and keyboard access (Model A)', () => {
  let context;
  let page;
  let errors;
  before(async () => ({ context, page, errors } = await open(A.query)));
  after(() => context?.close());

  test('a first-visit hint, dismissed for good', async () => {
    assert.equal(await page.isVisible('#hint'), true);
    await page.focus('#hint-close');
    await page.keyboard.press('Enter');
    assert.equal(await page.isVisible('#hint'), false);
    await page.reload();
    await loaded(page);
    assert.equal(await page.isVisible('#hint'), false);
  });

  test('every token keeps its label at a readable size: the map scrolls instead', async () => {
    await page.fill('#prompt', 'ROMEO:\nWhat light');
    await page.fill('#max-tokens', '100');
    await page.fill('#seed', '7');
    await page.fill('#temperature', '0.9');
    await page.focus('#prompt');
    await page.keyboard.press('Control+Enter');
    await finished(page);
    await frames(page);
    const L = await page.evaluate(() => {
      const { layout } = window.saccadeDemo.heatmap;
      const box = document.getElementById('heatmap-box');
      return { block: layout.block, cell: layout.cell, rows: layout.rows, cols: layout.cols, nq: layout.nq,
        scrolls: box.scrollWidth > box.clientWidth && box.scrollHeight > box.clientHeight };
    });
    assert.ok(L.nq >= 110);
    assert.equal(L.block, 1);
    assert.ok(L.cell >= MIN_CELL);
    assert.equal(L.rows.length, L.nq);
    assert.deepEqual(L.cols.slice(0, 8), ['R', 'O', 'M', 'E', 'O', ':', '↵', 'W'], 'no character dropped');
    assert.equal(L.rows[0], 'R→O', 'a row says where it sits and what it wrote');
    assert.ok(L.scrolls);

    // the canvases are a window onto the whole drawing, and the pointer finds the cell drawn under it
    await windowShowsTheWhole(page, { down: false }); // the colour bar in view, the row labels kept
    await windowShowsTheWhole(page, { down: true });
    const canvas = await page.locator('#heatmap').boundingBox();
    const moved = page.evaluate(() => new Promise((resolve) => addEventListener('mousemove', (e) => resolve([e.clientX, e.clientY]), { once: true })));
    await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
    const at = await page.evaluate(([x, y]) => {
      // the point in the whole map: where it is in the box, plus how far the box has scrolled
      const L = window.saccadeDemo.heatmap.layout;
      const box = document.getElementById('heatmap-box');
      const r = box.getBoundingClientRect();
      const cell = (within, margin) => Math.floor((within - margin) / L.cell);
      return { row: cell(y - r.top - box.clientTop + box.scrollTop, L.mt), col: cell(x - r.left - box.clientLeft + box.scrollLeft, L.ml),
        readout: document.getElementById('readout').textContent };
    }, await moved);
    assert.match(at.readout, new RegExp(`^row ${at.row}: .* key #${at.col} `));
    await page.mouse.move(canvas.x + 5, canvas.y + canvas.height / 2); // on the row labels, over hidden cells
    assert.doesNotMatch(await page.textContent('#readout'), / key #/);
  });

  test('legends: masked cells, what each selection is, and where the log scale floors', async () => {
    assert.equal(await page.isVisible('#legend-masked'), true);
    assert.match(await page.textContent('#legend-selection'), /each row sums to 1/);
    await page.selectOption('#head', 'mean');
    await frames(page);
    assert.match(await page.textContent('#legend-selection'), /never computes/);
    await page.selectOption('#head', 'rollout');
    await frames(page);
    assert.match(await page.textContent('#legend-selection'), /assumes/);
    await page.selectOption('#scale', 'log');
    await frames(page);
    assert.match(await page.textContent('#legend-floor'), /1e-4/);
    await page.selectOption('#scale', 'linear');
    await page.selectOption('#head', '0');
  });

  test('keyboard on the map: the readout follows the cursor and stays true when the head or layer changes', async () => {
    assert.equal(await page.getAttribute('#readout', 'aria-live'), 'polite');
    await page.focus('#heatmap');
    for (const key of ['PageUp', 'ArrowUp', 'Home', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(key);
    const truth = (layer, head) => page.evaluate(([layer, head]) => {
      const { state } = window.saccadeDemo;
      return state.store.matrix('self', layer, head).row(state.cell.q)[state.cell.k].toFixed(4);
    }, [layer, head]);
    const shown = async () => (await page.textContent('#readout')).match(/: (\d\.\d{4})$/)?.[1];
    assert.match(await page.textContent('#readout'), /^row \d+: at ".*" → wrote ".*" · key #2 /);
    assert.equal(await shown(), await truth(0, 0));
    // change the head and the layer from the keyboard: the readout updates without a pointer
    await page.focus('#head');
    await page.keyboard.press('ArrowDown');
    await frames(page);
    assert.equal(await page.inputValue('#head'), '1');
    assert.equal(await shown(), await truth(0, 1), 'the readout follows the head at once');
    await page.evaluate(() => {
      const layer = document.getElementById('layer');
      layer.value = '2';
      layer.dispatchEvent(new Event('change'));
    });
    await frames(page);
    assert.equal(await shown(), await truth(2, 1), 'the readout follows the layer at once');
  });

  test('keyboard on the model view: arrows and Enter select a head', async () => {
    await page.focus('#thumbnails');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    assert.match(await page.getAttribute('#thumbnails', 'aria-label'), /layer 1, head 1/);
    await page.keyboard.press('Enter');
    await frames(page);
    assert.deepEqual(await page.evaluate(() => [window.saccadeDemo.state.layer, window.saccadeDemo.state.head]), [1, 1]);
    assert.equal(await page.inputValue('#head'), '1');
    assert.equal(await page.inputValue('#layer'), '1');
  });

  test('keyboard on the text: Tab reaches one token, arrows move, the readout names the row that wrote it', async () => {
    await page.focus('#prompt');
    // Tab from the prompt through the form's controls to the text: one tab stop for all tokens
    let reached = false;
    for (let i = 0; i < 20 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement.classList.contains('tok'));
    }
    assert.ok(reached, 'Tab reaches the tokens');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await frames(page);
    assert.match(await page.textContent('#readout'), /^row 0: at "R" → wrote "O" · looks most at key #0 "R": 1\.0000$/);
    const lit = await page.$$eval('#output .tok', (s) => s.filter((x) => Number(x.style.getPropertyValue('--to')) > 0).map((x) => x.dataset.i));
    assert.deepEqual(lit, ['0'], 'row 0 sees only token 0');
  });

  test('the JSON export carries what reproduces the run', async () => {
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    const file = path.join(artifacts, 'web-export-inside.json');
    await json.saveAs(file);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(doc.library.version, LIBRARY_VERSION);
    assert.match(doc.model.source, /\/models\/|model=|\.gguf$/);
    assert.equal(doc.prompt, 'ROMEO:\nWhat light');
    assert.equal(doc.sampling.seed, 7);
    assert.equal(doc.sampling.temperature, 0.9);
    assert.equal(doc.sampling.maxTokens, 100);
    for (const k of ['topK', 'topP', 'repeatPenalty']) assert.equal(typeof doc.sampling[k], 'number', k);
    assert.equal(typeof doc.runtime.threads, 'number');
    assert.equal(doc.tokens[1].writtenByRow, 0);
    assert.match(doc.convention, /wrote tokens\[q \+ 1\]/);
    assert.deepEqual(errors, []);
  });
});

describe('on a phone', () => {
  test('tapping a token brings its row into view', async () => {
    const phone = { viewport: { width: 390, height: 800 }, hasTouch: true, isMobile: true, deviceScaleFactor: 3 };
    const { context, page, errors } = await open(`${A.query}&max=60&seed=3`, phone);
    try {
      await page.click('#hint-close');
      await page.click('#generate');
      await finished(page);
      await frames(page);
      // the last token that has a box to tap (a newline token has none)
      const last = await page.$$eval('#output .tok', (toks) => {
        const shown = toks.filter((t) => { const r = t.getBoundingClientRect(); return r.width > 0 && r.height > 0; });
        return Number(shown[shown.length - 1].dataset.i);
      });
      assert.ok(last > 1, `a late token to tap (${last})`);
      await page.tap(`#output .tok[data-i="${last}"]`);
      await frames(page);
      const seen = await page.evaluate((row) => {
        const { layout } = window.saccadeDemo.heatmap;
        const box = document.getElementById('heatmap-box').getBoundingClientRect();
        const canvas = document.getElementById('heatmap').getBoundingClientRect();
        const y = canvas.top - layout.oy / layout.dpr + layout.mt + row * layout.cell; // the row's top on screen (the canvas: a window, its corner at oy)
        return { marked: window.saccadeDemo.heatmap.marks.row, inBox: y >= box.top && y + layout.cell <= box.bottom,
          onScreen: y >= 0 && y + layout.cell <= innerHeight };
      }, last - 1);
      assert.deepEqual(seen, { marked: last - 1, inBox: true, onScreen: true });
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'the map scrolls in its box, not the page');
      await screenshot(page, 'inside-phone');
      await windowShowsTheWhole(page, { down: true }); // at 3 device px per CSS px
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
