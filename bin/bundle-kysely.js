#!/usr/bin/env node
// Builds vendor/kysely/: the installed Kysely's two entry points that tokend uses, `kysely` and
// `kysely/migration`, as index.js and migration.js (the code both need in one shared chunk), which tokend
// imports as `#kysely` and `#kysely/migration` (package.json "imports"). Kysely's package is 304 small
// modules, and a process that loads them holds ~6 MB more than one that loads the same code as a few
// (Node's module loader keeps a record per module, and reading them grows V8's young generation;
// bench/README.md, scenario 6).
//
// Run by npm after every install (package.json "postinstall"), so the files always follow the Kysely that
// package-lock.json pins; run it by hand after an install with --ignore-scripts. It bundles Kysely's public
// entry points through esbuild's public API and changes nothing in them; test/unit/kysely-bundle.test.ts
// checks that each file exports what its entry point exports and was built from the installed version.
// Plain JavaScript: npm may run it with an older Node than tokend's.
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'vendor', 'kysely');

/**
 * Output file (without .js) → the package entry point it is built from, read from package.json's
 * "imports": `#kysely` → ./vendor/kysely/index.js is built from `kysely`, and so on.
 */
const ENTRY_POINTS = Object.fromEntries(
  Object.entries(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).imports ?? {})
    .filter(([alias]) => alias === '#kysely' || alias.startsWith('#kysely/'))
    .map(([alias, target]) => [basename(target, '.js'), alias.slice(1)]),
);

function readPackage(folder) {
  try {
    const pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    return pkg.name === 'kysely' ? pkg : undefined;
  } catch {
    return undefined;
  }
}

const entryPoints = Object.fromEntries(
  Object.entries(ENTRY_POINTS).map(([out, specifier]) => [
    out,
    fileURLToPath(import.meta.resolve(specifier)),
  ]),
);
// The package root: the nearest folder above the main entry point holding kysely's package.json.
let dir = dirname(entryPoints.index);
while (!readPackage(dir) && dirname(dir) !== dir) dir = dirname(dir);
const { version } = readPackage(dir) ?? { version: 'unknown' };

// The files' first line starts so, then names the version (test/unit/kysely-bundle.test.ts reads it).
const BANNER_PREFIX = '// kysely@';

// Only the generated files: the folder also holds the committed type declarations (*.d.ts).
mkdirSync(outdir, { recursive: true });
for (const file of readdirSync(outdir)) if (file.endsWith('.js')) rmSync(join(outdir, file));
buildSync({
  entryPoints,
  outdir,
  bundle: true,
  splitting: true,
  chunkNames: 'shared-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node24',
  logLevel: 'warning',
  banner: {
    js:
      `${BANNER_PREFIX}${version}, built by bin/bundle-kysely.js from node_modules/kysely ` +
      `(MIT licence: node_modules/kysely/LICENSE). Generated at install; not edited, not committed.`,
  },
});
