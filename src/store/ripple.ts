// DATABASE_SCHEMA=ripple: tokend in place on a Ripple-family server's own MySQL/MariaDB database. The
// family's `users` and `tokens` tables stay the one copy of accounts and tokens, read live at each
// request; tokend reaches them through two views named like its own tables (tokend_users, tokend_tokens),
// which rename the family's columns to tokend's, and keeps everything else it stores in tables of its own
// beside them, all named with TOKEND_TABLE_PREFIX. One Kysely plugin (inPlaceTables) gives every query,
// the per-request lookup included, the prefixed names; repositories never know which layout they run on.
//
// tokend never drops or rewrites a family table or column. What it adds to the family's `tokens` (four
// nullable or defaulted columns, three indexes) is FAMILY_CHANGES, applied by `tokend migrate` after
// `tokend migrate --dry-run` has shown it, and undone by FAMILY_CHANGES_UNDONE (docs/compatibility.md):
// those and the in-place migrations are in-place-migrations.ts; this module is the plugin.
import type { ValueListNode } from 'kysely';
import {
  AndNode,
  BinaryOperationNode,
  OperationNodeTransformer,
  OperatorNode,
  RawNode,
  WhereNode,
  type UpdateQueryNode,
  PrimitiveValueListNode,
  TableNode,
  ValueNode,
  type AliasNode,
  type ColumnDefinitionNode,
  type CreateTableNode,
  type DeleteQueryNode,
  type InsertQueryNode,
  type JoinNode,
  type SelectQueryNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  sql,
  type Kysely,
} from 'kysely';
import type { Database } from './schema.ts';
import { charsetHolds } from './charsets.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- read before the schema is known
type AnyDb = Kysely<any>;

/** Every table of tokend's own in a family database is named with this prefix (views included). */
export const TOKEND_TABLE_PREFIX = 'tokend_';

/**
 * The family's columns tokend reads and writes: a database without one of them is not a Ripple-family
 * database (import-ripple reads the same ones, src/ripple/source.ts).
 */
export const FAMILY_COLUMNS = {
  users: ['id', 'username', 'username_safe', 'privileges', 'password_md5', 'password_version'],
  tokens: ['id', 'user', 'privileges', 'description', 'token', 'private', 'last_updated'],
} as const;

/**
 * SQL: the family's `user` (text in its schema) is an id written plainly (digits, no leading zero, no
 * space). Only such a token row belongs to a user in tokend's view of the family's tokens
 * (in-place-migrations.ts); '01', '1 ' or 'abc' belong to nobody (they could otherwise become user 1 by
 * MySQL's cast of text to a number).
 */
export const plainId = (column: string): string =>
  `${column} <> '' AND ${column} NOT REGEXP '[^0-9]' AND ${column} NOT LIKE '0%' AND CHAR_LENGTH(${column}) <= 10`;

/**
 * The view's own test of `user`, put first in every UPDATE of tokend_tokens. MariaDB may weigh the
 * UPDATE's own conditions (fix_privileges compares each row's owner with `owner.id = user_id`) before
 * the merged view's, and in strict mode a text it cannot read as a number ('1abc') is an error there, not
 * a warning: one such family row would stop the whole statement.
 */
const PLAIN_USER_ID_FIRST = sql.raw(plainId('user_id')).toOperationNode();

/**
 * The character set and collation of every table tokend makes in a family database, whatever the
 * database's default (the family's is latin1, which cannot hold an application's name in Japanese, nor
 * the security log's "→"). Binary: an id or a hash matches only itself, as on SQLite and PostgreSQL.
 */
export const OWN_TABLE_CHARSET = 'utf8mb4';
export const OWN_TABLE_COLLATION = 'utf8mb4_bin';
const OWN_TABLE_OPTIONS = `DEFAULT CHARSET=${OWN_TABLE_CHARSET} COLLATE=${OWN_TABLE_COLLATION}`;

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
      'oauth_signing_keys',
      'oauth_device_codes',
      'ripple_imported_tokens',
      'token_reveals',
      'security_log',
      'event_outbox',
      'event_outbox_state',
    ] satisfies Array<keyof Database>
  ).map((name) => [name, `${TOKEND_TABLE_PREFIX}${name}`]),
);

/**
 * The family's tables behind tokend's `users` and `tokens` (the views), each with the view's text
 * columns: the family's own columns (and the ones FAMILY_CHANGES added to its `tokens`), in the
 * character set of the family's table. `user_id` is the family's `tokens.user`, the owner's id as text.
 */
