// Scenario 10: the capacity model (bench/capacity-model.ts) checked on two tokend instances. A database of
// 1,000,000 users and 3,000,000 tokens (kept on the server between runs, named by its spec; seeded once),
// two tokends at their shipped defaults (WORKERS=1 each, REDIS_URL set), reads on both at once (half the
// connections each, every request a token drawn from the whole data set). Opt-in: `--scenarios 10`.
//
// The prediction comes from the model, given inputs measured in the same run before the check: the
// CPU per read of tokend, of the database server and of the load generator, on one of the two instances
// alone for a few seconds. On one machine the load generator, both tokends and the database share
// the cores, so the model's bound is cores / (tokend + database + load generator CPU per read), or one
// core per tokend process if that is lower. The rig's cores are the machine's: the prediction is for an
// otherwise idle machine (the row says when other work kept cores busy before the run). Then both instances are loaded and the reads/s and the
// database's CPU are measured. Target: each within ±25 % of its prediction. PostgreSQL and MariaDB only
// (two processes on one SQLite file is not how tokend scales).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { parseDatabaseUrl } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { MYSQL_URL, POSTGRES_URL, REDIS_URL } from '../../test/helpers/dialects.ts';
import { errorPercent, predictReads, type Prediction } from '../capacity-model.ts';
import {
  WALK_CALIBRATION,
  WALK_WARM_UP,
  databaseCpu,
  measureReads,
  spreadReadHeaders,
  type ReadMeasurement,
} from '../costs.ts';
import { warmUp } from '../load.ts';
import { startServer, type Server } from '../processes.ts';
import { seed, type SeedSpec } from '../seed.ts';
import {
  SELF_PATH,
  check,
  fmt,
  progress,
  sleep,
  tokendEnv,
  tokendSettings,
  type OwnDataScenario,
  type Row,
} from '../support.ts';

export const CAPACITY_SPEC: SeedSpec = { users: 1_000_000, tokens: 3_000_000, hotTokens: 1000 };
const TARGET_ERROR_PERCENT = 25;
const INSTANCES = 2;
/** Cores other work kept busy before the run above which the row says the machine was not idle. */
const BUSY_MACHINE_CORES = 0.2;

/** The database of a spec on a server: its name says the spec, so a later run finds and reuses it. */
const databaseName = (spec: SeedSpec) => `tokend_capacity_u${spec.users}_t${spec.tokens}_h${spec.hotTokens}`;
/** A table of the bench's own, written once seeding has finished: its row says the database is complete. */
const MARKER = 'bench_capacity_seeded';

function urlOf(backend: 'postgres' | 'mysql', name: string): string {
  const u = new URL(backend === 'postgres' ? POSTGRES_URL : MYSQL_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs `statements` on the database at `url`. */
async function execute(backend: 'postgres' | 'mysql', url: string, statements: string[]): Promise<void> {
  if (backend === 'postgres') {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      for (const s of statements) await c.query(s);
    } finally {
      await c.end();
    }
  } else {
    const c = await createConnection({ uri: url });
    try {
      for (const s of statements) await c.query(s);
    } finally {
      await c.end();
    }
  }
}

/** Whether the database of this spec exists and its seeding finished. */
async function seeded(backend: 'postgres' | 'mysql', url: string, spec: SeedSpec): Promise<boolean> {
  const text = JSON.stringify(spec);
  try {
    if (backend === 'postgres') {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query(`SELECT spec FROM ${MARKER}`)).rows.some(
          (r: { spec: string }) => r.spec === text,
        );
      } finally {
        await c.end();
      }
    }
    const c = await createConnection({ uri: url });
    try {
      const [rows] = await c.query(`SELECT spec FROM ${MARKER}`);
      return (rows as Array<{ spec: string }>).some((r) => r.spec === text);
    } finally {
      await c.end();
    }
  } catch {
    return false; // no such database, or no marker: seeding did not finish
  }
}

