// bench/floor.ts, scenario 1's floor: the same answer as tokend for a seeded token, and none for a secret
// no token has; and the ratios scenario 1 reports against it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { httpRequest } from '../../bench/processes.ts';
import { benchSecret } from '../../bench/seed.ts';
import { SELF_PATH, startFloor, startTokend, type Options } from '../../bench/support.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import { readRatios } from '../../bench/scenarios/1-authenticated-read.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('bench/floor.ts', () => {
  it("answers a seeded token as tokend does, and a secret of no token with tokend's 404", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-floor-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'bench.db');
    const url = `sqlite:${path}`;
    await run(
      process.execPath,
      ['bench/seed.ts', '--database-url', url, '--users', '10', '--tokens', '2100', '--hot-tokens', '50'],
      { cwd: ROOT },
    );
    const database: TestDatabase = {
      config: { kind: 'sqlite', path },
      url,
      env: { DATABASE_URL: url },
      drop: async () => {},
    };
    const tokend = await startTokend({ opts: { logLevel: undefined } as Options, database });
    t.after(() => tokend.stop());
    const floor = await startFloor(database);
    t.after(() => floor.stop());

    // Every third seeded token asks for ManageBadges, which its owner may not hold: the limit drops it.
    for (const id of [2000, 2001, 2002, 2049]) {
      const headers = { 'x-ripple-token': benchSecret(id) };
      const before = await httpRequest(tokend.port, SELF_PATH, { headers });
      const fromFloor = await httpRequest(floor.port, SELF_PATH, { headers });
      const after = await httpRequest(tokend.port, SELF_PATH, { headers });
      assert.equal(before.status, 200, before.body);
      assert.equal(fromFloor.status, 200, fromFloor.body);
      // last_updated is the time of the read: one of tokend's answers is of the floor's second.
      assert.ok([before.body, after.body].includes(fromFloor.body), `${fromFloor.body} vs ${before.body}`);
      assert.equal((JSON.parse(fromFloor.body) as { id: number }).id, id);
    }
    for (const secret of ['0123456789abcdef0123456789abcdef', 'not-a-secret']) {
      const headers = { 'x-ripple-token': secret };
      const fromTokend = await httpRequest(tokend.port, SELF_PATH, { headers });
      const fromFloor = await httpRequest(floor.port, SELF_PATH, { headers });
      assert.equal(fromFloor.status, 404);
      assert.equal(fromTokend.status, 404);
      assert.equal(fromFloor.body, fromTokend.body);
    }
  });
});

describe('scenario 1 ratios', () => {
  it('divide the floor’s CPU per read by tokend’s, and tokend’s req/s by the others’', () => {
    const ratios = readRatios(
      { rps: 30_000, cpuUsPerRequest: 30 },
      { rps: 40_000, cpuUsPerRequest: 24 },
      { rps: 80_000, cpuUsPerRequest: 12 },
    );
    assert.deepEqual(ratios, { cpu: 0.8, rps: 0.75, ceilingCpu: 0.4, ceilingRps: 0.375 });
  });

  it('are NaN, never a pass, when a side has no CPU figure', () => {
    const ratios = readRatios({ rps: 1 }, { rps: 1, cpuUsPerRequest: 24 }, { rps: 1, cpuUsPerRequest: 12 });
    assert.ok(Number.isNaN(ratios.cpu));
    assert.ok(Number.isNaN(ratios.ceilingCpu));
  });
});