export const FAMILY_TEXT_COLUMNS = {
  users: ['username', 'username_safe', 'password_hash'],
  tokens: ['user_id', 'description', 'token_hash', 'last_address', 'password_fingerprint'],
} as const satisfies { [T in 'users' | 'tokens']: ReadonlyArray<keyof Database[T]> };

type FamilyTable = keyof typeof FAMILY_TEXT_COLUMNS;

/** The character set of each text column of the views, as the family database has it: `users.username` → latin1. */
export type FamilyCharsets = ReadonlyMap<string, string>;

/** The family's own form (docs/ripple-schema.sql): every text column latin1. */
export const FAMILY_FORM_CHARSETS: FamilyCharsets = new Map(
  Object.entries(FAMILY_TEXT_COLUMNS).flatMap(([table, columns]) =>
    columns.map((column) => [`${table}.${column}`, 'latin1'] as const),
  ),
);

/**
 * The character set of each text column of the views, read once when a store opens (one query of
 * information_schema): a family database may keep its tables in latin1 (the family's own dump), or have
 * converted them (to utf8mb4, as some servers do).
 */
export async function readFamilyCharsets(db: AnyDb): Promise<FamilyCharsets> {
  const rows = await sql<{ table_name: string; column_name: string; charset: string }>`
    SELECT TABLE_NAME AS table_name, COLUMN_NAME AS column_name, CHARACTER_SET_NAME AS charset
    FROM information_schema.COLUMNS
    WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (${TOKEND_TABLE_PREFIX + 'users'}, ${TOKEND_TABLE_PREFIX + 'tokens'})
      AND CHARACTER_SET_NAME IS NOT NULL`.execute(db);
  const charsets = new Map(FAMILY_FORM_CHARSETS);
  for (const row of rows.rows) {
    const key = `${row.table_name.slice(TOKEND_TABLE_PREFIX.length)}.${row.column_name}`;
    if (charsets.has(key)) charsets.set(key, row.charset);
  }
  return charsets;
}

const nameOf = (node: TableNode): string => node.table.identifier.name;

const isFamilyTable = (name: string): name is FamilyTable => Object.hasOwn(FAMILY_TEXT_COLUMNS, name);

const familyHas = (table: FamilyTable, column: string): boolean =>
  (FAMILY_TEXT_COLUMNS[table] as readonly string[]).includes(column);

/** The tables one query (or subquery) reads: each alias or name it may qualify a column with → the table. */
type Scope = Map<string, string>;

/** Adds a FROM or JOIN item (a table, or an aliased table) to a scope; subqueries add nothing. */
function addToScope(scope: Scope, node: OperationNode | undefined): void {
  if (node === undefined) return;
  if (node.kind === 'TableNode') {
    const name = nameOf(node as TableNode);
    scope.set(name, name);
  } else if (node.kind === 'AliasNode') {
    const aliased = node as AliasNode;
    if (aliased.node.kind !== 'TableNode' || aliased.alias.kind !== 'IdentifierNode') return;
    scope.set((aliased.alias as unknown as { name: string }).name, nameOf(aliased.node as TableNode));
  }
}

const joinsOf = (joins: ReadonlyArray<JoinNode> | undefined): OperationNode[] =>
  (joins ?? []).map((join) => join.table);

/** What a comparison's operand is: a column of a family view (with its table), or anything else. */
interface FamilyColumn {
  table: FamilyTable;
  column: string;
}

/**
 * Operators under which a value the column cannot hold leaves every row in (a column never equals what
 * it cannot hold). Under every other operator (=, IN, LIKE, <, …) it leaves every row out: NULL.
 */
const DIFFERING = new Set(['!=', '<>', 'not in', 'not like', 'is not']);

/** Always true, whatever is compared: `? = ?` with 1 and 1. */
const ALWAYS = (): BinaryOperationNode =>
  BinaryOperationNode.create(ValueNode.create(1), OperatorNode.create('='), ValueNode.create(1));

