// DATABASE_SCHEMA=ripple: tokend in place on a Ripple-family server's own MySQL/MariaDB database. The
// family's `users` and `tokens` tables stay the one copy of accounts and tokens, read live at each
// request; tokend reaches them through two views named like its own tables (tokend_users, tokend_tokens),
// which rename the family's columns to tokend's, and keeps everything else it stores in tables of its own
// beside them, all named with TOKEND_TABLE_PREFIX. One Kysely plugin (inPlaceTables) gives every query,
// the per-request lookup included, the prefixed names; repositories never know which layout they run on.
//
// tokend never drops or rewrites a family table or column. What it adds to the family's `tokens` (four
// nullable or defaulted columns, three indexes) is FAMILY_CHANGES, applied by `tokend migrate` after
// `tokend migrate --dry-run` has shown it, and undone by FAMILY_CHANGES_UNDONE (docs/compatibility.md).
import {
  AndNode,
  OperationNodeTransformer,
  WhereNode,
  type UpdateQueryNode,
  PrimitiveValueListNode,
  TableNode,
  ValueNode,
  type BinaryOperationNode,
  type ColumnDefinitionNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  sql,
  type Kysely,
} from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Database } from './schema.ts';
import { MIGRATIONS, securityLogTable, type MigrationFactory } from './migrations.ts';

/** Every table of tokend's own in a family database is named with this prefix (views included). */
export const TOKEND_TABLE_PREFIX = 'tokend_';

/** Where the in-place mode records its migrations, beside the family's tables. */
export const IN_PLACE_MIGRATION_TABLE = `${TOKEND_TABLE_PREFIX}migration`;
export const IN_PLACE_MIGRATION_LOCK_TABLE = `${TOKEND_TABLE_PREFIX}migration_lock`;

/**
 * The family's columns tokend reads and writes: a database without one of them is not a Ripple-family
 * database (import-ripple reads the same ones, src/ripple/source.ts).
 */
export const FAMILY_COLUMNS = {
  users: ['id', 'username', 'username_safe', 'privileges', 'password_md5', 'password_version'],
  tokens: ['id', 'user', 'privileges', 'description', 'token', 'private', 'last_updated'],
} as const;

/** The family's users as tokend's `users`: same rows, tokend's column names. */
const USERS_VIEW = `CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW ${TOKEND_TABLE_PREFIX}users AS
SELECT id, username, username_safe, privileges, password_md5 AS password_hash, password_version,
  0 AS created_at
FROM users`;

/**
 * The family's tokens as tokend's `tokens`. `user` is text in the family's schema: only a row whose `user`
 * is an id written plainly (digits, no leading zero, no space) belongs to a user here; '01', '1 ' or 'abc'
 * belong to nobody (they could otherwise become user 1 by MySQL's cast of text to a number).
 */
const plainId = (column: string): string =>
  `${column} <> '' AND ${column} NOT REGEXP '[^0-9]' AND ${column} NOT LIKE '0%' AND CHAR_LENGTH(${column}) <= 10`;

const TOKENS_VIEW = `CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW ${TOKEND_TABLE_PREFIX}tokens AS
SELECT id, \`user\` AS user_id, privileges, description, token AS token_hash, private, last_updated,
  tokend_expires_at AS expires_at, tokend_session AS session, tokend_password_at AS password_at,
  tokend_created_at AS created_at, tokend_last_address AS last_address,
  tokend_password_fingerprint AS password_fingerprint
FROM tokens
WHERE ${plainId('`user`')}
WITH CASCADED CHECK OPTION`;

/**
 * The view's own test of `user`, put first in every UPDATE of tokend_tokens. MariaDB may weigh the
 * UPDATE's own conditions (fix_privileges compares each row's owner with `owner.id = user_id`) before
 * the merged view's, and in strict mode a text it cannot read as a number ('1abc') is an error there, not
 * a warning: one such family row would stop the whole statement.
 */
const PLAIN_USER_ID_FIRST = sql.raw(plainId('user_id')).toOperationNode();

/**
 * What tokend adds to the family's database, in order: the exact SQL `tokend migrate` runs (and
 * `tokend migrate --dry-run` shows). Only additions: columns with a default, indexes, two views.
 */
export const FAMILY_CHANGES: readonly string[] = [
  'ALTER TABLE tokens ADD COLUMN tokend_expires_at BIGINT NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_session SMALLINT NOT NULL DEFAULT 0, ' +
    'ADD COLUMN tokend_password_at BIGINT NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_created_at BIGINT NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_last_address VARCHAR(64) NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_password_fingerprint VARCHAR(16) NULL DEFAULT NULL',
  'CREATE INDEX tokend_tokens_token ON tokens (token)',
  'CREATE INDEX tokend_tokens_listing ON tokens (`user`, private, id, tokend_expires_at)',
  'CREATE INDEX tokend_tokens_expires_at ON tokens (tokend_expires_at)',
  USERS_VIEW,
  TOKENS_VIEW,
];

