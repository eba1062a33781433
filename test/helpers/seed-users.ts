// Users written straight into a database (no HTTP, no rate limit), for tests that run tokend as a child
// process on it (test/helpers/real-server.ts).
import type { DatabaseConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { CURRENT_PASSWORD_VERSION, PasswordHasher } from '../../src/users/passwords.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

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
      const id = await insertUser(store.db, {
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
