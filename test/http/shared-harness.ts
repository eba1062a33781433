// One harness for every test of a describe block: a fresh database per block instead of per test,
// for tests that do not disturb one another (each makes its own users and tokens).
import { after, before, type TestContext } from 'node:test';
import type { Dialect } from '../../src/store/database.ts';
import { build, type Harness } from '../helpers/app.ts';

/** Call inside describe(); the returned function gives the block's harness inside its tests. */
export function sharedHarness(dialect: Dialect, env: Record<string, string> = {}): () => Harness {
  let harness: Harness | undefined;
  const cleanups: Array<() => unknown> = [];
  before(async () => {
    const context = { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;
    // Every test of the block logs in from one address: the per-address limit would count them together.
    harness = await build(context, dialect, { LOGIN_IP_RATE_LIMIT: '1000000', ...env });
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return () => {
    if (!harness) throw new Error('the shared harness is not built yet');
    return harness;
  };
}
