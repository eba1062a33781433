// What tokend says when it cannot do its work: a SQLite file it cannot open or write, a database server
// it cannot reach or log in to, a bad setting, a port in use, a file import/export cannot read or create.
// Each is one line on stderr naming the thing and the fix, exit code 1, no stack trace, and promptly;
// for `tokend serve` (and `npm start`) as for the other commands.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIALECTS, MYSQL_URL, POSTGRES_URL } from '../helpers/dialects.ts';
import { TcpProxy } from '../helpers/real-server.ts';
import {
  jsonError,
  runCli,
  runProcess,
  UNPRIVILEGED,
  type CliResult,
  type JsonError,
  type RunAs,
} from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'tokend.js');
/** "Promptly": a failing command, Node's own start-up included, is done within this. */
const PROMPT_MS = 8000;

/**
 * The one line of a failed run; fails the test unless it failed that way. A `--json` run's error, one
 * JSON object, is given as the line the same run without --json writes.
 */
function oneLine(r: CliResult, kind: JsonError['code'] = 'failed'): string {
  assert.equal(r.code, 1, `exit code 1 expected; stdout: ${r.stdout} stderr: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  if (r.stderr.startsWith('{')) {
    const { error, code } = jsonError(r);
    assert.equal(code, kind, error);
    return `tokend: ${error}`;
  }
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line expected:\n${r.stderr}`);
  assert.match(lines[0] ?? '', /^tokend: /);
  return lines[0] ?? '';
}

