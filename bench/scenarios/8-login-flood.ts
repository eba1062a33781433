// Scenario 8: a login flood. tokend runs with its default login limits and password queue
// (LOGIN_RATE_LIMIT, LOGIN_IP_RATE_LIMIT, PASSWORD_QUEUE_MAX) behind a trusted proxy, so that
// X-Forwarded-For names the flood's and the other client's addresses; meanwhile another address signs
// in every 500 ms and reads as scenario 1 does. Baseline: the same reads, alone. Targets: read p99 in
// the flood / alone ≤ 3, the other address's slowest sign-in ≤ 2 s, and every one of them answered 200.
// Two floods, one row each:
// - from one address: 1,000 attempts for 200 users (the login limits refuse most of them);
// - from 40 addresses, each within its limits (100 attempts, one per user): 4,000 attempts that all
//   reach the password queue, which must still let the other address in (its checks take turns by
//   address, fewest attempts first: src/users/passwords.ts).
import { load, warmUp } from '../load.ts';
import { httpRequest } from '../processes.ts';
import { BENCH_PASSWORD } from '../seed.ts';
import {
  CREATE_PATH,
  check,
  describeLoad,
  fmt,
  ms,
  readSpec,
  startTokend,
  type Context,
  type OwnScenario,
  type Row,
} from '../support.ts';

const TARGET_P99_RATIO = 3;
const TARGET_SLOWEST_SIGN_IN_MS = 2000;

const OTHER_ADDRESS = '203.0.113.5';
/** Users the flood tries (200 users x 5 attempts, as the attacking review did) and users the other address signs in as. */
const FLOOD_USERS = { first: 100, count: 200 };
const OTHER_USERS = { first: 20, count: 60 };

/** Where a flood comes from and how many attempts each of its addresses sends. */
interface Flood {
  /** Names the flood in the row and the progress lines. */
  label: string;
  addresses: readonly string[];
  attemptsPerAddress: number;
}

const ONE_ADDRESS: Flood = {
  label: '1,000 attempts, 200 users, from one address',
  addresses: ['198.51.100.66'],
  attemptsPerAddress: FLOOD_USERS.count * 5,
};

/** Each address stays within the default limits: 100 attempts (LOGIN_IP_RATE_LIMIT), one per user. */
const MANY_ADDRESSES: Flood = {
  label: '4,000 attempts, 200 users, from 40 addresses within their limits',
  addresses: Array.from({ length: 40 }, (_, i) => `198.51.100.${i + 1}`),
  attemptsPerAddress: 100,
};

interface FloodStats {
  sent: number;
  byStatus: Record<string, number>;
}

/**
 * The flood sends its attempts as fast as `connections` clients can, each client hanging up after 50 ms
 * (the burst the attacking review sent: 200 users x 5 attempts, 1,000 requests in 0.3 s). Attempt n
 * comes from address n mod A (A addresses), as that address's k-th attempt (k = n div A), for user
 * (20·address + k) mod 200: one address tries every user in turn, and each of 40 addresses tries 100
 * different users.
 */
async function flood(port: number, connections: number, plan: Flood): Promise<FloodStats> {
  const stats: FloodStats = { sent: 0, byStatus: {} };
  const total = plan.addresses.length * plan.attemptsPerAddress;
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (stats.sent < total) {
        const n = next++;
        const address = n % plan.addresses.length;
        const k = Math.floor(n / plan.addresses.length);
        const id = FLOOD_USERS.first + ((20 * address + k) % FLOOD_USERS.count);
        stats.sent++;
        let status = 'hung up';
        try {
          const r = await fetch(`http://127.0.0.1:${port}${CREATE_PATH}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': plan.addresses[address]! },
            body: JSON.stringify({ id, password: n % 2 === 1 ? BENCH_PASSWORD : 'wrong' }),
            signal: AbortSignal.timeout(50),
          });
          status = String(r.status);
          await r.arrayBuffer();
        } catch {
          // the 50 ms were up: the client hung up, as the flood's clients do
        }
        stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
      }
    }),
  );
  return stats;
}

/** The other address signs in every 500 ms until `until` (a different user each time): each latency and status. */
async function otherLogins(port: number, until: number): Promise<Array<{ ms: number; status: number }>> {
  const out: Array<{ ms: number; status: number }> = [];
  for (let i = 0; performance.now() < until; i++) {
    const started = performance.now();
    const r = await httpRequest(port, CREATE_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': OTHER_ADDRESS },
      body: JSON.stringify({ id: OTHER_USERS.first + (i % OTHER_USERS.count), password: BENCH_PASSWORD }),
    });
    out.push({ ms: performance.now() - started, status: r.status });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 500 - (performance.now() - started))));
  }
  return out;
}

/** One flood against a tokend of its own: the row of `plan`. */
async function floodRow({ opts, backend, database }: Context, plan: Flood): Promise<Row> {
  const tokend = await startTokend(
    { opts, database },
    { TRUST_PROXY: 'loopback' },
    { name: 'tokend (default login limits)' },
  );
  try {
    const seconds = Math.max(6, opts.seconds);
    const reads = {
      ...readSpec(opts),
      port: tokend.port,
      seconds,
      headers: { 'x-forwarded-for': OTHER_ADDRESS },
    };
    await warmUp({ ...reads, seconds: opts.warmUpSeconds });
    const alone = await load(reads);
    // Logins alone: the other address's latency with no flood.
    const quiet = await otherLogins(tokend.port, performance.now() + 2000);
    const until = performance.now() + seconds * 1000;
    const [inFlood, floodStats, logins] = await Promise.all([
      load(reads),
      flood(tokend.port, 50, plan),
      otherLogins(tokend.port, until),
    ]);
    const worstLogin = Math.max(...logins.map((l) => l.ms));
    const refused = logins.filter((l) => l.status !== 200).length;
    const ratio = inFlood.p99Ms / alone.p99Ms;
    return {
      scenario: 8,
      title: `login flood (${plan.label}): another address signs in and reads`,
      backend,
      tokend:
        `other address: ${logins.length} sign-ins, slowest ${ms(worstLogin)}, ${refused} not 200; ` +
        `reads ${describeLoad(inFlood)}; flood: ${fmt(floodStats.sent)} attempts (${Object.entries(
          floodStats.byStatus,
        )
          .map(([k, v]) => `${k}: ${fmt(v)}`)
          .join(', ')})`,
      baseline: `no flood: reads ${describeLoad(alone)}; sign-ins slowest ${ms(Math.max(...quiet.map((l) => l.ms)))}`,
      ratio,
      checks: [
        check('read p99 ratio', ratio, '<=', TARGET_P99_RATIO),
        check('slowest sign-in of the other address (ms)', worstLogin, '<=', TARGET_SLOWEST_SIGN_IN_MS),
        check('sign-ins of the other address not answered 200', refused, '<=', 0),
        check('failed reads', inFlood.failures + alone.failures, '<=', 0),
      ],
      settings: tokend.settings,
      figures: { alone, inFlood, flood: floodStats, logins, quiet },
    };
  } finally {
    await tokend.stop();
  }
}

export const loginFlood: OwnScenario = {
  id: 8,
  name: 'login flood from one address',
  firstBackendOnly: true,
  tokend: 'own',
  run: (context) => floodRow(context, ONE_ADDRESS),
};

export const loginFloodManyAddresses: OwnScenario = {
  id: 8,
  name: 'login flood from 40 addresses',
  firstBackendOnly: true,
  tokend: 'own',
  run: (context) => floodRow(context, MANY_ADDRESSES),
};
