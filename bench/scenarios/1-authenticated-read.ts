// Scenario 1: the authenticated read `GET /api/v1/tokens/self`, a seeded token per connection, against
// its floor (bench/floor.ts: a bare Fastify app doing only the read's irreducible work on the same
// database) and against the stack's ceiling (bench/baseline.ts: a bare Fastify app answering the very
// envelope tokend answered, no lookup, no log), the three alternated in one run.
// Target: the CPU ratio (floor's CPU per read / tokend's), SQLite ≥ 0.85; PostgreSQL, MariaDB (its own
// tables, or a Ripple-family database in place) reported, with the database server's CPU per read.
// With --profile, profileReads takes a CPU profile of tokend and one of the floor under the same load.
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestDatabase } from '../../test/helpers/databases.ts';
import { load, type LoadResult } from '../load.ts';
import { ROOT, type Server } from '../processes.ts';
import { summarise, type Frame } from '../profile.ts';
import {
  SELF_PATH,
  check,
  compareSides,
  describeLoad,
  expectStatus,
  fmt,
  progress,
  range,
  readHeaders,
  readSpec,
  startBaseline,
  startFloor,
  startTokend,
  type Backend,
  type Options,
  type SharedScenario,
} from '../support.ts';

/** The lowest CPU ratio to the floor (floor's CPU per read / tokend's), per backend; a backend without one is reported. */
export const FLOOR_CPU_TARGET: Partial<Record<Backend, number>> = { sqlite: 0.85 };

/** Scenario 1's ratios: to the floor, and to the stack's ceiling (bare Fastify, fixed envelope). */
export interface ReadRatios {
  /** floor's CPU per read / tokend's: 1.0 is tokend as cheap as the floor, higher is better */
  cpu: number;
  /** tokend's req/s / the floor's */
  rps: number;
  /** bare Fastify's CPU per read / tokend's */
  ceilingCpu: number;
  /** tokend's req/s / bare Fastify's */
  ceilingRps: number;
}

const cpuOf = (r: Pick<LoadResult, 'cpuUsPerRequest'>) => r.cpuUsPerRequest ?? NaN;

export function readRatios(
  tokend: Pick<LoadResult, 'rps' | 'cpuUsPerRequest'>,
  floor: Pick<LoadResult, 'rps' | 'cpuUsPerRequest'>,
  ceiling: Pick<LoadResult, 'rps' | 'cpuUsPerRequest'>,
): ReadRatios {
  return {
    cpu: cpuOf(floor) / cpuOf(tokend),
    rps: tokend.rps / floor.rps,
    ceilingCpu: cpuOf(ceiling) / cpuOf(tokend),
    ceilingRps: tokend.rps / ceiling.rps,
  };
}

/** The database server's CPU per read, when it was measured. */
const databaseCpu = (r: LoadResult) =>
  r.databaseCpuUsPerRequest === undefined
    ? ''
    : `; database server ${fmt(r.databaseCpuUsPerRequest)} µs CPU/req`;

/**
 * The floor's answer to readHeaders equals tokend's, byte for byte. tokend's last_updated is the time of
 * the read, so tokend is asked before and after the floor: one of its answers is of the floor's second.
 */
async function sameAnswer(tokend: Server, floor: Server): Promise<string> {
  const before = (await expectStatus(tokend.port, SELF_PATH, { headers: readHeaders })).body;
  const floorBody = (await expectStatus(floor.port, SELF_PATH, { headers: readHeaders })).body;
  const after = (await expectStatus(tokend.port, SELF_PATH, { headers: readHeaders })).body;
  if (floorBody !== before && floorBody !== after)
    throw new Error(`the floor answered ${floorBody}, tokend ${before} then ${after}`);
  return after;
}

