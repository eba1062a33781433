// Reading a Ripple-family database (Ripple, Akatsuki: MySQL or MariaDB) for `tokend import-ripple`:
// its users and tokens tables, page by page in id order, over one connection of its own.
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { redactDatabaseUrl } from '../store/open-errors.ts';
import { FAMILY_COLUMNS } from '../store/ripple.ts';

/** A source database problem that the operator can fix: printed as one line. */
export class RippleSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RippleSourceError';
  }
}

/** The columns the import reads; a database without one of them is not a Ripple-family database. */
export const SOURCE_COLUMNS = FAMILY_COLUMNS;

export type SourceTable = keyof typeof SOURCE_COLUMNS;

/**
 * The columns the import reads the source by (`ORDER BY id`, `WHERE id > ?`, `MAX(id)`): each must be an
 * integer column, or text ids sort as text ("10" before "9") while pages are asked for by number, and
 * rows fall between pages unseen.
 */
const KEY_COLUMNS = ['users.id', 'tokens.id'] as const;

/** MySQL's and MariaDB's integer types, as INFORMATION_SCHEMA.COLUMNS.DATA_TYPE names them. */
const INTEGER_TYPES = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'bigint']);

/**
 * Why the source cannot be read in id order, or undefined when it can: the first key column whose type
 * (`COLUMN_TYPE`, by `table.column`; lower case `DATA_TYPE` in `dataTypes`) is not an integer type.
 */
function keyColumnProblem(
  dataTypes: ReadonlyMap<string, string>,
  columnTypes: ReadonlyMap<string, string>,
): string | undefined {
  for (const column of KEY_COLUMNS) {
    const type = dataTypes.get(column);
    if (type !== undefined && !INTEGER_TYPES.has(type))
      return (
        `${column} is ${columnTypes.get(column) ?? type}, not an integer column: the import reads users and ` +
        'tokens page by page in id order, which only integer ids give (text ids sort as text, and rows would ' +
        'be missed); nothing was read or written'
      );
  }
  return undefined;
}

/** A cell as the driver hands it over: big integers may come as strings. */
export type SourceCell = string | number | bigint | null | Buffer;

export interface RippleUserRow {
  id: SourceCell;
  username: SourceCell;
  username_safe: SourceCell;
  privileges: SourceCell;
  password_md5: SourceCell;
  password_version: SourceCell;
  /** Unix seconds of sign-up, where the database has the column (Ripple and Akatsuki do) */
  register_datetime?: SourceCell;
}

export interface RippleTokenRow {
  id: SourceCell;
  /** the owner's user id, in a text column */
  user: SourceCell;
  privileges: SourceCell;
  description: SourceCell;
  /** MD5 hex of the token's secret */
  token: SourceCell;
  private: SourceCell;
  last_updated: SourceCell;
}

export interface RippleSource {
  /** The source's address with its password masked, for messages. */
  readonly address: string;
  count(table: SourceTable): Promise<number>;
  /** The largest id of the table up to `atMost`, 0 when it has none. */
  maxId(table: SourceTable, atMost: number): Promise<number>;
  /**
   * Up to `limit` rows in id order: those with an id above `after`, or from the first (whatever its id,
   * zero and negative ones too) when `after` is undefined.
   */
  users(after: bigint | undefined, limit: number): Promise<RippleUserRow[]>;
  tokens(after: bigint | undefined, limit: number): Promise<RippleTokenRow[]>;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 10_000;

/** Opens the source at a `mysql://USER:PASSWORD@HOST:PORT/DB` (or `mariadb://`) URL and checks its tables. */
export async function openRippleSource(url: string): Promise<RippleSource> {
  if (!/^(mysql|mariadb):\/\/[^/]+\/[^/?#]+/.test(url))
    // Not echoed: a value that is not such a URL may hold a password where no redaction finds it.
    throw new RippleSourceError(
      '--from: expected mysql://USER:PASSWORD@HOST:PORT/DATABASE (or mariadb://…); the value given is not such a URL',
    );
  const address = redactDatabaseUrl(url);
  const { createConnection } = await import('mysql2/promise');
  let connection: Connection;
  try {
    connection = await createConnection({
      uri: url.replace(/^mariadb:/, 'mysql:'),
      connectTimeout: CONNECT_TIMEOUT_MS,
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
    });
  } catch (err) {
    throw new RippleSourceError(`cannot connect to the source database ${address}: ${describe(err)}`);
  }
  try {
    const [columns] = await connection.query<RowDataPacket[]>(
      `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, DATA_TYPE AS d, COLUMN_TYPE AS ct FROM information_schema.COLUMNS
       WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('users', 'tokens')`,
    );
    const present = new Set(columns.map((row) => `${String(row.t)}.${String(row.c)}`));
    const missing = (Object.keys(SOURCE_COLUMNS) as SourceTable[]).flatMap((table) =>
      SOURCE_COLUMNS[table]
        .filter((column) => !present.has(`${table}.${column}`))
        .map((c) => `${table}.${c}`),
    );
    if (missing.length > 0)
      throw new RippleSourceError(
        `${address} is not a Ripple-family database: it has no ${missing.join(', ')}`,
      );
    const typeOf = (field: 'd' | 'ct') =>
      new Map(columns.map((row) => [`${String(row.t)}.${String(row.c)}`, String(row[field]).toLowerCase()]));
    const keyProblem = keyColumnProblem(typeOf('d'), typeOf('ct'));
    if (keyProblem !== undefined) throw new RippleSourceError(`${address}: ${keyProblem}`);
    const userColumns = [
      ...SOURCE_COLUMNS.users,
      ...(present.has('users.register_datetime') ? ['register_datetime'] : []),
    ];
    const list = (names: readonly string[]) => names.map((name) => connection.escapeId(name)).join(', ');
    const page = async <Row>(
      table: SourceTable,
      names: readonly string[],
      after: bigint | undefined,
      limit: number,
    ) => {
      const [rows] = await connection.query<RowDataPacket[]>(
        after === undefined
          ? `SELECT ${list(names)} FROM ${table} ORDER BY id LIMIT ?`
          : `SELECT ${list(names)} FROM ${table} WHERE id > ? ORDER BY id LIMIT ?`,
        after === undefined ? [limit] : [after, limit],
      );
      return rows as unknown as Row[];
    };
    return {
      address,
      async count(table) {
        const [rows] = await connection.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table}`);
        return Number(rows[0]?.n ?? 0);
      },
      async maxId(table, atMost) {
        const [rows] = await connection.query<RowDataPacket[]>(
          `SELECT COALESCE(MAX(id), 0) AS n FROM ${table} WHERE id <= ?`,
          [atMost],
        );
        return Number(rows[0]?.n ?? 0);
      },
      users: (after, limit) => page<RippleUserRow>('users', userColumns, after, limit),
      tokens: (after, limit) => page<RippleTokenRow>('tokens', SOURCE_COLUMNS.tokens, after, limit),
      close: () => connection.end(),
    };
  } catch (err) {
    await connection.end().catch(() => {});
    if (err instanceof RippleSourceError) throw err;
    throw new RippleSourceError(`cannot read the source database ${address}: ${describe(err)}`);
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  if (code === 'ECONNREFUSED') return 'connection refused (is the server running, and is the port right?)';
  if (code === 'ER_BAD_DB_ERROR') return 'no such database';
  if (code === 'ER_ACCESS_DENIED_ERROR') return 'access denied (check the user and password)';
  if (code === 'ETIMEDOUT') return 'the server did not answer in time';
  return err.message;
}
