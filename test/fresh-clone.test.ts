// The README's commands, as written, in a fresh clone of this repository with the machine's own (older)
// Node first on PATH and nothing sourced: `npm ci` installs Node 24 (the lockfile's node-<platform>-<arch>)
// into node_modules/.bin, `npm start`, `npm run tokend -- …` and `npm test` run on it, and npm prints no
// warning. Needs the npm registry (or its cache), like `npm ci` itself. Skipped where the system Node is
// already 24 or newer (nothing to show), and where npm installs no Node 24 for this platform.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  globSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from 'node:fs';
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
/** The lockfile's Node 24 for this machine, which npm ci installs (npm skips the other platforms'). */
const NODE_PACKAGE = `node-${process.platform}-${process.arch}`;
const lockfile = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string }>;
};
const skip = process.env.TOKEND_IN_FRESH_CLONE
  ? 'this is the suite the fresh clone runs'
  : !Number.isFinite(major)
    ? 'no system node on /usr/bin:/bin'
    : major >= 24
      ? `the system node is ${major}: nothing to bootstrap`
      : lockfile.packages[`node_modules/${NODE_PACKAGE}`] === undefined
        ? `the lockfile has no ${NODE_PACKAGE}: npm ci brings no Node 24 here`
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

/** The programs (their resolved executables) of the processes in one process group. */
function groupExecutables(group: number): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      // /proc/PID/stat: "pid (comm) state ppid pgrp …"; comm may hold blanks, so count after its ")".
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === group)
        found.push(readlinkSync(`/proc/${pid}/exe`));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('the README on a fresh clone with an older system Node', () => {
  it(
    'npm ci, npm start, npm run tokend and npm test work as written',
    { skip, timeout: 600_000 },
    async (t) => {
      const clone = mkdtempSync(join(tmpdir(), 'tokend-fresh-'));
      t.after(() => rmSync(clone, { recursive: true, force: true }));
      const cloned = spawnSync('git', ['clone', '--quiet', ROOT, clone], { encoding: 'utf8' });
      assert.equal(cloned.status, 0, cloned.stderr);
      const node24 = join(clone, 'node_modules', '.bin', 'node');
      assert.ok(!existsSync(node24), 'a fresh clone has no Node 24 yet');

      const ci = await run(clone, 'npm', ['ci', '--no-audit', '--no-fund']);
      assert.equal(ci.code, 0, ci.out);
      noNpmWarning(ci, 'npm ci');
      const installed = spawnSync(node24, ['--version'], { encoding: 'utf8' });
      assert.match(installed.stdout, /^v24\./, 'npm ci installed Node 24 into node_modules/.bin');

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
      // npm itself runs on the system's Node; the server it started, on the clone's Node 24.
      assert.ok(groupExecutables(server.pid!).includes(realpathSync(node24)), 'npm start runs Node 24');
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

      // The whole suite loads on Node 24 (Node 20 finds no file in the glob and strips no types) and runs
      // none of its tests (--test-only, which the system's npm accepts in NODE_OPTIONS too, and no test is
      // marked only), so this stays short. npm test is several runs of node --test (test/run.ts), each
      // loading many files in one process, where a file that does not load is a failure; this file is not
      // among them.
      const test = await run(clone, 'npm', ['test'], {
        NODE_OPTIONS: '--test-only',
        TEST_DIALECTS: 'sqlite',
        TOKEND_IN_FRESH_CLONE: '1',
      });
      assert.equal(test.code, 0, test.out.slice(-3000));
      const counted = (word: string) =>
        [...test.out.matchAll(new RegExp(`^ℹ ${word} (\\d+)$`, 'gm'))].map((m) => Number(m[1]));
      const shards = Number(/^# \d+ files in (\d+) shards/m.exec(test.out)?.[1]);
      assert.deepEqual(
        counted('fail'),
        Array.from({ length: shards + 1 }, () => 0),
        'every run of npm test (its shards, then the files that run alone), and nothing failed',
      );
      const files = globSync('test/**/*.test.ts', { cwd: clone }).filter(
        (file) => file !== join('test', 'fresh-clone.test.ts'),
      ).length;
      const run1 = Number(/^# (\d+) files in \d+ shards/m.exec(test.out)?.[1]);
      const run2 = Number(/^# (\d+) files that run alone/m.exec(test.out)?.[1]);
      assert.equal(run1 + run2, files, `every one of the ${files} test files is loaded`);
      noNpmWarning(test, 'npm test');
    },
  );
});
