// What V8 would spend on start-up, and then keep resident in an idle server, held back while tokend loads.
//
// - The young generation. Loading tokend (~700 modules) and building the app leave many objects alive,
//   and V8 answers such a burst by growing its young generation (the new space: from 1 MB semi-spaces up
//   to 16 MB and more), which then stays resident: ~10 MB that no request needed. While held, the young
//   generation keeps its initial size and the survivors go straight on to the old space; the GC time of
//   a start-up stays about the same (more, smaller scavenges).
// - The compilers (Sparkplug, Maglev, Turbofan). Start-up code runs once, but it runs long enough for V8
//   to compile some of it again, on background threads: ~12 MB of compiler code and memory resident
//   for code no request runs again. While held, start-up runs in the interpreter.
//
// Released (once the server listens, or before any other command), V8 behaves as usual: code hot under
// load is optimised as soon as it is hot, and the young generation grows with the load. V8 reads these
// flags each time it decides, so setting them takes effect at once (bench/README.md, scenario 6).
import { setFlagsFromString } from 'node:v8';

interface Held {
  /** a V8 flag as set while held */
  hold: string;
  /** the same flag at V8's default */
  release: string;
  /** matches the flag (or an alias) in node options: one the operator set stands, untouched */
  chosen: RegExp;
}

const HELD: Held[] = [
  // V8 raises any factor below 2 to 2 when it starts, so 2 is the default restored.
  {
    hold: '--semi-space-growth-factor=1',
    release: '--semi-space-growth-factor=2',
    chosen: /semi[-_]space[-_]growth[-_]factor/,
  },
  { hold: '--no-maglev', release: '--maglev', chosen: /--(no[-_])?maglev\b/ },
  { hold: '--no-turbofan', release: '--turbofan', chosen: /--(no[-_])?(turbofan|opt)\b/ },
  { hold: '--no-sparkplug', release: '--sparkplug', chosen: /--(no[-_])?sparkplug\b/ },
];

const operatorOptions = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
const ours = HELD.filter((flag) => !flag.chosen.test(operatorOptions));

let held = false;

/** Holds the young generation at its current size and the compilers off, until release. */
export function holdForStartUp(): void {
  if (held) return;
  for (const flag of ours) setFlagsFromString(flag.hold);
  held = true;
}

export function releaseStartUpHold(): void {
  if (!held) return;
  for (const flag of ours) setFlagsFromString(flag.release);
  held = false;
}

/** Whether the hold is on (tests). */
export const startUpHeld = (): boolean => held;
