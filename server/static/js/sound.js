// Optional sounds, made in the page with WebAudio (no sound files): a card laid, a peg,
// and "your turn". Off by default; the switch is remembered. The AudioContext is created
// only once the player turns sound on (browsers allow audio after a gesture).

const KEY = "cribbage.sound";
let ctx = null;

export function soundOn() {
  try {
    return localStorage.getItem(KEY) === "on";
  } catch {
    return false;
  }
}

export function setSound(on) {
  try {
    localStorage.setItem(KEY, on ? "on" : "off");
  } catch {
    /* the choice lasts this page only */
  }
  if (on) audio();
}

function audio() {
  if (!ctx) {
    const Ctor = window.AudioContext || window.webkitAudioContext;
    if (!Ctor) return null;
    ctx = new Ctor();
  }
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  return ctx;
}

function tone(ac, { freq, type = "sine", start = 0, length = 0.12, gain = 0.18, slide = null }) {
  const osc = ac.createOscillator();
  const amp = ac.createGain();
  const t0 = ac.currentTime + start;
  osc.type = type;
  osc.frequency.setValueAtTime(freq, t0);
  if (slide) osc.frequency.exponentialRampToValueAtTime(slide, t0 + length);
  amp.gain.setValueAtTime(0.0001, t0);
  amp.gain.exponentialRampToValueAtTime(gain, t0 + 0.01);
  amp.gain.exponentialRampToValueAtTime(0.0001, t0 + length);
  osc.connect(amp).connect(ac.destination);
  osc.start(t0);
  osc.stop(t0 + length + 0.02);
}

function snap(ac) {
  // A card laid on the table: a short burst of filtered noise.
  const length = 0.07;
  const buffer = ac.createBuffer(1, Math.ceil(ac.sampleRate * length), ac.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < data.length; i += 1) data[i] = (Math.random() * 2 - 1) * (1 - i / data.length) ** 3;
  const src = ac.createBufferSource();
  const filter = ac.createBiquadFilter();
  const amp = ac.createGain();
  filter.type = "bandpass";
  filter.frequency.value = 1800;
  amp.gain.value = 0.5;
  src.buffer = buffer;
  src.connect(filter).connect(amp).connect(ac.destination);
  src.start();
}

/** Play `kind` ("card", "peg", "turn") if sound is on. */
export function play(kind) {
  if (!soundOn()) return;
  const ac = audio();
  if (!ac) return;
  if (kind === "card") snap(ac);
  else if (kind === "peg") tone(ac, { freq: 520, type: "triangle", length: 0.08, gain: 0.2, slide: 380 });
  else if (kind === "turn") {
    tone(ac, { freq: 660, length: 0.14 });
    tone(ac, { freq: 880, start: 0.13, length: 0.2 });
  }
}