/** A directory of this test's, readable (and with `mode`, more) for the user file tests run as. */
function scratch(t: TestContext, mode = 0o755): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokend-errors-'));
  chmodSync(dir, mode);
  t.after(() => {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Runs the command with DATABASE_URL and PORT=0, timing it. */
async function timed(
  args: string[],
  env: Record<string, string>,
  options: { entry?: string; as?: RunAs } = {},
): Promise<CliResult & { ms: number }> {
  const started = performance.now();
  const r = await runCli(args, { env: { PORT: '0', ...env }, ...options });
  return { ...r, ms: performance.now() - started };
}

/** `tokend serve` through bin/tokend.js (what `npm start` runs) and `tokend user list`. */
const COMMANDS: Array<{ what: string; args: string[]; entry?: string }> = [
  { what: 'bin/tokend.js serve', args: ['serve'], entry: BIN },
  { what: 'user list', args: ['user', 'list', '--json'] },
];

describe('a SQLite database that cannot be opened', { concurrency: 4 }, () => {
  const cases: Array<{
    what: string;
    /** The database path, made in `dir`. */
    setUp(dir: string): string;
    reason: (path: string) => RegExp;
    mode?: number;
    /** Run as a user whom permission bits bind (permission cases). */
    unprivileged?: boolean;
  }> = [
    {
      what: 'a missing directory (whose parent is missing too)',
      setUp: (dir) => join(dir, 'missing', 'deeper', 'tokend.db'),
      reason: (path) =>
        new RegExp(
          `the directory ${escape(join(path, '..'))} does not exist \\(nor does ${escape(join(path, '../..'))}\\)`,
        ),
    },
    {
      what: 'a parent that is a regular file',
      setUp: (dir) => {
        writeFileSync(join(dir, 'plain-file'), 'not a directory');
        return join(dir, 'plain-file', 'tokend.db');
      },
      reason: (path) => new RegExp(`${escape(join(path, '..'))} is a file, not a directory`),
    },
    {
      what: 'a directory where the file should be',
      setUp: (dir) => {
        mkdirSync(join(dir, 'tokend.db'));
        return join(dir, 'tokend.db');
      },
      reason: (path) => new RegExp(`${escape(path)} is a directory, not a database file`),
    },
    {
      what: 'a file that is no SQLite database',
      setUp: (dir) => {
        writeFileSync(join(dir, 'tokend.db'), 'x'.repeat(4096));
        return join(dir, 'tokend.db');
      },
      reason: () => /file is not a database/,
    },
    {
      what: 'a directory without write permission',
      // Only the owner (root, when the tests run as root) may write; the command runs as someone else.
      mode: UNPRIVILEGED ? 0o755 : 0o555,
      unprivileged: true,
      setUp: (dir) => join(dir, 'tokend.db'),
      reason: (path) =>
        new RegExp(`the directory ${escape(join(path, '..'))} is not writable for (user \\S+|uid \\d+)`),
    },
    {
      what: 'a read-only file',
      mode: 0o777,
      unprivileged: true,
      setUp: (dir) => {
        writeFileSync(join(dir, 'tokend.db'), '');
        chmodSync(join(dir, 'tokend.db'), 0o444);
        return join(dir, 'tokend.db');
      },
      reason: (path) => new RegExp(`the file ${escape(path)} is read-only for (user \\S+|uid \\d+)`),
    },
  ];

  for (const c of cases) {
    for (const command of COMMANDS) {
      it(`${c.what}: ${command.what} names the path, DATABASE_URL and the reason`, async (t) => {
        const dir = scratch(t, c.mode);
        const path = c.setUp(dir);
        const r = await timed(
          command.args,
          { DATABASE_URL: `sqlite:${path}` },
          { entry: command.entry, ...(c.unprivileged && UNPRIVILEGED ? { as: UNPRIVILEGED } : {}) },
        );
        const line = oneLine(r, 'database');
        assert.ok(line.includes(`DATABASE_URL=sqlite:${path}`), line);
        assert.match(line, c.reason(path));
        assert.match(line, /set DATABASE_URL to another file$/);
        assert.ok(r.ms < PROMPT_MS, `took ${Math.round(r.ms)} ms`);
      });
    }
  }

  it('a missing directory whose parent exists is created (as data/ for the default data/tokend.db)', async (t) => {
    const dir = scratch(t);
    const r = await runCli(['user', 'list', '--json'], {
      env: { DATABASE_URL: `sqlite:${join(dir, 'data', 'tokend.db')}` },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(dir, 'data', 'tokend.db')));
  });

  it('npm start says the same in one line', async (t) => {
    const dir = scratch(t);
    const path = join(dir, 'missing', 'deeper', 'tokend.db');
    const r = await runProcess('npm', ['start', '--silent'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, DATABASE_URL: `sqlite:${path}` },
      limitMs: 30_000,
    });
    const line = oneLine(r, 'database');
    assert.match(line, new RegExp(`DATABASE_URL=sqlite:${escape(path)}: the directory .* does not exist`));
  });
});

describe('a database server that cannot be reached or logged in to', { concurrency: 4 }, () => {
  /** `url` with its user, password or database replaced. */
  function changed(url: string, change: { user?: string; password?: string; database?: string }): string {
    const u = new URL(url);
    if (change.user !== undefined) u.username = change.user;
    if (change.password !== undefined) u.password = change.password;
    if (change.database !== undefined) u.pathname = `/${change.database}`;
    return u.toString();
  }

  const PASSWORD = 'pw-never-shown-8c1f';
  const servers = [
    { dialect: 'postgres', url: POSTGRES_URL },
    { dialect: 'mysql', url: MYSQL_URL },
  ] as const;

  for (const { dialect, url } of servers) {
    const refusedUrl = `${dialect}://tokend:${PASSWORD}@127.0.0.1:1/tokend`;
    for (const command of COMMANDS) {
      it(`${dialect}, nothing listening: ${command.what} says connection refused, the password removed`, async () => {
        const r = await timed(command.args, { DATABASE_URL: refusedUrl }, { entry: command.entry });
        const line = oneLine(r, 'database');
        assert.ok(!line.includes(PASSWORD), line);
        assert.ok(line.includes(`DATABASE_URL=${dialect}://tokend:***@127.0.0.1:1/tokend`), line);
        assert.match(line, /connection refused by 127\.0\.0\.1:1: is the database server running/);
        assert.ok(r.ms < PROMPT_MS, `took ${Math.round(r.ms)} ms`);
      });
    }

    // Something that accepts the connection and closes it at once: a proxy in front of a closed port
    // (as a load balancer without a backend, or a firewall that resets, behaves).
    for (const command of COMMANDS) {
      it(`${dialect}, a server that closes the connection at once: ${command.what} names DATABASE_URL, the host and that`, async (t) => {
        const closer = new TcpProxy(1);
        await closer.start();
        t.after(() => closer.close());
        const where = `127.0.0.1:${closer.port}`;
        const url = `${dialect}://tokend:${PASSWORD}@${where}/tokend`;
        const r = await timed(command.args, { DATABASE_URL: url }, { entry: command.entry });
        const line = oneLine(r, 'database');
        assert.ok(!line.includes(PASSWORD), line);
        assert.ok(line.includes(`DATABASE_URL=${dialect}://tokend:***@${where}/tokend: `), line);
        assert.ok(line.includes(`${where} accepted the connection and closed it before answering`), line);
        assert.ok(r.ms < PROMPT_MS, `took ${Math.round(r.ms)} ms`);
      });
    }

    it(`${dialect}, a server that accepts and never answers: no connection within DB_TIMEOUT_MS`, async (t) => {
      const silent = new TcpProxy(1);
      silent.freeze();
      await silent.start();
      t.after(() => silent.close());
      const where = `127.0.0.1:${silent.port}`;
      for (const command of COMMANDS) {
        const env = { DATABASE_URL: `${dialect}://tokend:${PASSWORD}@${where}/tokend`, DB_TIMEOUT_MS: '500' };
        const line = oneLine(await timed(command.args, env, { entry: command.entry }), 'database');
        assert.ok(!line.includes(PASSWORD), line);
        assert.ok(line.includes(`DATABASE_URL=${dialect}://tokend:***@${where}/tokend: `), line);
        assert.ok(line.includes(`no connection to ${where} within DB_TIMEOUT_MS (500 ms)`), line);
      }
    });

    const skip = DIALECTS.includes(dialect)
      ? false
      : `${dialect} is not in this run (TEST_DIALECTS), or its test server does not answer`;
    it(`${dialect}, a database that does not exist: named, with the fix`, { skip }, async () => {
      const wrong = changed(url, { database: 'tokend_no_such_database' });
      for (const command of COMMANDS) {
        const r = await timed(command.args, { DATABASE_URL: wrong }, { entry: command.entry });
        const line = oneLine(r, 'database');
        assert.match(line, /DATABASE_URL=\S+\/tokend_no_such_database: /);
        assert.match(line, /the server has no database "tokend_no_such_database": create it, or correct/);
        assert.ok(r.ms < PROMPT_MS, `took ${Math.round(r.ms)} ms`);
      }
    });

    it(`${dialect}, a user the server does not know: authentication failed`, { skip }, async () => {
      const wrong = changed(url, { user: 'tokend_no_such_user', password: PASSWORD });
      for (const command of COMMANDS) {
        const r = await timed(command.args, { DATABASE_URL: wrong }, { entry: command.entry });
        const line = oneLine(r, 'database');
        assert.ok(!line.includes(PASSWORD), line);
        assert.match(line, /DATABASE_URL=\S+tokend_no_such_user:\*\*\*@/);
        assert.match(
          line,
          /authentication failed for user "tokend_no_such_user" .*check the user and password/,
        );
        assert.ok(r.ms < PROMPT_MS, `took ${Math.round(r.ms)} ms`);
      }
    });
  }
});

describe('settings that tokend serve refuses', { concurrency: 4 }, () => {
  for (const [variable, value, range] of [
    ['PORT', '-1', 'from 0 to 65535'],
    ['PORT', '65536', 'from 0 to 65535'],
    ['DB_TIMEOUT_MS', '10', 'from 100 to 600000'],
    ['WORKERS', '0', 'from 1 to 256'],
  ] as const) {
    it(`${variable}=${value} says the allowed range`, async (t) => {
      const dir = scratch(t);
      const r = await runCli(['serve'], {
        env: { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`, [variable]: value },
        entry: BIN,
      });
      assert.equal(
        oneLine(r),
        `tokend: invalid configuration: ${variable}: expected an integer ${range}, got "${value}"`,
      );
      assert.ok(!existsSync(join(dir, 'tokend.db')), 'nothing was opened');
    });
  }

  for (const [value, problem] of [
    ['10.1', '"10.1" is not an IP address, a CIDR (address/prefix length) or loopback/linklocal/uniquelocal'],
    ['10.0.0.0/33', '"10.0.0.0/33" needs a prefix length from 1 to 32 after the slash'],
    ['0.0.0.0/0', '"0.0.0.0/0" would trust every address, letting any client choose its own'],
    [
      '::ffff:0:0/96',
      '"::ffff:0:0/96" is IPv4-mapped IPv6 for 0.0.0.0/0, wider than any proxies\' range, and would let most ' +
        "IPv4 clients choose their address: name the proxies' own IPv4 addresses or range (/8 or longer)",
    ],
  ] as const) {
    it(`TRUST_PROXY=${value} says what is wrong and what to write instead`, async (t) => {
      const dir = scratch(t);
      const r = await runCli(['serve'], {
        env: { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`, TRUST_PROXY: value },
        entry: BIN,
      });
      assert.equal(
        oneLine(r),
        `tokend: invalid configuration: TRUST_PROXY: ${problem}; expected false, a hop count (1 to 16: the ` +
          "number of proxies in front of tokend), or a comma-separated list of the proxies' addresses/CIDRs " +
          'and loopback/linklocal/uniquelocal (e.g. 10.0.0.0/8 or loopback)',
      );
      assert.ok(!existsSync(join(dir, 'tokend.db')), 'nothing was opened');
    });
  }

  it('a port in use names HOST and PORT and what to do', async (t) => {
    const dir = scratch(t);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => taken.close());
    const { port } = taken.address() as AddressInfo;
    const r = await runCli(['serve'], {
      env: { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`, HOST: '127.0.0.1', PORT: String(port) },
      entry: BIN,
    });
    assert.equal(
      oneLine(r),
      `tokend: cannot listen on 127.0.0.1:${port} (HOST, PORT): the port is already in use (another tokend?); ` +
        'stop that process, or set PORT to a free port',
    );
  });
});

describe('tokend import / export: files that cannot be read or created', { concurrency: 4 }, () => {
  /** Runs import or export on a fresh database in `dir`. */
  const transfer = (dir: string, args: string[], as?: RunAs) =>
    runCli([...args, '--json'], {
      env: { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}` },
      ...(as ? { as } : {}),
    });

  it('import of a missing file: "no such file", and the database is not even created', async (t) => {
    const dir = scratch(t);
    const file = join(dir, 'missing.jsonl');
    assert.equal(
      oneLine(await transfer(dir, ['import', '--file', file])),
      `tokend: cannot read ${file}: no such file`,
    );
    assert.ok(!existsSync(join(dir, 'tokend.db')));
  });

  it('export to a file that exists: "it already exists", and the file is left as it was', async (t) => {
    const dir = scratch(t);
    const file = join(dir, 'there.jsonl');
    writeFileSync(file, 'keep me');
    assert.match(
      oneLine(await transfer(dir, ['export', '--file', file])),
      new RegExp(
        `^tokend: cannot create ${escape(file)}: it already exists \\(export never overwrites a file`,
      ),
    );
  });

  it('export into a missing directory names the directory', async (t) => {
    const dir = scratch(t);
    const file = join(dir, 'no', 'such', 'x.jsonl');
    assert.equal(
      oneLine(await transfer(dir, ['export', '--file', file])),
      `tokend: cannot create ${file}: the directory ${join(dir, 'no', 'such')} does not exist`,
    );
  });

  it('a directory given as the file: "it is a directory", for import and export', async (t) => {
    const dir = scratch(t);
    for (const verb of ['import', 'export'] as const)
      assert.equal(
        oneLine(await transfer(dir, [verb, '--file', dir])),
        `tokend: cannot ${verb === 'import' ? 'read' : 'create'} ${dir}: it is a directory`,
      );
  });

  it('a path through a regular file: "a part of its path is not a directory"', async (t) => {
    const dir = scratch(t);
    writeFileSync(join(dir, 'plain'), '');
    const file = join(dir, 'plain', 'x.jsonl');
    assert.equal(
      oneLine(await transfer(dir, ['export', '--file', file])),
      `tokend: cannot create ${file}: a part of its path is not a directory`,
    );
  });

  it('permission denied, for a file that cannot be read and a directory that cannot be written', async (t) => {
    // The database's directory is writable for the user the commands run as; the files are not theirs.
    const dir = scratch(t, 0o777);
    const files = scratch(t, UNPRIVILEGED ? 0o755 : 0o555);
    const unreadable = join(dir, 'secret.jsonl');
    writeFileSync(unreadable, '');
    chmodSync(unreadable, UNPRIVILEGED ? 0o600 : 0o000);
    assert.equal(
      oneLine(await transfer(dir, ['import', '--file', unreadable], UNPRIVILEGED)),
      `tokend: cannot read ${unreadable}: permission denied (the file is not readable for this user)`,
    );
    const file = join(files, 'x.jsonl');
    assert.equal(
      oneLine(await transfer(dir, ['export', '--file', file], UNPRIVILEGED)),
      `tokend: cannot create ${file}: permission denied (the directory ${files} is not writable for this user)`,
    );
  });
});
