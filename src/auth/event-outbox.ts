// The events channel's outbox: how an event reaches `<REDIS_KEY_PREFIX>events` only once the change it
// announces has committed, in commit order, at least once (docs/security-log.md, "Delivery").
//
// - Written in the change's own transaction (withEvents, src/auth/security-log.ts), as its last
//   statements: the event's id comes from one counter row (`event_outbox_state`, name `sequence`), locked
//   until the commit, so ids follow commit order and an id is never given twice; a transaction that rolls
//   back leaves neither its change nor its events.
// - Published after the commit by the process that committed (`drain`, not awaited by the request), and
//   every DRAIN_INTERVAL_MS by every process with REDIS_URL (what a crash, a Redis outage or another
//   process's drain left behind). One process publishes at a time: it holds the `drain` row's lease
//   (LEASE_MS, renewed per batch), publishes in id order, then deletes what Redis took. An event whose
//   delete did not happen (a crash, a lease lost) is published again: at least once, the same id.
// - A process whose drain found the lease taken leaves its events to the holder, which looks again once
//   it lets the lease go; a holder that died loses the lease after LEASE_MS and the next periodic drain
//   of any process takes over.
// - While Redis is unreachable events wait here; the sweep deletes those older than OUTBOX_MAX_AGE_S
//   (counted as dropped).
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/database.ts';
import { forUpdate } from '../store/sql-dialect.ts';
import type { RedisLink } from '../redis.ts';
import { PeriodicJob } from '../periodic.ts';
import type { EventSink, PublishedEvent } from './security-log.ts';

/** How long one drain may hold the lease without renewing it (ms); past it another process may take over. */
export const LEASE_MS = 10_000;
/** How often every process with REDIS_URL drains what is left (ms). */
export const DRAIN_INTERVAL_MS = 2_000;
/** Events published per batch, each batch deleted once Redis took it. */
const BATCH = 500;
/** Rows per INSERT: far within every dialect's parameters. */
const INSERT_BATCH = 1000;
/** An event still unpublished after this long (Redis away for a day) is deleted by the sweep, counted. */
export const OUTBOX_MAX_AGE_S = 86_400;

/** An event as the outbox keeps it before it has an id. */
export type EventToPublish = Omit<PublishedEvent, 'id'>;

/**
 * JSON in ASCII only (every other character as \uXXXX, which JSON reads back as the same text): the
 * message is stored as it is sent, whatever the character set of the table (a family database in place
 * may default to latin1).
 */
const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/**
 * Writes `events` to the outbox in `trx`, with the next ids of the sequence (locked until `trx` ends: run
 * it as the transaction's last work, so the lock is held the least and never before another).
 */
export async function writeToOutbox(trx: Db, events: readonly EventToPublish[], at: number): Promise<void> {
  if (events.length === 0) return;
  const sequence = await forUpdate(
    trx,
    trx.selectFrom('event_outbox_state').select('value').where('name', '=', 'sequence'),
  ).executeTakeFirstOrThrow();
  const first = sequence.value + 1;
  await trx
    .updateTable('event_outbox_state')
    .set({ value: first + events.length - 1 })
    .where('name', '=', 'sequence')
    .execute();
  const rows = events.map(({ v, ...rest }, i) => ({
    id: first + i,
    created_at: at,
    message: asciiJson({ v, id: first + i, ...rest }),
  }));
  for (let i = 0; i < rows.length; i += INSERT_BATCH)
    await trx
      .insertInto('event_outbox')
      .values(rows.slice(i, i + INSERT_BATCH))
      .execute();
}

