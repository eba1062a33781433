// docs/tokend.service, the example systemd unit: systemd-analyze accepts it, it runs bin/tokend.js serve
// (never npm) on the checkout's Node 24 (node_modules/.bin/node, which `npm ci` installs), with the usual
// service settings, and its ExecStart, run as written on this machine (whose /usr/bin/node may be older),
// serves on Node 24 and exits 0 on SIGTERM. bin/tokend.js itself refuses a Node older than 24 in one line.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IN_CI } from '../helpers/dialects.ts';
import { listeningOrigin } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const UNIT_FILE = join(ROOT, 'docs', 'tokend.service');
const UNIT = readFileSync(UNIT_FILE, 'utf8');
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';
/** Where the example unit expects the checkout. */
const INSTALLED_AT = '/opt/tokend';

/** The settings of one section: key → values, in order (a key may be given more than once). */
function section(unit: string, name: string): Map<string, string[]> {
  const body = new RegExp(`^\\[${name}\\]\\n([\\s\\S]*?)(?=^\\[|(?![\\s\\S]))`, 'm').exec(unit)?.[1];
  assert.ok(body !== undefined, `the unit has a [${name}] section`);
  const settings = new Map<string, string[]>();
  for (const line of body.split('\n')) {
    if (line.trim() === '' || /^\s*[#;]/.test(line)) continue;
    const eq = line.indexOf('=');
    assert.ok(eq > 0, `a setting: ${line}`);
    const key = line.slice(0, eq).trim();
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return settings;
}

const service = section(UNIT, 'Service');
const one = (key: string): string => {
  const values = service.get(key) ?? [];
  assert.equal(values.length, 1, `[Service] ${key}= once`);
  return values[0] ?? '';
};

/** ExecStart= as systemd splits it: words apart at blanks, '…' and "…" keep theirs, $$ stands for $. */
function execStart(): string[] {
  return [...one('ExecStart').matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) =>
    (m[1] ?? m[2] ?? m[3] ?? '').replaceAll('$$', '$'),
  );
}

/** The unit with this checkout in place of the example's install directory. */
const localUnit = (): string => UNIT.replaceAll(INSTALLED_AT, ROOT);

/** The Node 24 that `npm ci` installs into the checkout, which the unit runs. */
const CHECKOUT_NODE = 'node_modules/.bin/node';

/** The system's own Node, which the unit must not run when it is older, and its major version. */
const SYSTEM_NODE = '/usr/bin/node';
const systemMajor = existsSync(SYSTEM_NODE)
  ? Number(spawnSync(SYSTEM_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout)
  : NaN;

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokend-service-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('docs/tokend.service', () => {
  it("runs bin/tokend.js serve on the checkout's Node 24, never through npm", () => {
    const argv = execStart();
    assert.match(argv[0] ?? '', /^\/\S+$/, 'an absolute path first');
    const command = argv.join(' ');
    assert.deepEqual(argv, [`${INSTALLED_AT}/${CHECKOUT_NODE}`, `${INSTALLED_AT}/bin/tokend.js`, 'serve']);
    assert.doesNotMatch(command, /\bnpm\b/);
    const comments = UNIT.split('\n').filter((l) => l.startsWith('#'));
    assert.ok(
      comments.some((l) => /Node 24/.test(l)),
      'a comment says the Node must be 24 or newer',
    );
    assert.ok(
      comments.some((l) => l.includes('npm ci --omit=dev')),
      'the install steps install the dependencies, Node 24 among them',
    );
    assert.ok(existsSync(join(ROOT, 'bin', 'tokend.js')));
  });

  it('has the settings a service needs: its own user, an environment file, restarts, hardening', () => {
    const user = one('User');
    assert.ok(user !== '' && user !== 'root', 'a dedicated user');
    assert.match(one('EnvironmentFile'), /^-?\/\S+$/);
    assert.equal(one('Restart'), 'on-failure');
    assert.equal(one('NoNewPrivileges'), 'yes');
    assert.match(one('ProtectSystem'), /^(strict|full)$/);
    assert.equal(one('PrivateTmp'), 'yes');
    // A SIGTERM'd tokend may take 10 s (15 s with WORKERS > 1) to drain: systemd must wait longer.
    assert.equal(one('KillSignal'), 'SIGTERM');
    assert.ok(Number(one('TimeoutStopSec')) > 15, 'TimeoutStopSec is longer than the drain');
    assert.ok(section(UNIT, 'Install').get('WantedBy')?.includes('multi-user.target'));
  });

  const skipAnalyze =
    existsSync(SYSTEMD_ANALYZE) || IN_CI
      ? false
      : `${SYSTEMD_ANALYZE} is not installed (apt-get install systemd)`;
  it('systemd-analyze verify accepts it, without a warning', { skip: skipAnalyze }, (t) => {
    assert.ok(existsSync(SYSTEMD_ANALYZE), `CI=true needs ${SYSTEMD_ANALYZE} (apt-get install systemd)`);
    const dir = scratch(t);
    const path = join(dir, 'tokend.service');
    writeFileSync(path, localUnit());
    const r = spawnSync(SYSTEMD_ANALYZE, ['verify', path], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.error, undefined);
    assert.equal(r.status, 0, r.stderr);
    // It warns (and still exits 0) about unknown keys and bad values: none may concern this unit.
    const ours = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.includes('tokend.service'));
    assert.deepEqual(ours, []);
  });

  const skipRun =
    existsSync(join(ROOT, CHECKOUT_NODE)) || IN_CI
      ? false
      : `no ${CHECKOUT_NODE} (npm ci installs none on this platform, or ran with --omit=optional)`;
  it(
    `its ExecStart, run as written (${SYSTEM_NODE} is Node ${systemMajor}), serves on Node 24 and exits 0 on SIGTERM`,
    { skip: skipRun, timeout: 120_000 },
    async (t) => {
      const dir = scratch(t);
      const [program = '', ...args] = execStart().map((word) => word.replaceAll(INSTALLED_AT, ROOT));
      const env: Record<string, string> = {};
      for (const setting of service.get('Environment') ?? []) {
        const eq = setting.indexOf('=');
        env[setting.slice(0, eq)] = setting.slice(eq + 1);
      }
      assert.ok(env.DATABASE_URL?.startsWith('sqlite:'), 'a default database');
      assert.ok(env.NODE_COMPILE_CACHE, 'a compile cache of its own');
      const child = spawn(program, args, {
        cwd: one('WorkingDirectory').replace(INSTALLED_AT, ROOT),
        env: {
          ...env,
          // systemd's own PATH for services, where `node` is the system's.
          PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
          // The unit's paths are the installed system's: here, this test's directory.
          DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`,
          NODE_COMPILE_CACHE: join(dir, 'cache'),
          PORT: '0',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      t.after(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const listening = listeningOrigin(child, exited, 100_000);
      const origin = await listening.origin;
      assert.equal((await fetch(`${origin}/api/v1/ping`)).status, 200);

      // The process systemd started is tokend's Node itself, and it is 24.
      const binary = readlinkSync(`/proc/${child.pid}/exe`);
      const version = spawnSync(binary, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
      assert.ok(Number(version.split('.')[0]) >= 24, `${binary} is Node ${version}`);
      if (systemMajor < 24) assert.notEqual(binary, SYSTEM_NODE);

      child.kill('SIGTERM');
      assert.equal(await exited, 0, listening.stderr());
      assert.ok(existsSync(join(dir, 'cache')), 'the compile cache went where NODE_COMPILE_CACHE says');
    },
  );
});

describe('bin/tokend.js on an older Node', () => {
  const OLD_NODE = '/usr/bin/node';
  const major = existsSync(OLD_NODE)
    ? Number(
        spawnSync(OLD_NODE, ['-p', 'process.versions.node.split(".")[0]'], {
          encoding: 'utf8',
        }).stdout.trim(),
      )
    : NaN;
  const skip = !Number.isFinite(major)
    ? `no ${OLD_NODE}`
    : major >= 24
      ? `${OLD_NODE} is Node ${major}: not older`
      : false;
  it('refuses in one line that says which Node it needs', { skip }, () => {
    const r = spawnSync(OLD_NODE, [join(ROOT, 'bin', 'tokend.js'), '--version'], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0] ?? '',
      new RegExp(`^tokend: needs Node 24 or newer, and ${OLD_NODE} is Node ${major}\\.`),
    );
    // What to do: the checkout's Node 24, or (without one) a Node 24 to install.
    assert.match(lines[0] ?? '', /node_modules\/\.bin\/node.*(through npm|install Node 24)/);
  });
});
