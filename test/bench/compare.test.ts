// bench/compare.ts: the comparison of checkouts that changes to the request path are judged by.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('bench/compare.ts', () => {
  it('measures each checkout in alternating rounds on a seeded database and prints a row for each', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-compare-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const url = `sqlite:${join(dir, 'bench.db')}`;
    // readSpec's tokens start at id 2000, one per connection.
    await run(
      process.execPath,
      ['bench/seed.ts', '--database-url', url, '--users', '10', '--tokens', '2100', '--hot-tokens', '50'],
      { cwd: ROOT },
    );
    const { stdout } = await run(
      process.execPath,
      [
        'bench/compare.ts',
        '--database-url',
        url,
        '--rounds',
        '2',
        '--seconds',
        '1',
        '--warm-up',
        '0',
        '--connections',
        '2',
        '.',
        ROOT,
      ],
      { cwd: ROOT, timeout: 60_000 },
    );
    const rows = stdout.split('\n').filter((line) => /^\| \d: /.test(line));
    assert.equal(rows.length, 2, stdout);
    for (const row of rows) {
      const cells = row.split('|').map((c) => c.trim());
      assert.doesNotMatch(cells[1]!, /failed requests/, row);
      assert.ok(Number(cells[2]!.replace(/,/g, '')) > 0, `req/s in ${row}`);
      assert.ok(Number(cells[3]) > 0, `tokend CPU per request in ${row}`);
      assert.equal(cells[4], '—', 'no database server process for SQLite');
    }
    assert.match(rows[0]!, /\| 1\.000, 1\.000 \| 1\.000, 1\.000 \|$/, 'the first checkout is the reference');
  });

  it('refuses without a database or a checkout, in one line', async () => {
    await assert.rejects(
      run(process.execPath, ['bench/compare.ts', '.'], { cwd: ROOT }),
      (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr ?? '', /^usage: node bench\/compare\.ts/);
        return true;
      },
    );
  });
});
