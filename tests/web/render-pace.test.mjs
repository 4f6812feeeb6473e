// The page's drawing while tokens stream (web/app.mjs, renderPace): the text at most every
// TEXT_EVERY_MS, the views again only once their last drawing is at most VIEWS_SHARE of the time
// since it began, so that the page's thread leaves the generation's threads their cores; a
// selection made meanwhile is drawn at once, and the end draws everything.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import path from 'node:path';

import { devModel, root } from './dev-models.mjs';
import { useBrowser, withPage } from './helpers.mjs';

const env = useBrowser();
// GPT-2 small's shape (12 layers × 12 heads): a generation slow enough to act in
const model = devModel('gpt2-small-q8_0');
const VIEW_COST_MS = 25; // added to each drawing of the heatmap, so that no drawing is cheap

const done = (page) => page.waitForFunction(() => document.getElementById('stop').disabled
  && / · [a-z ]+$/.test(document.getElementById('speed').textContent), null, { timeout: 120_000 });

test('while tokens stream the text and views are drawn at their pace, a selection at once, the end in full', async () => {
  await withPage(env, async ({ page, errors }) => {
    // a first generation, so that the one measured is not the page's first (whose first token
    // is drawn alone, ahead of the views)
    const prompt = 'az'.repeat(50); // (one token per "az" in its synthetic vocabulary)
    await page.goto(`${env.srv.isolated.url}/web/?model=/${path.relative(root, model)}&prompt=${prompt}&run&max=4&seed=1`);
    await done(page);
    const pace = await page.evaluate((cost) => {
      const { heatmap } = window.saccadeDemo;
      const render = heatmap.render.bind(heatmap);
      heatmap.render = (args) => {
        for (const end = performance.now() + cost; performance.now() < end;);
        return render(args);
      };
      const output = document.getElementById('output'); // a box the text outgrows
      output.style.height = '40px';
      output.style.overflow = 'auto';
      return window.saccadeDemo.renderPace;
    }, VIEW_COST_MS);
    // a pace that leaves the generation most of the page's thread: text at most ~20 times a
    // second, the views at most half the time
    assert.ok(pace.TEXT_EVERY_MS >= 40 && pace.VIEWS_SHARE > 0 && pace.VIEWS_SHARE <= 0.5, JSON.stringify(pace));
    const [renders, texts] = await page.evaluate(() => [window.saccadeDemo.stats.renderMs.length, window.saccadeDemo.stats.textAt.length]);
    await page.fill('#max-tokens', '120');
    await page.evaluate(() => { // the speed line's changes: each is a frame's layout, so they come with the text's
      const speed = document.getElementById('speed');
      window.speedLines = [];
      new MutationObserver(() => window.speedLines.push({ text: speed.textContent, streaming: window.saccadeDemo.state.running }))
        .observe(speed, { childList: true, characterData: true, subtree: true });
    });
    await page.click('#generate');
    // mid-stream, right after a drawing of the views: a new head, drawn before the views were due
    const picked = await page.evaluate((before) => new Promise((resolve) => {
      const { stats, state } = window.saccadeDemo;
      const wait = () => {
        const last = stats.renderMs.at(-1);
        if (stats.renderMs.length > before + 1 && last.streaming && state.running) {
          const head = document.getElementById('head');
          head.value = head.value === '0' ? '1' : '0';
          head.dispatchEvent(new Event('change'));
          resolve({ at: performance.now(), after: stats.renderMs.length - 1 });
        } else if (!state.running && stats.renderMs.length > before + 1) resolve(null);
        else requestAnimationFrame(wait);
      };
      wait();
    }), renders);
    assert.ok(picked, 'the generation ended before the views were drawn twice');
    await done(page);
    const s = await page.evaluate(() => ({
      speedLines: window.speedLines,
      renders: window.saccadeDemo.stats.renderMs, textAt: window.saccadeDemo.stats.textAt,
      tokens: window.saccadeDemo.state.store.tokens.length, spans: document.querySelectorAll('#output .tok').length,
      scroll: (({ scrollTop, clientHeight, scrollHeight }) => ({ scrollTop, clientHeight, scrollHeight }))(document.getElementById('output')),
    }));
    const list = s.renders.slice(renders);
    const streaming = list.filter((r) => r.streaming);
    assert.ok(streaming.length >= 3, `${streaming.length} drawings while streaming`);
    const forced = s.renders[picked.after + 1];
    const before = s.renders[picked.after];
    assert.ok(forced && forced.at >= picked.at, 'the selection was drawn');
    // at once: in the first frame that drew after the selection (paced, the next tokens' frames
    // would have drawn only the text until the views were due); a time bound would also
    // measure how late a busy machine runs the frame
    const firstAfter = s.textAt.find((t) => t >= picked.at);
    assert.equal(firstAfter, forced.at,
      `the selection was drawn ${(forced.at - firstAfter).toFixed(1)} ms after the next frame that drew (${(forced.at - before.at).toFixed(1)} ms after the last drawing), not at once`);
    // the generation's start and its first token are drawn at once; the drawings after them, paced
    for (let i = 2; i < streaming.length; i++) {
      const [a, b] = [streaming[i - 1], streaming[i]];
      if (b === forced) continue;
      assert.ok(b.at - a.at >= a.ms / pace.VIEWS_SHARE - 1,
        `views drawn ${(b.at - a.at).toFixed(1)} ms after a drawing of ${a.ms.toFixed(1)} ms`);
    }
    // a generation's cleared views, its start and its first token are drawn at once: the gaps
    // from its first token's drawing on are paced
    const text = s.textAt.slice(texts + 2);
    assert.ok(text.length >= 3, `${text.length} text drawings while streaming`);
    for (let i = 1; i < text.length; i++)
      if (text[i] !== forced.at)
        assert.ok(text[i] - text[i - 1] >= pace.TEXT_EVERY_MS, `text drawn ${(text[i] - text[i - 1]).toFixed(1)} ms apart`);
    // ('generating…', one per text drawing while streaming, the end's line)
    assert.ok(s.speedLines.length <= text.length + 4, `the speed line changed ${s.speedLines.length} times for ${text.length} text drawings`);
    const streamed = s.speedLines.filter((l) => l.streaming && /^\d+ tokens · [\d.]+ tokens\/s · first after \d+ ms · seed 1$/.test(l.text));
    assert.ok(streamed.length >= 3, `the speed line while streaming: ${JSON.stringify(s.speedLines.slice(0, 5))}`);
    assert.match(s.speedLines.at(-1).text, /^120 tokens · [\d.]+ tokens\/s · first after \d+ ms · seed 1 · max tokens$/);
    const last = s.renders.at(-1);
    assert.equal(last.streaming, false, 'the end is drawn');
    assert.equal(last.context, s.tokens);
    assert.equal(s.spans, s.tokens);
    assert.ok(s.scroll.scrollHeight > s.scroll.clientHeight, `the text fits its box: ${JSON.stringify(s.scroll)}`);
    assert.ok(s.scroll.scrollTop + s.scroll.clientHeight >= s.scroll.scrollHeight - 1, `the text's end is not in view: ${JSON.stringify(s.scroll)}`);
    assert.deepEqual(errors, []);
  });
});
