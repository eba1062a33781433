// The capacity model: from per-request costs measured by bench/costs.ts and a target load, how many
// tokend instances and workers, how big a database and its connection pool, how many Redis operations
// and how much memory; where the first bottleneck is as the load grows; and the inverse, the most reads
// a given set of cores can serve (what scenario 10 checks on this machine). Pure functions, except main.
//
//   node bench/capacity-model.ts --costs bench/costs.json [--backend postgres] [--users 1000000]
//        [--reads 10000] [--logins 50] [--refreshes 0] [--connections 10000] [--headroom 0.65]
//        [--workers 4] [--db-pool-size 10] [--db-cores 8] [--db-max-connections N] [--tokend-cores N]
//
// prints the sizing of docs/running-at-scale.md ("Capacity") for the measured backend(s).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

/** What bench/costs.ts measures for one backend; CPU in seconds (of one core) per request. */
export interface BackendCosts {
  backend: string;
  /** tokend's CPU per `GET /api/v1/tokens/self` (the whole process). */
  tokendCpuPerRead: number;
  /** The database server's CPU per read (every process of the server). */
  dbCpuPerRead: number;
  /** Statements (PostgreSQL: transactions; MariaDB: Questions) the database ran per read, after batching. */
  queriesPerRead: number;
  /** Redis commands per read (0: reads do not touch Redis). */
  redisOpsPerRead: number;
  /** tokend's CPU per login (`POST /api/v1/tokens` with a password), bcrypt's worker threads included. */
  tokendCpuPerLogin: number;
  dbCpuPerLogin: number;
  redisOpsPerLogin: number;
  /** tokend's CPU per OAuth refresh grant (`POST /oauth/token`); undefined when not measured. */
  tokendCpuPerRefresh?: number;
  dbCpuPerRefresh?: number;
  /** CPU seconds of one bcrypt check at the shipped BCRYPT_COST, on one core. */
  bcryptSecondsPerCheck: number;
  /** The load generator's CPU per read (the test rig only, never a production figure). */
  loadGeneratorCpuPerRead: number;
  /** RSS of one tokend process, idle and under read load. */
  rssIdleBytes: number;
  rssLoadBytes: number;
  /** RSS a process grows by per 1,000 open idle keep-alive connections. */
  rssPer1000ConnectionsBytes: number;
}

export interface CostsFile {
  meta: Record<string, unknown>;
  backends: BackendCosts[];
}

/** The load to size for, at peak. */
export interface TargetLoad {
  users: number;
  readsPerS: number;
  loginsPerS: number;
  /** OAuth refresh grants per second (0 when not given). */
  refreshesPerS?: number;
  /** Open client connections across the fleet (keep-alive sockets from the balancer or clients). */
  openConnections?: number;
}

/** How the fleet is deployed, and the limits of what it runs on. */
export interface Deployment {
  /** Run each resource at no more than this share of its capacity (0–1), e.g. 0.65. */
  headroom: number;
  /** WORKERS per instance: one process per core of the instance's machine. */
  workersPerInstance: number;
  /** DB_POOL_SIZE (default 10). */
  dbPoolSize: number;
  /** Connections a process opens beyond DB_POOL_SIZE: PostgreSQL's lookup pool, min(DB_POOL_SIZE, 4). */
  extraConnectionsPerProcess: number;
  /** The database server's connection limit (PostgreSQL 100, MariaDB 151 by default). */
  dbMaxConnections: number;
  /** Cores of the database server (for where the first bottleneck is). */
  dbServerCores: number;
  /** Cores tokend's fleet may have in all (undefined: as many as it needs). */
  tokendCores?: number;
}

export const DEFAULT_HEADROOM = 0.65;

/** The connection limit a database server ships with, and the lookup pool PostgreSQL adds per process. */
export function backendDefaults(
  backend: string,
  dbPoolSize = 10,
): Pick<Deployment, 'dbMaxConnections' | 'extraConnectionsPerProcess'> {
  if (backend === 'postgres')
    return { dbMaxConnections: 100, extraConnectionsPerProcess: Math.min(dbPoolSize, 4) };
  if (backend === 'sqlite') return { dbMaxConnections: Infinity, extraConnectionsPerProcess: 1 };
  return { dbMaxConnections: 151, extraConnectionsPerProcess: 0 };
}

