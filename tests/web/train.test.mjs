// "Watch it learn" (web/train/section.mjs) in headless Chromium, cross-origin isolated: train the
// reversal task briefly in the worker, the loss curve and status update, the probe's
// cross-attention maps are redrawn and change as the model learns, pause holds the step,
// stop opens the trained model in the viewer (generate works on it), and nothing logs an error.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { frames, modelA, screenshot, useBrowser, withPage } from './helpers.mjs';

const A = modelA();
const env = useBrowser();

/** The pixels of every probe map canvas, as data URLs. */
const mapPixels = (page) => page.evaluate(() =>
  [...document.querySelectorAll('#train-maps canvas')].map((c) => c.toDataURL()));

const stepOf = (page) => page.evaluate(() => Number(document.getElementById('train-status').dataset.step ?? 0));

/**
 * page.waitForFunction(fn, arg, { timeout }); a timeout names what the section showed then (its
 * state, status, runtime line, probes drawn) and the errors logged so far, so that a run that
 * stalled can be told from one that failed.
 */
async function waitForSection(page, errors, fn, arg, timeout) {
  try {
    return await page.waitForFunction(fn, arg, { timeout });
  } catch (e) {
    const shown = await page.evaluate(() => {
      const text = (id) => document.getElementById(id)?.textContent;
      return { state: document.getElementById('watch-it-learn')?.dataset.state, status: text('train-status'),
        runtime: text('train-runtime'), probes: document.getElementById('train-maps')?.dataset.probes,
        probeOutput: text('train-probe-output') };
    }).catch((why) => `(unreadable: ${why.message})`);
    e.message += `\nthe section showed ${JSON.stringify(shown)}; errors: ${JSON.stringify(errors)}`;
    throw e;
  }
}

/** Opens the demo on Model A and sets a tiny run of `task` for `steps` steps (not started). */
async function openTraining(page, task, steps) {
  await page.goto(`${env.srv.isolated.url}/web/${A.query ? `?${A.query}` : ''}`);
  await page.waitForFunction(() => globalThis.saccadeTraining && !document.getElementById('generate').disabled,
    null, { timeout: 30_000 });
  await page.selectOption('#train-task', task);
  await page.selectOption('#train-preset', 'tiny');
  await page.fill('#train-steps', String(steps));
}

describe('Watch it learn', () => {
  test('train briefly: loss, probe maps that change, pause, stop → the model opens in the viewer', async () => {
    await withPage(env, async ({ page, errors }) => {
      await openTraining(page, 'reverse', 300);
      await page.selectOption('#train-threads', '2');
      await page.click('#train-start');

      // the first probe: the untrained model's maps
      await waitForSection(page, errors, () => Number(document.getElementById('train-maps').dataset.probes ?? 0) >= 1,
        null, 30_000);
      const first = await mapPixels(page);
      assert.equal(first.length, 4, 'one map per layer × head (1 × 4)');
      assert.match(await page.textContent('#train-runtime'), /Training [\d,]+ parameters on 2 threads \(mt/);

      // a few probes later the maps differ
      await waitForSection(page, errors, () => Number(document.getElementById('train-maps').dataset.probes ?? 0) >= 6,
        null, 60_000);
      const later = await mapPixels(page);
      assert.notDeepEqual(later, first, 'the probe maps changed as the model trained');
      assert.match(await page.textContent('#train-status'), /step \d+ \/ 300 · loss [\d.]+/);
      assert.match(await page.textContent('#train-status'), /tokens\/s/);

      // pause holds the step; resume continues
      await page.click('#train-pause');
      await page.waitForTimeout(300);
      const held = await stepOf(page);
      // a probe the model cannot read is refused beside the box; the run goes on (it failed the run)
      const probe = await page.inputValue('#train-probe');
      await page.fill('#train-probe', 'x'.repeat(50));
      await page.click('#train-probe-form button');
      await waitForSection(page, errors, () => /^not probed: /.test(document.getElementById('train-probe-output').textContent),
        null, 10_000);
      assert.equal(await page.getAttribute('#watch-it-learn', 'data-state'), 'paused');
      await page.fill('#train-probe', probe);
      await page.waitForTimeout(500);
      assert.equal(await stepOf(page), held, 'no step while paused');
      assert.equal(await page.textContent('#train-pause'), 'Resume');
      await page.click('#train-pause');
      await waitForSection(page, errors, (s) => Number(document.getElementById('train-status').dataset.step) > s + 2, held, 30_000);

      // stop: the trained model opens in the viewer above, which generates with it
      await page.click('#train-stop');
      await waitForSection(page, errors, () => document.getElementById('watch-it-learn').dataset.state === 'done',
        null, 30_000);
      await page.waitForFunction(() => /^Loaded the model trained below/.test(document.getElementById('progress-text').textContent)
        && !document.getElementById('generate').disabled, null, { timeout: 30_000 });
      assert.match(await page.textContent('#model-info'), /encdec/);
      assert.equal(await page.$eval('#model-select', (s) => s.selectedOptions[0].textContent), 'the model trained below',
        'the picker names the trained model');
      assert.equal(await page.isDisabled('#train-download'), false);
      await page.fill('#prompt', 'abcdefgh');
      await page.fill('#temperature', '0');
      await page.click('#generate');
      await page.waitForFunction(() => !document.getElementById('generate').disabled
        && document.getElementById('output').textContent.length > 0, null, { timeout: 30_000 });
      await frames(page);
      await screenshot(page, 'train-watch-it-learn');
      // Reset: nothing of the run stays, its threads line included
      assert.notEqual(await page.textContent('#train-runtime'), '');
      await page.click('#train-reset');
      assert.equal(await page.textContent('#train-status'), 'Not training.');
      assert.equal(await page.textContent('#train-runtime'), '');
      assert.deepEqual(errors, []);
    });
  });
});


describe('Watch it learn: the text task', () => {
  test('Start right after choosing the text task waits for the sample text (fetched slowly here)', async () => {
    await withPage(env, async ({ page, errors }) => {
      await page.route('**/shakespeare.txt', async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await route.continue();
      });
      await openTraining(page, 'text', 20);
      assert.equal(await page.inputValue('#train-text'), '', 'the sample is still on its way');
      await page.click('#train-start');
      await waitForSection(page, errors, () => document.getElementById('watch-it-learn').dataset.state === 'done',
        null, 30_000);
      assert.ok((await page.inputValue('#train-text')).startsWith('First Citizen:'), 'trained on the sample');
      assert.match(await page.textContent('#train-status'), /^Done: step 20 \/ 20/);
      assert.deepEqual(errors, []);
    });
  });
});

