// Users written straight into a database (no HTTP, no rate limit), for tests that run tokend as a child
// process on it (test/helpers/real-server.ts) or reach it through something that fails. In place on a
// Ripple-family database (DATABASE_SCHEMA=ripple) they are written as the family's website signs users
// up; elsewhere by tokend's repository.
import { createConnection } from 'mysql2/promise';
import type { DatabaseConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { CURRENT_PASSWORD_VERSION, PasswordHasher } from '../../src/users/passwords.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { signUpOnWebsite } from './ripple-schema.ts';

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
  const made = Array.from({ length: count }, (_, i) => ({
    username: `load${i}_${Math.random().toString(36).slice(2, 8)}`,
    password: `pw-${i}-${Math.random().toString(36).slice(2)}`,
  }));
  const store = await openStore(database);
  try {
    if (store.layout.schema === 'ripple' && database.kind === 'mysql') {
      const family = await createConnection({ uri: database.url });
      try {
        const users: SeedUser[] = [];
        for (const user of made)
          users.push({ ...user, id: await signUpOnWebsite(family, { ...user, privileges }) });
        return users;
      } finally {
        await family.end();
      }
    }
    const hasher = new PasswordHasher({ cost: 4, concurrency: 4 });
    const users: SeedUser[] = [];
    for (const user of made) {
      const id = await insertUser(store.db, {
        username: user.username,
        passwordHash: await hasher.hash(user.password),
        passwordVersion: CURRENT_PASSWORD_VERSION,
        privileges,
        now: nowSeconds(),
      });
      users.push({ ...user, id });
    }
    return users;
  } finally {
    await store.close();
  }
}
