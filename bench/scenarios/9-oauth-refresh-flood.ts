// Scenario 9: one account refreshing OAuth tokens as fast as it can. tokend runs with its default OAuth
// bounds and token-endpoint limits (OAUTH_GRANTS_PER_*, OAUTH_TOKEN_*); the account's client refreshes
// its grant in a loop, each request as soon as the previous one is answered (Retry-After ignored), from
// a process of its own (bench/oauth-refresher.ts), while another user reads as scenario 1 does.
// Baseline: the same reads with no flood, alternating with it. Targets: read p99 in the flood / alone
// ≤ 3, and the account's OAuth rows at the end within what the bounds allow (live grants and their
// tokens, plus the rotated refresh tokens the per-user limit lets through in the windows the run
// touched); before the bounds every refresh added two rows, kept up to 30 days.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { createClient } from '../../src/oauth/clients.ts';
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { ACCESS_TOKENS_PER_GRANT, issueTokenPair } from '../../src/oauth/issue.ts';
import { newOAuthSecret, sha256Hex } from '../../src/oauth/secrets.ts';
import type { Db } from '../../src/store/database.ts';
import { alternate, combine, load, warmUp } from '../load.ts';
import { ROOT } from '../processes.ts';
import {
  check,
  describeLoad,
  fmt,
  range,
  readSpec,
  sliceSeconds,
  startTokend,
  type OwnScenario,
} from '../support.ts';

const TARGET_P99_RATIO = 3;
/**
 * Grants the account refreshes at once, one loop each. One: a client refreshing as fast as it is answered.
 * More loops measure the 2 cores the load generators share with tokend (bench/README.md, scenario 9).
 */
const GRANTS = 1;
const run = promisify(execFile);

interface FloodStats {
  sent: number;
  byStatus: Record<string, number>;
}

/** The OAuth rows the account holds: access tokens, refresh tokens (live and rotated), codes. */
async function rowsOf(db: Db, userId: number): Promise<number> {
  let rows = 0;
  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens', 'oauth_codes'] as const) {
    const r = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    rows += Number(r.n);
  }
  return rows;
}

/**
 * The attacker (bench/oauth-refresher.ts, a process of its own) for `seconds`; `refreshTokens` holds
 * each grant's current token, from one round to the next; its counts are added to `stats`.
 */
async function flood(
  port: number,
  clientId: string,
  refreshTokens: string[],
  seconds: number,
  stats: FloodStats,
): Promise<void> {
  const { stdout } = await run(process.execPath, ['bench/oauth-refresher.ts'], {
    cwd: ROOT,
    env: { ...process.env, REFRESHER: JSON.stringify({ port, clientId, refreshTokens, seconds }) },
  });
  const result = JSON.parse(stdout) as FloodStats & { refreshTokens: string[] };
  stats.sent += result.sent;
  for (const [status, n] of Object.entries(result.byStatus))
    stats.byStatus[status] = (stats.byStatus[status] ?? 0) + n;
  refreshTokens.splice(0, refreshTokens.length, ...result.refreshTokens);
}

export const oauthRefreshFlood: OwnScenario = {
  id: 9,
  name: 'OAuth refresh flood',
  firstBackendOnly: false,
  tokend: 'own',
  async run({ opts, backend, database, store }) {
    // tokend's defaults, read as tokend reads them.
    const config = loadConfig({});
    const attacker = opts.spec.users;
    const now = Math.floor(Date.now() / 1000);
    const { client } = await createClient(
      store.db,
      {
        name: 'Bench refresher',
        ownerId: attacker,
        avatar: '',
        redirectUris: ['https://refresher.example/callback'],
        public: true,
        now,
      },
      actOutsideRequest('cli', now),
    );
    const refreshTokens: string[] = [];
    for (let i = 0; i < GRANTS; i++) {
      // As a code exchange issues them (the bench has no browser to approve one).
      const issued = await issueTokenPair(
        store.db,
        {
          clientId: client.id,
          userId: attacker,
          scope: 'read_confidential',
          family: sha256Hex(newOAuthSecret()),
        },
        now,
      );
      refreshTokens.push(issued.refresh_token!);
    }

    const tokend = await startTokend({ opts, database }, {}, { name: 'tokend (default OAuth limits)' });
    try {
      const seconds = sliceSeconds(opts);
      const reads = { ...readSpec(opts), port: tokend.port, seconds };
      await warmUp({ ...reads, seconds: opts.warmUpSeconds });
      const stats: FloodStats = { sent: 0, byStatus: {} };
      const began = performance.now();
      const [alone, inFlood] = await alternate(opts.rounds, [
        () => load(reads),
        async () => {
          const [r] = await Promise.all([
            load(reads),
            flood(tokend.port, client.id, refreshTokens, seconds, stats),
          ]);
          return r;
        },
      ]);
      const elapsedS = (performance.now() - began) / 1000;
      const readsAlone = combine(alone!);
      const readsInFlood = combine(inFlood!);
      const ratio = readsInFlood.p99Ms / readsAlone.p99Ms;
      const perRound = inFlood!.map((r, i) => r.p99Ms / alone![i]!.p99Ms);

      // What the bounds allow: each live grant its refresh token and two access tokens, plus the rotated
      // refresh tokens that the per-user limit lets through in the windows the run touched.
      const windows = Math.ceil(elapsedS / config.oauthTokenRate.windowS) + 1;
      const allowedRows =
        config.oauthGrants.perUser * (1 + ACCESS_TOKENS_PER_GRANT) + config.oauthTokenRate.perUser * windows;
      const rows = await rowsOf(store.db, attacker);
      return {
        scenario: 9,
        title: `OAuth refresh flood (one account's grant, default limits): another user reads`,
        backend,
        tokend:
          `reads ${describeLoad(readsInFlood)}; flood: ${fmt(stats.sent)} refreshes (${Object.entries(
            stats.byStatus,
          )
            .map(([k, v]) => `${k}: ${fmt(v)}`)
            .join(', ')}), ${fmt(stats.sent / (opts.seconds || 1))}/s; ` +
          `the account's OAuth rows at the end: ${fmt(rows)} (bound ${fmt(allowedRows)})`,
        baseline: `reads alone: ${describeLoad(readsAlone)}`,
        ratio,
        ratioRange: range(perRound),
        checks: [
          check('read p99 ratio', ratio, '<=', TARGET_P99_RATIO),
          check("the account's OAuth rows", rows, '<=', allowedRows),
          check('failed reads', readsInFlood.failures + readsAlone.failures, '<=', 0),
        ],
        settings: tokend.settings,
        figures: { readsAlone, readsInFlood, flood: stats, rows, allowedRows, elapsedS },
      };
    } finally {
      await tokend.stop();
    }
  },
};