/** Deletes the events unpublished for longer than OUTBOX_MAX_AGE_S before `now`; returns how many. */
export async function deleteStaleEvents(db: Db, now: number): Promise<number> {
  const r = await db
    .deleteFrom('event_outbox')
    .where('created_at', '<', now - OUTBOX_MAX_AGE_S)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** How many events wait in the outbox. */
export async function waitingEvents(db: Db): Promise<number> {
  const row = await db
    .selectFrom('event_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return row.n;
}

export interface OutboxLogger {
  warn(obj: object, msg: string): void;
}

/**
 * The events sink of a process with REDIS_URL: events kept by a transaction are written to the outbox at
 * its end (`flush`), and published by `drain` after the commit, over the login limits' Redis link.
 */
export class OutboxEvents implements EventSink {
  private readonly db: Db;
  private readonly link: RedisLink;
  private readonly channel: string;
  private readonly log: OutboxLogger | undefined;
  /** This process, as the drain lease names its holder. */
  private readonly me = `${process.pid}-${randomUUID()}`;
  /** The events of each open transaction (withEvents), written by its flush. */
  private readonly pending = new WeakMap<Db, EventToPublish[]>();
  private readonly periodic: PeriodicJob;
  private running: Promise<void> | undefined;
  private again = false;
  private failing = false;
  private databaseFailing = false;
  /** Events this process wrote to the outbox (the CLI says when some could not be published). */
  written = 0;
  onPublished: (() => void) | undefined;

  constructor(db: Db, link: RedisLink, channel: string, log?: OutboxLogger) {
    this.db = db;
    this.link = link;
    this.channel = channel;
    this.log = log;
    this.periodic = new PeriodicJob(() => this.drainIfAny());
  }

  begin(trx: Db): void {
    this.pending.set(trx, []);
  }

  async keep(db: Db, events: readonly EventToPublish[], at: number): Promise<void> {
    const kept = this.pending.get(db);
    if (kept) kept.push(...events);
    else await this.write(db, events, at);
  }

  async flush(trx: Db, at: number): Promise<void> {
    const kept = this.pending.get(trx);
    this.pending.delete(trx);
    if (kept && kept.length > 0) await this.write(trx, kept, at);
  }

  private async write(db: Db, events: readonly EventToPublish[], at: number): Promise<void> {
    await writeToOutbox(db, events, at);
    this.written += events.length;
  }

  /**
   * Publishes everything the outbox holds, in id order; resolves when done (or when another process
   * holds the lease, or Redis failed: the events wait). Calls while one runs make it look once more.
   * Never rejects.
   */
  drain(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async () => {
      do {
        this.again = false;
        try {
          await this.drainOnce();
          this.databaseFailing = false;
        } catch (err) {
          this.databaseTrouble(err);
        }
      } while (this.again);
    };
    this.running = run().finally(() => (this.running = undefined));
    return this.running;
  }

  /** The periodic drain: one cheap read while nothing waits. */
  private async drainIfAny(): Promise<void> {
    try {
      if (!this.link.isReady) return;
      const any = await this.db.selectFrom('event_outbox').select('id').limit(1).executeTakeFirst();
      if (any) await this.drain();
    } catch (err) {
      this.databaseTrouble(err);
    }
  }

  /** A database failure of the drain, logged once until a drain works again (it retries every interval). */
  private databaseTrouble(err: unknown): void {
    if (!this.databaseFailing)
      this.log?.warn({ err }, 'publishing events failed on the database; they wait in the outbox, retrying');
    this.databaseFailing = true;
  }

  private async drainOnce(): Promise<void> {
    if (!this.link.isReady) return;
    if (!(await this.claim())) return;
    let emptied = false;
    try {
      for (;;) {
        const rows = await this.db
          .selectFrom('event_outbox')
          .select(['id', 'message'])
          .orderBy('id')
          .limit(BATCH)
          .execute();
        if (rows.length === 0) {
          emptied = true;
          break;
        }
        const sent = await this.publish(rows);
        if (sent.length > 0) await this.db.deleteFrom('event_outbox').where('id', 'in', sent).execute();
        if (sent.length < rows.length || !(await this.claim())) break;
      }
    } finally {
      await this.release();
    }
    // Another process may have committed while the lease was ours and left its events to us.
    if (emptied && (await this.db.selectFrom('event_outbox').select('id').limit(1).executeTakeFirst()))
      this.again = true;
  }

  /**
   * Sends the messages one after the other, each once Redis took the one before, and returns the ids of
   * those sent before the first failure: the rest stay and go again later, so no event is ever first
   * sent after a later one (a subscriber may keep only the highest id it has seen).
   */
  private async publish(rows: ReadonlyArray<{ id: number; message: string }>): Promise<number[]> {
    const sent: number[] = [];
    for (const row of rows) {
      try {
        await this.link.client.publish(this.channel, row.message);
      } catch {
        break;
      }
      sent.push(row.id);
      this.onPublished?.();
    }
    if (sent.length < rows.length && !this.failing)
      this.log?.warn({}, 'Redis refused events; they wait in the outbox and go once it answers');
    this.failing = sent.length < rows.length;
    return sent;
  }

  /** Takes (or renews) the drain lease; false while another process holds it. */
  private async claim(): Promise<boolean> {
    const now = Date.now();
    const r = await this.db
      .updateTable('event_outbox_state')
      .set({ value: now + LEASE_MS, holder: this.me })
      .where('name', '=', 'drain')
      .where((eb) => eb.or([eb('value', '<', now), eb('holder', '=', this.me)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  private async release(): Promise<void> {
    await this.db
      .updateTable('event_outbox_state')
      .set({ value: 0, holder: null })
      .where('name', '=', 'drain')
      .where('holder', '=', this.me)
      .execute();
  }

  /** Drains every `intervalMs` (what a crash or an outage left); the timer never keeps the process alive. */
  start(intervalMs: number = DRAIN_INTERVAL_MS): void {
    this.periodic.start(intervalMs);
  }

  /** Stops the timer, publishes what waits (when Redis answers) and waits for the drain in progress. */
  async stop(): Promise<void> {
    await this.periodic.stop();
    await this.drain();
  }
}
