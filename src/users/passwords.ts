// Passwords are bcrypt over the lower-case hex MD5 of the password (this ecosystem's game client sends
// MD5 digests). bcrypt runs on libuv's thread pool through @node-rs/bcrypt's async API, never on the
// event loop, and at most `concurrency` at once so a login storm cannot take every worker thread.
import { createHash } from 'node:crypto';
import type * as Bcrypt from '@node-rs/bcrypt';

// The native addon is loaded by the first hash or verification (~3 MB that an idle server never needs).
let bcrypt: Promise<typeof Bcrypt> | undefined;
const loadBcrypt = () => (bcrypt ??= import('@node-rs/bcrypt'));

/** Password version 2: bcrypt(md5hex(password)). Version 1 is a legacy hash this API cannot verify. */
export const CURRENT_PASSWORD_VERSION = 2;
export const LEGACY_PASSWORD_VERSION = 1;

export const md5Hex = (password: string): string => createHash('md5').update(password, 'utf8').digest('hex');

/** Runs at most `limit` tasks at once; the rest wait in arrival order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

export class PasswordHasher {
  private readonly gate: Semaphore;
  private readonly cost: number;
  constructor(options: { cost: number; concurrency: number }) {
    this.cost = options.cost;
    this.gate = new Semaphore(options.concurrency);
  }

  hash(password: string): Promise<string> {
    return this.gate.run(async () => (await loadBcrypt()).hash(md5Hex(password), this.cost));
  }

  verify(password: string, storedHash: string): Promise<boolean> {
    return this.gate.run(async () => (await loadBcrypt()).verify(md5Hex(password), storedHash));
  }
}
