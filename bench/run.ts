// The benchmark suite: tokend and its baselines side by side in one run, on loopback.
// Prints one markdown table and writes bench/results.json. See bench/README.md.
//
//   node bench/run.ts [--quick] [--check] [--scenarios 1,4] [--backends sqlite,postgres]
//                     [--seconds N] [--warm-up N] [--connections N] [--log-level LEVEL] [--profile]
//
// This file is the driver: the options, the order of a backend's run, the table and results.json.
// Each scenario is a module of bench/scenarios/; what they share is bench/support.ts.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/store/database.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/databases.ts';
import { DIALECTS } from '../test/helpers/dialects.ts';
import { ROOT } from './processes.ts';
import { DEFAULT_SPEC, seed } from './seed.ts';
import { authenticatedRead, profileReads } from './scenarios/1-authenticated-read.ts';
import { tokenCreation } from './scenarios/2-token-creation.ts';
import { loginStorm } from './scenarios/3-login-storm.ts';
import { listing } from './scenarios/4-listing.ts';
import { fixPrivileges } from './scenarios/5-fix-privileges.ts';
import { startUp } from './scenarios/6-start-up.ts';
import { workers } from './scenarios/7-workers.ts';
import { loginFlood, loginFloodManyAddresses } from './scenarios/8-login-flood.ts';
import { oauthRefreshFlood } from './scenarios/9-oauth-refresh-flood.ts';
import { CAPACITY_SPEC, capacityCheck } from './scenarios/10-capacity-check.ts';
import {
  DEFAULT_SCENARIO_IDS,
  MAX_READ_CONNECTIONS,
  SCENARIO_IDS,
  describeSettings,
  fmt,
  progress,
  startTokend,
  type Backend,
  type Context,
  type Options,
  type OwnDataScenario,
  type OwnScenario,
  type Row,
  type Scenario,
  type ScenarioId,
  type SharedScenario,
} from './support.ts';

// ---------------------------------------------------------------- options

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
      scenarios: { type: 'string' },
      backends: { type: 'string' },
      seconds: { type: 'string' },
      'warm-up': { type: 'string' },
      connections: { type: 'string', default: '10' },
      'log-level': { type: 'string' },
      profile: { type: 'boolean', default: false },
      'capacity-users': { type: 'string', default: String(CAPACITY_SPEC.users) },
      'capacity-tokens': { type: 'string', default: String(CAPACITY_SPEC.tokens) },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(readFileSync(join(ROOT, 'bench/README.md'), 'utf8'));
    process.exit(0);
  }
  const list = (raw: string | undefined) =>
    raw === undefined
      ? undefined
      : raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  const scenarios = new Set<ScenarioId>();
  for (const s of list(values.scenarios) ?? DEFAULT_SCENARIO_IDS.map(String)) {
    const n = Number(s) as ScenarioId;
    if (!SCENARIO_IDS.includes(n)) throw new Error(`unknown scenario ${JSON.stringify(s)}; choose from 1-10`);
    scenarios.add(n);
  }
  const wantedBackends = list(values.backends);
  let backends: Backend[];
  // the test matrix's backends that answer: ripple (in place on a family database) wherever MariaDB does
  const answering: Backend[] = [...DIALECTS];
  if (wantedBackends === undefined) backends = values.quick ? ['sqlite'] : answering;
  else {
    backends = [];
    for (const b of wantedBackends) {
      const backend = (b === 'mariadb' ? 'mysql' : b) as Backend;
      if (!BACKEND_ORDER.includes(backend))
        throw new Error(`unknown backend ${JSON.stringify(b)}; choose from ${BACKEND_ORDER.join(', ')}`);
      if (!answering.includes(backend))
        throw new Error(`the ${backend === 'ripple' ? 'mysql' : backend} server does not answer`);
      backends.push(backend);
    }
  }
  const seconds = Number(values.seconds ?? (values.quick ? 3 : 10));
  const connections = Number(values.connections);
  // Reads reach their steady figures only after some seconds of load (V8 tiers the request path up
  // meanwhile; bench/HISTORY.md).
  const warmUpSeconds = Number(values['warm-up'] ?? (values.quick ? 3 : 6));
  // Each read connection has a seeded token of its own (readSpec); 8,000 of them have 4-digit ids.
  if (!(seconds >= 1) || !(warmUpSeconds >= 0) || !Number.isInteger(connections) || connections < 1)
    throw new Error('--seconds must be ≥ 1, --warm-up ≥ 0 and --connections a positive integer');
  if (connections > MAX_READ_CONNECTIONS)
    throw new Error(`--connections may be at most ${MAX_READ_CONNECTIONS} (a seeded token each)`);
  const logLevel = values['log-level'];
  // tokend's own check, so a level it would refuse stops the run before anything is seeded.
  if (logLevel !== undefined) loadConfig({ LOG_LEVEL: logLevel });
  return {
    quick: values.quick,
    check: values.check,
    scenarios,
    backends,
    seconds,
    rounds: values.quick ? 2 : 4,
    warmUpSeconds,
    connections,
    createConnections: 8,
    bcryptConcurrency: loadConfig({ BCRYPT_CONCURRENCY: process.env.BCRYPT_CONCURRENCY }).bcryptConcurrency,
    machineBcryptSlots: availableParallelism(),
    startRuns: values.quick ? 2 : 3,
    profile: values.profile,
    logLevel,
    // The listing user holds TOKENS_PER_USER_MAX (1,000) tokens in both modes, so p=20 is the last page.
    spec: values.quick ? { users: 10_000, tokens: 100_000, hotTokens: DEFAULT_SPEC.hotTokens } : DEFAULT_SPEC,
    capacitySpec: {
      users: Number(values['capacity-users']),
      tokens: Number(values['capacity-tokens']),
      hotTokens: CAPACITY_SPEC.hotTokens,
    },
  };
}