/**
 * Table names → the family database's; and each value compared with one of the family's text columns
 * made one the column can take, decided once here for every query:
 * - an id compared with `user_id` goes as text. The family's `tokens.user` is text: compared with a
 *   number, MySQL casts every row's text to a number and the index on `user` cannot serve (a full scan
 *   per listing); compared with the id as text it can.
 * - a text the column's character set cannot hold (a name in Japanese against the family's latin1
 *   `username_safe`) never matches, rather than failing the statement: it becomes NULL in a comparison
 *   that looks for it (=, IN, LIKE), and the comparison is true where it looks for anything else (<>,
 *   NOT IN). The query is the same statement with the same parameters' places, so no index is lost and
 *   no query is added.
 * Only the family's tables are rewritten: a column of tokend's own tables (their `user_id` is an integer,
 * their text utf8mb4) is compared as it is. A column is the family's when it is qualified with a family
 * table (or its alias) of the query, or, unqualified, when a family table of the innermost query that
 * has it is there (SQL reads an unqualified name in the innermost query first).
 */
class InPlaceTransformer extends OperationNodeTransformer {
  private readonly charsets: FamilyCharsets;
  private readonly scopes: Scope[] = [];

  constructor(charsets: FamilyCharsets) {
    super();
    this.charsets = charsets;
  }

  private within<T>(tables: ReadonlyArray<OperationNode | undefined>, transform: () => T): T {
    const scope: Scope = new Map();
    for (const table of tables) addToScope(scope, table);
    this.scopes.push(scope);
    try {
      return transform();
    } finally {
      this.scopes.pop();
    }
  }

  protected override transformSelectQuery(node: SelectQueryNode, queryId?: QueryId): SelectQueryNode {
    return this.within([...(node.from?.froms ?? []), ...joinsOf(node.joins)], () =>
      super.transformSelectQuery(node, queryId),
    );
  }

  protected override transformDeleteQuery(node: DeleteQueryNode, queryId?: QueryId): DeleteQueryNode {
    return this.within([...node.from.froms, ...(node.using?.tables ?? []), ...joinsOf(node.joins)], () =>
      super.transformDeleteQuery(node, queryId),
    );
  }

  protected override transformInsertQuery(node: InsertQueryNode, queryId?: QueryId): InsertQueryNode {
    return this.within([node.into], () => super.transformInsertQuery(node, queryId));
  }

  protected override transformTable(node: TableNode): TableNode {
    const name = PREFIXED.get(nameOf(node));
    return name === undefined || node.table.schema !== undefined ? node : TableNode.create(name);
  }

  protected override transformUpdateQuery(node: UpdateQueryNode, queryId?: QueryId): UpdateQueryNode {
    const transformed = this.within([node.table, ...(node.from?.froms ?? []), ...joinsOf(node.joins)], () =>
      super.transformUpdateQuery(node, queryId),
    );
    const table = node.table;
    if (table?.kind !== 'TableNode' || nameOf(table as TableNode) !== 'tokens') return transformed;
    const where = transformed.where
      ? WhereNode.create(AndNode.create(PLAIN_USER_ID_FIRST, transformed.where.where))
      : WhereNode.create(PLAIN_USER_ID_FIRST);
    return { ...transformed, where };
  }

