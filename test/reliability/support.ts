// Helpers of the reliability tests: hang detection, bounded retries, users seeded straight into a database.
// The tokend process, raw HTTP and the TCP proxy they use are in ../helpers/real-server.ts.
import type { DatabaseConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { CURRENT_PASSWORD_VERSION, PasswordHasher } from '../../src/users/passwords.ts';
import { nowSeconds } from '../../src/clock.ts';

/** Rejects with `what` when `promise` has not settled within `ms` (a hang detector, not a benchmark). */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries `attempt` until it returns true, at most `tries` times, `intervalMs` apart. */
export async function eventually(tries: number, intervalMs: number, attempt: () => Promise<boolean>) {
  for (let i = 0; i < tries; i++) {
    if (await attempt().catch(() => false)) return true;
    await sleep(intervalMs);
  }
  return false;
}

export interface SeedUser {
  id: number;
  username: string;
  password: string;
}

/** Creates the schema and `count` active users directly in the database (no HTTP, no rate limit). */
export async function seedUsers(
  database: DatabaseConfig,
  count: number,
  privileges = 3,
): Promise<SeedUser[]> {
  const store = await openStore(database);
  const hasher = new PasswordHasher({ cost: 4, concurrency: 4 });
  const users: SeedUser[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const username = `load${i}_${Math.random().toString(36).slice(2, 8)}`;
      const password = `pw-${i}-${Math.random().toString(36).slice(2)}`;
      const id = await insertUser(store.db, store.dialect, {
        username,
        passwordHash: await hasher.hash(password),
        passwordVersion: CURRENT_PASSWORD_VERSION,
        privileges,
        now: nowSeconds(),
      });
      users.push({ id, username, password });
    }
  } finally {
    await store.close();
  }
  return users;
}