// ---------------------------------------------------------------- one backend

interface Run {
  opts: Options;
  rows: Row[];
  profile?: unknown;
}

/**
 * A backend's run, in this order: start-up first, while no other server runs; then the scenarios
 * measured against a shared 1-worker tokend, one for each set of settings they need (the reads and the
 * workers at the shipped defaults, the listing with its metrics on, creation and the login storm with
 * raised login limits); the login and OAuth floods on tokends of their own; the profile; fix_privileges
 * last, since it rewrites a third of the seeded tokens.
 */
const BEFORE_SHARED: OwnScenario[] = [startUp];
const ON_SHARED_TOKEND: SharedScenario[] = [authenticatedRead, workers, listing, tokenCreation, loginStorm];
const AFTER_SHARED: OwnScenario[] = [loginFlood, loginFloodManyAddresses, oauthRefreshFlood];
const LAST: OwnScenario[] = [fixPrivileges];
/** Scenarios on a database of their own, before the backend's shared one is made (and only then made). */
const OWN_DATA: OwnDataScenario[] = [capacityCheck];

/**
 * A fresh database for `backend`: ripple's is a MariaDB database of the family's form (latin1, its users
 * and tokens tables) with tokend's additions, applied as `tokend migrate` applies them.
 */
const backendDatabase = (backend: Backend): Promise<TestDatabase> => createTestDatabase(backend);

async function runBackend(run: Run, backend: Backend, primary: boolean) {
  const applies = (s: Scenario) => run.opts.scenarios.has(s.id) && (primary || !s.firstBackendOnly);
  for (const scenario of OWN_DATA.filter(applies)) {
    progress(`${backend}: scenario ${scenario.id} (${scenario.name})`);
    run.rows.push(await scenario.run({ opts: run.opts, backend }));
  }
  if ([...run.opts.scenarios].every((id) => OWN_DATA.some((s) => s.id === id))) return;
  progress(`${backend}: creating a database`);
  const database = await backendDatabase(backend);
  try {
    const store = await openStore(database.config, { poolSize: 2, timeoutMs: 60_000 });
    try {
      progress(
        `${backend}: seeding ${fmt(run.opts.spec.users)} users and ${fmt(run.opts.spec.tokens)} tokens`,
      );
      const seeded = await seed(store, run.opts.spec);
      progress(`${backend}: seeded in ${fmt(seeded.seconds, 1)} s`);
      run.rows.push({
        scenario: 0,
        title: 'seeding (multi-row INSERTs in transactions)',
        backend,
        tokend: `${fmt(seeded.tokens)} tokens + ${fmt(seeded.users)} users in ${fmt(seeded.seconds, 1)} s`,
        baseline: '—',
        ratio: null,
        checks: [],
        settings: null,
        figures: { ...seeded },
      });
      const context: Context = { opts: run.opts, backend, database, store };
      const runOwn = async (scenarios: OwnScenario[]) => {
        for (const scenario of scenarios.filter(applies)) {
          progress(`${backend}: scenario ${scenario.id} (${scenario.name})`);
          run.rows.push(await scenario.run(context));
        }
      };
      await runOwn(BEFORE_SHARED);
      const onShared = ON_SHARED_TOKEND.filter(applies);
      const bySettings = Map.groupBy(onShared, (s) => describeSettings(s.settings));
      for (const group of bySettings.values()) {
        const tokend = await startTokend(context, group[0]!.settings);
        try {
          for (const scenario of group) {
            progress(`${backend}: scenario ${scenario.id} (${scenario.name})`);
            run.rows.push(await scenario.run(context, tokend));
          }
        } finally {
          await tokend.stop();
        }
      }
      await runOwn(AFTER_SHARED);
      if (primary && run.opts.profile) {
        progress(`${backend}: profiling scenario 1`);
        run.profile = await profileReads(run.opts, database);
      }
      await runOwn(LAST);
    } finally {
      await store.close();
    }
  } finally {
    await database.drop();
  }
}

