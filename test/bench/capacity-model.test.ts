// bench/capacity-model.ts: the sizing, the load growing, and the inverse that scenario 10 checks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  backendDefaults,
  coreDemand,
  errorPercent,
  firstBottleneck,
  growth,
  predictReads,
  size,
  sizingText,
  type BackendCosts,
  type Deployment,
  type TargetLoad,
} from '../../bench/capacity-model.ts';

/** Round figures, chosen so that every result below can be worked out by hand. */
const COSTS: BackendCosts = {
  backend: 'postgres',
  tokendCpuPerRead: 100e-6,
  dbCpuPerRead: 50e-6,
  queriesPerRead: 0.25,
  redisOpsPerRead: 0,
  tokendCpuPerLogin: 0.06,
  dbCpuPerLogin: 200e-6,
  redisOpsPerLogin: 4,
  bcryptSecondsPerCheck: 0.05,
  loadGeneratorCpuPerRead: 50e-6,
  rssIdleBytes: 80 * 2 ** 20,
  rssLoadBytes: 100 * 2 ** 20,
  rssPer1000ConnectionsBytes: 10 * 2 ** 20,
};
const LOAD: TargetLoad = { users: 1_000_000, readsPerS: 10_000, loginsPerS: 50, openConnections: 4000 };
const DEPLOYMENT: Deployment = {
  headroom: 0.5,
  workersPerInstance: 2,
  dbPoolSize: 10,
  extraConnectionsPerProcess: 4,
  dbMaxConnections: 100,
  dbServerCores: 4,
};

const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-9 * Math.max(1, Math.abs(expected)), `${actual} ≠ ${expected}`);

describe('the capacity model', () => {
  it('splits the cores a load keeps busy into reads, bcrypt and the rest of the logins', () => {
    const d = coreDemand(COSTS, LOAD);
    close(d.readCores, 1); // 10,000 × 100 µs
    close(d.bcryptCores, 2.5); // 50 × 50 ms
    close(d.loginOtherCores, 0.5); // 50 × (60 − 50) ms
    close(d.tokendCores, 4);
    close(d.dbCores, 0.51); // 10,000 × 50 µs + 50 × 200 µs
  });

  it('sizes the fleet, the database, its connections, Redis and memory over the headroom', () => {
    const s = size(COSTS, LOAD, DEPLOYMENT);
    close(s.tokendCoresProvisioned, 8); // 4 busy at 50 %
    assert.equal(s.instances, 4); // 8 cores / WORKERS=2
    assert.equal(s.processes, 8);
    close(s.dbCoresProvisioned, 1.02);
    close(s.dbQueriesPerS, 2500);
    assert.equal(s.dbConnections, 8 * 14);
    close(s.redisOpsPerS, 200);
    // 4,000 connections over 8 processes: 500 each, 5 MiB on top of 100 MiB
    close(s.memoryPerProcessBytes, 105 * 2 ** 20);
    close(s.memoryTotalBytes, 8 * 105 * 2 ** 20);
    close(s.loginCeilingPerS, 8 / 0.06); // every core on logins of 60 ms
  });

  it('keeps two instances however small the load', () => {
    assert.equal(size(COSTS, { users: 10, readsPerS: 1, loginsPerS: 0 }, DEPLOYMENT).instances, 2);
  });

  it('finds the first limit the load passes as it grows', () => {
    // 112 connections at 1× already pass PostgreSQL's 100: 7 processes (98) are the most it allows,
    // i.e. 3 instances of 2 workers, 6 cores against the 8 the load needs at 1×.
    const b = firstBottleneck(COSTS, LOAD, DEPLOYMENT);
    close(b.limits['database connections']!, 6 / 8);
    close(b.limits['database CPU']!, (4 * 0.5) / 0.51);
    assert.equal(b.first, 'database connections');
    // A raised limit moves the bottleneck to the database's cores.
    const raised = firstBottleneck(COSTS, LOAD, { ...DEPLOYMENT, dbMaxConnections: 10_000 });
    assert.equal(raised.first, 'database CPU');
    close(raised.factor, 2 / 0.51);
    // With few cores for tokend, logins (bcrypt) fill them first.
    const fewCores = firstBottleneck(COSTS, LOAD, {
      ...DEPLOYMENT,
      dbMaxConnections: 10_000,
      tokendCores: 12,
    });
    assert.equal(fewCores.first, 'bcrypt cores');
    close(fewCores.factor, 1.5);
    const steps = growth(COSTS, LOAD, { ...DEPLOYMENT, dbMaxConnections: 10_000 }, [1, 10]);
    assert.deepEqual(
      steps.map((g) => g.over),
      [[], ['database CPU']],
    );
    assert.equal(steps[1]!.sizing.instances, 40);
  });

  it('names the lookup pool PostgreSQL adds per process, and the shipped connection limits', () => {
    assert.deepEqual(backendDefaults('postgres'), { dbMaxConnections: 100, extraConnectionsPerProcess: 4 });
    assert.deepEqual(backendDefaults('postgres', 2), {
      dbMaxConnections: 100,
      extraConnectionsPerProcess: 2,
    });
    assert.deepEqual(backendDefaults('mysql'), { dbMaxConnections: 151, extraConnectionsPerProcess: 0 });
  });

  it('predicts the reads shared cores serve, counting the load generator on them', () => {
    // 2 cores for everything: 2 / (100 + 50 + 50) µs
    const rig = predictReads(COSTS, {
      instances: 2,
      workersPerInstance: 1,
      sharedCores: 2,
      withLoadGenerator: true,
    });
    close(rig.readsPerS, 10_000);
    close(rig.dbCores, 0.5);
    assert.equal(rig.boundBy, 'shared cores');
    // Cores of their own: 4 tokend processes give 40,000/s, 1 database core 20,000/s
    const own = predictReads(COSTS, {
      instances: 2,
      workersPerInstance: 2,
      dbCores: 1,
      withLoadGenerator: false,
    });
    close(own.readsPerS, 20_000);
    assert.equal(own.boundBy, 'database cores');
    // One process cannot use more than a core, however many are shared.
    const one = predictReads(COSTS, {
      instances: 1,
      workersPerInstance: 1,
      sharedCores: 64,
      withLoadGenerator: true,
    });
    close(one.readsPerS, 10_000);
    assert.equal(one.boundBy, 'tokend processes');
    close(errorPercent(100, 80), -20);
  });

  it('writes the sizing as markdown with the fleet and the growth table', () => {
    const text = sizingText(COSTS, LOAD, { ...DEPLOYMENT, dbMaxConnections: 10_000 });
    assert.match(text, /\*\*4 instances × WORKERS=2\*\*/);
    assert.match(text, /First bottleneck: database CPU, at 3\.9× this load/);
    assert.match(text, /\| 10 \| 100,000 \| 500 \| 40 \|/);
  });
});
