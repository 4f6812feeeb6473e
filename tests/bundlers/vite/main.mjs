// Vite with its default settings: the package's files are found through new URL(…, import.meta.url).
import { start } from '../app/run.mjs';

start();