/** Cores a load keeps busy (before headroom), split by what spends them. */
export interface CoreDemand {
  readCores: number;
  /** bcrypt's share of the logins (one check per login). */
  bcryptCores: number;
  /** The rest of a login: HTTP, the user's row, the token's insert, the limiter. */
  loginOtherCores: number;
  refreshCores: number;
  tokendCores: number;
  dbCores: number;
}

export function coreDemand(costs: BackendCosts, load: TargetLoad): CoreDemand {
  const refreshes = load.refreshesPerS ?? 0;
  // The measured login CPU already holds bcrypt's check; what is left is the login's other work. (A
  // check measured alone can come out above a whole login's CPU when the two runs' figures scatter.)
  const bcrypt = Math.min(costs.bcryptSecondsPerCheck, costs.tokendCpuPerLogin);
  const bcryptCores = load.loginsPerS * bcrypt;
  const loginOtherCores = load.loginsPerS * (costs.tokendCpuPerLogin - bcrypt);
  const readCores = load.readsPerS * costs.tokendCpuPerRead;
  const refreshCores = refreshes * (costs.tokendCpuPerRefresh ?? 0);
  const dbCores =
    load.readsPerS * costs.dbCpuPerRead +
    load.loginsPerS * costs.dbCpuPerLogin +
    refreshes * (costs.dbCpuPerRefresh ?? 0);
  return {
    readCores,
    bcryptCores,
    loginOtherCores,
    refreshCores,
    tokendCores: readCores + bcryptCores + loginOtherCores + refreshCores,
    dbCores,
  };
}

export interface Sizing {
  demand: CoreDemand;
  /** Cores to give tokend: its busy cores over the headroom. */
  tokendCoresProvisioned: number;
  instances: number;
  workersPerInstance: number;
  processes: number;
  /** Cores to give the database server: its busy cores over the headroom. */
  dbCoresProvisioned: number;
  dbQueriesPerS: number;
  /** instances × WORKERS × (DB_POOL_SIZE + the lookup pool), against the server's limit. */
  dbConnections: number;
  dbMaxConnections: number;
  redisOpsPerS: number;
  /** RSS of one process under load plus its share of the open connections, and the fleet's total. */
  memoryPerProcessBytes: number;
  memoryTotalBytes: number;
  /** Logins per second the fleet could answer with every core on logins (the login ceiling). */
  loginCeilingPerS: number;
}

export function size(costs: BackendCosts, load: TargetLoad, deployment: Deployment): Sizing {
  const demand = coreDemand(costs, load);
  const tokendCoresProvisioned = demand.tokendCores / deployment.headroom;
  // At least two instances, so one can fail or be restarted while the other serves.
  const instances = Math.max(2, Math.ceil(tokendCoresProvisioned / deployment.workersPerInstance));
  const processes = instances * deployment.workersPerInstance;
  const connectionsPerProcess = (load.openConnections ?? 0) / processes;
  const memoryPerProcessBytes =
    costs.rssLoadBytes + (connectionsPerProcess / 1000) * costs.rssPer1000ConnectionsBytes;
  return {
    demand,
    tokendCoresProvisioned,
    instances,
    workersPerInstance: deployment.workersPerInstance,
    processes,
    dbCoresProvisioned: demand.dbCores / deployment.headroom,
    dbQueriesPerS: load.readsPerS * costs.queriesPerRead,
    dbConnections: processes * (deployment.dbPoolSize + deployment.extraConnectionsPerProcess),
    dbMaxConnections: deployment.dbMaxConnections,
    redisOpsPerS: load.readsPerS * costs.redisOpsPerRead + load.loginsPerS * costs.redisOpsPerLogin,
    memoryPerProcessBytes,
    memoryTotalBytes: processes * memoryPerProcessBytes,
    loginCeilingPerS: processes / costs.tokendCpuPerLogin,
  };
}

export type Bottleneck = 'database CPU' | 'database connections' | 'bcrypt cores' | 'tokend cores for reads';

export interface Growth {
  factor: number;
  sizing: Sizing;
  /** The limits this load passes (empty: it fits). */
  over: Bottleneck[];
}

/**
 * The load multiplied by each factor, the tokend fleet scaled out to match (instances are added), the
 * database server kept at its cores and connection limit: which limits each step passes.
 */