/** FAMILY_CHANGES undone: the family's tables as they were before tokend (its own tables are dropped apart). */
export const FAMILY_CHANGES_UNDONE: readonly string[] = [
  `DROP VIEW ${TOKEND_TABLE_PREFIX}tokens`,
  `DROP VIEW ${TOKEND_TABLE_PREFIX}users`,
  'DROP INDEX tokend_tokens_expires_at ON tokens',
  'DROP INDEX tokend_tokens_listing ON tokens',
  'DROP INDEX tokend_tokens_token ON tokens',
  'ALTER TABLE tokens DROP COLUMN tokend_password_fingerprint, DROP COLUMN tokend_last_address, DROP COLUMN tokend_created_at, DROP COLUMN tokend_password_at, ' +
    'DROP COLUMN tokend_session, DROP COLUMN tokend_expires_at',
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's schema type
type AnyDb = Kysely<any>;

const familyChanges: MigrationFactory = () => ({
  async up(db: AnyDb) {
    for (const statement of FAMILY_CHANGES) await sql.raw(statement).execute(db);
  },
  async down(db: AnyDb) {
    for (const statement of FAMILY_CHANGES_UNDONE) await sql.raw(statement).execute(db);
  },
});

/**
 * tokend's migrations that make only tables of its own (OAuth, the token page's reveals): run as they
 * are, through inPlaceTables, so their tables get the prefix. Those that change `users` or `tokens` never
 * run in place: what the family's tables need of them is FAMILY_CHANGES.
 */
export const OWN_TABLE_MIGRATIONS = new Set([
  '0002_oauth',
  '0012_oauth_bounds',
  '0014_token_reveals',
  '0015_oauth_code_attempts',
  '0016_oauth_client_owners',
  '0017_client_credentials',
  // in place its table alone (securityLogTable): the tokens column is FAMILY_CHANGES' tokend_last_address
  '0018_security_log',
  '0020_event_outbox',
  '0021_security_log_bounds',
]);

/**
 * tokend's migrations that never run in place, each because FAMILY_CHANGES (or the family's own schema)
 * already gives the family's tables what it would: the users and tokens tables themselves, expiry, the
 * listing index, sessions, creation times; the tokens_version triggers (dropped again by 0010), the
 * username collation and fold (the family's username_safe is its own), the import's record. A new
 * migration must be put in this set or in OWN_TABLE_MIGRATIONS (test/unit/in-place-tables.test.ts).
 */
export const COVERED_BY_FAMILY_CHANGES = new Set([
  '0001_users_tokens',
  '0003_token_expiry',
  '0004_exact_usernames',
  '0005_listing_index',
  '0006_tokens_version',
  '0007_tokens_version_lock_order',
  '0008_web_sessions',
  '0009_folded_usernames',
  '0010_drop_tokens_version',
  '0011_ripple_imported_tokens',
  '0013_token_created_at',
  '0019_session_password',
]);

/** The in-place mode's migrations, in order: the family's additions first, then tokend's own tables. */
export const IN_PLACE_MIGRATIONS: ReadonlyArray<readonly [string, MigrationFactory]> = [
  ['0000_ripple_in_place', familyChanges],
  ...MIGRATIONS.filter(([name]) => OWN_TABLE_MIGRATIONS.has(name)).map(
    ([name, make]): readonly [string, MigrationFactory] => [
      name,
      name === '0018_security_log' ? securityLogTable : make,
    ],
  ),
];

/** The tables tokend names in its queries, each with the name it has in a family database. */
const PREFIXED: ReadonlyMap<string, string> = new Map(
  (
    [
      'users',
      'tokens',
      'oauth_clients',
      'oauth_codes',
      'oauth_access_tokens',
      'oauth_refresh_tokens',
      'oauth_consents',
      'ripple_imported_tokens',
      'token_reveals',
      'security_log',
      'event_outbox',
      'event_outbox_state',
    ] satisfies Array<keyof Database>
  ).map((name) => [name, `${TOKEND_TABLE_PREFIX}${name}`]),
);

/** The family tables behind tokend's `users` and `tokens`, which a table of tokend's never references. */
const FAMILY_TABLES = new Set(['users', 'tokens']);

const nameOf = (node: TableNode): string => node.table.identifier.name;

const columnNameOf = (node: OperationNode): string | undefined => {
  if (node.kind === 'ReferenceNode') {
    const column = (node as unknown as { column: OperationNode }).column;
    if (column.kind === 'ColumnNode') return (column as unknown as { column: { name: string } }).column.name;
  }
  if (node.kind === 'ColumnNode') return (node as unknown as { column: { name: string } }).column.name;
  return undefined;
};

const asText = (value: unknown): unknown => (typeof value === 'number' ? String(value) : value);

/**
 * Table names → the family database's, and each value compared with a `user_id` column as text. The
 * family's `tokens.user` is text: compared with a number, MySQL casts every row's text to a number and
 * the index on `user` cannot serve (a full scan per listing); compared with the id as text it can. On
 * tokend's own tables, whose user_id is an integer, MySQL turns the text back into the same number.
 */
class InPlaceTransformer extends OperationNodeTransformer {
  protected override transformTable(node: TableNode): TableNode {
    const name = PREFIXED.get(nameOf(node));
    return name === undefined || node.table.schema !== undefined ? node : TableNode.create(name);
  }

  protected override transformUpdateQuery(node: UpdateQueryNode): UpdateQueryNode {
    const transformed = super.transformUpdateQuery(node);
    const table = node.table;
    if (table?.kind !== 'TableNode' || nameOf(table as TableNode) !== 'tokens') return transformed;
    const where = transformed.where
      ? WhereNode.create(AndNode.create(PLAIN_USER_ID_FIRST, transformed.where.where))
      : WhereNode.create(PLAIN_USER_ID_FIRST);
    return { ...transformed, where };
  }

  protected override transformBinaryOperation(node: BinaryOperationNode): BinaryOperationNode {
    const transformed = super.transformBinaryOperation(node);
    if (columnNameOf(transformed.leftOperand) !== 'user_id') return transformed;
    const right = transformed.rightOperand;
    if (right.kind === 'ValueNode')
      return { ...transformed, rightOperand: ValueNode.create(asText((right as ValueNode).value)) };
    if (right.kind === 'PrimitiveValueListNode')
      return {
        ...transformed,
        rightOperand: PrimitiveValueListNode.create((right as PrimitiveValueListNode).values.map(asText)),
      };
    return transformed;
  }
}

/**
 * The same, for migrations: a foreign key of tokend's own tables to the family's `users` or `tokens` is
 * left out. The family's programs delete users and tokens without knowing tokend's tables, and may keep
 * them in a storage engine without foreign keys; every query of tokend joins the owner or the token it
 * needs, so a row whose user or token the family deleted is never used.
 */
class InPlaceMigrationTransformer extends InPlaceTransformer {
  protected override transformColumnDefinition(node: ColumnDefinitionNode): ColumnDefinitionNode {
    const target = node.references?.table;
    const withoutFamilyKey =
      target !== undefined && FAMILY_TABLES.has(nameOf(target)) ? { ...node, references: undefined } : node;
    return super.transformColumnDefinition(withoutFamilyKey);
  }
}

/**
 * The family's `user` is text, so a row read through tokend_tokens has its `user_id` as a string: it is
 * given back as the number it is everywhere else (the view shows only ids written plainly).
 */
export function numericUserIds(rows: UnknownRow[]): void {
  for (const row of rows) if (typeof row.user_id === 'string') row.user_id = Number(row.user_id);
}

class InPlacePlugin implements KyselyPlugin {
  private readonly transformer: OperationNodeTransformer;
  constructor(transformer: OperationNodeTransformer) {
    this.transformer = transformer;
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    numericUserIds(args.result.rows);
    return args.result;
  }
}

/** The plugin of a store on a family database: tokend's table names become the prefixed ones. */
export const inPlaceTables = (): KyselyPlugin => new InPlacePlugin(new InPlaceTransformer());

/** The plugin of the in-place migrations: inPlaceTables, without foreign keys to the family's tables. */
export const inPlaceMigrationTables = (): KyselyPlugin =>
  new InPlacePlugin(new InPlaceMigrationTransformer());

/** Thrown at start when DATABASE_URL does not name a Ripple-family database. */
export class NotAFamilyDatabaseError extends Error {
  override readonly name = 'NotAFamilyDatabaseError';
}

/**
 * Refuses a database without the family's users and tokens columns (DATABASE_SCHEMA=ripple on an empty or
 * another database): one message naming what is missing.
 */
export async function checkFamilyDatabase(db: AnyDb): Promise<void> {
  const rows = await sql<{ table_name: string; column_name: string }>`
    SELECT TABLE_NAME AS table_name, COLUMN_NAME AS column_name FROM information_schema.COLUMNS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('users', 'tokens')`.execute(db);
  const present = new Set(rows.rows.map((r) => `${r.table_name}.${r.column_name}`));
  const missing = Object.entries(FAMILY_COLUMNS).flatMap(([table, columns]) =>
    columns.map((c) => `${table}.${c}`).filter((c) => !present.has(c)),
  );
  if (missing.length > 0)
    throw new NotAFamilyDatabaseError(
      `DATABASE_SCHEMA=ripple: the database of DATABASE_URL is not a Ripple-family database ` +
        `(missing ${missing.join(', ')}); point DATABASE_URL at the server's own database (the one its ` +
        `API and website use), or unset DATABASE_SCHEMA for a database of tokend's own`,
    );
}

/** The migrations of a layout, as the migrator takes them. */
export const inPlaceMigrations = (): Record<string, Migration> =>
  Object.fromEntries(IN_PLACE_MIGRATIONS.map(([name, make]) => [name, make('mysql')]));
