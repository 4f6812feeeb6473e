// The page's view of the model cache, which the library keeps (src/js/cache.mjs): the worker
// loads URLs through it, and the page lists and clears it (the "Clear cache" button).
import { clearCachedModels, listCachedModels } from '../src/js/cache.mjs';

/** Cached models: [{ url, bytes, stored }]. */
export const cachedModels = () => listCachedModels();

/** Empties the model cache; resolves to how many files went. */
export const clearModelCache = () => clearCachedModels();
