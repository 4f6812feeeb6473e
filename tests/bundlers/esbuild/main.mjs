// esbuild does not copy the files new URL(…, import.meta.url) names: the build copies the
// package's dist/ folder to saccade/ beside the bundle, and configure() says where it is.
import { configure } from 'saccade';

import { start } from '../app/run.mjs';

configure({ assetBase: new URL('saccade/', document.baseURI) });
start();
