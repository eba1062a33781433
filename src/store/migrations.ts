// Versioned schema migrations. Kysely's Migrator records them in kysely_migration and holds a lock
// (an advisory lock on PostgreSQL, a locked row on MySQL, the write lock on SQLite) while it runs,
// so several instances starting at once against one empty database apply each migration once.
import { createHash } from 'node:crypto';
import { sql, type Kysely, type ColumnDefinitionBuilder } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { Dialect } from './types.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on today's schema type
type AnyDb = Kysely<any>;

/** An auto-incrementing integer primary key that also accepts explicit ids, on each dialect. */
function autoId(dialect: Dialect) {
  return (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder => {
    const pk = c.primaryKey().notNull();
    if (dialect === 'postgres') return pk.generatedByDefaultAsIdentity();
    if (dialect === 'mysql') return pk.autoIncrement();
    // SQLite: AUTOINCREMENT, so the id of a deleted row (e.g. a revoked token) is never handed out again.
    return pk.autoIncrement();
  };
}

export type MigrationFactory = (dialect: Dialect) => Migration;

const usersAndTokens: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('username', 'varchar(255)', (c) => c.notNull())
      .addColumn('username_safe', 'varchar(255)', (c) => c.notNull().unique())
      .addColumn('privileges', 'bigint', (c) => c.notNull())
      .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
      .addColumn('password_version', 'integer', (c) => c.notNull().defaultTo(2))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('tokens')
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('privileges', 'bigint', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
      .addColumn('private', 'smallint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_updated', 'bigint', (c) => c.notNull())
      .execute();

    // Serves the listing (user, public, ascending id) and the per-user scope of fix_privileges.
    await db.schema
      .createIndex('tokens_user_private_id')
      .on('tokens')
      .columns(['user_id', 'private', 'id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('tokens').execute();
    await db.schema.dropTable('users').execute();
  },
});

/** Optional token expiry (Unix seconds); NULL means the token never expires. */
const tokenExpiry: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('tokens').addColumn('expires_at', 'bigint').execute();
    // Serves the expiry sweep (DELETE … WHERE expires_at <= now).
    await db.schema.createIndex('tokens_expires_at').on('tokens').column('expires_at').execute();
  },
  async down(db: AnyDb) {
    const drop = db.schema.dropIndex('tokens_expires_at');
    await (dialect === 'mysql' ? drop.on('tokens') : drop).execute();
    await db.schema.alterTable('tokens').dropColumn('expires_at').execute();
  },
});

const oauth: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('oauth_clients')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey().notNull())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('avatar', 'varchar(2048)', (c) => c.notNull())
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'char(64)')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('oauth_codes')
      .addColumn('code_hash', 'char(64)', (c) => c.primaryKey().notNull())
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('code_challenge', 'varchar(128)', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used', 'smallint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens'] as const) {
      let create = db.schema
        .createTable(table)
        .addColumn('id', 'integer', autoId(dialect))
        .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
        .addColumn('client_id', 'varchar(64)', (c) =>
          c.notNull().references('oauth_clients.id').onDelete('cascade'),
        )
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('scope', 'varchar(255)', (c) => c.notNull())
        .addColumn('family', 'char(64)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull());
      if (table === 'oauth_refresh_tokens')
        create = create.addColumn('used', 'smallint', (c) => c.notNull().defaultTo(0));
      await create.execute();
      // A reused code or rotated refresh token revokes its whole family.
      await db.schema.createIndex(`${table}_family`).on(table).column('family').execute();
    }

    await db.schema
      .createTable('oauth_consents')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'client_id'])
      .execute();
  },
  async down(db: AnyDb) {
    for (const table of [
      'oauth_consents',
      'oauth_refresh_tokens',
      'oauth_access_tokens',
      'oauth_codes',
      'oauth_clients',
    ])
      await db.schema.dropTable(table).execute();
  },
});

/**
 * MySQL compares text with the column's collation, which by default folds accents ('jurgen' = 'jürgen'):
 * lookups and the unique index on username_safe must compare exactly, as on SQLite and PostgreSQL.
 */
const exactUsernames: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    if (dialect !== 'mysql') return;
    await sql`ALTER TABLE users MODIFY username_safe VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL`.execute(
      db,
    );
  },
  async down(db: AnyDb) {
    if (dialect !== 'mysql') return;
    await sql`ALTER TABLE users MODIFY username_safe VARCHAR(255) NOT NULL`.execute(db);
  },
});