export function growth(
  costs: BackendCosts,
  load: TargetLoad,
  deployment: Deployment,
  factors: readonly number[] = [1, 2, 3, 5, 10],
): Growth[] {
  return factors.map((factor) => {
    const scaled: TargetLoad = {
      ...load,
      readsPerS: load.readsPerS * factor,
      loginsPerS: load.loginsPerS * factor,
      refreshesPerS: (load.refreshesPerS ?? 0) * factor,
      openConnections: (load.openConnections ?? 0) * factor,
    };
    const sizing = size(costs, scaled, deployment);
    const over: Bottleneck[] = [];
    if (sizing.dbCoresProvisioned > deployment.dbServerCores) over.push('database CPU');
    if (sizing.dbConnections > deployment.dbMaxConnections) over.push('database connections');
    if (sizing.tokendCoresProvisioned > (deployment.tokendCores ?? Infinity))
      over.push(
        sizing.demand.bcryptCores + sizing.demand.loginOtherCores > sizing.demand.readCores
          ? 'bcrypt cores'
          : 'tokend cores for reads',
      );
    return { factor, sizing, over };
  });
}

/**
 * The factor of the load at which each limit is reached (Infinity: never), and the first of them. The
 * database server has its cores and its connection limit; tokend's fleet grows by instances until the
 * cores it may have (Deployment.tokendCores) run out, and that limit is named after what fills them:
 * "bcrypt cores" when logins take more of tokend's CPU than reads do.
 */
export function firstBottleneck(
  costs: BackendCosts,
  load: TargetLoad,
  deployment: Deployment,
): { limits: Partial<Record<Bottleneck, number>>; first: Bottleneck; factor: number } {
  const demand = coreDemand(costs, load);
  const dbFactor =
    demand.dbCores > 0 ? (deployment.dbServerCores * deployment.headroom) / demand.dbCores : Infinity;
  // Connections grow a process at a time: the most processes the limit allows, against the processes
  // the load needs per unit of the factor.
  const perProcess = deployment.dbPoolSize + deployment.extraConnectionsPerProcess;
  const maxInstances = Math.floor(
    Math.floor(deployment.dbMaxConnections / perProcess) / deployment.workersPerInstance,
  );
  const coresPerFactor = demand.tokendCores / deployment.headroom;
  const connectionFactor =
    coresPerFactor > 0 ? (maxInstances * deployment.workersPerInstance) / coresPerFactor : Infinity;
  const tokendFactor = coresPerFactor > 0 ? (deployment.tokendCores ?? Infinity) / coresPerFactor : Infinity;
  const tokendLimit: Bottleneck =
    demand.bcryptCores + demand.loginOtherCores > demand.readCores
      ? 'bcrypt cores'
      : 'tokend cores for reads';
  const limits: Partial<Record<Bottleneck, number>> = {
    'database CPU': dbFactor,
    'database connections': connectionFactor,
    [tokendLimit]: tokendFactor,
  };
  const [first, factor] = (Object.entries(limits) as Array<[Bottleneck, number]>).reduce((a, b) =>
    b[1] < a[1] ? b : a,
  );
  return { limits, first, factor };
}

/** Cores a rig or a deployment has for reads, for the inverse of the model. */
export interface Cores {
  instances: number;
  workersPerInstance: number;
  /**
   * Cores every process of the run shares: tokend, the database and the load generator on one machine
   * (this bench). Undefined: tokend has instances × WORKERS cores of its own, the database its own.
   */
  sharedCores?: number;
  /** The database server's own cores (when not shared). */
  dbCores?: number;
  /** Count the load generator's CPU (it runs on the shared cores). */
  withLoadGenerator: boolean;
}

export interface Prediction {
  readsPerS: number;
  /** Cores of the database server busy at that load. */
  dbCores: number;
  tokendCores: number;
  /** What bounds the figure. */
  boundBy: 'shared cores' | 'tokend processes' | 'database cores';
}

/**
 * The most reads per second these cores serve, and the database's CPU at that load. A process uses at
 * most one core for its JavaScript (plus a little of its threads), so tokend serves at most
 * processes / CPU per read; on shared cores every CPU second the run spends per read counts.
 */
