#!/usr/bin/env node
// Runs Node 24 with the given arguments, whatever Node started this file: the running Node when it is 24
// or newer; otherwise Node 24 from the npm registry (the package node-<platform>-<arch>, which holds the
// official binary), fetched once into .tools/ of this checkout. package.json's scripts and .ci/node.sh go
// through here, so `npm start`, `npm test`, `npm run tokend` and `npm run bench` work in any shell of a
// machine whose `node` is older. Plain JavaScript: it must run on the older Node too.
//
//   node bin/node24.js ARGS…     runs `node ARGS…` on Node 24, passing signals on and its exit code back
//   node bin/node24.js --bin-dir prints the directory of Node 24's `node` (fetching it when needed)
//
// NODE24_OPTIONS is added to NODE_OPTIONS for Node 24 only (an older Node refuses options it does not
// know, such as --test-name-pattern, in its own NODE_OPTIONS).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Node 24 release fetched when the running Node is older (kept in step with .nvmrc's major). */
const VERSION = '24.21.0';
const MAJOR = 24;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function fail(line) {
  process.stderr.write(`tokend: ${line}\n`);
  process.exit(1);
}

/** The directory holding a `node` of at least MAJOR: the running one's, or one fetched into .tools/. */
function nodeBinDir() {
  if (Number(process.versions.node.split('.')[0]) >= MAJOR) return dirname(process.execPath);
  const pkg = `node-${process.platform}-${process.arch}`;
  const home = join(root, '.tools', `node-${VERSION}`);
  const bin = join(home, 'bin');
  if (existsSync(join(bin, 'node'))) return bin;
  process.stderr.write(
    `tokend: Node ${process.versions.node} is too old; fetching ${pkg}@${VERSION} into .tools/ (once)\n`,
  );
  const work = mkdtempSync(join(tmpdir(), 'tokend-node-'));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const packed = spawnSync(npm, ['pack', '--silent', `${pkg}@${VERSION}`], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false' },
    });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (packed.status !== 0 || tarball === undefined) {
      const why = (packed.stderr || packed.error?.message || 'no package').trim().split('\n').pop();
      fail(
        `needs Node ${MAJOR}, and ${pkg}@${VERSION} could not be fetched from the npm registry (${why}); ` +
          `install Node ${MAJOR} (nodejs.org, or your system's packages) and run this again`,
      );
    }
    const unpacked = spawnSync('tar', ['xzf', tarball], { cwd: work, encoding: 'utf8' });
    if (unpacked.status !== 0 || !existsSync(join(work, 'package', 'bin', 'node')))
      fail(
        `could not unpack ${pkg}@${VERSION} (${(unpacked.stderr || 'tar failed').trim()}); install Node ${MAJOR}`,
      );
    mkdirSync(join(root, '.tools'), { recursive: true });
    rmSync(home, { recursive: true, force: true });
    renameSync(join(work, 'package'), home);
    return bin;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const bin = nodeBinDir();
if (args.length === 1 && args[0] === '--bin-dir') {
  process.stdout.write(`${bin}\n`);
} else {
  // Its PATH first, so whatever the command starts (tokend's own child processes, npm) finds Node 24 too.
  const env = {
    ...process.env,
    PATH: `${bin}${process.platform === 'win32' ? ';' : ':'}${process.env.PATH ?? ''}`,
  };
  if (process.env.NODE24_OPTIONS)
    env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${process.env.NODE24_OPTIONS}`.trim();
  const child = spawn(join(bin, 'node'), args, { stdio: 'inherit', env });
  // A terminal's Ctrl-C reaches the whole process group, the child too: here it only must not end us
  // first. SIGTERM and SIGHUP (a service manager's) are sent to us alone: pass them on.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP'])
    process.on(signal, () => {
      child.kill(signal);
    });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
