// The embed's drawing while tokens stream (web/embed.mjs, through web/views/pace.mjs, as the
// page's): its text at most every TEXT_EVERY_MS, its heatmap again only once its last drawing is
// at most VIEWS_SHARE of the time since it began; a selection made meanwhile is drawn at once,
// and the end draws everything.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import path from 'node:path';

import { TEXT_EVERY_MS, VIEWS_SHARE } from '../../web/views/pace.mjs';
import { devModel, root } from './dev-models.mjs';
import { useBrowser, withPage } from './helpers.mjs';

const env = useBrowser();
// GPT-2 small's shape (12 layers × 12 heads) on one thread: a generation slow enough to act in
// (on two threads and 120 tokens a slow CI machine once drew the heatmap fewer than three times
// while streaming; here it draws it 16–20 times)
const model = devModel('gpt2-small-q8_0');
const VIEW_COST_MS = 25; // added to each drawing of the heatmap, so that no drawing is cheap
const MAX_TOKENS = 200;

// Records each drawing of the widget's heatmap and of its text line (and whether the widget was
// generating then) before the embed is defined; each heatmap drawing costs VIEW_COST_MS more.
// A drawing's time is its frame's start, as the pace was given it (textDue's t0): a clock read
// inside the drawing would add the jitter of a busy machine between the two (CI saw a 47.7 ms
// gap between text drawings whose frames began 50 ms apart or more).
const PAGE = `<!doctype html>
<script type="module">
import { HeatmapView } from '/web/views/heatmap.mjs';
import { TokenLine } from '/web/views/tokens.mjs';
import { RenderPace } from '/web/views/pace.mjs';
const log = (window.drawings = []);
const streaming = () => !document.querySelector('saccade-attention').shadowRoot.querySelector('[name=stop]').disabled;
let frame = NaN;
const textDue = RenderPace.prototype.textDue;
RenderPace.prototype.textDue = function (t0, ...rest) {
  frame = t0;
  return textDue.call(this, t0, ...rest);
};
const render = HeatmapView.prototype.render;
HeatmapView.prototype.render = function (args) {
  for (const end = performance.now() + ${VIEW_COST_MS}; performance.now() < end;);
  log.push({ what: 'views', at: frame, streaming: streaming(), rows: args.matrix.nq });
  return render.call(this, args);
};
const sync = TokenLine.prototype.sync;
TokenLine.prototype.sync = function (tokens) {
  if (this.element.classList.contains('output')) log.push({ what: 'text', at: frame, streaming: streaming(), tokens: tokens.length });
  return sync.call(this, tokens);
};
window.generated = new Promise((resolve) => document.addEventListener('saccade-generated', (e) => resolve(e.detail)));
</script>
<script type="module" src="/web/embed.mjs"></script>
<saccade-attention src="/${path.relative(root, model).split(path.sep).join('/')}" prompt="${'az'.repeat(50)}"
  max-tokens="${MAX_TOKENS}" seed="1" layer="11" threads="1" autoplay></saccade-attention>`;

test('while tokens stream the embed draws its text and heatmap at their pace, a selection at once, the end in full', async () => {
  await withPage(env, async ({ page, errors }) => {
    const url = `${env.srv.isolated.url}/web/embed-pace.html`;
    await page.route(url, (route) => route.fulfill({
      contentType: 'text/html',
      headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
      body: PAGE,
    }));
    await page.goto(url);
    // mid-stream, right after a drawing of the heatmap: a new head, drawn before the heatmap was due
    const picked = await page.evaluate(() => new Promise((resolve) => {
      const widget = document.querySelector('saccade-attention');
      const wait = () => {
        const views = window.drawings.filter((d) => d.what === 'views' && d.streaming && d.rows > 0);
        if (views.length >= 3 && window.drawings.at(-1) === views.at(-1)) {
          const head = widget.shadowRoot.querySelector('[name=head]');
          head.value = head.value === '0' ? '1' : '0';
          head.dispatchEvent(new Event('change'));
          resolve({ at: performance.now(), after: views.length - 1 });
        } else if (widget.shadowRoot.querySelector('[name=stop]').disabled && views.length) resolve(null);
        else requestAnimationFrame(wait);
      };
      wait();
    }));
    assert.ok(picked, 'the generation ended before the heatmap was drawn three times');
    const done = await page.evaluate(() => window.generated);
    assert.equal(done.count, MAX_TOKENS);
    // (the event comes before the widget's end is drawn)
    await page.waitForFunction(() => window.drawings.findLast((d) => d.what === 'views')?.streaming === false);
    const drawings = await page.evaluate(() => window.drawings);
    const spans = await page.$eval('saccade-attention', (el) => el.shadowRoot.querySelectorAll('.output .tok').length);

    // the generation's start and its first token are drawn at once; the drawings after them, paced.
    // (The load's drawing of the empty map comes before them, in the frame after autoplay started
    // the generation, and is left out: counted, it put the start and the first token, which come
    // one step apart, in a paced pair.)
    const views = drawings.filter((d) => d.what === 'views' && d.streaming && d.rows > 0);
    const forced = views[picked.after + 1];
    assert.ok(forced && forced.at >= picked.at, 'the selection was drawn');
    // at once: in the first frame that drew after the selection (paced, the frames of the next
    // tokens would have drawn only the text until the heatmap was due)
    const text = drawings.filter((d) => d.what === 'text' && d.streaming && d.tokens > 0);
    const firstAfter = text.find((d) => d.at >= picked.at);
    assert.equal(firstAfter.at, forced.at,
      `the selection was drawn ${(forced.at - firstAfter.at).toFixed(1)} ms after the next frame that drew, not at once`);
    for (let i = 2; i < views.length; i++) {
      if (views[i] === forced) continue;
      const gap = views[i].at - views[i - 1].at;
      assert.ok(gap >= VIEW_COST_MS / VIEWS_SHARE, `heatmap drawn ${gap.toFixed(1)} ms after a drawing of at least ${VIEW_COST_MS} ms`);
    }
    assert.ok(text.length >= 5, `${text.length} text drawings while streaming`);
    for (let i = 2; i < text.length; i++) {
      if (text[i].at === forced.at) continue; // (the selection's frame)
      const gap = text[i].at - text[i - 1].at;
      assert.ok(gap >= TEXT_EVERY_MS, `text drawn ${gap.toFixed(1)} ms apart`);
    }
    // (fewer drawings than tokens follows from the gaps while tokens come faster than one per
    // TEXT_EVERY_MS; unpaced, each token's frame draws)

    const [lastText, lastViews] = ['text', 'views'].map((what) => drawings.filter((d) => d.what === what).at(-1));
    assert.equal(lastText.streaming, false, 'the end is drawn');
    assert.equal(lastViews.streaming, false, 'the end is drawn');
    assert.equal(lastText.tokens, 50 + MAX_TOKENS);
    assert.equal(lastViews.rows, 50 + MAX_TOKENS - 1); // (the last token was written, never read)
    assert.equal(spans, 50 + MAX_TOKENS);
    assert.deepEqual(errors, []);
  });
});