export function predictReads(
  costs: Pick<BackendCosts, 'tokendCpuPerRead' | 'dbCpuPerRead' | 'loadGeneratorCpuPerRead'>,
  cores: Cores,
): Prediction {
  const processes = cores.instances * cores.workersPerInstance;
  const bounds: Array<[number, Prediction['boundBy']]> = [
    [processes / costs.tokendCpuPerRead, 'tokend processes'],
  ];
  if (cores.sharedCores !== undefined) {
    const perRead =
      costs.tokendCpuPerRead +
      costs.dbCpuPerRead +
      (cores.withLoadGenerator ? costs.loadGeneratorCpuPerRead : 0);
    bounds.push([cores.sharedCores / perRead, 'shared cores']);
  } else if (cores.dbCores !== undefined && costs.dbCpuPerRead > 0) {
    bounds.push([cores.dbCores / costs.dbCpuPerRead, 'database cores']);
  }
  const [readsPerS, boundBy] = bounds.reduce((a, b) => (b[0] < a[0] ? b : a));
  return {
    readsPerS,
    dbCores: readsPerS * costs.dbCpuPerRead,
    tokendCores: readsPerS * costs.tokendCpuPerRead,
    boundBy,
  };
}

/** (measured − predicted) / predicted, in per cent. */
export const errorPercent = (predicted: number, measured: number): number =>
  ((measured - predicted) / predicted) * 100;

// ---------------------------------------------------------------- the sizing as text

const num = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '∞';
const us = (s: number) => `${num(s * 1e6)} µs`;
const mib = (bytes: number) => `${num(bytes / 2 ** 20)} MiB`;

