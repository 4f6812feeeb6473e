// Where a load's time goes, on the browser's User Timing timeline: one performance.measure()
// entry per phase, named 'saccade:<phase>' ('saccade:wasm-compile', 'saccade:model-read', …), in
// the thread that loads (a page or a worker). The browser's performance panel shows them; the
// demo's benchmark reads them (scripts/bench-web.mjs). Node records nothing: its timeline keeps
// every entry until cleared, and a long-running process loading models would grow it.
import { isNode } from './runtime.mjs';

/** The prefix of every measure the library records. */
export const MEASURE_PREFIX = 'saccade:';

const recording = !isNode && typeof globalThis.performance?.measure == 'function';

/** A timestamp on the timeline (performance.now()). */
export const now = () => globalThis.performance?.now() ?? Date.now();

/** Records the phase `name` from `start` to `end` (timestamps of now()). */
export function measure(name, start, end = now()) {
  if (!recording) return;
  try {
    performance.measure(MEASURE_PREFIX + name, { start, end });
  } catch {
    // a timeline that refuses the entry (a full buffer): the load goes on without it
  }
}
