// Scenario 5: `POST /api/v1/tokens/fix_privileges` (all users) by the admin token, on a tokend of its
// own: wall time from the call until a poll of the database finds no token over its owner's limits,
// and the peak RSS growth of the tokend process. Baseline: the tokens over their limits before and
// after. Targets: SQLite ≤ 10 s and ≤ 50 MB; PostgreSQL and MariaDB reported. It rewrites a third of
// the seeded tokens, so the driver runs it last.
import { CompiledQuery } from 'kysely';
import type { Store } from '../../src/store/database.ts';
import { peakRssOf, resetPeakRss, rssOf } from '../processes.ts';
import { adminTokenId, benchSecret } from '../seed.ts';
import {
  FIX_PATH,
  check,
  expectStatus,
  fmt,
  mb,
  sleep,
  startTokend,
  type Check,
  type OwnScenario,
} from '../support.ts';

/** On SQLite: the longest wall time (s) and RSS growth (MB). */
const TARGET_SECONDS = 10;
const TARGET_GROWTH_MB = 50;
const FIX_DEADLINE_MS = 180_000;

/** Tokens still over their owners' limits: the seeded ones carry ManageBadges (8), which no seeded user may hold. */
async function newestOverLimit(store: Store): Promise<number | undefined> {
  const r = await store.db.executeQuery<{ id: number }>(
    CompiledQuery.raw('SELECT id FROM tokens WHERE (privileges & 8) <> 0 ORDER BY id DESC LIMIT 1'),
  );
  return r.rows[0]?.id;
}

async function countOverLimit(store: Store): Promise<number> {
  const r = await store.db.executeQuery<{ n: number | string }>(
    CompiledQuery.raw('SELECT count(*) AS n FROM tokens WHERE (privileges & 8) <> 0'),
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** The first error tokend logged (a JSON line at level error or above), if any. */
function loggedError(output: string): string | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 50) return `tokend logged "${entry.msg}": ${entry.err?.message ?? ''}`.trim();
    } catch {
      // not a log line
    }
  }
  return undefined;
}

export const fixPrivileges: OwnScenario = {
  id: 5,
  name: 'fix_privileges',
  firstBackendOnly: false,
  tokend: 'own',
  async run({ opts, backend, database, store }) {
    const before = await countOverLimit(store);
    const tokend = await startTokend({ opts, database });
    try {
      const pid = tokend.child.pid ?? -1;
      await sleep(500);
      const rss0 = rssOf(pid);
      let peakSampled = rss0;
      let kernelPeak = true;
      try {
        resetPeakRss(pid);
      } catch {
        kernelPeak = false;
      }
      const started = performance.now();
      await expectStatus(tokend.port, FIX_PATH, {
        method: 'POST',
        headers: { 'x-ripple-token': benchSecret(adminTokenId(opts.spec)) },
      });
      const deadline = started + FIX_DEADLINE_MS;
      let seconds = NaN;
      let failure: string | undefined;
      for (;;) {
        peakSampled = Math.max(peakSampled, rssOf(pid));
        if ((await newestOverLimit(store)) === undefined) {
          seconds = (performance.now() - started) / 1000;
          break;
        }
        failure = loggedError(tokend.output());
        if (failure !== undefined) break;
        if (performance.now() > deadline) {
          failure = `not done after ${FIX_DEADLINE_MS / 1000} s`;
          break;
        }
        await sleep(100);
      }
      const peak = Math.max(peakSampled, kernelPeak ? peakRssOf(pid) : 0);
      const after = await countOverLimit(store);
      const growth = peak - rss0;
      const checks: Check[] = [check('tokens left over their limits', after, '<=', 0)];
      if (backend === 'sqlite')
        checks.unshift(
          check('wall time (s)', seconds, '<=', TARGET_SECONDS),
          check('RSS growth (MB)', growth / 2 ** 20, '<=', TARGET_GROWTH_MB),
        );
      return {
        scenario: 5,
        title: `fix_privileges over ${fmt(opts.spec.tokens)} tokens of ${fmt(opts.spec.users)} users`,
        backend,
        tokend:
          failure === undefined
            ? `${fmt(seconds, 2)} s, RSS +${mb(growth)} (from ${mb(rss0)})`
            : `**failed**: ${failure}; RSS +${mb(growth)}`,
        baseline: `${fmt(before)} tokens over their limits before, ${fmt(after)} after`,
        ratio: null,
        checks,
        settings: tokend.settings,
        note: 'time from the HTTP call until a poll of the database finds no token over its limits',
        figures: {
          seconds,
          rssBefore: rss0,
          peakRss: peak,
          growth,
          kernelPeak,
          overLimitBefore: before,
          overLimitAfter: after,
          failure,
        },
      };
    } finally {
      await tokend.stop();
    }
  },
};
