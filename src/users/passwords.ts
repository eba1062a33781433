// Passwords are bcrypt over the lower-case hex MD5 of the password (this ecosystem's game client sends
// MD5 digests). bcrypt runs on libuv's thread pool through @node-rs/bcrypt's async API, never on the
// event loop, and at most `concurrency` at once (one fewer while the event loop is busy), so a login storm
// cannot take every core from the other requests. Checks that wait take turns by client address, fewest
// login attempts first (of the address, or of the account it tries if more; Semaphore), so a flood from
// many addresses cannot keep a quieter one out.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type * as Bcrypt from '@node-rs/bcrypt';

// The native addon is loaded by the first hash or verification (memory an idle server never needs);
// Node's module cache makes every later import() the same module.
const loadBcrypt = (): Promise<typeof Bcrypt> => import('@node-rs/bcrypt');

/** Password version 2: bcrypt(md5hex(password)). Version 1 is a legacy hash this API cannot verify. */
export const CURRENT_PASSWORD_VERSION = 2;
export const LEGACY_PASSWORD_VERSION = 1;

/**
 * The stored hash of an account that has no password (a Ripple-family bot imported with an empty
 * password_md5): no password, the empty one included, ever matches it.
 */
export const NO_PASSWORD = '';

export const md5Hex = (password: string): string => createHash('md5').update(password, 'utf8').digest('hex');

/** The password-check queue is full (PASSWORD_QUEUE_MAX): nothing was queued. */
export class PasswordQueueFull extends Error {
  constructor() {
    super('the password-check queue is full');
    this.name = 'PasswordQueueFull';
  }
}

/** The client that asked for a check went away before its turn: the check was not run. */
export class PasswordCheckAbandoned extends Error {
  constructor() {
    super('the client went away before its password was checked');
    this.name = 'PasswordCheckAbandoned';
  }
}

/** Who asks for a task, and when to drop it. */
export interface Turn {
  /** true once the task's client has gone away: the task is then dropped unrun (see Semaphore) */
  abandoned?: () => boolean;
  /** whose task it is: waiting tasks take turns by key (for a password check: the client address) */
  key?: string;
  /**
   * the key's standing, lower first (for a password check: the address's login attempts in the current
   * window, or the target account's from every address if more); the latest task of a key sets it for
   * every waiting task of that key
   */
  rank?: number;
}

interface Waiter {
  /** arrival order */
  seq: number;
  abandoned: (() => boolean) | undefined;
  wake: () => void;
  refuse: (err: Error) => void;
}

/** The waiting tasks of one key, oldest first, and the key's latest rank. */
interface Line {
  rank: number;
  waiters: Waiter[];
}

/**
 * Runs at most `limit()` tasks at once (read at each start, so it may change); at most `maxWaiting` more
 * wait. Waiting tasks are in line by their key's rank, then by arrival: the next to run is the oldest
 * task of the lowest-ranked key, and when `maxWaiting` tasks wait, a task that would stand before the
 * last one in line takes its place (the last one is refused), any other is refused at once. So a key
 * may fill the queue while nobody else waits, but any key ranked below it takes its places back. A
 * waiting task whose `abandoned()` says so is dropped unrun: when its turn comes, or when the queue is
 * full and another task arrives (a place held for a client that has gone is freed first).
 */