// ---------------------------------------------------------------- report

const backendName = (b: Row['backend']) =>
  ({ sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MariaDB', ripple: 'MariaDB, family schema in place' })[
    b
  ];

function describeChecks(row: Row): { target: string; met: string } {
  if (row.checks.length === 0) return { target: 'report', met: '—' };
  const target = row.checks
    .filter((c) => c.what !== 'no failed requests' && c.what !== 'tokens left over their limits')
    .map((c) => `${c.what} ${c.op === '>=' ? '≥' : '≤'} ${c.limit}`)
    .join('; ');
  const met = row.checks.every((c) => c.pass)
    ? 'yes'
    : `**no** (${row.checks
        .filter((c) => !c.pass)
        .map((c) => c.what)
        .join(', ')})`;
  return { target: target || 'report', met };
}

function table(rows: Row[]): string {
  const lines = [
    '| # | scenario | backend | tokend settings | tokend | baseline | ratio | target | met |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const sorted = [...rows].sort(
    (a, b) => a.scenario - b.scenario || BACKEND_ORDER.indexOf(a.backend) - BACKEND_ORDER.indexOf(b.backend),
  );
  for (const row of sorted) {
    const { target, met } = describeChecks(row);
    const ratio =
      row.ratio === null
        ? '—'
        : fmt(row.ratio, 2) +
          (row.ratioRange ? ` (rounds ${row.ratioRange.map((r) => fmt(r, 2)).join('–')})` : '');
    const tokend = row.note ? `${row.tokend} (${row.note})` : row.tokend;
    lines.push(
      `| ${row.scenario || 'seed'} | ${row.title} | ${backendName(row.backend)} | ${describeSettings(row.settings)} | ${tokend} | ${row.baseline} | ${ratio} | ${target} | ${met} |`,
    );
  }
  return lines.join('\n');
}
const BACKEND_ORDER: Backend[] = ['sqlite', 'postgres', 'mysql', 'ripple'];

function gitCommit(): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench'], {
        cwd: ROOT,
        encoding: 'utf8',
      }).trim() !== '';
    return { commit, dirty };
  } catch {
    return { commit: 'unknown', dirty: true };
  }
}

async function main(): Promise<void> {
  const opts = parseOptions();
  const began = performance.now();
  const meta = {
    startedAt: new Date().toISOString(),
    node: process.version,
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryBytes: totalmem(),
    loadAverageAtStart: loadavg(),
    ...gitCommit(),
    quick: opts.quick,
    secondsPerMeasurement: opts.seconds,
    connections: opts.connections,
    createConnections: opts.createConnections,
    backends: opts.backends,
    scenarios: [...opts.scenarios],
    logLevel: opts.logLevel ?? 'unset (info)',
    dataSet: opts.spec,
  };
  progress(
    `node ${meta.node}, ${meta.cores} cores, commit ${meta.commit.slice(0, 10)}${meta.dirty ? ' (+ uncommitted changes)' : ''}; backends ${opts.backends.join(', ')}; LOG_LEVEL ${meta.logLevel}`,
  );
  const run: Run = { opts, rows: [] };
  for (const [i, backend] of opts.backends.entries()) await runBackend(run, backend, i === 0);

  const markdown = table(run.rows);
  const totalSeconds = (performance.now() - began) / 1000;
  process.stdout.write(
    `\n${markdown}\n\n${meta.cores} cores (${meta.cpu}), node ${meta.node}, commit ${meta.commit.slice(0, 10)}${meta.dirty ? '+' : ''}, ${opts.quick ? 'quick' : 'full'} run, LOG_LEVEL ${meta.logLevel}, ${fmt(opts.seconds)} s per measurement, ${fmt(totalSeconds)} s in all; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  const failing = run.rows.filter((r) => r.checks.some((c) => !c.pass));
  writeFileSync(
    join(ROOT, 'bench/results.json'),
    `${JSON.stringify({ meta: { ...meta, totalSeconds, loadAverageAtEnd: loadavg() }, rows: run.rows, profile: run.profile, markdown }, null, 2)}\n`,
  );
  progress('wrote bench/results.json');
  if (opts.check && failing.length > 0) {
    process.stderr.write(
      `targets missed: ${failing.map((r) => `scenario ${r.scenario} (${r.backend})`).join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
