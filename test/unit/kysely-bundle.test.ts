// The fence around vendor/kysely/, the build of Kysely's two entry points that tokend imports as
// `#kysely` and `#kysely/migration` (bin/bundle-kysely.js, run at install). Fails when the build is
// missing, was made from another version than the installed one, exports something else than the
// package, compiles a query differently, or loads any module but its own files.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as bundled from '#kysely';
import * as bundledMigration from '#kysely/migration';
// eslint-disable-next-line no-restricted-imports -- the fence compares the build with the package itself
import * as fromPackage from 'kysely';
// eslint-disable-next-line no-restricted-imports -- the same, for the migration entry point
import * as migrationFromPackage from 'kysely/migration';

const indexPath = fileURLToPath(import.meta.resolve('#kysely'));
const vendorDir = dirname(indexPath);
const builtFiles = readdirSync(vendorDir).filter((f) => f.endsWith('.js'));
const installed = JSON.parse(
  readFileSync(new URL('../../node_modules/kysely/package.json', import.meta.url), 'utf8'),
) as { version: string };

/** SQL that Kysely compiles without a database (its documented "compile only" set-up). */
function compileSample(k: typeof fromPackage): { sql: string; parameters: readonly unknown[] } {
  const db = new k.Kysely<{ tokens: { id: number; user_id: number; expires_at: number | null } }>({
    dialect: {
      createAdapter: () => new k.SqliteAdapter(),
      createDriver: () => new k.DummyDriver(),
      createIntrospector: (db) => new k.SqliteIntrospector(db),
      createQueryCompiler: () => new k.SqliteQueryCompiler(),
    },
  });
  const { sql, parameters } = db
    .selectFrom('tokens')
    .select(['id', 'user_id'])
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', 5)]))
    .where('user_id', 'in', [1, 2])
    .orderBy('id', 'desc')
    .limit(3)
    .compile();
  return { sql, parameters };
}

function assertSameExports(built: Record<string, unknown>, original: Record<string, unknown>) {
  assert.deepEqual(Object.keys(built).sort(), Object.keys(original).sort());
  for (const [name, value] of Object.entries(original)) assert.equal(typeof built[name], typeof value, name);
}

describe('vendor/kysely/, the build of Kysely', () => {
  it('is what #kysely and #kysely/migration name', () => {
    assert.match(indexPath, /[/\\]vendor[/\\]kysely[/\\]index\.js$/);
    assert.equal(fileURLToPath(import.meta.resolve('#kysely/migration')), join(vendorDir, 'migration.js'));
  });

  it('was built from the installed Kysely, every file of it', () => {
    assert.ok(builtFiles.length >= 2, builtFiles.join(', '));
    for (const file of builtFiles) {
      const firstLine = readFileSync(join(vendorDir, file), 'utf8').split('\n', 1)[0]!;
      assert.equal(
        /^\/\/ kysely@([^\s,]+)/.exec(firstLine)?.[1],
        installed.version,
        `vendor/kysely/${file} is stale: run \`node bin/bundle-kysely.js\` (npm install runs it)`,
      );
    }
  });

  it('exports every name each entry point exports, each of the same kind', () => {
    assertSameExports(bundled, fromPackage);
    assertSameExports(bundledMigration, migrationFromPackage);
  });

  it('loads no module but its own files', () => {
    for (const file of builtFiles) {
      const source = readFileSync(join(vendorDir, file), 'utf8');
      const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm)].map(
        (m) => m[1],
      );
      for (const specifier of specifiers)
        assert.match(specifier!, /^\.\/[\w-]+\.js$/, `${file} imports ${specifier}`);
      assert.doesNotMatch(source, /^\s*import\s*["']/m, `${file}: an import for its side effects`);
      // A dynamic import of a path known only at run time (FileMigrationProvider's migration files) is
      // Kysely's API, not one of its modules; one of a written-out name would be.
      assert.doesNotMatch(
        source,
        /\bimport\s*\(\s*(?:\/\*[\s\S]*?\*\/\s*)*["'`]|\brequire\s*\(/,
        `${file}: a dynamic import of a named module, or a require`,
      );
    }
  });

  it('compiles queries exactly as the package does', () => {
    const sample = compileSample(bundled as unknown as typeof fromPackage);
    assert.deepEqual(sample, compileSample(fromPackage));
    assert.match(sample.sql, /^select "id", "user_id" from "tokens" where/);
  });

  it("shares one copy of the code both entry points use: the migrator's results are the main entry's", () => {
    // A class both entry points export would be two classes if each file carried its own copy.
    const shared = Object.keys(bundledMigration).filter((name) => name in bundled);
    for (const name of shared)
      assert.equal(
        (bundledMigration as Record<string, unknown>)[name],
        (bundled as Record<string, unknown>)[name],
        name,
      );
  });
});
