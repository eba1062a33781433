// What the migrations share. Each migration keeps doing what it did when it shipped, so nothing here
// changes either: test/unit/shipped-migrations.test.ts holds this file's text with theirs.
import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../types.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's schema type
export type AnyDb = Kysely<any>;

/** A migration as written for one dialect (the schema's own differences are the migrations'). */
export type MigrationFactory = (dialect: Dialect) => Migration;

/** An auto-incrementing integer primary key that also accepts explicit ids, on each dialect. */
export function autoId(dialect: Dialect) {
  return (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder => {
    const pk = c.primaryKey().notNull();
    if (dialect === 'postgres') return pk.generatedByDefaultAsIdentity();
    if (dialect === 'mysql') return pk.autoIncrement();
    // SQLite: AUTOINCREMENT, so the id of a deleted row (e.g. a revoked token) is never handed out again.
    return pk.autoIncrement();
  };
}
