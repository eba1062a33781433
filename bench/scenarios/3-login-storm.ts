// Scenario 3: scenario 1's reads while scenario 2's token creation runs against the same tokend,
// against the reads alone, alternating with the storm. Target: p99 in the storm / p99 alone ≤ 3.
import { alternate, combine, load, warmUp } from '../load.ts';
import {
  RAISED_LOGIN_LIMITS,
  check,
  createSpec,
  describeLoad,
  fmt,
  range,
  readSpec,
  sliceSeconds,
  type SharedScenario,
} from '../support.ts';

const TARGET_P99_RATIO = 3;

export const loginStorm: SharedScenario = {
  id: 3,
  name: 'reads during a login storm',
  firstBackendOnly: true,
  tokend: 'shared',
  settings: RAISED_LOGIN_LIMITS,
  async run({ opts, backend }, tokend) {
    const seconds = sliceSeconds(opts);
    const reads = { ...readSpec(opts), port: tokend.port, seconds };
    const logins = { ...createSpec(opts), port: tokend.port, seconds };
    await warmUp({ ...reads, seconds: opts.warmUpSeconds });
    const [alone, storm] = await alternate(opts.rounds, [
      () => load(reads).then((r) => [r]),
      () => Promise.all([load(reads), load(logins)]),
    ]);
    const readsAlone = combine(alone!.map((r) => r[0]!));
    const readsInStorm = combine(storm!.map((r) => r[0]!));
    const loginsInStorm = combine(storm!.map((r) => r[1]!));
    const ratio = readsInStorm.p99Ms / readsAlone.p99Ms;
    const perRound = storm!.map((r, i) => r[0]!.p99Ms / alone![i]![0]!.p99Ms);
    return {
      scenario: 3,
      title: 'reads during a login storm (p99 of reads)',
      backend,
      tokend: `reads ${describeLoad(readsInStorm)}; logins ${fmt(loginsInStorm.rps, 1)}/s`,
      baseline: `reads alone: ${describeLoad(readsAlone)}`,
      ratio,
      ratioRange: range(perRound),
      checks: [
        check('p99 ratio', ratio, '<=', TARGET_P99_RATIO),
        check('no failed requests', readsInStorm.failures + loginsInStorm.failures, '<=', 0),
      ],
      settings: tokend.settings,
      figures: { readsInStorm, loginsInStorm, readsAlone },
    };
  },
};
