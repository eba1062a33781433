// tokend serve and migrate, and the bin entry (directly and through a symlink, as npm link makes it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { cliHarness, listeningOrigin, MAIN, onlyJson, runCli } from '../helpers/cli.ts';

const BIN = fileURLToPath(new URL('../../bin/tokend.js', import.meta.url));
const START_LIMIT_MS = 20_000;

describe('tokend serve', () => {
  it('answers HTTP on the configured port and exits 0 on SIGTERM', async (t) => {
    const h = await cliHarness(t);
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: h.database.url, PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const listening = listeningOrigin(child, exited, START_LIMIT_MS);
    const address = await listening.origin;
    const ping = await fetch(`${address}/api/v1/ping`);
    assert.equal(ping.status, 200);
    assert.equal(((await ping.json()) as { code: number }).code, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, listening.stderr());
  });

  it('serve --help needs no server', async () => {
    const r = await runCli(['serve', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: tokend serve/);
  });
});

describe('tokend migrate', () => {
  it('applies every migration once, then reports the database up to date', async (t) => {
    const h = await cliHarness(t);
    const first = await h.json(['migrate']);
    assert.deepEqual(first, { applied: MIGRATIONS.map(([name]) => name) });
    assert.deepEqual(await h.json(['migrate']), { applied: [] });
    const text = await h.cli(['migrate']);
    assert.equal(text.code, 0);
    assert.equal(text.stdout, 'The database is up to date.\n');
  });
});

describe('bin/tokend.js', () => {
  it('runs the CLI from the checkout and through a symlink (npm link)', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-bin-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const link = join(dir, 'tokend');
    symlinkSync(BIN, link);
    const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` };
    for (const entry of [BIN, link]) {
      const r = await runCli(['user', 'list', '--json'], { entry, env });
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(onlyJson(r), { users: [] });
    }
  });
});
