// webpack 5 with its defaults: it copies the files new URL(…, import.meta.url) names as assets.
import { start } from '../app/run.mjs';

start();
