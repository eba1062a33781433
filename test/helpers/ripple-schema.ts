// The Ripple family's `users` and `tokens` tables, made on a MariaDB/MySQL connection from the project's
// reference file docs/ripple-schema.sql, so every test's source database has the columns the docs name.
import { readFileSync } from 'node:fs';
import type { Connection } from 'mysql2/promise';

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
