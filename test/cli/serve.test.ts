// tokend serve and migrate, and the bin entry (directly and through a symlink, as npm link makes it).
// What serve says at start: the database in use, how to create the first user, misspelt variables.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { cliHarness, listeningOrigin, MAIN, onlyJson, runCli, runProcess } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { startTokend, type TokendProcess } from '../helpers/real-server.ts';
import { eventually } from '../helpers/waiting.ts';

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

  it('started by npm, shuts down when npm has exited (npm passes no SIGTERM on)', async (t) => {
    const h = await cliHarness(t);
    // npm runs the script through `sh -c`; on SIGTERM npm and that shell exit, and tokend is orphaned.
    const script = `'${process.execPath}' '${MAIN}' serve; true`;
    const shell = spawn('sh', ['-c', script], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: h.database.url,
        PORT: '0',
        LOG_LEVEL: 'info',
        npm_lifecycle_event: 'start',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const shellExited = new Promise<number | null>((resolve) => shell.on('exit', (code) => resolve(code)));
    // The output pipes close once every process holding them, tokend too, has exited.
    const closed = new Promise<void>((resolve) => shell.on('close', () => resolve()));
    let output = '';
    shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const listening = listeningOrigin(shell, shellExited, START_LIMIT_MS);
    const address = await listening.origin;
    const pid = Number(/"pid":(\d+)/.exec(output)?.[1]);
    t.after(() => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    });
    assert.equal((await fetch(`${address}/api/v1/ping`)).status, 200);
    shell.kill('SIGKILL');
    await closed;
    assert.match(output, /"signal":"npm exited","msg":"shutting down"/);
    await assert.rejects(fetch(`${address}/api/v1/ping`), 'nothing serves on its port any more');
    // Gone, or a zombie waiting for whatever adopted it to reap it: either way it has exited.
    const exited = () => {
      try {
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') === true;
      } catch {
        return true;
      }
    };
    assert.ok(await eventually(50, 100, async () => exited()), 'the tokend process has exited');
  });

  it('serve --help needs no server', async () => {
    const r = await runCli(['serve', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: tokend serve/);
  });

  it('serve --help says one thing about --json, and it is what --json does', async (t) => {
    const help = (await runCli(['serve', '--help'])).stdout;
    const mentions = help.split('\n').filter((l) => l.includes('--json'));
    assert.equal(mentions.length, 2, `the usage line and the option's row:\n${help}`);
    assert.match(
      mentions[1] ?? '',
      /^\s+--json\s+an error or warning at start-up as one JSON object on stderr/,
    );
    assert.doesNotMatch(
      help,
      /print exactly one JSON object on stdout/,
      'serve prints its log, not one object',
    );

    // An error at start-up, with --json: one JSON object on stderr, and stdout has no object of it.
    const h = await cliHarness(t);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => taken.close());
    const port = String((taken.address() as AddressInfo).port);
    const r = await runCli(['serve', '--json'], {
      env: { DATABASE_URL: h.database.url, PORT: port, DATABSE_URL: 'x' },
      entry: BIN,
    });
    assert.equal(r.code, 1);
    const lines = r.stderr
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      lines.map((l) => Object.keys(l).sort()),
      [
        ['variable', 'warning'],
        ['code', 'error'],
      ],
    );
    assert.match(
      String(lines[1]?.error),
      new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${port} \\(HOST, PORT\\)`),
    );
    assert.equal(lines[1]?.code, 'failed');
  });
});

describe('tokend serve: what it says at start', { concurrency: 2 }, () => {
  /** Starts `bin/tokend.js serve` on `env`, and stops it after the test. */
  async function serve(t: TestContext, env: Record<string, string>): Promise<TokendProcess> {
    const server = await startTokend({ LOG_LEVEL: 'info', ...env }, [BIN, 'serve']);
    t.after(() => server.kill());
    return server;
  }

  /** The message of the first log line that `pattern` matches, once one does. */
  async function logged(server: TokendProcess, pattern: RegExp): Promise<string> {
    let found: string | undefined;
    await eventually(100, 50, async () => {
      found = server.lines
        .map((l) => (JSON.parse(l) as { msg?: string }).msg ?? '')
        .find((msg) => pattern.test(msg));
      return found !== undefined;
    });
    assert.ok(found !== undefined, `no log line matching ${pattern}:\n${server.output()}`);
    return found;
  }

  it('names the SQLite file and, while no user exists, the command that creates one; that command works', async (t) => {
    const h = await cliHarness(t);
    const path = h.database.url.slice('sqlite:'.length);
    const first = await serve(t, { DATABASE_URL: h.database.url });
    assert.equal(await logged(first, /^database: /), `database: SQLite file ${path}`);
    const hint = await logged(first, /^no user exists yet/);
    const command = /^no user exists yet; create the first one with: (.+)$/.exec(hint)?.[1] ?? '';
    assert.equal(
      command,
      `DATABASE_URL=sqlite:${path} ${process.execPath} ${BIN} user create --username NAME`,
    );

    // The command as printed, run by a shell, with a name and the password on standard input.
    const created = await runProcess(
      'bash',
      ['-c', `${command.replace('NAME', 'first-admin')} --password-stdin --json`],
      { env: { PATH: process.env.PATH ?? '', BCRYPT_COST: '4' }, input: 'its password\n' },
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal(onlyJson(created).username, 'first-admin');
    await first.stop();

    const second = await serve(t, { DATABASE_URL: h.database.url });
    await logged(second, /^database: /);
    await second.stop();
    assert.ok(!second.lines.some((l) => l.includes('no user exists yet')), 'said only while no user exists');
  });

  it('through npm, the command is npm run tokend', async (t) => {
    const h = await cliHarness(t);
    const server = await serve(t, { DATABASE_URL: h.database.url, npm_lifecycle_event: 'start' });
    const hint = await logged(server, /^no user exists yet/);
    assert.match(hint, / npm run tokend -- user create --username NAME$/);
  });

  for (const dialect of DIALECTS.filter((d) => d !== 'sqlite')) {
    it(`${dialect}: names the server's URL without its password`, async (t) => {
      const h = await cliHarness(t, dialect);
      const url = new URL(h.database.url);
      // PostgreSQL's test server trusts local connections, so a password is accepted and unused.
      if (dialect === 'postgres') url.password = 'never-shown-3f9a';
      const server = await serve(t, { ...h.database.env, DATABASE_URL: url.toString() });
      const shown = new URL(url.toString());
      if (shown.password !== '') shown.password = '***';
      const name = {
        postgres: `PostgreSQL at ${shown}`,
        mysql: `MySQL/MariaDB at ${shown}`,
        ripple: `the Ripple-family database at ${shown}, in place (DATABASE_SCHEMA=ripple)`,
      }[dialect];
      assert.equal(await logged(server, /^database: /), `database: ${name}`);
      if (dialect === 'ripple') {
        // In place the users are the family's: no command to create a first one is offered.
        assert.equal((await fetch(`${server.baseUrl}/ping`)).status, 200);
        assert.ok(!server.output().includes('no user exists yet'), server.output());
      } else
        assert.match(
          await logged(server, /^no user exists yet/),
          new RegExp(`with: '?DATABASE_URL=${shown.toString().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'? `),
        );
      assert.ok(!server.output().includes('never-shown-3f9a'), 'the password is never shown');
    });
  }

  it('a misspelt variable: a warning on stderr naming the variable meant, and it serves', async (t) => {
    const h = await cliHarness(t);
    const server = await serve(t, { DATABASE_URL: h.database.url, DATABSE_URL: 'sqlite:other.db' });
    assert.equal((await fetch(`${server.baseUrl}/ping`)).status, 200);
    assert.equal(
      server.stderr(),
      "tokend: warning: the environment variable DATABSE_URL is not one of tokend's and is ignored; did you mean DATABASE_URL?\n",
    );
  });
});

describe('tokend migrate', () => {
  it('applies every migration once, then reports the database up to date', async (t) => {
    const h = await cliHarness(t, 'sqlite', { empty: true });
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
