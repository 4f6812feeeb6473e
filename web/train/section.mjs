// "Watch it learn": pick a task and a preset, press Train, and watch the loss fall and the probe's
// attention organise itself (cross-attention for the encoder–decoder tasks: the alignment
// emerges from a blur). Training runs in a module Worker (src/js/train-worker.mjs); when it
// stops, the model opens in the viewer above (the event 'saccade:open-model', which app.mjs
// handles) and can be downloaded as GGUF.
import { PRESETS, PROBES } from '../../src/js/train.mjs';
import { startWorker } from '../client.mjs';
import { drawLossChart } from './chart.mjs';
import { drawProbeMaps } from './maps.mjs';

const TASK_LABELS = {
  reverse: 'Reverse a string (encoder–decoder)',
  copy: 'Copy a string (encoder–decoder)',
  dates: 'Dates → ISO 8601 (encoder–decoder)',
  text: 'Character language model (decoder-only)',
};

const HTML = `
  <h2>Watch it learn <span class="muted">— train a small transformer in this tab and watch its attention form</span></h2>
  <div class="train-controls">
    <label>task <select id="train-task"></select></label>
    <label>preset <select id="train-preset"></select></label>
    <label>steps <input id="train-steps" type="number" min="1" step="1"></label>
    <label>layers <input id="train-layers" type="number" min="1" max="64" step="1"></label>
    <label>width <input id="train-embd" type="number" min="2" step="2"></label>
    <label>heads <input id="train-heads" type="number" min="1" step="1"></label>
    <label>context <input id="train-ctx" type="number" min="2" step="1"></label>
    <label>batch <input id="train-batch" type="number" min="1" step="1"></label>
    <label>learning rate <input id="train-lr" type="number" min="0" step="any"></label>
    <label>threads <select id="train-threads"><option value="">auto</option><option>1</option><option>2</option><option>4</option></select></label>
    <button id="train-start" type="button">Train</button>
    <button id="train-pause" type="button" disabled>Pause</button>
    <button id="train-stop" type="button" disabled>Stop</button>
    <button id="train-reset" type="button" disabled>Reset</button>
    <button id="train-download" type="button" disabled>Download GGUF</button>
  </div>
  <div id="train-text-box" hidden>
    <label for="train-text">Text to learn (the first 90% trains, the rest is held out)</label>
    <textarea id="train-text" rows="4" spellcheck="false"></textarea>
    <button id="train-sample" type="button">Use the Shakespeare sample</button>
  </div>
  <p id="train-status" class="muted" role="status">Not training.</p>
  <p id="train-runtime" class="muted"></p>
  <div class="train-panels">
    <div class="train-panel">
      <canvas id="train-loss"></canvas>
    </div>
    <div class="train-panel">
      <form id="train-probe-form" class="train-controls">
        <label>probe <input id="train-probe" type="text" size="24" spellcheck="false"></label>
        <button type="submit">Probe</button>
        <span id="train-probe-output" class="muted"></span>
      </form>
      <p class="muted" id="train-maps-title">attention maps of the probe, redrawn every few steps (rows: queries, columns: keys)</p>
      <div id="train-maps"></div>
    </div>
  </div>`;

const KNOBS = ['layers', 'embd', 'heads', 'ctx', 'batch', 'lr'];

