// What the property-based fuzz tests share: their seed and how many requests they generate.
// - FUZZ_SEED replays a run (fast-check prints the seed of a failing one); without it a test uses its own
//   fixed seed, or a new one each run, so that runs over time cover more than one run does.
// - FUZZ_SCALE multiplies every count, for a deeper run of one file than the suite's:
//   FUZZ_SCALE=10 node --test test/security/fuzz-pages.test.ts
const scale = Number(process.env.FUZZ_SCALE ?? '1');
if (!(scale > 0)) throw new Error(`FUZZ_SCALE must be a positive number, not ${process.env.FUZZ_SCALE}`);

/** The seed of this run: FUZZ_SEED, else `fixed`, else one from the clock. */
export const fuzzSeed = (fixed?: number): number =>
  Number(process.env.FUZZ_SEED ?? fixed ?? Date.now() % 2 ** 31);

/** `count` generated requests, times FUZZ_SCALE (at least one). */
export const fuzzRuns = (count: number): number => Math.max(1, Math.round(count * scale));