export class Semaphore {
  private active = 0;
  private waitingCount = 0;
  private arrivals = 0;
  private readonly lines = new Map<string, Line>();
  private readonly limit: () => number;
  private readonly maxWaiting: number;
  constructor(limit: number | (() => number), maxWaiting = Number.POSITIVE_INFINITY) {
    this.limit = typeof limit === 'number' ? () => limit : limit;
    this.maxWaiting = maxWaiting;
  }
  get queued(): number {
    return this.waitingCount;
  }
  get running(): number {
    return this.active;
  }
  private get room(): boolean {
    return this.active < Math.max(1, this.limit());
  }
  async run<T>(task: () => Promise<T>, turn: Turn = {}): Promise<T> {
    const key = turn.key ?? '';
    const rank = turn.rank ?? 0;
    const line = this.lines.get(key);
    if (line) line.rank = rank;
    let waited = false;
    if (this.room && this.waitingCount === 0) this.active++;
    else {
      // The waker counts this task as active before waking it; a refused task never counted.
      await new Promise<void>((wake, refuse) =>
        this.wait(key, rank, { seq: this.arrivals++, abandoned: turn.abandoned, wake, refuse }),
      );
      waited = true;
    }
    try {
      // Only a task that waited is asked: one that runs at once has a client that just asked for it.
      if (waited && turn.abandoned?.()) throw new PasswordCheckAbandoned();
      return await task();
    } finally {
      this.active--;
      this.wake();
    }
  }
  private wait(key: string, rank: number, waiter: Waiter): void {
    if (this.waitingCount >= this.maxWaiting) this.dropAbandoned();
    if (this.waitingCount >= this.maxWaiting) {
      // The newcomer is the latest arrival: it stands before the last in line only by a lower rank.
      const [lastKey, last] = this.end('last');
      if (last === undefined || last.rank <= rank) return waiter.refuse(new PasswordQueueFull());
      this.remove(lastKey, last, last.waiters.pop()!).refuse(new PasswordQueueFull());
    }
    const line = this.lines.get(key);
    if (line) line.waiters.push(waiter);
    else this.lines.set(key, { rank, waiters: [waiter] });
    this.waitingCount++;
  }
  private wake(): void {
    while (this.waitingCount > 0 && this.room) {
      const [key, first] = this.end('first');
      this.active++;
      this.remove(key, first!, first!.waiters.shift()!).wake();
    }
  }
  /** Refuses every waiting task whose client has gone, freeing its place. */
  private dropAbandoned(): void {
    for (const [key, line] of this.lines)
      for (const waiter of line.waiters.filter((w) => w.abandoned?.() === true)) {
        line.waiters.splice(line.waiters.indexOf(waiter), 1);
        this.remove(key, line, waiter).refuse(new PasswordCheckAbandoned());
      }
  }
  /** The line holding the first (lowest rank, oldest) or the last (highest rank, newest) waiting task. */
  private end(which: 'first' | 'last'): [string, Line | undefined] {
    let best: [string, Line | undefined] = ['', undefined];
    for (const [key, line] of this.lines) {
      const current = best[1];
      if (current === undefined) best = [key, line];
      else if (which === 'first') {
        const before = line.rank - current.rank || line.waiters[0]!.seq - current.waiters[0]!.seq;
        if (before < 0) best = [key, line];
      } else {
        const after = line.rank - current.rank || line.waiters.at(-1)!.seq - current.waiters.at(-1)!.seq;
        if (after > 0) best = [key, line];
      }
    }
    return best;
  }
  private remove(key: string, line: Line, waiter: Waiter): Waiter {
    if (line.waiters.length === 0) this.lines.delete(key);
    this.waitingCount--;
    return waiter;
  }
}

/**
 * Whether the event loop has been busy lately: its utilization over the last ~100 ms (Node's public
 * performance.eventLoopUtilization), sampled at most that often, is at least `threshold`.
 */
export class LoopBusyness {
  private sample = performance.eventLoopUtilization();
  private sampledAt = performance.now();
  private busy = false;
  private readonly threshold: number;
  constructor(threshold = 0.5) {
    this.threshold = threshold;
  }
  get isBusy(): boolean {
    const now = performance.now();
    if (now - this.sampledAt >= 100) {
      const since = performance.eventLoopUtilization(this.sample);
      this.sample = performance.eventLoopUtilization();
      this.sampledAt = now;
      this.busy = since.utilization >= this.threshold;
    }
    return this.busy;
  }
}

export class PasswordHasher {
  private readonly gate: Semaphore;
  private readonly cost: number;
  /**
   * At most `concurrency` checks at once; while the event loop is busy (serving other requests), one
   * fewer, so a login storm leaves a core to the requests that need no bcrypt (bench scenarios 2 and 3).
   */
  constructor(options: { cost: number; concurrency: number; maxQueued?: number }) {
    this.cost = options.cost;
    const { concurrency } = options;
    const loop = concurrency > 1 ? new LoopBusyness() : undefined;
    this.gate = new Semaphore(
      loop ? () => (loop.isBusy ? concurrency - 1 : concurrency) : concurrency,
      options.maxQueued,
    );
  }

  /** Checks waiting for a turn now. */
  get queued(): number {
    return this.gate.queued;
  }

  /** Checks (and hashes) running now. */
  get running(): number {
    return this.gate.running;
  }

  hash(password: string): Promise<string> {
    return this.gate.run(async () => (await loadBcrypt()).hash(md5Hex(password), this.cost));
  }

  /**
   * Waiting checks take turns by client address (`turn.key`), ranked by the address's login attempts in
   * the current window, or the target account's from every address when more (`turn.rank`, fewest
   * first): while many addresses flood the queue, an address that tries less often than each of them
   * is still answered, and so is a user who tries her own account less often than a flood of many
   * addresses against another; an address that floods alone may still use the whole queue. Throws PasswordQueueFull when PASSWORD_QUEUE_MAX checks already wait and none stands
   * after this one, or when a check that stands before it takes its place while it waits;
   * PasswordCheckAbandoned when `turn.abandoned()` (the client hung up) by the time its turn comes, or
   * when the queue is full as another check arrives. No bcrypt runs for any of them.
   */
  verify(password: string, storedHash: string, turn: Turn = {}): Promise<boolean> {
    if (storedHash === NO_PASSWORD) return Promise.resolve(false);
    return this.gate.run(async () => (await loadBcrypt()).verify(md5Hex(password), storedHash), turn);
  }
}