/** The database of `spec`, seeded now unless an earlier run left it complete; the seconds seeding took. */
export async function capacityDatabase(
  backend: 'postgres' | 'mysql',
  spec: SeedSpec,
): Promise<{ url: string; seededSeconds: number | null }> {
  const name = databaseName(spec);
  const url = urlOf(backend, name);
  if (await seeded(backend, url, spec)) {
    progress(`${backend}: reusing database ${name}`);
    return { url, seededSeconds: null };
  }
  progress(`${backend}: seeding ${name} (${fmt(spec.users)} users, ${fmt(spec.tokens)} tokens)`);
  // on the server's own database (the test suite's), since the one of the spec may not exist yet
  await execute(backend, backend === 'postgres' ? POSTGRES_URL : MYSQL_URL, [
    backend === 'postgres'
      ? `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`
      : `DROP DATABASE IF EXISTS ${name}`,
    `CREATE DATABASE ${name}`,
  ]);
  const store = await openStore(parseDatabaseUrl(url), { poolSize: 2, timeoutMs: 600_000 });
  try {
    const result = await seed(store, spec);
    // Written last: a run cut short leaves no marker, and the next one seeds again.
    await execute(backend, url, [
      `CREATE TABLE ${MARKER} (spec VARCHAR(200) NOT NULL)`,
      `INSERT INTO ${MARKER} (spec) VALUES ('${JSON.stringify(spec)}')`,
    ]);
    progress(`${backend}: seeded in ${fmt(result.seconds, 1)} s`);
    return { url, seededSeconds: result.seconds };
  } finally {
    await store.close();
  }
}

/** Busy cores of the whole machine over `ms` (/proc/stat): what other processes keep busy before the run. */
export async function busyCores(ms = 2000): Promise<number> {
  const read = () => {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const busy = fields[0]! + fields[1]! + fields[2]! + fields[5]! + fields[6]! + (fields[7] ?? 0);
    return busy / 100; // USER_HZ
  };
  const before = read();
  const began = performance.now();
  await sleep(ms);
  return (read() - before) / ((performance.now() - began) / 1000);
}

const pct = (n: number) => `${n >= 0 ? '+' : ''}${fmt(n, 1)} %`;