/** The sizing of one backend as markdown: the inputs, the fleet, and the load growing 10×. */
export function sizingText(costs: BackendCosts, load: TargetLoad, deployment: Deployment): string {
  const s = size(costs, load, deployment);
  const d = s.demand;
  const { limits, first, factor } = firstBottleneck(costs, load, deployment);
  const limitText = (Object.entries(limits) as Array<[Bottleneck, number]>)
    .filter(([, f]) => Number.isFinite(f))
    .map(([what, f]) => `${what} at ${num(f, 1)}×`)
    .join(', ');
  const lines = [
    `### ${costs.backend}: ${num(load.users)} users, ${num(load.readsPerS)} reads/s, ${num(load.loginsPerS)} logins/s at peak, headroom ${num(deployment.headroom * 100)} %`,
    '',
    `Inputs: tokend ${us(costs.tokendCpuPerRead)} per read and ${us(costs.tokendCpuPerLogin)} per login ` +
      `(bcrypt ${us(costs.bcryptSecondsPerCheck)} of it); database ${us(costs.dbCpuPerRead)} and ` +
      `${num(costs.queriesPerRead, 2)} statements per read, ${us(costs.dbCpuPerLogin)} per login; ` +
      `Redis ${num(costs.redisOpsPerLogin, 1)} commands per login, ${num(costs.redisOpsPerRead, 2)} per read.`,
    '',
    '| what | busy at peak | to provision |',
    '| --- | --- | --- |',
    `| tokend cores: reads | ${num(d.readCores, 2)} | |`,
    `| tokend cores: bcrypt (logins) | ${num(d.bcryptCores, 2)} | |`,
    `| tokend cores: rest of the logins${load.refreshesPerS ? ', refreshes' : ''} | ${num(d.loginOtherCores + d.refreshCores, 2)} | |`,
    `| tokend, all | ${num(d.tokendCores, 2)} cores | ${num(s.tokendCoresProvisioned, 1)} cores: **${s.instances} instances × WORKERS=${s.workersPerInstance}** |`,
    `| database CPU | ${num(d.dbCores, 2)} cores | **${num(Math.ceil(s.dbCoresProvisioned))} cores** (of ${num(deployment.dbServerCores)} assumed) |`,
    `| database statements | ${num(s.dbQueriesPerS)}/s | |`,
    `| database connections | | **${num(s.dbConnections)}** = ${s.processes} processes × (DB_POOL_SIZE ${deployment.dbPoolSize} + ${deployment.extraConnectionsPerProcess}); limit ${num(deployment.dbMaxConnections)} |`,
    `| Redis | ${num(s.redisOpsPerS)} commands/s | |`,
    `| memory per process | ${mib(s.memoryPerProcessBytes)} (idle ${mib(costs.rssIdleBytes)}, +${mib(costs.rssPer1000ConnectionsBytes)} per 1,000 open connections) | ${mib(s.memoryTotalBytes)} for the fleet |`,
    `| login ceiling (every core on logins) | | ${num(s.loginCeilingPerS)} logins/s |`,
    '',
    `As the load grows (tokend instances added${deployment.tokendCores === undefined ? '' : ` up to ${num(deployment.tokendCores)} cores`}, the database kept at ${num(deployment.dbServerCores)} cores and ${num(deployment.dbMaxConnections)} connections), ` +
      `each limit is reached at: ${limitText}. **First bottleneck: ${first}, at ${num(factor, 1)}× this load.** ` +
      `tokend's cores go mostly to ${d.bcryptCores + d.loginOtherCores > d.readCores ? 'bcrypt (logins)' : 'reads'}.`,
    '',
    '| load × | reads/s | logins/s | instances | tokend cores to provision (bcrypt busy) | database cores to provision | connections | over |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const g of growth(costs, load, deployment))
    lines.push(
      `| ${g.factor} | ${num(load.readsPerS * g.factor)} | ${num(load.loginsPerS * g.factor)} | ${g.sizing.instances} | ${num(g.sizing.tokendCoresProvisioned, 1)} (${num(g.sizing.demand.bcryptCores, 1)}) | ${num(g.sizing.dbCoresProvisioned, 1)} | ${num(g.sizing.dbConnections)} | ${g.over.join(', ') || '—'} |`,
    );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      costs: { type: 'string', default: 'bench/costs.json' },
      backend: { type: 'string' },
      users: { type: 'string', default: '1000000' },
      reads: { type: 'string', default: '10000' },
      logins: { type: 'string', default: '50' },
      refreshes: { type: 'string', default: '0' },
      connections: { type: 'string', default: '10000' },
      headroom: { type: 'string', default: String(DEFAULT_HEADROOM) },
      workers: { type: 'string', default: '4' },
      'db-pool-size': { type: 'string', default: '10' },
      'db-cores': { type: 'string', default: '8' },
      'db-max-connections': { type: 'string' },
      'tokend-cores': { type: 'string' },
    },
  });
  const file = JSON.parse(readFileSync(values.costs, 'utf8')) as CostsFile;
  const load: TargetLoad = {
    users: Number(values.users),
    readsPerS: Number(values.reads),
    loginsPerS: Number(values.logins),
    refreshesPerS: Number(values.refreshes),
    openConnections: Number(values.connections),
  };
  const headroom = Number(values.headroom);
  if (!(headroom > 0 && headroom <= 1)) throw new Error('--headroom is a share of capacity, in (0, 1]');
  const dbPoolSize = Number(values['db-pool-size']);
  const chosen = file.backends.filter((b) => values.backend === undefined || b.backend === values.backend);
  if (chosen.length === 0) throw new Error(`no costs for ${values.backend} in ${values.costs}`);
  const out = [
    `Sizing from ${values.costs} (measured ${String(file.meta.startedAt ?? '?')} on ${String(file.meta.cores ?? '?')} cores, ${String(file.meta.cpu ?? '?')}).`,
    `Assumed: ${num(load.openConnections ?? 0)} open client connections across the fleet; WORKERS=${values.workers} per instance; DB_POOL_SIZE ${dbPoolSize}.`,
  ];
  for (const costs of chosen) {
    // SQLite is one file on one machine: no fleet to size, its costs are for comparison.
    if (costs.backend === 'sqlite') {
      out.push(
        '',
        `### sqlite: one machine only (its database runs in tokend's process); not sized as a fleet`,
      );
      continue;
    }
    const defaults = backendDefaults(costs.backend, dbPoolSize);
    const deployment: Deployment = {
      headroom,
      workersPerInstance: Number(values.workers),
      dbPoolSize,
      extraConnectionsPerProcess: defaults.extraConnectionsPerProcess,
      dbMaxConnections:
        values['db-max-connections'] === undefined
          ? defaults.dbMaxConnections
          : Number(values['db-max-connections']),
      dbServerCores: Number(values['db-cores']),
      tokendCores: values['tokend-cores'] === undefined ? undefined : Number(values['tokend-cores']),
    };
    out.push('', sizingText(costs, load, deployment));
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    process.stderr.write(`capacity model: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
