// Runs the versioned schema migrations (one file each in migrations/, listed by migrations/index.ts).
// Kysely's Migrator records them in kysely_migration and holds a lock (an advisory lock on PostgreSQL, a
// locked row on MySQL, the write lock on SQLite) while it runs, so several instances starting at once
// against one empty database apply each migration once.
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { AnyDb } from './migrations/kit.ts';
import { MIGRATIONS } from './migrations/index.ts';
import type { Dialect } from './types.ts';

class StaticProvider implements MigrationProvider {
  private readonly migrations: () => Record<string, Migration>;
  constructor(migrations: () => Record<string, Migration>) {
    this.migrations = migrations;
  }
  async getMigrations(): Promise<Record<string, Migration>> {
    return this.migrations();
  }
}

/** tokend's migrations for its own schema on `dialect`, as the migrator takes them. */
export const ownMigrations = (dialect: Dialect): Record<string, Migration> =>
  Object.fromEntries(MIGRATIONS.map(([name, make]) => [name, make(dialect)]));

/** Which migrations, recorded where: tokend's own schema's by default. */
export interface MigrationChain {
  migrations: () => Record<string, Migration>;
  /** the table recording the applied ones, and its lock table */
  tableName?: string;
  lockTableName?: string;
}

function migratorFor(db: AnyDb, dialect: Dialect, chain?: MigrationChain): Migrator {
  return new Migrator({
    db,
    provider: new StaticProvider(chain?.migrations ?? (() => ownMigrations(dialect))),
    ...(chain?.tableName !== undefined ? { migrationTableName: chain.tableName } : {}),
    ...(chain?.lockTableName !== undefined ? { migrationLockTableName: chain.lockTableName } : {}),
  });
}

/** Applies every pending migration; returns the names applied. Throws on the first failure. */
export async function migrateToLatest(
  db: AnyDb,
  dialect: Dialect,
  chain?: MigrationChain,
): Promise<string[]> {
  const { error, results } = await migratorFor(db, dialect, chain).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The migrations not applied yet, in order, each with its migration. */
export async function pendingMigrations(
  db: AnyDb,
  dialect: Dialect,
  chain?: MigrationChain,
): Promise<Array<{ name: string; migration: Migration }>> {
  const infos = await migratorFor(db, dialect, chain).getMigrations();
  return infos
    .filter((info) => info.executedAt === undefined)
    .map((info) => ({ name: info.name, migration: info.migration }));
}
