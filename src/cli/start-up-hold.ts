// Loading tokend (~1,000 modules) and building the app leave many objects alive, and V8 answers such a
// burst by growing its young generation (the new space: from 1 MB semi-spaces up to 16 MB and more), which
// then stays resident: ~10 MB of an idle server's RSS that no request needed. While held, the young
// generation keeps its initial size and the survivors go straight on to the old space; the GC time of a
// start-up stays about the same (more, smaller scavenges). Released, V8 sizes it as usual again: a server
// under load, or a long command (export, import), gets the same young generation as without the hold.
import { setFlagsFromString } from 'node:v8';

/** V8's default factor, restored on release (V8 raises anything below 2 to 2 when it starts). */
const DEFAULT_GROWTH_FACTOR = 2;

/** The operator set the factor (NODE_OPTIONS or a node option): theirs stands, untouched. */
const chosenByOperator = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) =>
  /semi[-_]space[-_]growth[-_]factor/.test(arg),
);

let held = false;

/** Keeps the young generation at its current size until release. */
export function holdYoungGeneration(): void {
  if (chosenByOperator || held) return;
  // V8 reads the factor each time it would grow the young generation, so a change takes effect at once.
  setFlagsFromString('--semi-space-growth-factor=1');
  held = true;
}

export function releaseYoungGeneration(): void {
  if (!held) return;
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  held = false;
}
