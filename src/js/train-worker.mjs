// A module Worker that runs train() so that a page stays responsive: the page posts commands and
// receives each step's record, probes (their maps transferred, not copied) and exported bytes.
//
//   page → worker   { type: 'start', options, probe?, probeEvery? }   options: train()'s, minus
//                   signal and onStep (functions do not cross); probe: the probe input, run
//                   every probeEvery steps (default 10) and at the end
//                   { type: 'pause' | 'resume' | 'stop' | 'dispose' }
//                   { type: 'probe', input }   { type: 'export', exportType, name }
//   worker → page   { type: 'started', config, runtime }   { type: 'step', record }
//                   { type: 'probe', probe }   { type: 'state', state }
//                   { type: 'done', steps, state }   { type: 'exported', bytes }
//                   { type: 'error', message, code, name }
//                   { type: 'probe-refused', message }: a probe input the model cannot read
//                   (the run goes on with the last one)
import { train } from './train.mjs';

let run = null;
let probeInput = null;
let probeEvery = 10;

const post = (msg, transfer = []) => postMessage(msg, transfer);
const report = (e) => post({ type: 'error', message: e.message, code: e.code, name: e.name });

function probeMessage(input, r = run) {
  const { attention, ...probe } = r.probe(input ?? undefined); // functions do not cross
  post({ type: 'probe', probe }, [probe.maps.buffer]);
}

/** Posts the probe of `input`, or (one the model cannot read: too long, empty) its refusal. */
function tryProbe(input, r = run) {
  try {
    probeMessage(input, r);
    return true;
  } catch (e) {
    post({ type: 'probe-refused', message: e.message });
    return false;
  }
}

/** The run's probe of probeInput; a refused one gives way to the task's default: a probe must never end the run. */
function probeOrDefault(r = run) {
  if (tryProbe(probeInput, r)) return;
  probeInput = null;
  probeMessage(null, r);
}

async function start({ options, probe, probeEvery: every }) {
  run?.dispose();
  run = null;
  probeInput = probe ?? null;
  probeEvery = every ?? 10;
  try {
    const current = await train({
      ...options,
      onStep: (record, r) => {
        post({ type: 'step', record });
        if (probeEvery && record.step % probeEvery === 0) probeOrDefault(r);
      },
    });
    run = current;
    post({ type: 'started', config: current.config, runtime: current.runtime, probe: current.defaultProbe });
    probeOrDefault(); // the map before any training: the blur it starts from
    const { steps } = await current.done;
    if (run !== current) return;
    probeOrDefault();
    post({ type: 'done', steps, state: current.state });
  } catch (e) {
    if (run && run.state === 'disposed') return;
    report(e);
  }
}

onmessage = ({ data }) => {
  try {
    switch (data.type) {
      case 'start': return void start(data);
      case 'pause': run?.pause(); return post({ type: 'state', state: 'paused' });
      case 'resume': run?.resume(); return post({ type: 'state', state: 'training' });
      case 'stop': return run?.stop();
      case 'dispose':
        run?.dispose();
        run = null;
        return;
      case 'probe': {
        const input = data.input ?? probeInput;
        if (!run) return void (probeInput = input);
        // (a refused input must not become every later step's probe: the last one stays)
        if (tryProbe(input)) probeInput = input;
        return;
      }
      case 'export': {
        if (!run) throw new Error('nothing has been trained yet');
        const bytes = run.exportGGUF({ type: data.exportType ?? 'f32', name: data.name ?? '' });
        return post({ type: 'exported', bytes }, [bytes.buffer]);
      }
      default: throw new Error(`unknown message type '${data.type}'`);
    }
  } catch (e) {
    report(e);
  }
};