export const authenticatedRead: SharedScenario = {
  id: 1,
  name: 'authenticated read',
  firstBackendOnly: false,
  tokend: 'shared',
  settings: {},
  async run({ opts, backend, database }, tokend) {
    const floorServer = await startFloor(database);
    let body: string;
    let ceilingServer: Server | undefined;
    let t: LoadResult, floor: LoadResult, ceiling: LoadResult, rounds: number[];
    try {
      body = await sameAnswer(tokend, floorServer);
      ceilingServer = await startBaseline(body);
      const spec = readSpec(opts);
      const [fs, cs, ts] = await compareSides(
        opts,
        [
          { server: floorServer, spec },
          { server: ceilingServer, spec },
          { server: tokend, spec },
        ],
        database.url,
      );
      [floor, ceiling, t] = [fs!.combined, cs!.combined, ts!.combined];
      rounds = ts!.rounds.map((r, i) => cpuOf(fs!.rounds[i]!) / cpuOf(r));
    } finally {
      await floorServer.stop();
      await ceilingServer?.stop();
    }
    const ratios = readRatios(t, floor, ceiling);
    const target = FLOOR_CPU_TARGET[backend];
    const checks = [check('no failed requests', t.failures + floor.failures + ceiling.failures, '<=', 0)];
    if (target !== undefined) checks.unshift(check('CPU ratio to the floor', ratios.cpu, '>=', target));
    return {
      scenario: 1,
      title: 'authenticated read `GET /tokens/self` (ratio: CPU per read, floor / tokend)',
      backend,
      tokend:
        `${describeLoad(t)}${databaseCpu(t)}; req/s ${fmt(ratios.rps, 2)} of the floor's, ` +
        `${fmt(ratios.ceilingRps, 2)} of bare Fastify's (CPU ratio ${fmt(ratios.ceilingCpu, 2)})`,
      baseline:
        `floor (bench/floor.ts: same lookup, hashes, limit, envelope, async access line): ${describeLoad(floor)}${databaseCpu(floor)}; ` +
        `the stack's ceiling, bare Fastify, no logger, same envelope (${body.length} B): ${describeLoad(ceiling)}`,
      ratio: ratios.cpu,
      ratioRange: range(rounds),
      checks,
      settings: tokend.settings,
      figures: {
        tokend: t,
        floor,
        ceiling,
        ratios,
        cpuRatioRounds: rounds,
        bodyBytes: body.length,
        connections: opts.connections,
      },
    };
  },
};

/** A CPU profile of `server` (started with --cpu-prof into `dir`) under scenario 1's load, summarised on stderr. */
async function profileOf(
  opts: Options,
  dir: string,
  start: (nodeOptions: string[]) => Promise<Server>,
): Promise<unknown> {
  const startedAt = Date.now();
  const server = await start(['--cpu-prof', '--cpu-prof-dir', dir]);
  let requests = 0;
  try {
    for (const seconds of [opts.warmUpSeconds, opts.seconds])
      requests += (await load({ ...readSpec(opts), port: server.port, seconds })).requests;
  } finally {
    await server.stop();
  }
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= startedAt)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!file) throw new Error(`${server.name} wrote no CPU profile`);
  const summary = summarise(JSON.parse(readFileSync(file, 'utf8')));
  // Self time per request served (start-up included, a few ms over every request of the run): the
  // figure that compares two processes whose idle shares differ.
  const usPerRequest = (f: Frame) => (f.selfMs * 1000) / Math.max(1, requests);
  progress(
    `CPU profile of scenario 1's ${server.name} written to ${file}; ${fmt(requests)} requests; top self time (share, µs per request):`,
  );
  for (const f of summary.functions.slice(0, 20))
    process.stderr.write(
      `  ${(f.share * 100).toFixed(1).padStart(5)}%  ${usPerRequest(f).toFixed(2).padStart(6)} µs  ${f.name}  ${f.where}\n`,
    );
  const withCost = (frames: Frame[]) => frames.map((f) => ({ ...f, usPerRequest: usPerRequest(f) }));
  return {
    file,
    requests,
    top: withCost(summary.functions.slice(0, 40)),
    files: withCost(summary.files.slice(0, 25)),
  };
}

/**
 * CPU profiles under scenario 1's load of a tokend of its own, then of the floor (bench/floor.ts) on the
 * same database: written to bench/profiles/, summarised on stderr. Profiles are shares of each process's
 * time, so the two compare where each spends it.
 */
export async function profileReads(opts: Options, database: TestDatabase): Promise<unknown> {
  const dir = join(ROOT, 'bench/profiles');
  mkdirSync(dir, { recursive: true });
  const tokend = await profileOf(opts, dir, (nodeOptions) =>
    startTokend({ opts, database }, {}, { nodeOptions }),
  );
  const floor = await profileOf(opts, dir, (nodeOptions) => startFloor(database, { nodeOptions }));
  return { tokend, floor };
}
