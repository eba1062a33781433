// Scenario 1's read against tokend from several checkouts of the project, in alternating rounds, on one
// seeded database: how a change to the request path is judged before it lands. Each round gives req/s,
// tokend's CPU per request, the database server's CPU per request (PostgreSQL and MariaDB run as local
// processes here) and how often the kernel took the core from tokend (involuntary context switches).
// One round swings widely on a shared machine (bench/HISTORY.md), so a change is judged by its per-round
// ratios to the first checkout over many rounds, never by one run. See bench/README.md ("Comparing checkouts").
// tokend runs with its shipped defaults; with `--log-level` (which may be given more than once) each
// checkout runs at each level named, e.g. to weigh the access line (info) against none (warn).
//
//   node bench/seed.ts --database-url postgres://postgres@127.0.0.1:5432/tokend_ab
//   node bench/compare.ts --database-url postgres://postgres@127.0.0.1:5432/tokend_ab \
//     --rounds 16 --seconds 3 /path/to/checkout-a /path/to/checkout-b
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { alternate, loadWithCpu, warmUp, type LoadResult } from './load.ts';
import {
  cpuSecondsOf,
  involuntarySwitchesOf,
  cpuSecondsOfProcesses,
  databaseServerProcesses,
  startServer,
  type Server,
} from './processes.ts';
import { SELF_PATH, describeSettings, fmt, median, readSpec, tokendEnv, tokendSettings } from './support.ts';

const USAGE =
  'usage: node bench/compare.ts --database-url URL [--rounds 16] [--seconds 3] [--warm-up 4] [--connections 10] [--log-level LEVEL]... CHECKOUT...';

interface Round {
  load: LoadResult;
  /** CPU µs of the database server's processes per request */
  dbUs: number;
  /** involuntary context switches of tokend per request */
  preempted: number;
}

async function measure(server: Server, seconds: number, connections: number, dbNames: string[]) {
  const pid = server.child.pid ?? -1;
  const db0 = cpuSecondsOfProcesses(dbNames);
  const switches0 = involuntarySwitchesOf(pid);
  const load = await loadWithCpu({ ...readSpec({ connections }), port: server.port, seconds }, () =>
    cpuSecondsOf(pid, true),
  );
  const requests = Math.max(1, load.requests);
  return {
    load,
    dbUs: ((cpuSecondsOfProcesses(dbNames) - db0) * 1e6) / requests,
    preempted: (involuntarySwitchesOf(pid) - switches0) / requests,
  } satisfies Round;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'database-url': { type: 'string' },
      rounds: { type: 'string', default: '16' },
      seconds: { type: 'string', default: '3' },
      'warm-up': { type: 'string', default: '4' },
      connections: { type: 'string', default: '10' },
      'log-level': { type: 'string', multiple: true },
    },
  });
  const url = values['database-url'];
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const warmUpSeconds = Number(values['warm-up']);
  const connections = Number(values.connections);
  if (
    !url ||
    positionals.length === 0 ||
    !(rounds >= 1) ||
    !(seconds >= 1) ||
    !(warmUpSeconds >= 0) ||
    !(connections >= 1)
  )
    throw new Error(USAGE);
  const dbNames = databaseServerProcesses(url);
  const levels = values['log-level'] ?? [undefined];
  const sides = positionals.flatMap((dir) =>
    levels.map((logLevel) => ({ cwd: resolve(dir), settings: tokendSettings({ logLevel }) })),
  );
  const checkouts = sides.map(({ cwd, settings }) => `${cwd} (${describeSettings(settings)})`);

  const servers: Server[] = [];
  try {
    for (const [i, { cwd, settings }] of sides.entries())
      servers.push(
        await startServer({
          name: `tokend ${i + 1}`,
          args: ['bin/tokend.js', 'serve'],
          env: tokendEnv({ url }, settings),
          readyPath: SELF_PATH,
          cwd,
        }),
      );
    const spec = readSpec({ connections });
    if (warmUpSeconds > 0)
      for (const server of servers) await warmUp({ ...spec, port: server.port, seconds: warmUpSeconds });
    const results = await alternate(
      rounds,
      servers.map((server) => () => measure(server, seconds, connections, dbNames)),
    );
    const first = results[0]!;
    process.stdout.write(
      '| checkout | req/s (median) | tokend µs/req (median) | database µs/req | preempted/req | req/s ratio to 1st: median, mean of rounds | CPU ratio to 1st: median, mean |\n' +
        '| --- | --- | --- | --- | --- | --- | --- |\n',
    );
    for (const [i, runs] of results.entries()) {
      const rps = runs.map((r) => r.load.rps);
      const cpu = runs.map((r) => r.load.cpuUsPerRequest ?? NaN);
      const rpsRatios = runs.map((r, k) => r.load.rps / first[k]!.load.rps);
      const cpuRatios = runs.map(
        (r, k) => (r.load.cpuUsPerRequest ?? NaN) / (first[k]!.load.cpuUsPerRequest ?? NaN),
      );
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const failures = runs.reduce((sum, r) => sum + r.load.failures, 0);
      process.stdout.write(
        `| ${i + 1}: ${checkouts[i]}${failures ? ` (**${failures} failed requests**)` : ''} | ${fmt(median(rps))} | ` +
          `${fmt(median(cpu), 1)} | ${dbNames.length ? fmt(median(runs.map((r) => r.dbUs)), 1) : '—'} | ${fmt(median(runs.map((r) => r.preempted)), 3)} | ` +
          `${fmt(median(rpsRatios), 3)}, ${fmt(mean(rpsRatios), 3)} | ${fmt(median(cpuRatios), 3)}, ${fmt(mean(cpuRatios), 3)} |\n`,
      );
    }
  } finally {
    for (const server of servers) await server.stop();
  }
}

try {
  await main();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
}
