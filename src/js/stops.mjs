// Stop strings: the text a generation releases, without the stop string and what follows it.
// A stop string may arrive over several tokens ("\n" then "User:"), so text that could still
// become the start of one is held back until a later piece settles it: it is released once it
// can no longer begin a stop string, and dropped when the stop string completes.

export class StopText {
  #stops;
  #pending = ''; // text not yet released: it may begin a stop string

  /** `stops`: non-empty strings. */
  constructor(stops) {
    this.#stops = stops;
  }

  /**
   * Adds a piece of generated text. Returns { text, stopped }: the text now safe to release,
   * and whether a stop string completed (then `text` ends where the stop string began).
   */
  push(piece) {
    const pending = this.#pending + piece;
    let at = -1;
    for (const s of this.#stops) {
      const i = pending.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    if (at >= 0) {
      this.#pending = '';
      return { text: pending.slice(0, at), stopped: true };
    }
    const keep = this.#heldBack(pending);
    this.#pending = pending.slice(pending.length - keep);
    return { text: pending.slice(0, pending.length - keep), stopped: false };
  }

  /** Releases what is held back (the generation ended another way). */
  end() {
    const rest = this.#pending;
    this.#pending = '';
    return rest;
  }

  /** The length of the longest end of `text` that is a proper beginning of a stop string. */
  #heldBack(text) {
    let keep = 0;
    for (const s of this.#stops)
      for (let n = Math.min(s.length - 1, text.length); n > keep; n--)
        if (text.endsWith(s.slice(0, n))) {
          keep = n;
          break;
        }
    return keep;
  }
}
