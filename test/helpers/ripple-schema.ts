// The Ripple family's `users` and `tokens` tables, made on a MariaDB/MySQL connection from the project's
// reference file docs/ripple-schema.sql, so every test's source database has the columns the docs name.
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { createConnection, type Connection } from 'mysql2/promise';
import { IN_CI, answers } from './dialects.ts';
import { createTestDatabase } from './databases.ts';

const SCHEMA_FILE = new URL('../../docs/ripple-schema.sql', import.meta.url);

/** The file's statements, in order: whole-line comments dropped, split where a line ends in `;`. */
export function rippleSchemaStatements(): string[] {
  const text = readFileSync(SCHEMA_FILE, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n');
  return text
    .split(/;[ \t]*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '');
}

/** Creates the family's `users` and `tokens` tables in the connection's database. */
export async function createRippleTables(connection: Connection): Promise<void> {
  for (const statement of rippleSchemaStatements()) await connection.query(statement);
}

/**
 * Why no Ripple-family source can be made here (MariaDB does not answer), or undefined. With CI=true a
 * server that does not answer fails the run instead.
 */
export async function rippleSourceProblem(): Promise<string | undefined> {
  const problem = await answers('mysql');
  if (problem !== undefined && IN_CI) throw new Error(`CI=true but MariaDB does not answer: ${problem}`);
  return problem;
}

/** A fresh MariaDB database with the family's tables, and a connection to write it as the family does. */
export async function createRippleSource(t: TestContext): Promise<{ url: string; connection: Connection }> {
  const source = await createTestDatabase('mysql');
  t.after(() => source.drop());
  const connection = await createConnection({ uri: source.url });
  t.after(() => connection.end());
  await createRippleTables(connection);
  return { url: source.url, connection };
}
