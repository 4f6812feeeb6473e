// The drawing pace shared by the page and the embed (web/views/pace.mjs), on a fake clock: one
// frame per request however many ask, a new token's frame put off until the text (and then the
// views) are due, any other request drawn in full at the next frame.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RenderPace, TEXT_EVERY_MS, VIEWS_SHARE } from '../../web/views/pace.mjs';

/** A clock whose frames and timers run only when the test advances it. */
function fakeClock() {
  const clock = {
    t: 0,
    frames: new Map(), // id → the function of a frame asked for
    timers: new Map(),
    next: 1,
    now: () => clock.t,
    frame: (fn) => (clock.frames.set(clock.next, fn), clock.next++),
    cancelFrame: (id) => clock.frames.delete(id),
    armed: 0,
    after: (fn, ms) => (clock.armed++, clock.timers.set(clock.next, { fn, at: clock.t + ms }), clock.next++),
    cancel: (id) => clock.timers.delete(id),
    /** Moves to time t: each timer due by then runs at its time, and the frames asked for after it. */
    to(t) {
      for (;;) {
        const [id, due] = [...clock.timers].sort((a, b) => a[1].at - b[1].at)[0] ?? [];
        if (!due || due.at > t) break;
        clock.timers.delete(id);
        clock.t = due.at;
        due.fn();
        clock.runFrames();
      }
      clock.t = t;
      clock.runFrames();
    },
    runFrames() {
      const frames = [...clock.frames.values()];
      clock.frames.clear();
      for (const fn of frames) fn();
    },
  };
  return clock;
}

/** A page drawing through the pace: its text and views, each recorded at the clock's time. */
function drawer(clock, { viewsMs = 10 } = {}) {
  const log = [];
  const page = { streaming: true, log };
  page.pace = new RenderPace((pace) => {
    const t0 = clock.now();
    if (!pace.textDue(t0, page.streaming)) return;
    log.push(['text', t0]);
    if (!pace.viewsDue(t0, page.streaming)) return;
    log.push(['views', t0]);
    pace.viewsDrawn(t0, viewsMs, page.streaming);
  }, clock);
  return page;
}

test('requests share a frame; a token\'s frame draws the text every TEXT_EVERY_MS and the views at VIEWS_SHARE of the time', () => {
  const clock = fakeClock();
  const page = drawer(clock, { viewsMs: 10 });
  page.pace.request(); // the start: drawn in full
  page.pace.request({ newToken: true });
  assert.equal(clock.frames.size, 1, 'one frame for both requests');
  clock.to(0);
  assert.deepEqual(page.log, [['text', 0], ['views', 0]]);
  // a token every 5 ms for 100 ms
  for (let t = 5; t <= 100; t += 5) {
    page.pace.request({ newToken: true });
    clock.to(t);
  }
  const texts = page.log.filter(([what]) => what === 'text').map(([, t]) => t);
  const views = page.log.filter(([what]) => what === 'views').map(([, t]) => t);
  assert.deepEqual(texts, [0, TEXT_EVERY_MS, 2 * TEXT_EVERY_MS]);
  const viewsEvery = 10 / VIEWS_SHARE; // the views' 10 ms are VIEWS_SHARE of the time until they are due
  assert.deepEqual(views, [0, ...[1, 2].map((k) => Math.ceil((k * viewsEvery) / TEXT_EVERY_MS) * TEXT_EVERY_MS).filter((t) => t <= 100)]);
});

test('a token\'s frame that is not due comes back by itself when it is, once, with the views when they are due', () => {
  const clock = fakeClock();
  const page = drawer(clock, { viewsMs: 20 }); // due again at 20 / VIEWS_SHARE = 80
  page.pace.request();
  clock.to(0);
  page.pace.request({ newToken: true }); // the last tokens for a while
  clock.to(1);
  page.pace.request({ newToken: true });
  clock.to(2);
  assert.equal(page.log.length, 2, 'not drawn before it is due');
  assert.equal(clock.armed, 1, 'one timer, however many frames were put off');
  clock.to(1000);
  // at 50 the text; the views, due at 80, at the text's next drawing (100), with no frame between
  assert.deepEqual(page.log.slice(2), [['text', 50], ['text', 100], ['views', 100]]);
  assert.equal(clock.armed, 2);
  assert.equal(clock.timers.size, 0);
});

test('a token\'s text due before the views comes at its time', () => {
  const clock = fakeClock();
  const page = drawer(clock, { viewsMs: 100 }); // due again at 400
  page.pace.request();
  clock.to(0);
  page.pace.request({ newToken: true });
  clock.to(50); // the text; the views put off to 400
  page.pace.request({ newToken: true });
  clock.to(60); // put off to 100, before 400
  clock.to(399);
  assert.deepEqual(page.log.slice(2), [['text', 50], ['text', 100]]);
  clock.to(1000);
  assert.deepEqual(page.log.slice(4), [['text', 400], ['views', 400]]);
});

/** A page drawn in full at 0 whose next token's frame, at 1, was put off to TEXT_EVERY_MS. */
function putOff() {
  const clock = fakeClock();
  const page = drawer(clock);
  page.pace.request();
  clock.to(0);
  page.pace.request({ newToken: true });
  clock.to(1);
  return { clock, page };
}

test('any other request (a selection, the end) is drawn in full at the next frame and drops the put-off one', () => {
  const { clock, page } = putOff();
  page.pace.request(); // a selection
  assert.equal(clock.timers.size, 0);
  clock.to(2);
  assert.deepEqual(page.log.slice(2), [['text', 2], ['views', 2]]);
  page.streaming = false; // the end
  page.pace.request({ newToken: true }); // (a token's frame after the end is not paced either)
  clock.to(3);
  assert.deepEqual(page.log.slice(4), [['text', 3], ['views', 3]]);
});

test('cancel drops the frame asked for and the one put off', () => {
  const { clock, page } = putOff();
  page.pace.request({ newToken: true });
  assert.equal(clock.frames.size, 1);
  assert.equal(clock.timers.size, 1);
  page.pace.cancel();
  assert.equal(clock.frames.size, 0);
  assert.equal(clock.timers.size, 0);
  clock.to(20);
  assert.equal(page.log.length, 2, 'nothing drawn after the cancel');
  page.pace.request({ newToken: true }); // a token's frame is put off again, and comes when due
  clock.to(21);
  assert.equal(clock.timers.size, 1);
  clock.to(1000);
  assert.deepEqual(page.log.slice(2), [['text', TEXT_EVERY_MS], ['views', TEXT_EVERY_MS]]); // (the views were due at 40)
});
