// Scenario 6: the spawn of `node bin/tokend.js serve` until its first answered request, and its RSS 1 s
// later (median of opts.startRuns starts), against the same for the bare Fastify app. Targets on
// SQLite: start-up ≤ 1 s, idle RSS ≤ bare Fastify's + 25 MB (Kysely loaded from its
// package, the access log's destination); other backends reported.
import { rssOf, type Server } from '../processes.ts';
import {
  check,
  mb,
  median,
  ms,
  sleep,
  startBaseline,
  startTokend,
  tokendSettings,
  type Check,
  type Options,
  type OwnScenario,
} from '../support.ts';

const TARGET_START_MS = 1000;
const TARGET_RSS_OVER_BASELINE_MB = 25;

interface Starts {
  startMs: number;
  idleRss: number;
  starts: number[];
  rss: number[];
}

async function measureStarts(opts: Options, start: () => Promise<Server>): Promise<Starts> {
  const starts: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < opts.startRuns; i++) {
    const server = await start();
    try {
      starts.push(server.startMs);
      await sleep(1000);
      rss.push(rssOf(server.child.pid ?? -1));
    } finally {
      await server.stop();
    }
  }
  return { startMs: median(starts), idleRss: median(rss), starts, rss };
}

/** The bare Fastify app's figures do not depend on the backend: measured once per bench run. */
let baselineStarts: Starts | undefined;

export const startUp: OwnScenario = {
  id: 6,
  name: 'start-up',
  firstBackendOnly: false,
  tokend: 'own',
  async run({ opts, backend, database }) {
    baselineStarts ??= await measureStarts(opts, () => startBaseline('{"code":200,"message":"ok"}'));
    const t = await measureStarts(opts, () => startTokend({ opts, database }));
    const b = baselineStarts;
    const checks: Check[] = [];
    if (backend === 'sqlite')
      checks.push(
        check('start-up (ms)', t.startMs, '<=', TARGET_START_MS),
        // Against the bare Fastify app of the same run: what tokend adds to a minimal Fastify server.
        check(
          'idle RSS over bare Fastify (MB)',
          (t.idleRss - b.idleRss) / 2 ** 20,
          '<=',
          TARGET_RSS_OVER_BASELINE_MB,
        ),
      );
    return {
      scenario: 6,
      title: 'start-up to first answered request; idle RSS',
      backend,
      tokend: `${ms(t.startMs)}, ${mb(t.idleRss)}`,
      baseline: `bare Fastify: ${ms(b.startMs)}, ${mb(b.idleRss)}`,
      ratio: t.startMs / b.startMs,
      checks,
      settings: tokendSettings(opts),
      note: `median of ${opts.startRuns} starts; migrations checked on a seeded database`,
      figures: { tokend: t, baseline: b },
    };
  },
};