/**
 * The listing filters on expires_at as well as user and visibility: with expires_at in the index, skipping
 * to a deep page reads index entries only, never table rows (bench/HISTORY.md). The new index is made first:
 * on MySQL the old one serves the foreign key on user_id until then.
 */
const listingIndex: MigrationFactory = (dialect) => {
  const swap = async (db: AnyDb, create: string, columns: string[], drop: string) => {
    await db.schema.createIndex(create).on('tokens').columns(columns).execute();
    const dropIndex = db.schema.dropIndex(drop);
    await (dialect === 'mysql' ? dropIndex.on('tokens') : dropIndex).execute();
  };
  return {
    up: (db: AnyDb) =>
      swap(
        db,
        'tokens_user_private_id_expiry',
        ['user_id', 'private', 'id', 'expires_at'],
        'tokens_user_private_id',
      ),
    down: (db: AnyDb) =>
      swap(db, 'tokens_user_private_id', ['user_id', 'private', 'id'], 'tokens_user_private_id_expiry'),
  };
};

/**
 * users.tokens_version counts every change to the set of a user's listed tokens: database triggers bump it
 * when a token is inserted or deleted, or moves between users, visibility or expiry. Whatever makes the
 * change (the API, the CLI, the expiry sweep, an import, an operator's SQL), the version moves with it, so
 * a snapshot of a user's token ids taken at one version can be trusted for as long as the version holds
 * (deep listing pages without walking the index, until migration 0010). Updates of last_updated and
 * privileges leave it alone.
 */
const tokensVersion: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('users')
      .addColumn('tokens_version', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    const bump = (userId: string) =>
      `UPDATE users SET tokens_version = tokens_version + 1 WHERE id = ${userId}`;
    if (dialect === 'sqlite') {
      await sql
        .raw(`CREATE TRIGGER tokens_version_insert AFTER INSERT ON tokens BEGIN ${bump('NEW.user_id')}; END`)
        .execute(db);
      await sql
        .raw(`CREATE TRIGGER tokens_version_delete AFTER DELETE ON tokens BEGIN ${bump('OLD.user_id')}; END`)
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_update AFTER UPDATE OF user_id, private, expires_at ON tokens ' +
            `BEGIN ${bump('OLD.user_id')}; ${bump('NEW.user_id')}; END`,
        )
        .execute(db);
    } else if (dialect === 'postgres') {
      // Inserts and deletes bump once per statement and user (a bulk load or a sweep runs one UPDATE per
      // statement, not per row); PostgreSQL allows transition tables only without a column list, so
      // updates of the three columns bump per row.
      const bumpAll = (rows: string) =>
        `UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (SELECT user_id FROM ${rows})`;
      await sql
        .raw(
          `CREATE FUNCTION tokens_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN ${bumpAll('new_tokens')};
  ELSIF TG_OP = 'DELETE' THEN ${bumpAll('old_tokens')};
  ELSE ${bump('OLD.user_id')}; ${bump('NEW.user_id')};
  END IF;
  RETURN NULL;
END $$`,
        )
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_insert AFTER INSERT ON tokens REFERENCING NEW TABLE AS new_tokens ' +
            'FOR EACH STATEMENT EXECUTE FUNCTION tokens_version_bump()',
        )
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_delete AFTER DELETE ON tokens REFERENCING OLD TABLE AS old_tokens ' +
            'FOR EACH STATEMENT EXECUTE FUNCTION tokens_version_bump()',
        )
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_update AFTER UPDATE OF user_id, private, expires_at ON tokens ' +
            'FOR EACH ROW EXECUTE FUNCTION tokens_version_bump()',
        )
        .execute(db);
    } else {
      // MySQL has no UPDATE OF: the update trigger compares the columns itself. With binary logging on,
      // creating triggers needs SUPER or log_bin_trust_function_creators=1 (docs/running-at-scale.md).
      await sql
        .raw(
          `CREATE TRIGGER tokens_version_insert AFTER INSERT ON tokens FOR EACH ROW ${bump('NEW.user_id')}`,
        )
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER tokens_version_delete AFTER DELETE ON tokens FOR EACH ROW ${bump('OLD.user_id')}`,
        )
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER tokens_version_update AFTER UPDATE ON tokens FOR EACH ROW
IF NOT (NEW.user_id <=> OLD.user_id AND NEW.private <=> OLD.private AND NEW.expires_at <=> OLD.expires_at) THEN
  ${bump('OLD.user_id')}; ${bump('NEW.user_id')};
END IF`,
        )
        .execute(db);
    }
  },
  async down(db: AnyDb) {
    for (const name of ['tokens_version_insert', 'tokens_version_delete', 'tokens_version_update'])
      await sql
        .raw(dialect === 'postgres' ? `DROP TRIGGER ${name} ON tokens` : `DROP TRIGGER ${name}`)
        .execute(db);
    if (dialect === 'postgres') await sql`DROP FUNCTION tokens_version_bump()`.execute(db);
    await db.schema.alterTable('users').dropColumn('tokens_version').execute();
  },
});