describe('Watch it learn on a 320 px phone', () => {
  test('the section is no wider than the screen, a long probe\'s maps included', async () => {
    await withPage(env, async ({ page, errors }) => {
      await openTraining(page, 'text', 50);
      // 47 characters: maps of 34 + 47 × 6 px, wider than the screen's 280 px of content
      await page.fill('#train-probe', 'To be, or not to be, that is the question: whe');
      await page.click('#train-start');
      await waitForSection(page, errors, () => Number(document.getElementById('train-maps').dataset.probes ?? 0) >= 1,
        null, 30_000);
      await frames(page);
      assert.ok(await page.$eval('#train-maps canvas', (c) => c.width) > 300, 'the probe\'s maps are wider than the screen\'s content');
      const right = await page.$$eval('#watch-it-learn *', (els) => Math.max(...els.map((el) => el.getBoundingClientRect().right)));
      assert.ok(right <= 320, `the section reaches ${right} px`);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 320, 'the page scrolls sideways');
      await page.click('#train-stop');
      await waitForSection(page, errors, () => document.getElementById('watch-it-learn').dataset.state === 'done', null, 30_000);
      assert.deepEqual(errors, []);
    }, { viewport: { width: 320, height: 700 } });
  });
});

describe('<saccade-train>', () => {
  test('the element trains with its attributes and hands over the trained model', async () => {
    await withPage(env, async ({ page, errors }) => {
      await page.goto(`${env.srv.isolated.url}/web/embed-example.html`);
      const result = await page.evaluate(async () => {
        await import('/web/train/element.mjs');
        const el = document.createElement('saccade-train');
        el.setAttribute('task', 'copy');
        el.setAttribute('preset', 'tiny');
        el.setAttribute('steps', '20');
        el.setAttribute('autostart', '');
        const trained = new Promise((resolve) => el.addEventListener('trained', (e) => resolve(e.detail.file)));
        document.body.append(el);
        const file = await trained;
        const bytes = new Uint8Array(await file.arrayBuffer());
        const maps = el.shadowRoot.querySelectorAll('#train-maps canvas').length;
        return { magic: String.fromCharCode(...bytes.subarray(0, 4)), size: bytes.length, maps,
          status: el.shadowRoot.querySelector('#train-status').textContent };
      });
      assert.equal(result.magic, 'GGUF');
      assert.ok(result.size > 10_000);
      assert.equal(result.maps, 4);
      assert.match(result.status, /^Done: step 20 \/ 20/);
      assert.deepEqual(errors, []);
    });
  });
});
