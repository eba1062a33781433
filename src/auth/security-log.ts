// The security log, in one place: what happened to an account, when, by which means and from where
// (docs/security-log.md holds the table's columns for operators). Every event is recorded by the one
// function of its rule (mintToken, the revocations, the login check, …) through `recordEvent`; a
// revocation or a privilege change is also published on `<REDIS_KEY_PREFIX>events` (the versioned shape
// is `PublishedEvent`) for the rest of the server, once its change has committed: it is written to the
// outbox in the change's transaction (`withEvents`) and published after (src/auth/event-outbox.ts).
// Nothing here ever sees a secret, a password or a hash: an event carries ids, a kind, a reason, an
// address and a shortened user agent.
import type { Selectable } from 'kysely';
import type { Db } from '../store/database.ts';
import type { SecurityLogTable } from '../store/schema.ts';
import { deleteInBatches } from '../store/batches.ts';
import type { EventToPublish } from './event-outbox.ts';

/** Each kind of event, and how the security page names it. */
export const EVENT_KINDS = {
  'signin.succeeded': 'Signed in',
  'signin.failed': 'Sign-in failed',
  'sudo.confirmed': 'Password confirmed',
  'token.created': 'Token created',
  'token.revoked': 'Token revoked',
  'token.edited': 'Token edited',
  'session.ended': 'Signed out',
  'app.authorized': 'Application authorized',
  'app.withdrawn': 'Application access withdrawn',
  'grant.revoked': "Application's tokens revoked",
  'app.registered': 'Application registered',
  'app.secret_rotated': 'Application secret rotated',
  'app.deleted': 'Application deleted',
  'password.changed': 'Password changed',
  'privileges.changed': 'Privileges changed',
  'signout.everywhere': 'Signed out everywhere',
  'device.code_refused': 'Device code not accepted',
  'device.approved': 'Device sign-in approved',
  'device.denied': 'Device sign-in denied',
  'device.signed_in': 'Device signed in',
} as const;
export type EventKind = keyof typeof EVENT_KINDS;

export const isEventKind = (value: string): value is EventKind => Object.hasOwn(EVENT_KINDS, value);

/** The kinds that end a credential or change what one may do: published on the events channel too. */
const PUBLISHED: ReadonlySet<EventKind> = new Set<EventKind>([
  'token.revoked',
  'token.edited',
  'session.ended',
  'app.withdrawn',
  'grant.revoked',
  'app.deleted',
  'app.secret_rotated',
  'password.changed',
  'privileges.changed',
  'signout.everywhere',
]);

/** How an act reached tokend. */
export type Means = 'api' | 'web' | 'oauth' | 'cli' | 'import' | 'expiry';

/**
 * Where published events go: the outbox, published on Redis after the commit (OutboxEvents,
 * src/auth/event-outbox.ts), or nowhere without REDIS_URL (NO_EVENTS).
 */
export interface EventSink {
  /** `trx` keeps its events until its flush (withEvents opens it). */
  begin(trx: Db): void;
  /**
   * Keeps events to publish once `db`'s transaction commits: until its flush when `begin` opened it,
   * else written to the outbox at once, in it.
   */
  keep(db: Db, events: readonly EventToPublish[], at: number): Promise<void>;
  /** Writes what `trx` kept to the outbox: its last statements. */
  flush(trx: Db, at: number): Promise<void>;
  /** Publishes what the outbox holds, after a commit. Never rejects. */
  drain(): Promise<void>;
}

export const NO_EVENTS: EventSink = {
  begin: () => undefined,
  keep: async () => undefined,
  flush: async () => undefined,
  drain: async () => undefined,
};

/**
 * Runs `change` in one transaction whose published events go out only once it has committed: they are
 * written to the outbox as its last statements (in commit order) and the outbox is drained after the
 * commit, without waiting for Redis. A transaction that rolls back publishes nothing. Inside a
 * transaction already, `change` runs in it, and whoever opened that one publishes.
 */
export async function withEvents<T>(db: Db, act: Act, change: (trx: Db) => Promise<T>): Promise<T> {
  if (db.isTransaction) return change(db);
  const sink = act.events;
  const result = await db.transaction().execute(async (trx) => {
    sink.begin(trx);
    const value = await change(trx);
    await sink.flush(trx, act.at);
    return value;
  });
  void sink.drain();
  return result;
}

/** Who acted, how, from where and when: what every event of one act shares. */
export interface Act {
  means: Means;
  /** what acted: the API token's id, the web session's id, the application's client id; null otherwise */
  by: string | number | null;
  /**
   * the account whose credential acted (the API token's or the web session's owner); null outside a
   * request, for an application, or a password login (no credential yet)
   */
  actor: number | null;
  /** the client address, canonical (src/http/client-address.ts); null outside a request */
  address: string | null;
  /** the User-Agent, shortened (`shortUserAgent`); null outside a request or without one */
  userAgent: string | null;
  /** Unix seconds, from the app's clock */
  at: number;
  events: EventSink;
}

