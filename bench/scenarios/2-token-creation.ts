// Scenario 2: token creation `POST /api/v1/tokens` (id and password), bound by bcrypt, against the
// machine's bcrypt capacity: bench/bcrypt-ceiling.ts verifying the same hash in a process of its own,
// as many at once as there are cores, no HTTP, no database. Target: creations/s / verifications/s ≥ 0.9.
import { execFile } from 'node:child_process';
import { alternate, combine, load, warmUp, type LoadResult } from '../load.ts';
import { ROOT } from '../processes.ts';
import {
  CREATE_PATH,
  RAISED_LOGIN_LIMITS,
  check,
  createBody,
  createSpec,
  describeLoad,
  expectStatus,
  fmt,
  range,
  sliceSeconds,
  type Options,
  type SharedScenario,
} from '../support.ts';

const TARGET_RATIO = 0.9;

interface Ceiling {
  verifications: number;
  seconds: number;
  perSecond: number;
}

/** The bcrypt loop in its own process (like tokend), started fresh for each round. */
function bcryptCeiling(opts: Options, seconds: number): Promise<Ceiling> {
  return new Promise((resolve, reject) => {
    const args = ['bench/bcrypt-ceiling.ts', '--concurrency', String(opts.machineBcryptSlots)];
    execFile(
      process.execPath,
      [...args, '--seconds', String(seconds)],
      { cwd: ROOT, encoding: 'utf8' },
      (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout) as Ceiling)),
    );
  });
}

export const tokenCreation: SharedScenario = {
  id: 2,
  name: 'token creation',
  firstBackendOnly: true,
  tokend: 'shared',
  settings: RAISED_LOGIN_LIMITS,
  async run({ opts, backend }, tokend) {
    const probe = await expectStatus(tokend.port, CREATE_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: createBody,
    });
    if (!/"token":"[0-9a-f]{32}"/.test(probe.body))
      throw new Error(`token creation gave no token: ${probe.body}`);
    const seconds = sliceSeconds(opts);
    await warmUp({ ...createSpec(opts), port: tokend.port, seconds: opts.warmUpSeconds });
    const [ceilings, creations] = await alternate<Ceiling | LoadResult>(opts.rounds, [
      () => bcryptCeiling(opts, seconds),
      () => load({ ...createSpec(opts), port: tokend.port, seconds }),
    ]);
    const ceilingRuns = ceilings as Ceiling[];
    const verifications = ceilingRuns.reduce((n, c) => n + c.verifications, 0);
    const ceilingSeconds = ceilingRuns.reduce((n, c) => n + c.seconds, 0);
    const ceiling = { verifications, seconds: ceilingSeconds, perSecond: verifications / ceilingSeconds };
    const t = combine(creations as LoadResult[]);
    const ratio = t.rps / ceiling.perSecond;
    const perRound = (creations as LoadResult[]).map((c, i) => c.rps / ceilingRuns[i]!.perSecond);
    return {
      scenario: 2,
      title: 'token creation `POST /tokens`',
      backend,
      tokend: describeLoad(t),
      baseline: `bcrypt verify loop, ${opts.machineBcryptSlots} in flight (every core; tokend's BCRYPT_CONCURRENCY is ${opts.bcryptConcurrency}): ${fmt(ceiling.perSecond, 1)}/s`,
      ratio,
      ratioRange: range(perRound),
      checks: [
        check('ceiling ratio', ratio, '>=', TARGET_RATIO),
        check('no failed requests', t.failures, '<=', 0),
      ],
      settings: tokend.settings,
      figures: {
        tokend: t,
        ceiling,
        connections: opts.createConnections,
        bcryptConcurrency: opts.bcryptConcurrency,
        machineBcryptSlots: opts.machineBcryptSlots,
      },
    };
  },
};
