// Scenario 1: the authenticated read `GET /api/v1/tokens/self`, a seeded token per connection, against
// a bare Fastify app answering the same path with the very envelope tokend answered (bench/baseline.ts).
// Target: req/s tokend / baseline, SQLite ≥ 0.7, PostgreSQL ≥ 0.45 (in a full run), MariaDB (its own
// tables, or a Ripple-family database in place) reported.
// With --profile, profileReads takes a CPU profile of tokend under the same load.
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestDatabase } from '../../test/helpers/databases.ts';
import { load, warmUp, type LoadResult } from '../load.ts';
import { ROOT } from '../processes.ts';
import { summarise } from '../profile.ts';
import {
  SELF_PATH,
  check,
  compareLoads,
  describeLoad,
  expectStatus,
  progress,
  range,
  readHeaders,
  readSpec,
  startBaseline,
  startTokend,
  type Backend,
  type Options,
  type SharedScenario,
} from '../support.ts';

/** The lowest req/s ratio to the baseline, per backend; a backend without one is reported. */
const TARGET_RATIO: Partial<Record<Backend, number>> = { sqlite: 0.7, postgres: 0.45 };

export const authenticatedRead: SharedScenario = {
  id: 1,
  name: 'authenticated read',
  firstBackendOnly: false,
  tokend: 'shared',
  settings: {},
  async run({ opts, backend }, tokend) {
    const probe = await expectStatus(tokend.port, SELF_PATH, { headers: readHeaders });
    const baselineServer = await startBaseline(probe.body);
    let t: LoadResult, baseline: LoadResult, rounds: number[];
    try {
      [baseline, t, rounds] = await compareLoads(
        opts,
        { server: baselineServer, spec: readSpec(opts) },
        { server: tokend, spec: readSpec(opts) },
      );
    } finally {
      await baselineServer.stop();
    }
    const ratio = t.rps / baseline.rps;
    const target = TARGET_RATIO[backend];
    const checks = [check('no failed requests', t.failures + baseline.failures, '<=', 0)];
    if (target !== undefined) checks.unshift(check('req/s ratio', ratio, '>=', target));
    return {
      scenario: 1,
      title: 'authenticated read `GET /tokens/self`',
      backend,
      tokend: describeLoad(t),
      baseline: `bare Fastify, no logger, same envelope (${probe.body.length} B): ${describeLoad(baseline)}`,
      ratio,
      ratioRange: range(rounds),
      checks,
      settings: tokend.settings,
      figures: { tokend: t, baseline, bodyBytes: probe.body.length, connections: opts.connections },
    };
  },
};

/** A CPU profile of a tokend of its own under scenario 1's load: written to bench/profiles/, summarised on stderr. */
export async function profileReads(opts: Options, database: TestDatabase): Promise<unknown> {
  const dir = join(ROOT, 'bench/profiles');
  mkdirSync(dir, { recursive: true });
  const startedAt = Date.now();
  const tokend = await startTokend(
    { opts, database },
    {},
    { nodeOptions: ['--cpu-prof', '--cpu-prof-dir', dir] },
  );
  try {
    await warmUp({ ...readSpec(opts), port: tokend.port, seconds: opts.warmUpSeconds });
    await load({ ...readSpec(opts), port: tokend.port, seconds: opts.seconds });
  } finally {
    await tokend.stop();
  }
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= startedAt)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!file) throw new Error('tokend wrote no CPU profile');
  const summary = summarise(JSON.parse(readFileSync(file, 'utf8')));
  progress(`CPU profile of scenario 1 written to ${file}; top self time:`);
  for (const f of summary.functions.slice(0, 15))
    process.stderr.write(`  ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.name}  ${f.where}\n`);
  return { file, top: summary.functions.slice(0, 30), files: summary.files.slice(0, 20) };
}