/** The act of the CLI, an import or a sweep: no request, so no address or user agent. */
export const actOutsideRequest = (means: Means, at: number, events: EventSink = NO_EVENTS): Act => ({
  means,
  by: null,
  actor: null,
  address: null,
  userAgent: null,
  at,
  events,
});

/** What one event says beyond its act. */
export interface SecurityEvent {
  userId: number;
  kind: EventKind;
  tokenId?: number | null;
  /** the ids of every token the event ended, for the published event (the log row holds `tokenId`) */
  tokenIds?: readonly number[];
  clientId?: string | null;
  detail?: string | null;
}

/**
 * The published shape, version 1 (docs/security-log.md): never a secret, a hash or an address. Fields
 * that do not apply are left out.
 */
export interface PublishedEvent {
  v: 1;
  /** increasing in commit order, never given twice: a subscriber drops an id it has seen */
  id: number;
  kind: EventKind;
  user_id: number;
  token_ids?: number[];
  client_id?: string;
  reason?: string;
  /** Unix seconds */
  at: number;
}

/** Longest stored user agent, in characters. */
export const USER_AGENT_MAX = 120;

/** A User-Agent as the log keeps it: printable, single-spaced, at most USER_AGENT_MAX characters. */
export function shortUserAgent(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const text = raw
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return null;
  return text.length > USER_AGENT_MAX ? `${text.slice(0, USER_AGENT_MAX - 1)}…` : text;
}

const asText = (value: string | number | null): string | null => (value === null ? null : String(value));

/**
 * Records events of one act: one INSERT of every row, on `db` (inside the caller's transaction, when it
 * is one); the published ones are kept for the events channel, in the same transaction (`withEvents`:
 * on a plain handle, the rows and the outbox are written in one of their own).
 */
export async function recordEvents(db: Db, act: Act, events: readonly SecurityEvent[]): Promise<void> {
  const toPublish = events.filter((e) => PUBLISHED.has(e.kind)).map((e) => published(act, e));
  if (toPublish.length > 0 && !db.isTransaction)
    return withEvents(db, act, (trx) => recordEvents(trx, act, events));
  for (let i = 0; i < events.length; i += INSERT_BATCH)
    await insertEvents(db, act, events.slice(i, i + INSERT_BATCH));
  if (toPublish.length > 0) await act.events.keep(db, toPublish, act.at);
}

/** Rows per INSERT (the expiry sweep records a batch at once): far within every dialect's parameters. */
const INSERT_BATCH = 1000;

async function insertEvents(db: Db, act: Act, events: readonly SecurityEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('security_log')
    .values(
      events.map((e) => ({
        at: act.at,
        user_id: e.userId,
        kind: e.kind,
        means: act.means,
        means_id: asText(act.by),
        token_id: e.tokenId ?? null,
        client_id: e.clientId ?? null,
        detail: e.detail ?? null,
        address: act.address,
        user_agent: act.userAgent,
        actor_id: act.actor,
      })),
    )
    .execute();
}

export const recordEvent = (db: Db, act: Act, event: SecurityEvent): Promise<void> =>
  recordEvents(db, act, [event]);

function published(act: Act, e: SecurityEvent): EventToPublish {
  const tokenIds = e.tokenIds ?? (e.tokenId === undefined || e.tokenId === null ? undefined : [e.tokenId]);
  return {
    v: 1,
    kind: e.kind,
    user_id: e.userId,
    ...(tokenIds === undefined ? {} : { token_ids: [...tokenIds] }),
    ...(e.clientId ? { client_id: e.clientId } : {}),
    ...(e.detail ? { reason: e.detail } : {}),
    at: act.at,
  };
}

/** The Redis channel of published events. */
export const eventsChannel = (redisKeyPrefix: string): string => `${redisKeyPrefix}events`;

/** Failed sign-ins recorded per address per window, on one instance (the cap is documented). */
export const FAILED_SIGN_INS_PER_WINDOW = 20;
/** The window of that cap, in seconds. */
export const FAILED_SIGN_IN_WINDOW_S = 600;
/** Addresses remembered per window; beyond it, a new address's failures are not recorded either. */
const FAILED_SIGN_IN_ADDRESSES_MAX = 10_000;

/**
 * The cap on failed sign-ins recorded from one address: at most FAILED_SIGN_INS_PER_WINDOW rows per
 * address in each FAILED_SIGN_IN_WINDOW_S window on one instance, the last of them saying that more are
 * not recorded. The window's counts are forgotten at its end (bounded memory), and the addresses
 * remembered in one window are bounded too.
 */