export class WatchItLearn {
  /**
   * Builds the section inside `root` (an element, or a shadow root). `onTrained(file)` receives
   * the trained model as a GGUF File when a run ends (default: open it in the page's viewer).
   */
  constructor(root, { onTrained } = {}) {
    this.root = root;
    this.onTrained = onTrained ?? ((file) => document.dispatchEvent(new CustomEvent('saccade:open-model',
      { detail: { file, name: 'the model trained below' } })));
    root.innerHTML = HTML;
    this.worker = null;
    this.records = [];
    this.steps = 0;
    this.state = 'idle'; // 'starting', 'training', 'paused', 'done', 'error'
    this.pendingExport = null;
    this.drawQueued = false;
    for (const [task, label] of Object.entries(TASK_LABELS)) this.$('train-task').add(new Option(label, task));
    this.$('train-task').addEventListener('change', () => this.fillPresets());
    this.$('train-preset').addEventListener('change', () => this.applyPreset());
    this.$('train-start').addEventListener('click', () => this.start());
    this.$('train-pause').addEventListener('click', () => this.togglePause());
    this.$('train-stop').addEventListener('click', () => this.post({ type: 'stop' }));
    this.$('train-reset').addEventListener('click', () => this.reset());
    this.$('train-download').addEventListener('click', () => this.download());
    this.$('train-sample').addEventListener('click', () => this.loadSample());
    this.$('train-probe-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.post({ type: 'probe', input: this.$('train-probe').value });
    });
    this.fillPresets();
    drawLossChart(this.$('train-loss'), [], 1);
  }

  $(id) {
    return this.root.querySelector(`#${id}`);
  }

  get task() {
    return this.$('train-task').value;
  }

  fillPresets() {
    const select = this.$('train-preset');
    select.replaceChildren(...Object.keys(PRESETS[this.task]).map((p) => new Option(p, p)));
    this.$('train-text-box').hidden = this.task !== 'text';
    if (this.task === 'text' && !this.$('train-text').value) this.loadSample();
    this.applyPreset();
  }

  applyPreset() {
    const preset = PRESETS[this.task][this.$('train-preset').value];
    this.$('train-steps').value = preset.steps;
    // the preset's knobs; what it leaves out is the trainer's default (shown empty)
    for (const [id, value] of Object.entries({ layers: preset.model?.layers, embd: preset.model?.embd,
      heads: preset.model?.heads, ctx: preset.model?.ctx, batch: preset.optimizer?.batch, lr: preset.optimizer?.lr }))
      this.$(`train-${id}`).value = value ?? '';
    const probe = PROBES[this.task];
    const max = preset.data?.maxLen;
    this.$('train-probe').value = max ? probe.slice(0, max) : probe;
  }

  /** Fetches the sample text into the box; a start() meanwhile waits for it (else it would train on an empty text). */
  loadSample() {
    this.sampleLoad = (async () => {
      try {
        const response = await fetch(new URL('./shakespeare.txt', import.meta.url));
        this.$('train-text').value = await response.text();
      } catch (e) {
        this.status(`Could not fetch the sample: ${e.message}`, true);
      }
    })();
    return this.sampleLoad;
  }

  status(text, error = false) {
    this.$('train-status').textContent = text;
    this.$('train-status').classList.toggle('error', error);
  }

  post(msg) {
    this.worker?.postMessage(msg);
  }

  setState(state) {
    this.state = state;
    (this.root.host ?? this.root).dataset.state = state;
    const live = state === 'training' || state === 'paused';
    this.$('train-start').disabled = live || state === 'starting';
    this.$('train-pause').disabled = !live;
    this.$('train-pause').textContent = state === 'paused' ? 'Resume' : 'Pause';
    this.$('train-stop').disabled = !live;
    this.$('train-reset').disabled = state === 'idle' || state === 'starting';
    this.$('train-download').disabled = !(live || state === 'done');
    for (const id of ['train-task', 'train-preset', 'train-steps', 'train-threads', 'train-text', ...KNOBS.map((k) => `train-${k}`)])
      this.$(id).disabled = live || state === 'starting';
  }

  /** A fresh worker per run: disposing a run's wasm memory is then the worker's end. */
  async start() {
    if (this.task === 'text' && this.sampleLoad) {
      this.setState('starting');
      this.status('Fetching the sample text…');
      await this.sampleLoad;
    }
    this.worker?.terminate();
    this.records = [];
    this.steps = Number(this.$('train-steps').value) || PRESETS[this.task][this.$('train-preset').value].steps;
    try {
      // startWorker: from another origin (the element embedded in a docs site) through a blob
      this.worker = startWorker(new URL('../../src/js/train-worker.mjs', import.meta.url));
    } catch (e) {
      this.worker = null;
      this.setState('error');
      this.status(`The training worker could not start: ${e.message}`, true);
      return;
    }
    this.worker.onmessage = ({ data }) => this.receive(data);
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.setState('error');
      this.status(`The training worker failed: ${e.message || 'it could not start (see the console)'}`, true);
    };
    const options = { task: this.task, preset: this.$('train-preset').value, steps: this.steps, evalEvery: 25,
      model: {}, optimizer: {} };
    for (const k of KNOBS) {
      const v = this.$(`train-${k}`).value;
      if (v !== '') (k === 'batch' || k === 'lr' ? options.optimizer : options.model)[k] = Number(v);
    }
    const threads = Number(this.$('train-threads').value);
    if (threads) options.threads = threads;
    if (this.task === 'text') options.text = this.$('train-text').value;
    this.$('train-maps').replaceChildren();
    delete this.$('train-maps').dataset.probes;
    this.setState('starting');
    this.status('Starting the trainer…');
    this.post({ type: 'start', options, probe: this.$('train-probe').value || undefined, probeEvery: 10 });
  }

  togglePause() {
    if (this.state === 'paused') {
      this.post({ type: 'resume' });
      this.setState('training');
    } else {
      this.post({ type: 'pause' });
      this.setState('paused');
    }
  }

  reset() {
    this.worker?.terminate();
    this.worker = null;
    this.records = [];
    this.$('train-maps').replaceChildren();
    delete this.$('train-maps').dataset.probes;
    this.$('train-probe-output').textContent = '';
    this.$('train-runtime').textContent = ''; // the run's threads: no run now
    drawLossChart(this.$('train-loss'), [], 1);
    this.setState('idle');
    this.status('Not training.');
  }

  exportBytes(type = 'f32') {
    return new Promise((resolve, reject) => {
      this.pendingExport = { resolve, reject };
      this.post({ type: 'export', exportType: type, name: `saccade ${this.task} (trained in the browser)` });
    });
  }

  async download() {
    const bytes = await this.exportBytes('f32');
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
    a.download = `saccade-${this.task}-f32.gguf`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }

  /** The trained model in the viewer above (app.mjs loads it like a file). */
  async openInViewer() {
    const bytes = await this.exportBytes('f32');
    this.onTrained(new File([bytes], `saccade-${this.task}-trained.gguf`, { type: 'application/octet-stream' }));
  }

  summary() {
    const r = this.records[this.records.length - 1];
    if (!r) return '';
    const lastVal = [...this.records].reverse().find((x) => x.valLoss !== undefined);
    const parts = [`step ${r.step} / ${this.steps}`, `loss ${r.loss.toFixed(3)}`];
    if (lastVal) parts.push(`held-out ${lastVal.valLoss.toFixed(3)}`);
    if (lastVal?.exact !== undefined) parts.push(`exact match ${(100 * lastVal.exact).toFixed(1)}%`);
    const recent = this.records.slice(-20);
    const tps = recent.reduce((s, x) => s + x.tokensPerSecond, 0) / recent.length;
    parts.push(`${Math.round(tps).toLocaleString('en')} tokens/s`);
    return parts.join(' · ');
  }

  queueDraw() {
    if (this.drawQueued) return;
    this.drawQueued = true;
    requestAnimationFrame(() => {
      this.drawQueued = false;
      drawLossChart(this.$('train-loss'), this.records, this.steps);
      this.$('train-status').dataset.step = String(this.records.at(-1)?.step ?? 0);
      if (this.state === 'training' || this.state === 'paused')
        this.status(`${this.state === 'paused' ? 'Paused' : 'Training'}: ${this.summary()}`);
    });
  }

  receive(msg) {
    switch (msg.type) {
      case 'started':
        this.setState(this.state === 'paused' ? 'paused' : 'training');
        this.config = msg.config;
        this.$('train-runtime').textContent = (`Training ${Math.round(msg.config.params).toLocaleString('en')} parameters on ` +
          `${msg.runtime.threads} thread${msg.runtime.threads > 1 ? 's' : ''} (${msg.runtime.variant}: ${msg.runtime.reason})`);
        this.queueDraw();
        return;
      case 'step':
        this.records.push(msg.record);
        return this.queueDraw();
      case 'probe':
        drawProbeMaps(this.$('train-maps'), msg.probe);
        this.$('train-maps').dataset.step = String(this.records.at(-1)?.step ?? 0);
        this.$('train-probe-output').textContent = `${msg.probe.input} → ${msg.probe.output}`;
        this.$('train-maps-title').textContent = msg.probe.kind === 'cross'
          ? 'cross-attention of the probe (rows: output characters, columns: source characters), each row scaled to its largest weight'
          : 'self-attention of the probe (rows: queries, columns: keys), each row scaled to its largest weight';
        return;
      case 'probe-refused': // the run goes on; only this input is refused
        this.$('train-probe-output').textContent = `not probed: ${msg.message}`;
        return;
      case 'done':
        this.setState('done');
        drawLossChart(this.$('train-loss'), this.records, this.steps);
        this.status(`${msg.state === 'stopped' ? 'Stopped' : 'Done'}: ${this.summary()} — ${this.opensInViewer ? 'the model is open in the viewer above' : 'the model is ready'}`);
        this.openInViewer().catch((e) => this.status(`Could not export the model: ${e.message}`, true));
        return;
      case 'exported':
        this.pendingExport?.resolve(msg.bytes);
        this.pendingExport = null;
        return;
      case 'error': {
        const error = new Error(msg.message);
        if (this.pendingExport) {
          this.pendingExport.reject(error);
          this.pendingExport = null;
          return;
        }
        this.setState('error');
        this.status(`Training failed: ${msg.message}`, true);
        return;
      }
    }
  }
}

const root = document.getElementById('watch-it-learn');
if (root) {
  globalThis.saccadeTraining = new WatchItLearn(root);
  globalThis.saccadeTraining.opensInViewer = true;
}
