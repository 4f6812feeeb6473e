// <saccade-train>: "Watch it learn" as an embeddable element (also from another origin, as the other embeds).
//
//   <script type="module" src="/web/train/element.mjs"></script>
//   <saccade-train task="reverse" preset="tiny" steps="400" autostart></saccade-train>
//
// Attributes: task (reverse, copy, dates, text), preset, steps, autostart. Event: 'trained'
// with detail.file, the trained model as a GGUF File, when a run ends.
import { WatchItLearn } from './section.mjs';

class SaccadeTrain extends HTMLElement {
  connectedCallback() {
    if (this.section) return;
    const shadow = this.attachShadow({ mode: 'open' });
    shadow.innerHTML = `<link rel="stylesheet" href="${new URL('../style.css', import.meta.url)}">
      <link rel="stylesheet" href="${new URL('./train.css', import.meta.url)}"><div></div>`;
    this.section = new WatchItLearn(shadow.querySelector('div'), {
      onTrained: (file) => this.dispatchEvent(new CustomEvent('trained', { detail: { file } })),
    });
    const s = this.section;
    const task = this.getAttribute('task');
    if (task && [...s.$('train-task').options].some((o) => o.value === task)) {
      s.$('train-task').value = task;
      s.fillPresets();
    }
    const preset = this.getAttribute('preset');
    if (preset && [...s.$('train-preset').options].some((o) => o.value === preset)) {
      s.$('train-preset').value = preset;
      s.applyPreset();
    }
    if (this.getAttribute('steps')) s.$('train-steps').value = this.getAttribute('steps');
    if (this.hasAttribute('autostart')) s.start();
  }

  disconnectedCallback() {
    this.section?.reset();
  }
}

if (!customElements.get('saccade-train')) customElements.define('saccade-train', SaccadeTrain);
