// The Ideas page (web/explore.html): one section per idea, in the order the ideas build on each
// other, mounted into the page's <section> elements. `window.saccadeIdeas` exposes the mounted
// sections (their state and `ready` promises) for the tests.
import { mountKernel } from './kernel.mjs';
import { mountMasks } from './masks.mjs';
import { mountPositions } from './positions.mjs';
import { mountScores } from './scores.mjs';

const mount = (id, f) => f(document.getElementById(id));

window.saccadeIdeas = {
  kernel: mount('kernel', mountKernel),
  scores: mount('scores', mountScores),
  masks: mount('masks', mountMasks),
  positions: mount('positions', mountPositions),
};
