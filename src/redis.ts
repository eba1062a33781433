// The Redis link (REDIS_URL): fails fast while Redis is away or hangs, reconnects by itself, and logs each
// outage once when it starts and once when it ends (never per request, never the URL, which may hold a
// password).
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

// ioredis is loaded with the first link, so a process without REDIS_URL never loads it (MBs of idle memory).
// The link is made synchronously, hence require (ioredis is a CommonJS package) rather than import().
const load = createRequire(import.meta.url);

export interface LinkLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisTimeouts {
  /** Longest wait for a TCP connection (ms). */
  connectTimeoutMs: number;
  /**
   * Longest wait for an answer (ms): a command not answered by then fails, and a connection that stays
   * silent that long after a command is dropped (so that later commands fail at once, to the fallback,
   * instead of each waiting) and made again.
   */
  commandTimeoutMs: number;
}

/**
 * Redis answers in well under a millisecond on a local network: 250 ms is an outage, and the most a
 * hung Redis adds to a login (SECURITY.md, "Redis outage").
 */
export const DEFAULT_REDIS_TIMEOUTS: RedisTimeouts = { connectTimeoutMs: 1000, commandTimeoutMs: 250 };

/** Reconnect delays grow to this and stay there for as long as Redis is away. */
const MAX_RECONNECT_DELAY_MS = 2000;

export class RedisLink {
  readonly client: Redis;
  private readonly log: LinkLogger;
  private state: 'connecting' | 'up' | 'down' = 'connecting';
  private closing = false;

  constructor(url: string, log: LinkLogger, timeouts: RedisTimeouts = DEFAULT_REDIS_TIMEOUTS) {
    this.log = log;
    const { Redis: RedisClient } = load('ioredis') as { Redis: typeof Redis };
    this.client = new RedisClient(url, {
      // A command sent while disconnected fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      // Commands in flight when the connection drops fail at once instead of being replayed later.
      maxRetriesPerRequest: 0,
      connectTimeout: timeouts.connectTimeoutMs,
      commandTimeout: timeouts.commandTimeoutMs,
      // A connection that accepts commands and never answers (a hung server) is dropped, not waited on:
      // until a new one is ready, commands fail at once.
      socketTimeout: timeouts.commandTimeoutMs,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    });
    this.client.on('ready', () => {
      if (this.state === 'down') this.log.info({}, 'Redis is reachable again');
      this.state = 'up';
    });
    this.client.on('error', (err: Error) => this.markDown(err.message));
    this.client.on('close', () => this.markDown('connection closed'));
  }

  get isReady(): boolean {
    return this.client.status === 'ready';
  }

  private markDown(reason: string): void {
    if (this.closing || this.state === 'down') return;
    this.state = 'down';
    this.log.warn({ reason }, 'Redis is unreachable; retrying in the background');
  }

  /** Resolves true once the link is ready, or false after `timeoutMs` (the link keeps trying). */
  waitReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      this.client.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.isReady) {
      try {
        await this.client.quit();
        return;
      } catch {
        // fall through: drop the socket
      }
    }
    this.client.disconnect();
  }
}
