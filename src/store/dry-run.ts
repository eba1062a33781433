// `tokend migrate --dry-run`: the SQL a migration would run, found by running it against a database that
// only records (Kysely's DummyDriver answers every query with no rows), through the same plugins as the
// real run, so the text is exactly what would be sent.
import {
  DummyDriver,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type KyselyPlugin,
} from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from './types.ts';

const PARTS = {
  sqlite: [SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler],
  postgres: [PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler],
  mysql: [MysqlAdapter, MysqlIntrospector, MysqlQueryCompiler],
} as const;

/** One statement as shown: its SQL, and its parameters when it has any. */
const shown = (text: string, parameters: readonly unknown[]): string =>
  parameters.length === 0 ? text : `${text} -- parameters: ${JSON.stringify(parameters)}`;

/**
 * A Kysely handle on `dialect` that sends nothing anywhere: every query answers no rows, and `onQuery`
 * sees each one's SQL and parameters, as the plugins left them.
 */
export function recordingKysely(
  dialect: Dialect,
  plugins: readonly KyselyPlugin[],
  onQuery: (sql: string, parameters: readonly unknown[]) => void = () => {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations take any schema
): Kysely<any> {
  const [Adapter, Introspector, Compiler] = PARTS[dialect];
  return new Kysely({
    dialect: {
      createAdapter: () => new Adapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new Introspector(k),
      createQueryCompiler: () => new Compiler(),
    },
    plugins: [...plugins],
    log: (event) => {
      if (event.level === 'query') onQuery(event.query.sql, event.query.parameters);
    },
  });
}

/** The statements `migration.up` sends on `dialect`, in order. Reads in it see no rows. */
export async function migrationStatements(
  dialect: Dialect,
  migration: Migration,
  plugins: readonly KyselyPlugin[],
): Promise<string[]> {
  const statements: string[] = [];
  const db = recordingKysely(dialect, plugins, (text, parameters) =>
    statements.push(shown(text, parameters)),
  );
  try {
    await migration.up(db);
  } finally {
    await db.destroy();
  }
  return statements;
}