export class FailedSignIns {
  private window = -1;
  private counts = new Map<string, number>();

  /** The detail to record this failure with, or undefined when the address is past its cap. */
  admit(address: string, at: number, reason: string): string | undefined {
    const window = Math.floor(at / FAILED_SIGN_IN_WINDOW_S);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const seen = this.counts.get(address) ?? 0;
    if (seen >= FAILED_SIGN_INS_PER_WINDOW) return undefined;
    if (seen === 0 && this.counts.size >= FAILED_SIGN_IN_ADDRESSES_MAX) return undefined;
    this.counts.set(address, seen + 1);
    return seen + 1 === FAILED_SIGN_INS_PER_WINDOW
      ? `${reason}; more from this address not recorded`
      : reason;
  }
}

/** Failed sign-ins of one account listed one by one per FAILED_SIGN_IN_WINDOW_S window, from every address. */
export const FAILED_SIGN_INS_PER_ACCOUNT = 20;

/** The detail of the row that counts an account's failed sign-ins beyond FAILED_SIGN_INS_PER_ACCOUNT. */
export const MORE_FAILED_SIGN_INS = 'more attempts';

/**
 * Records a refused sign-in of an existing account (the detail as FailedSignIns admitted it): one row
 * each, up to FAILED_SIGN_INS_PER_ACCOUNT in the account's current window (aligned on
 * FAILED_SIGN_IN_WINDOW_S), whatever the addresses; beyond that, one row of the window counts the rest
 * (`repeats`, detail MORE_FAILED_SIGN_INS, no address or user agent: they come from many clients). So a
 * flood against one account from many addresses adds at most FAILED_SIGN_INS_PER_ACCOUNT + 1 rows per
 * window (a few more when attempts race each other across instances).
 */
export async function recordFailedSignIn(db: Db, act: Act, userId: number, detail: string): Promise<void> {
  const windowStart = Math.floor(act.at / FAILED_SIGN_IN_WINDOW_S) * FAILED_SIGN_IN_WINDOW_S;
  const inWindow = db
    .selectFrom('security_log')
    .where('user_id', '=', userId)
    .where('kind', '=', 'signin.failed')
    .where('at', '>=', windowStart);
  const listed = await inWindow
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('repeats', 'is', null)
    .executeTakeFirstOrThrow();
  if (listed.n < FAILED_SIGN_INS_PER_ACCOUNT)
    return recordEvent(db, act, { userId, kind: 'signin.failed', detail });
  const counted = await db
    .updateTable('security_log')
    .set((eb) => ({ repeats: eb('repeats', '+', 1) }))
    .where('user_id', '=', userId)
    .where('kind', '=', 'signin.failed')
    .where('at', '>=', windowStart)
    .where('repeats', 'is not', null)
    .executeTakeFirst();
  if (Number(counted.numUpdatedRows) > 0) return;
  await db
    .insertInto('security_log')
    .values({
      at: act.at,
      user_id: userId,
      kind: 'signin.failed',
      means: act.means,
      means_id: null,
      token_id: null,
      client_id: null,
      detail: MORE_FAILED_SIGN_INS,
      address: null,
      user_agent: null,
      actor_id: null,
      repeats: 1,
    })
    .execute();
}

/** A stored event, as the page and `tokend audit` show it (the columns of docs/security-log.md). */
export type LoggedEvent = Selectable<SecurityLogTable>;

export interface EventQuery {
  userId?: number;
  kind?: EventKind;
  /** Unix seconds: events at or after */
  since?: number;
  /** only events with a smaller id (the next page of a newest-first list) */
  beforeId?: number;
  limit: number;
}

/** Events newest first (by id), filtered. */
export async function listEvents(db: Db, query: EventQuery): Promise<LoggedEvent[]> {
  let q = db.selectFrom('security_log').selectAll();
  if (query.userId !== undefined) q = q.where('user_id', '=', query.userId);
  if (query.kind !== undefined) q = q.where('kind', '=', query.kind);
  if (query.since !== undefined) q = q.where('at', '>=', query.since);
  if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
  return q.orderBy('id', 'desc').limit(query.limit).execute();
}

/** Deletes the events older than `days` days before `now`, in short statements; returns how many. */
export function deleteOldEvents(db: Db, now: number, days: number): Promise<number> {
  const before = now - days * 86_400;
  return deleteInBatches(
    async (limit) =>
      (await db.selectFrom('security_log').select('id').where('at', '<', before).limit(limit).execute()).map(
        (r) => r.id,
      ),
    async (ids) =>
      Number((await db.deleteFrom('security_log').where('id', 'in', ids).executeTakeFirst()).numDeletedRows),
  );
}
