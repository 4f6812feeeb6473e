// How often to draw while tokens stream, shared by the page and the embed.
//
// Drawing holds the page's thread, and each frame the page changes is styled, laid out and
// composited by the browser's other threads too; the generation's threads want the same cores
// (they take every core by default). On 2 cores, at 600 tokens of a GPT-2-small-sized model, the
// page's views took 12-17 ms a frame and its text ~2 ms, and decode ran at 52-64 tokens/s where
// drawing nothing it ran at 97-103. So while tokens stream, a new token's frame draws the text at
// most every TEXT_EVERY_MS, and the views again only once their last drawing is at most
// VIEWS_SHARE of the time since it began; any other request (a selection, a hover, a resize, the
// generation's start and end) is drawn at the next frame, with everything.
export const TEXT_EVERY_MS = 50;
export const VIEWS_SHARE = 0.25;

const browserClock = () => ({
  now: () => performance.now(),
  frame: (fn) => requestAnimationFrame(fn),
  cancelFrame: (id) => cancelAnimationFrame(id),
  after: (fn, ms) => setTimeout(fn, ms),
  cancel: (timer) => clearTimeout(timer),
});

/**
 * Schedules `draw(pace)` in animation frames. A drawing started at t0 asks textDue(t0, streaming)
 * before drawing the text and viewsDue(t0, streaming) before the views, and reports the views'
 * cost with viewsDrawn(t0, ms, streaming); `streaming`: whether tokens are still coming. A frame
 * that is not due is put off to when it is.
 */
export class RenderPace {
  #draw;
  #clock;
  #frame = 0;
  #textDueAt = 0; // clock time before which a new token's frame draws nothing
  #viewsDueAt = 0; // … draws only the text
  #later = { timer: 0, at: Infinity }; // the frame a new token's drawing put off

  constructor(draw, clock = browserClock()) {
    this.#draw = draw;
    this.#clock = clock;
  }

  /** Asks for a frame: a new token's is paced, any other is drawn in full at the next frame. */
  request({ newToken = false } = {}) {
    if (!newToken) {
      this.#textDueAt = this.#viewsDueAt = 0;
      this.#clock.cancel(this.#later.timer);
      this.#later = { timer: 0, at: Infinity };
    }
    if (!this.#frame) {
      this.#frame = this.#clock.frame(() => {
        this.#frame = 0;
        this.#draw(this);
      });
    }
  }

  /** Drops the frame asked for and the one put off (a widget taken off the page). */
  cancel() {
    this.#clock.cancel(this.#later.timer);
    this.#later = { timer: 0, at: Infinity };
    this.#clock.cancelFrame(this.#frame);
    this.#frame = 0;
  }

  /** In a frame: whether to draw the text now (if not, the frame comes back when it is due). */
  textDue(t0, streaming) {
    if (streaming && t0 < this.#textDueAt) return this.#putOff(this.#textDueAt);
    this.#textDueAt = streaming ? t0 + TEXT_EVERY_MS : 0;
    return true;
  }

  /** In a frame whose text was drawn: whether to draw the views now (if not, the frame comes back with the text's next). */
  viewsDue(t0, streaming) {
    return !(streaming && t0 < this.#viewsDueAt) || this.#putOff(Math.max(this.#viewsDueAt, this.#textDueAt));
  }

  /** The views were drawn at t0 in `ms`: while streaming they are due again at VIEWS_SHARE of the time. */
  viewsDrawn(t0, ms, streaming) {
    this.#viewsDueAt = streaming ? t0 + ms / VIEWS_SHARE : 0;
  }

  /** A frame that was not due: it comes again at `at`, or sooner if one already will (a token's text). */
  #putOff(at) {
    if (this.#later.at > at) {
      this.#clock.cancel(this.#later.timer);
      const timer = this.#clock.after(() => {
        this.#later = { timer: 0, at: Infinity };
        this.request({ newToken: true });
      }, at - this.#clock.now());
      this.#later = { timer, at };
    }
    return false;
  }
}