/**
 * The tokens_version triggers of 0006 without lock-order deadlocks between concurrent writers.
 * - A move of a token between two users bumps both owners in one UPDATE (rows locked in key order),
 *   not one after the other: two moves in opposite directions each waited for the other.
 * - MySQL: the insert and update triggers run BEFORE the row is written. An AFTER trigger updated the
 *   owner while the foreign key check held a shared lock on that row, so two inserts for one user each
 *   waited for the other's shared lock (InnoDB answered with a deadlock error). Before, the trigger takes
 *   the owner's row first, and the foreign key check finds it already held. (PostgreSQL's foreign key
 *   lock, FOR KEY SHARE, never conflicts with the trigger's update; SQLite has one writer at a time.)
 */
const tokensVersionLockOrder: MigrationFactory = (dialect) => {
  const bumpBoth =
    'UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (OLD.user_id, NEW.user_id)';
  const bumpOld = 'UPDATE users SET tokens_version = tokens_version + 1 WHERE id = OLD.user_id';
  const bumpNew = 'UPDATE users SET tokens_version = tokens_version + 1 WHERE id = NEW.user_id';
  const postgresFunction = (onUpdate: string) =>
    `CREATE OR REPLACE FUNCTION tokens_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (SELECT user_id FROM new_tokens);
  ELSIF TG_OP = 'DELETE' THEN UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (SELECT user_id FROM old_tokens);
  ELSE ${onUpdate};
  END IF;
  RETURN NULL;
END $$`;
  const mysqlTriggers = async (db: AnyDb, timing: 'BEFORE' | 'AFTER', onUpdate: string) => {
    for (const name of ['tokens_version_insert', 'tokens_version_update'])
      await sql.raw(`DROP TRIGGER ${name}`).execute(db);
    await sql
      .raw(`CREATE TRIGGER tokens_version_insert ${timing} INSERT ON tokens FOR EACH ROW ${bumpNew}`)
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER tokens_version_update ${timing} UPDATE ON tokens FOR EACH ROW
IF NOT (NEW.user_id <=> OLD.user_id AND NEW.private <=> OLD.private AND NEW.expires_at <=> OLD.expires_at) THEN
  ${onUpdate};
END IF`,
      )
      .execute(db);
  };
  return {
    async up(db: AnyDb) {
      if (dialect === 'postgres') await sql.raw(postgresFunction(bumpBoth)).execute(db);
      else if (dialect === 'mysql') await mysqlTriggers(db, 'BEFORE', bumpBoth);
    },
    async down(db: AnyDb) {
      if (dialect === 'postgres') await sql.raw(postgresFunction(`${bumpOld}; ${bumpNew}`)).execute(db);
      else if (dialect === 'mysql') await mysqlTriggers(db, 'AFTER', `${bumpOld}; ${bumpNew}`);
    },
  };
};

/**
 * Web sessions are their own kind of token: `session` = 1 marks the private token that a sign-in made,
 * and only such a token is a web session (an API token in the `rt` cookie is not). `password_at` is when
 * the password was last entered in that session (sudo mode). Rows that the web sign-in made before this
 * migration (private, privileges 0, expiring, described "web login") become sessions without a password
 * time, so they must enter the password again before a sensitive action.
 */
const webSessions: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('tokens')
      .addColumn('session', 'smallint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('tokens').addColumn('password_at', 'bigint').execute();
    await db
      .updateTable('tokens')
      .set({ session: 1 })
      .where('private', '=', 1)
      .where('privileges', '=', 0)
      .where('description', '=', 'web login')
      .where('expires_at', 'is not', null)
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('password_at').execute();
    await db.schema.alterTable('tokens').dropColumn('session').execute();
  },
});

/**
 * Usernames compare in Unicode NFKC, case-folded (spaces as underscores): every stored username_safe is
 * recomputed. The fold is written out here, not imported, so this migration keeps doing what it did when
 * it shipped. A user whose new key another user already holds keeps the old one (both stay reachable by
 * id; an operator renames one), so the migration never fails on data.
 */
const foldedUsernames: MigrationFactory = () => {
  const fold = (name: string) =>
    name.trim().normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replaceAll(' ', '_');
  const BATCH = 1000;
  return {
    async up(db: AnyDb) {
      const changes: Array<{ id: number; key: string }> = [];
      for (let after = -1; ;) {
        const rows = (await db
          .selectFrom('users')
          .select(['id', 'username', 'username_safe'])
          .where('id', '>', after)
          .orderBy('id')
          .limit(BATCH)
          .execute()) as Array<{ id: number; username: string; username_safe: string }>;
        for (const row of rows) {
          const key = fold(row.username);
          if (key !== row.username_safe) changes.push({ id: row.id, key });
        }
        if (rows.length < BATCH) break;
        after = rows[rows.length - 1]!.id;
      }
      for (const change of changes) {
        const holder = await db
          .selectFrom('users')
          .select('id')
          .where('username_safe', '=', change.key)
          .executeTakeFirst();
        if (!holder)
          await db
            .updateTable('users')
            .set({ username_safe: change.key })
            .where('id', '=', change.id)
            .execute();
      }
    },
    async down() {
      // The older keys were lower-cased only; the folded ones still find every ASCII name. Nothing to undo.
    },
  };
};

/**
 * Without the listing snapshots (a user holds at most TOKENS_PER_USER_MAX tokens, and a deep page reads its
 * offset from the listing index alone), nothing reads users.tokens_version: its triggers and the column go,
 * and every write of a token is one statement again. Down restores them as 0006 and 0007 left them.
 *
 * Upgrade note: an instance of an older version still running reads the column on every authenticated
 * request; stop older instances before the first instance of this version starts (docs/running-at-scale.md).
 */
const dropTokensVersion: MigrationFactory = (dialect) => ({
  up: (db: AnyDb) => tokensVersion(dialect).down!(db),
  async down(db: AnyDb) {
    await tokensVersion(dialect).up(db);
    await tokensVersionLockOrder(dialect).up(db);
  },
});

/**
 * The ids and legacy hashes of the tokens `tokend import-ripple` brought over, kept after a token is
 * deleted (no foreign key): a token revoked in tokend, or its secret, is not brought back by the next
 * import.
 */
const rippleImportedTokens: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('ripple_imported_tokens')
      .addColumn('id', 'integer', (c) => c.primaryKey().notNull())
      .addColumn('token_hash', 'varchar(64)', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('ripple_imported_tokens_hash')
      .on('ripple_imported_tokens')
      .column('token_hash')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('ripple_imported_tokens').execute();
  },
});

/**
 * What the bounds on OAuth rows and their sweep read (src/oauth/issue.ts, src/oauth/repository.ts):
 * - a user's live grants (unrotated refresh tokens), per application and in all, newest first; a user's
 *   unexchanged codes likewise. Rows of other states and users are never visited, and the count per user
 *   that is sorted is at most the bound itself;
 * - a user's access tokens per application (connected applications, revoking one application);
 * - expires_at on each table, so that the sweep deletes in batches without reading the whole table.
 * A rotated refresh token is kept a day from its rotation (SPENT_REFRESH_TOKEN_KEEP_S), its expires_at
 * then marking the end of that window; the ones rotated before this migration are kept a day from it.
 */
const oauthBounds: MigrationFactory = (dialect) => {
  const indexes: ReadonlyArray<readonly [string, string, string[]]> = [
    ['oauth_refresh_tokens_live', 'oauth_refresh_tokens', ['user_id', 'used', 'client_id', 'id']],
    ['oauth_refresh_tokens_expires_at', 'oauth_refresh_tokens', ['expires_at']],
    ['oauth_access_tokens_user_client', 'oauth_access_tokens', ['user_id', 'client_id']],
    ['oauth_access_tokens_expires_at', 'oauth_access_tokens', ['expires_at']],
    ['oauth_codes_live', 'oauth_codes', ['user_id', 'used', 'client_id', 'created_at']],
    ['oauth_codes_expires_at', 'oauth_codes', ['expires_at']],
  ];
  return {
    async up(db: AnyDb) {
      const keepUntil = Math.floor(Date.now() / 1000) + 24 * 3600;
      await db
        .updateTable('oauth_refresh_tokens')
        .set({ expires_at: keepUntil })
        .where('used', '=', 1)
        .where('expires_at', '>', keepUntil)
        .execute();
      for (const [name, table, columns] of indexes)
        await db.schema.createIndex(name).on(table).columns(columns).execute();
    },
    async down(db: AnyDb) {
      for (const [name, table, columns] of [...indexes].reverse()) {
        // MySQL may have dropped the index it made for the foreign key on user_id once one of these could
        // serve it: a plain one takes over first.
        if (dialect === 'mysql' && columns[0] === 'user_id')
          await db.schema.createIndex(`${table}_user_id`).on(table).column('user_id').execute();
        const drop = db.schema.dropIndex(name);
        await (dialect === 'mysql' ? drop.on(table) : drop).execute();
      }
    },
  };
};

/**
 * When each token was made. last_updated is the creation time until the token's first use, so a token whose
 * last_updated still equals created_at was never used (the token page says so). Tokens made before this
 * migration keep NULL: their creation time is not known, and neither is whether they were used.
 */
const tokenCreatedAt: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('tokens').addColumn('created_at', 'bigint').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('created_at').execute();
  },
});

/**
 * The secret of a token just made on the token page, kept until the page it is shown on is loaded once:
 * encrypted with a key only the browser's session cookie gives (the database holds the session's hash,
 * never the cookie), one row per session, removed with the session or the token.
 */
const tokenReveals: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('token_reveals')
      .addColumn('session_id', 'integer', (c) =>
        c.primaryKey().notNull().references('tokens.id').onDelete('cascade'),
      )
      .addColumn('token_id', 'integer', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
      .addColumn('sealed', 'varchar(255)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // Serves the cascade when a token is deleted (MySQL makes one for the foreign key itself).
    if (dialect !== 'mysql')
      await db.schema.createIndex('token_reveals_token_id').on('token_reveals').column('token_id').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('token_reveals').execute();
  },
});

/**
 * How many times each authorization code was presented with its proofs (redirect_uri, code_verifier):
 * past CODE_ATTEMPTS_MAX (src/oauth/issue.ts) it can no longer be exchanged. Codes made before this
 * migration start at 0.
 */
const oauthCodeAttempts: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('oauth_codes')
      .addColumn('attempts', 'smallint', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('oauth_codes').dropColumn('attempts').execute();
  },
});

/**
 * One owner's applications have different names (src/oauth/clients.ts `clientNameKey`): each gets the key
 * its name compares by, and a unique index on (owner_id, name_key) holds the rule for every writer
 * whatever the database's collation (MySQL/MariaDB would otherwise compare names case- and
 * accent-insensitively, SQLite and PostgreSQL exactly). The key is a SHA-256 hex digest, so its length
 * is fixed however long the name's normal form grows. Applications registered before this migration
 * may share a name: the oldest of each keeps it, the others become "Name (2)", "Name (3)" … Also an index
 * on oauth_consents.client_id: the applications page counts each application's users, and a deleted
 * application's approvals are found by it.
 */
const oauthClientOwners: MigrationFactory = (dialect) => {
  // The rule of src/oauth/clients.ts `clientNameKey` (src/users/username.ts `usernameSafe`, hashed) as
  // this migration shipped it: the store may not import the folders above it, and a migration never changes.
  const keyOf = (name: string): string =>
    createHash('sha256')
      .update(
        name.trim().normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replaceAll(' ', '_'),
      )
      .digest('hex');
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('oauth_clients').addColumn('name_key', 'char(64)').execute();
      let after = '';
      for (;;) {
        const rows = (await db
          .selectFrom('oauth_clients')
          .select(['id', 'name'])
          .where('id', '>', after)
          .orderBy('id')
          .limit(500)
          .execute()) as Array<{ id: string; name: string }>;
        for (const row of rows)
          await db
            .updateTable('oauth_clients')
            .set({ name_key: keyOf(row.name) })
            .where('id', '=', row.id)
            .execute();
        if (rows.length < 500) break;
        after = rows[rows.length - 1]!.id;
      }
      const shared = (await db
        .selectFrom('oauth_clients')
        .select(['owner_id', 'name_key'])
        .groupBy(['owner_id', 'name_key'])
        .having((eb) => eb.fn.countAll(), '>', 1)
        .execute()) as Array<{ owner_id: number; name_key: string }>;
      for (const group of shared) {
        const rows = (await db
          .selectFrom('oauth_clients')
          .select(['id', 'name'])
          .where('owner_id', '=', group.owner_id)
          .where('name_key', '=', group.name_key)
          .orderBy('created_at')
          .orderBy('id')
          .execute()) as Array<{ id: string; name: string }>;
        for (const row of rows.slice(1)) {
          for (let n = 2; ; n++) {
            const suffix = ` (${n})`;
            const name = `${[...row.name].slice(0, 255 - suffix.length).join('')}${suffix}`;
            const key = keyOf(name);
            const taken = await db
              .selectFrom('oauth_clients')
              .select('id')
              .where('owner_id', '=', group.owner_id)
              .where('name_key', '=', key)
              .executeTakeFirst();
            if (taken) continue;
            await db
              .updateTable('oauth_clients')
              .set({ name, name_key: key })
              .where('id', '=', row.id)
              .execute();
            break;
          }
        }
      }
      await db.schema
        .createIndex('oauth_clients_owner_name')
        .on('oauth_clients')
        .columns(['owner_id', 'name_key'])
        .unique()
        .execute();
      await db.schema.createIndex('oauth_consents_client').on('oauth_consents').column('client_id').execute();
    },
    async down(db: AnyDb) {
      const dropOn = (name: string, table: string) => {
        const drop = db.schema.dropIndex(name);
        return (dialect === 'mysql' ? drop.on(table) : drop).execute();
      };
      // MySQL may have let these serve the foreign keys on owner_id and client_id: plain ones take over first.
      if (dialect === 'mysql') {
        await db.schema
          .createIndex('oauth_clients_owner_id')
          .on('oauth_clients')
          .column('owner_id')
          .execute();
        await db.schema
          .createIndex('oauth_consents_client_id')
          .on('oauth_consents')
          .column('client_id')
          .execute();
      }
      await dropOn('oauth_consents_client', 'oauth_consents');
      await dropOn('oauth_clients_owner_name', 'oauth_clients');
      await db.schema.alterTable('oauth_clients').dropColumn('name_key').execute();
    },
  };
};

/**
 * An access token may belong to no user: the client credentials grant (RFC 6749 §4.4) gives an application
 * a token for itself (src/oauth/grants/client-credentials.ts). oauth_access_tokens.user_id becomes
 * nullable; every query that reads a user's tokens asks for `user_id = ?`, which a NULL never matches.
 * PostgreSQL and MySQL alter the column in place (its foreign key stays); SQLite cannot, so its table is
 * made again under the same name with the same columns, rows (ids kept), indexes and id sequence.
 * `down` deletes the user-less tokens and makes the column NOT NULL again.
 */
const clientCredentials: MigrationFactory = (dialect) => {
  const table = 'oauth_access_tokens';
  const indexes: ReadonlyArray<readonly [string, string[]]> = [
    ['oauth_access_tokens_family', ['family']],
    ['oauth_access_tokens_user_client', ['user_id', 'client_id']],
    ['oauth_access_tokens_expires_at', ['expires_at']],
  ];
  const rebuildOnSqlite = async (db: AnyDb, userIdNullable: boolean) => {
    const temporary = `${table}_0017`;
    await db.schema
      .createTable(temporary)
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) => {
        const column = c.references('users.id').onDelete('cascade');
        return userIdNullable ? column : column.notNull();
      })
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('family', 'char(64)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    const columns = [
      'id',
      'token_hash',
      'client_id',
      'user_id',
      'scope',
      'family',
      'created_at',
      'expires_at',
    ];
    await db
      .insertInto(temporary)
      .columns(columns)
      .expression(db.selectFrom(table).select(columns))
      .execute();
    // AUTOINCREMENT: ids of deleted tokens are never given again, so the sequence goes along.
    const sequence = await db
      .selectFrom('sqlite_sequence')
      .select('seq')
      .where('name', '=', table)
      .executeTakeFirst();
    await db.schema.dropTable(table).execute();
    await db.schema.alterTable(temporary).renameTo(table).execute();
    if (sequence !== undefined) {
      await db.deleteFrom('sqlite_sequence').where('name', '=', table).execute();
      await db.insertInto('sqlite_sequence').values({ name: table, seq: sequence.seq }).execute();
    }
    for (const [name, columns] of indexes)
      await db.schema.createIndex(name).on(table).columns(columns).execute();
  };
  return {
    async up(db: AnyDb) {
      if (dialect === 'postgres')
        await db.schema
          .alterTable(table)
          .alterColumn('user_id', (c) => c.dropNotNull())
          .execute();
      else if (dialect === 'mysql')
        await db.schema.alterTable(table).modifyColumn('user_id', 'integer').execute();
      else await rebuildOnSqlite(db, true);
    },
    async down(db: AnyDb) {
      await db.deleteFrom(table).where('user_id', 'is', null).execute();
      if (dialect === 'postgres')
        await db.schema
          .alterTable(table)
          .alterColumn('user_id', (c) => c.setNotNull())
          .execute();
      else if (dialect === 'mysql')
        await db.schema
          .alterTable(table)
          .modifyColumn('user_id', 'integer', (c) => c.notNull())
          .execute();
      else await rebuildOnSqlite(db, false);
    },
  };
};

/**
 * The security log (src/auth/security-log.ts; its columns in docs/security-log.md), newest first per user
 * and swept by age, and the address each token was last used from (written with its last use, in the
 * same batched statement). Both only add: nothing existing changes, and `last_address` is nullable with
 * no default, so a tokens table shared with another program keeps working.
 */
/** The security log's table alone: what the in-place mode runs of 0018 (src/store/ripple.ts). */
export const securityLogTable: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('security_log')
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('kind', 'varchar(32)', (c) => c.notNull())
      .addColumn('means', 'varchar(16)', (c) => c.notNull())
      .addColumn('means_id', 'varchar(64)')
      .addColumn('token_id', 'integer')
      .addColumn('client_id', 'varchar(255)')
      .addColumn('detail', 'varchar(255)')
      .addColumn('address', 'varchar(64)')
      .addColumn('user_agent', 'varchar(160)')
      .execute();
    // A user's log, newest first (the page, `tokend audit --user`), paged by id.
    await db.schema
      .createIndex('security_log_user_id')
      .on('security_log')
      .columns(['user_id', 'id'])
      .execute();
    // The retention sweep and `tokend audit --since`.
    await db.schema.createIndex('security_log_at').on('security_log').column('at').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('security_log').execute();
  },
});

const securityLog: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await securityLogTable(dialect).up(db);
    await db.schema.alterTable('tokens').addColumn('last_address', 'varchar(64)').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('last_address').execute();
    await securityLogTable(dialect).down!(db);
  },
});

/**
 * The fingerprint of the password a web session was opened with (src/auth/secret.ts passwordFingerprint):
 * a session ends when its owner's password changes, whoever changes it. Nullable with no default: API
 * tokens have none, and a session opened before it keeps working until it expires.
 */
const sessionPassword: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('tokens').addColumn('password_fingerprint', 'varchar(16)').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('password_fingerprint').execute();
  },
});

/**
 * The events channel's outbox (src/auth/event-outbox.ts): each event published on Redis is written here
 * in the transaction of the change it announces and deleted once published, so that nothing is published
 * before its change commits and nothing committed goes unpublished. `event_outbox_state` holds the last
 * event id given (`sequence`: ids follow commit order) and the lease of the process publishing (`drain`).
 */
const eventOutbox: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('event_outbox')
      .addColumn('id', 'bigint', (c) => c.primaryKey().notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('event_outbox_state')
      .addColumn('name', 'varchar(16)', (c) => c.primaryKey().notNull())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .addColumn('holder', 'varchar(64)')
      .execute();
    await db
      .insertInto('event_outbox_state')
      .values([
        // Ids start at this moment in milliseconds: a database made later (a move with tokend export and
        // import, a new in-place install) gives ids above an earlier one's, which gave fewer events than
        // milliseconds went by, so a subscriber that keeps the highest id it saw drops none of the new.
        { name: 'sequence', value: Date.now(), holder: null },
        { name: 'drain', value: 0, holder: null },
      ])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('event_outbox_state').execute();
    await db.schema.dropTable('event_outbox').execute();
  },
});

/**
 * The security log's bounds and who acted: `actor_id` (the account whose credential acted, so that a
 * user's page can say "an administrator" when it was not them), `repeats` (a summary row's count of the
 * failed sign-ins beyond the per-account bound), and the index that finds an account's failed sign-ins
 * of the current window. Nullable columns: rows written before keep their meaning.
 */
const securityLogBounds: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    // One column a statement: SQLite adds one at a time.
    await db.schema.alterTable('security_log').addColumn('actor_id', 'integer').execute();
    await db.schema.alterTable('security_log').addColumn('repeats', 'integer').execute();
    await db.schema
      .createIndex('security_log_user_kind_at')
      .on('security_log')
      .columns(['user_id', 'kind', 'at'])
      .execute();
  },
  async down(db: AnyDb) {
    const drop = db.schema.dropIndex('security_log_user_kind_at');
    await (dialect === 'mysql' ? drop.on('security_log') : drop).execute();
    await db.schema.alterTable('security_log').dropColumn('repeats').execute();
    await db.schema.alterTable('security_log').dropColumn('actor_id').execute();
  },
});

/**
 * OpenID Connect (src/oauth/oidc.ts): the keys that sign id_tokens (src/oauth/signing-keys.ts), one row
 * per key, `generation` unique so that two instances making the first key at once, or two rotations at
 * once, make one; a code remembers the nonce of its authorization request and when the user signed in
 * (auth_time); a refresh token remembers that sign-in too, for the id_token of a refresh. All additions:
 * nullable columns, a new table.
 */
const openidConnect: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('oauth_signing_keys')
      .addColumn('kid', 'varchar(64)', (c) => c.primaryKey().notNull())
      .addColumn('generation', 'integer', (c) => c.notNull().unique())
      .addColumn('alg', 'varchar(16)', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('private_jwk', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('active_from', 'bigint', (c) => c.notNull())
      .execute();
    // One column per statement: SQLite adds one at a time.
    await db.schema.alterTable('oauth_codes').addColumn('nonce', 'varchar(255)').execute();
    await db.schema.alterTable('oauth_codes').addColumn('auth_time', 'bigint').execute();
    await db.schema.alterTable('oauth_refresh_tokens').addColumn('auth_time', 'bigint').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('oauth_refresh_tokens').dropColumn('auth_time').execute();
    await db.schema.alterTable('oauth_codes').dropColumn('auth_time').execute();
    await db.schema.alterTable('oauth_codes').dropColumn('nonce').execute();
    await db.schema.dropTable('oauth_signing_keys').execute();
  },
});

/**
 * The device authorization grant (RFC 8628, src/oauth/device.ts): one row per device code, found by its
 * hash or by its user code's hash (unique), until it expires and the sweep deletes it.
 */
const deviceCodes: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('oauth_device_codes')
      .addColumn('device_code_hash', 'char(64)', (c) => c.primaryKey().notNull())
      .addColumn('user_code_hash', 'char(64)', (c) => c.notNull().unique())
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('auth_time', 'bigint')
      .addColumn('interval_s', 'integer', (c) => c.notNull())
      .addColumn('polled_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    // The sweep; an application's pending codes; a user's approved ones not yet exchanged (the bounds).
    const index = (name: string, columns: string[]) =>
      db.schema.createIndex(name).on('oauth_device_codes').columns(columns).execute();
    await index('oauth_device_codes_expires_at', ['expires_at']);
    await index('oauth_device_codes_client', ['client_id', 'status']);
    await index('oauth_device_codes_user', ['user_id', 'status']);
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('oauth_device_codes').execute();
  },
});

/** Every migration, in order. Names sort in application order; never rename or edit one that shipped. */
export const MIGRATIONS: ReadonlyArray<readonly [string, MigrationFactory]> = [
  ['0001_users_tokens', usersAndTokens],
  ['0002_oauth', oauth],
  ['0003_token_expiry', tokenExpiry],
  ['0004_exact_usernames', exactUsernames],
  ['0005_listing_index', listingIndex],
  ['0006_tokens_version', tokensVersion],
  ['0007_tokens_version_lock_order', tokensVersionLockOrder],
  ['0008_web_sessions', webSessions],
  ['0009_folded_usernames', foldedUsernames],
  ['0010_drop_tokens_version', dropTokensVersion],
  ['0011_ripple_imported_tokens', rippleImportedTokens],
  ['0012_oauth_bounds', oauthBounds],
  ['0013_token_created_at', tokenCreatedAt],
  ['0014_token_reveals', tokenReveals],
  ['0015_oauth_code_attempts', oauthCodeAttempts],
  ['0016_oauth_client_owners', oauthClientOwners],
  ['0017_client_credentials', clientCredentials],
  ['0018_security_log', securityLog],
  ['0019_session_password', sessionPassword],
  ['0020_event_outbox', eventOutbox],
  ['0021_security_log_bounds', securityLogBounds],
  ['0022_openid_connect', openidConnect],
  ['0023_device_codes', deviceCodes],
];

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