export const capacityCheck: OwnDataScenario = {
  id: 10,
  name: 'capacity check',
  firstBackendOnly: false,
  tokend: 'own data',
  async run({ opts, backend }): Promise<Row> {
    const title = `capacity model: ${INSTANCES} instances, reads predicted vs measured`;
    if (backend !== 'postgres' && backend !== 'mysql')
      return {
        scenario: 10,
        title,
        backend,
        tokend: 'not run',
        baseline: '—',
        ratio: null,
        checks: [],
        settings: null,
        note: 'PostgreSQL and MariaDB only: several instances share a database server',
        figures: {},
      };
    const spec = opts.capacitySpec;
    const { url, seededSeconds } = await capacityDatabase(backend, spec);
    const redisPrefix = `bench-capacity-${process.pid}-${backend}:`;
    const settings = tokendSettings(opts, { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix });
    const tokends: Server[] = [];
    try {
      for (let i = 0; i < INSTANCES; i++)
        tokends.push(
          await startServer({
            name: `tokend ${i + 1} (${backend})`,
            args: ['bin/tokend.js', 'serve'],
            env: tokendEnv({ url }, settings),
            readyPath: SELF_PATH,
          }),
        );
      const targets = tokends.map((t) => ({ port: t.port, pid: t.child.pid ?? -1 }));
      const perInstance = Math.max(1, Math.round(opts.connections / INSTANCES));
      const reads = {
        connections: perInstance,
        tokens: spec.tokens,
        dbCpu: () => 0, // replaced once the pools have connected, after the warm-up
      };
      // Warm-up of both instances together (V8 tiers the request path up; the database's caches fill).
      await Promise.all(
        targets.map((t, i) =>
          warmUp({
            port: t.port,
            path: SELF_PATH,
            connections: perInstance,
            seconds: opts.warmUpSeconds,
            requestHeaders: (n) => spreadReadHeaders(spec.tokens, WALK_WARM_UP)(n * INSTANCES + i),
          }),
        ),
      );

      reads.dbCpu = await databaseCpu(backend, url);
      // The model's inputs: the CPU per read on one instance alone.
      // As long as the check itself: a few seconds' calibration moved by up to a fifth between runs.
      progress(`${backend}: calibrating on one instance (${opts.seconds} s)`);
      const calibration = await measureReads([targets[0]!], {
        ...reads,
        seconds: opts.seconds,
        from: WALK_CALIBRATION,
      });
      // The rig's cores: every core of the machine, as on the idle machine the figures are for. Other
      // work keeps some busy on a shared one, and the kernel shares the cores between it and the run in
      // proportions the model does not know: the row then says how many were busy before the run.
      await sleep(1000);
      const background = await busyCores();
      const cores = availableParallelism();
      const prediction: Prediction = predictReads(calibration, {
        instances: INSTANCES,
        workersPerInstance: 1,
        sharedCores: cores,
        withLoadGenerator: true,
      });
      progress(
        `${backend}: predicted ${fmt(prediction.readsPerS)} reads/s, database ${fmt(prediction.dbCores, 2)} cores (bound by ${prediction.boundBy}; ${fmt(background, 2)} of ${cores} cores busy before the run)`,
      );

      progress(`${backend}: both instances, ${opts.seconds} s`);
      const measured: ReadMeasurement = await measureReads(targets, { ...reads, seconds: opts.seconds });
      const readsError = errorPercent(prediction.readsPerS, measured.readsPerS);
      const dbError = errorPercent(prediction.dbCores, measured.dbCores);
      return {
        scenario: 10,
        title,
        backend,
        tokend:
          `measured ${fmt(measured.readsPerS)} reads/s (p99 ${fmt(measured.p99Ms, 1)} ms), database ${fmt(measured.dbCores, 2)} cores; ` +
          `predicted ${fmt(prediction.readsPerS)} reads/s (${pct(readsError)}), database ${fmt(prediction.dbCores, 2)} cores (${pct(dbError)}); ` +
          // Where an error comes from: the costs per read moving, or the run getting fewer cores than the model's.
          `in the check: tokend ${fmt(measured.tokendCpuPerRead * 1e6)} µs, database ${fmt(measured.dbCpuPerRead * 1e6)} µs, ` +
          `load generator ${fmt(measured.loadGeneratorCpuPerRead * 1e6)} µs CPU per read, ` +
          `${fmt(measured.tokendCores + measured.dbCores + measured.loadGeneratorCores, 2)} cores busy for the run`,
        baseline:
          `model inputs from one instance alone: tokend ${fmt(calibration.tokendCpuPerRead * 1e6)} µs, database ${fmt(calibration.dbCpuPerRead * 1e6)} µs, ` +
          `load generator ${fmt(calibration.loadGeneratorCpuPerRead * 1e6)} µs CPU per read; ${cores} cores (${fmt(background, 2)} busy with other work before the run)` +
          (seededSeconds === null ? '' : `; seeded in ${fmt(seededSeconds)} s`),
        ratio: measured.readsPerS / prediction.readsPerS,
        checks: [
          check('reads/s error %', Math.abs(readsError), '<=', TARGET_ERROR_PERCENT),
          check('database CPU error %', Math.abs(dbError), '<=', TARGET_ERROR_PERCENT),
          check('no failed requests', measured.failures + calibration.failures, '<=', 0),
        ],
        settings,
        note:
          `${fmt(spec.users)} users, ${fmt(spec.tokens)} tokens, ${perInstance} connections per instance` +
          (background > BUSY_MACHINE_CORES
            ? '; the machine was busy with other work: the prediction assumes it idle'
            : ''),
        figures: {
          spec,
          seededSeconds,
          calibration,
          cores,
          backgroundBusyCores: background,
          prediction,
          measured,
          readsError,
          dbError,
        },
      };
    } finally {
      for (const t of tokends) await t.stop();
    }
  },
};