  /** The family column an operand names, or undefined (a column of tokend's own tables, a value, …). */
  private familyColumn(node: OperationNode): FamilyColumn | undefined {
    let qualifier: string | undefined;
    let column: string;
    if (node.kind === 'ReferenceNode') {
      const reference = node as unknown as { table?: TableNode; column: OperationNode };
      if (reference.column.kind !== 'ColumnNode') return undefined;
      column = (reference.column as unknown as { column: { name: string } }).column.name;
      qualifier = reference.table === undefined ? undefined : nameOf(reference.table);
    } else if (node.kind === 'ColumnNode') {
      column = (node as unknown as { column: { name: string } }).column.name;
    } else return undefined;
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const scope = this.scopes[i]!;
      if (qualifier !== undefined) {
        const table = scope.get(qualifier);
        if (table === undefined) continue;
        return isFamilyTable(table) && familyHas(table, column) ? { table, column } : undefined;
      }
      const tables = [...new Set(scope.values())];
      const family = tables.find((t): t is FamilyTable => isFamilyTable(t) && familyHas(t, column));
      if (family !== undefined) return { table: family, column };
      // a table of tokend's own here may have it: SQL reads it there
      if (tables.some((t) => !isFamilyTable(t))) return undefined;
    }
    return undefined;
  }

  /** A value as the family column takes it: an id as text; a text it cannot hold as undefined. */
  private asFamilyValue(value: unknown, column: FamilyColumn): { value: unknown } | undefined {
    if (typeof value === 'number' && column.column === 'user_id') return { value: String(value) };
    if (typeof value !== 'string') return { value };
    const charset = this.charsets.get(`${column.table}.${column.column}`) ?? 'latin1';
    return charsetHolds(charset)(value) ? { value } : undefined;
  }

  protected override transformBinaryOperation(
    node: BinaryOperationNode,
    queryId?: QueryId,
  ): BinaryOperationNode {
    const transformed = super.transformBinaryOperation(node, queryId);
    const column = this.familyColumn(node.leftOperand);
    if (column === undefined || transformed.operator.kind !== 'OperatorNode') return transformed;
    const operator = (transformed.operator as OperatorNode).operator;
    const right = transformed.rightOperand;
    if (right.kind === 'ValueNode') {
      const taken = this.asFamilyValue((right as ValueNode).value, column);
      if (taken !== undefined) return { ...transformed, rightOperand: ValueNode.create(taken.value) };
      if (DIFFERING.has(operator)) return ALWAYS();
      return { ...transformed, rightOperand: ValueNode.create(null) };
    }
    if (right.kind === 'PrimitiveValueListNode' || right.kind === 'ValueListNode') {
      const items: unknown[] =
        right.kind === 'PrimitiveValueListNode'
          ? [...(right as PrimitiveValueListNode).values]
          : (right as ValueListNode).values.map((v) => (v.kind === 'ValueNode' ? (v as ValueNode).value : v));
      if (items.some((item) => typeof item === 'object' && item !== null && 'kind' in item))
        return transformed; // a list holding expressions: left as it is
      const taken = items.map((item) => this.asFamilyValue(item, column));
      const kept = taken.filter((t) => t !== undefined).map((t) => t.value);
      if (DIFFERING.has(operator) && kept.length === 0) return ALWAYS();
      // looked for: what the column cannot hold is NULL (never equal); not looked for: left out
      const values = DIFFERING.has(operator) ? kept : taken.map((t) => (t === undefined ? null : t.value));
      return { ...transformed, rightOperand: PrimitiveValueListNode.create(values) };
    }
    return transformed;
  }
}

/**
 * The same, for migrations: a foreign key of tokend's own tables to the family's `users` or `tokens` is
 * left out, and every table tokend makes is made in utf8mb4 (OWN_TABLE_CHARSET), whatever the database's
 * default. The family's programs delete users and tokens without knowing tokend's tables, and may keep
 * them in a storage engine without foreign keys; every query of tokend joins the owner or the token it
 * needs, so a row whose user or token the family deleted is never used.
 */
class InPlaceMigrationTransformer extends InPlaceTransformer {
  constructor() {
    super(FAMILY_FORM_CHARSETS);
  }

  protected override transformColumnDefinition(
    node: ColumnDefinitionNode,
    queryId?: QueryId,
  ): ColumnDefinitionNode {
    const target = node.references?.table;
    const withoutFamilyKey =
      target !== undefined && FAMILY_TABLES.has(nameOf(target)) ? { ...node, references: undefined } : node;
    return super.transformColumnDefinition(withoutFamilyKey, queryId);
  }

  protected override transformCreateTable(node: CreateTableNode, queryId?: QueryId): CreateTableNode {
    const transformed = super.transformCreateTable(node, queryId);
    return {
      ...transformed,
      endModifiers: [...(transformed.endModifiers ?? []), RawNode.createWithSql(OWN_TABLE_OPTIONS)],
    };
  }
}

/** The family tables behind tokend's `users` and `tokens`, which a table of tokend's never references. */
const FAMILY_TABLES = new Set(['users', 'tokens']);

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
    return this.transformer.transformNode(args.node, args.queryId);
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    numericUserIds(args.result.rows);
    return args.result;
  }
}

/**
 * The plugin of a store on a family database: tokend's table names become the prefixed ones, and values
 * compared with the family's columns are ones those columns can take (`charsets`: what the database's
 * columns hold, readFamilyCharsets; the family's latin1 when not given).
 */
export const inPlaceTables = (charsets: FamilyCharsets = FAMILY_FORM_CHARSETS): KyselyPlugin =>
  new InPlacePlugin(new InPlaceTransformer(charsets));

/** The plugin of the in-place migrations: inPlaceTables, without foreign keys to the family's tables, in utf8mb4. */
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
