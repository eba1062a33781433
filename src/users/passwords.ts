// Passwords are bcrypt over the lower-case hex MD5 of the password (this ecosystem's game client sends
// MD5 digests). bcrypt runs on libuv's thread pool through @node-rs/bcrypt's async API, never on the
// event loop, and at most `concurrency` at once (one fewer while the event loop is busy), so a login storm
// cannot take every core from the other requests.
import { createHash } from 'node:crypto';
import type * as Bcrypt from '@node-rs/bcrypt';

// The native addon is loaded by the first hash or verification (~3 MB that an idle server never needs);
// Node's module cache makes every later import() the same module.
const loadBcrypt = (): Promise<typeof Bcrypt> => import('@node-rs/bcrypt');

/** Password version 2: bcrypt(md5hex(password)). Version 1 is a legacy hash this API cannot verify. */
export const CURRENT_PASSWORD_VERSION = 2;
export const LEGACY_PASSWORD_VERSION = 1;

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

/**
 * Runs at most `limit()` tasks at once (read at each start, so it may change); at most `maxWaiting` more
 * wait, in arrival order; beyond that a task is refused at once. A task that had to wait, and whose
 * `abandoned()` says so when its turn comes, is dropped unrun.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly limit: () => number;
  private readonly maxWaiting: number;
  constructor(limit: number | (() => number), maxWaiting = Number.POSITIVE_INFINITY) {
    this.limit = typeof limit === 'number' ? () => limit : limit;
    this.maxWaiting = maxWaiting;
  }
  get queued(): number {
    return this.waiting.length;
  }
  private get room(): boolean {
    return this.active < Math.max(1, this.limit());
  }
  async run<T>(task: () => Promise<T>, abandoned: () => boolean = () => false): Promise<T> {
    let waited = false;
    if (this.room && this.waiting.length === 0) this.active++;
    else {
      if (this.waiting.length >= this.maxWaiting) throw new PasswordQueueFull();
      // The waker counts this task as active before waking it.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      waited = true;
    }
    try {
      // Only a task that waited is asked: one that runs at once has a client that just asked for it.
      if (waited && abandoned()) throw new PasswordCheckAbandoned();
      return await task();
    } finally {
      this.active--;
      this.wake();
    }
  }
  private wake(): void {
    while (this.waiting.length > 0 && this.room) {
      this.active++;
      this.waiting.shift()!();
    }
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

  hash(password: string): Promise<string> {
    return this.gate.run(async () => (await loadBcrypt()).hash(md5Hex(password), this.cost));
  }

  /**
   * Throws PasswordQueueFull when PASSWORD_QUEUE_MAX checks already wait, and PasswordCheckAbandoned
   * when `abandoned()` (the client hung up) by the time its turn comes: no bcrypt runs for either.
   */
  verify(password: string, storedHash: string, abandoned?: () => boolean): Promise<boolean> {
    return this.gate.run(async () => (await loadBcrypt()).verify(md5Hex(password), storedHash), abandoned);
  }
}
