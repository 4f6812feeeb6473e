// The model picker's real models: their group in the <select>, the check that a model fits this
// device before a byte of it is downloaded, and the download meter (bytes, MB/s, time left).
import { checkFileSize } from '../src/js/budget.mjs';

const MB = 2 ** 20;
const GB = 2 ** 30;

/** "138.1 MB", "1.25 GB" (binary units, as the rest of the page). */
export function formatBytes(n) {
  return n >= GB ? `${(n / GB).toFixed(2)} GB` : `${(n / MB).toFixed(1)} MB`;
}

/** The option text of a real model: name, architecture, type and size. */
export const realModelLabel = (m) => `${m.label} — ${m.architecture}, ${m.quant}, ${formatBytes(m.bytes)}`;

/**
 * Adds `models` (web/config.mjs's REAL_MODELS) to `select` as a "Real models" group, placed
 * before the option `before` (the file and URL choices stay last). Option values are the keys.
 */
export function addRealModels(select, models, before) {
  const group = document.createElement('optgroup');
  group.label = 'Real models (Hugging Face)';
  group.id = 'real-models';
  for (const [key, m] of Object.entries(models)) {
    const option = document.createElement('option');
    option.value = key;
    option.textContent = realModelLabel(m);
    option.title = m.url;
    group.append(option);
  }
  select.insertBefore(group, before);
}

/**
 * Shows a model opened from elsewhere on the page (one trained there) as the picker's choice: an
 * option of its own (value 'opened', labelled `label`) placed before the option `before`, selected.
 */
export function showOpenedModel(select, label, before) {
  let option = select.querySelector('option[value="opened"]');
  if (!option) {
    option = document.createElement('option');
    option.value = 'opened';
    select.insertBefore(option, before);
  }
  option.textContent = label;
  select.value = 'opened';
}

/**
 * Why a model file of `bytes` cannot be loaded on this device, or null when it can. Two limits:
 * the library's (the whole file goes into one WebAssembly allocation, below 2 GB in wasm32's
 * 4 GB: the message is the one loadModel gives), and the device's memory where the browser
 * reports it (navigator.deviceMemory, in GB, rounded down and capped at 8): while loading, the
 * download and its copy in WebAssembly memory are both held, and a tab gets at most half the
 * device's memory before the browser or the system reclaims it.
 */
export function memoryRefusal(bytes, deviceMemory = globalThis.navigator?.deviceMemory) {
  try {
    checkFileSize(bytes);
  } catch (e) {
    return e.message;
  }
  if (deviceMemory > 0 && 2 * bytes > (deviceMemory * GB) / 2)
    return `the model is ${formatBytes(bytes)}: loading holds it twice (the download and its copy in WebAssembly ` +
      `memory), ${formatBytes(2 * bytes)}, more than half of the ${deviceMemory} GB this device reports ` +
      '(navigator.deviceMemory); pick a smaller or more quantized model';
  return null;
}

/** The size a HEAD request announces for `url` (Content-Length), or null when it does not say. */
export async function announcedSize(url, fetchFn = fetch) {
  try {
    const head = await fetchFn(url, { method: 'HEAD', cache: 'no-store' });
    const length = head.ok && !head.headers.get('content-encoding') ? head.headers.get('content-length') : null;
    return length !== null && /^\d+$/.test(length) ? Number(length) : null;
  } catch {
    return null; // offline or refused (CORS): the download's own checks decide
  }
}

/**
 * The reason a model source cannot be loaded here, checked before downloading it, or null: a
 * listed model by its published size (`bytes`), a File by its size, a URL (with `askSize`) by
 * what a HEAD request announces. When the size is unknown the library checks the download's.
 */
export async function refusalBeforeDownload(source, { bytes = null, askSize = false } = {}, fetchFn = fetch) {
  if (bytes === null && typeof Blob == 'function' && source instanceof Blob) bytes = source.size;
  if (bytes === null && askSize && typeof source == 'string') bytes = await announcedSize(source, fetchFn);
  return bytes === null ? null : memoryRefusal(bytes);
}

/**
 * Download speed and time left from (loaded, total) reports. The speed is measured from reset()
 * (the start of a load) or from a change of phase (a cache read is not a download), over a
 * window of the last few seconds, so it follows a connection that changes.
 */
export class DownloadMeter {
  constructor(now = () => performance.now(), windowMs = 3000) {
    this.now = now;
    this.windowMs = windowMs;
    this.reset();
  }

  reset(phase = null) {
    this.phase = phase;
    this.samples = [{ t: this.now(), loaded: 0 }];
  }

  /** Records a report; returns { loaded, total, bytesPerSecond, secondsLeft } (null when unknown). */
  update(phase, loaded, total) {
    if (this.phase === null) this.phase = phase; // the first report: measured from reset()
    else if (phase !== this.phase) this.reset(phase);
    const t = this.now();
    this.samples.push({ t, loaded });
    while (this.samples.length > 2 && t - this.samples[1].t >= this.windowMs) this.samples.shift();
    const first = this.samples[0];
    const seconds = (t - first.t) / 1000;
    const bytesPerSecond = seconds > 0 ? (loaded - first.loaded) / seconds : null;
    const secondsLeft = total && bytesPerSecond > 0 ? Math.max(0, total - loaded) / bytesPerSecond : null;
    return { loaded, total, bytesPerSecond, secondsLeft };
  }
}

/** How long a download may go without a byte before the page says so (it keeps waiting). */
export const SILENT_MS = 10_000;

/** What the page says after `ms` without a byte from the server: '' until SILENT_MS. */
export function silenceText(ms) {
  if (!(ms >= SILENT_MS)) return '';
  return `nothing received for ${Math.floor(ms / 1000)} s: still waiting (pick another model to give up)`;
}

/** "4.2 MB/s · 31 s left" (what the meter knows of it). */
export function rateText({ bytesPerSecond, secondsLeft }) {
  const parts = [];
  if (bytesPerSecond !== null) parts.push(`${(bytesPerSecond / MB).toFixed(1)} MB/s`);
  if (secondsLeft !== null) {
    const s = Math.ceil(secondsLeft);
    parts.push(s < 60 ? `${s} s left` : `${Math.floor(s / 60)} min ${s % 60} s left`);
  }
  return parts.join(' · ');
}
