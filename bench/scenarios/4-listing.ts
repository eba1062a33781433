// Scenario 4: the last page of the listing (`GET /api/v1/tokens?p=20&l=50`) of the user who holds
// TOKENS_PER_USER_MAX tokens, against its first page. Targets: req/s last page / first page ≥ 0.5, and
// no hold of tokend's event loop over 50 ms meanwhile.
import {
  BENCH_METRICS_TOKEN,
  LIST_PATH,
  METRICS_ON,
  check,
  compareLoads,
  describeLoad,
  expectStatus,
  fmt,
  listingHeaders,
  range,
  type SharedScenario,
} from '../support.ts';

const TARGET_RATIO = 0.5;
const TARGET_HELD_MS = 50;

/** tokend's longest event-loop hold since the last scrape (ms), from its metrics; the scrape resets it. */
async function loopDelayMaxMs(port: number): Promise<number> {
  const headers = { authorization: `Bearer ${BENCH_METRICS_TOKEN}` };
  const text = (await expectStatus(port, '/metrics', { headers })).body;
  const m = /^tokend_event_loop_delay_max_seconds (\S+)$/m.exec(text);
  if (!m?.[1]) throw new Error('tokend_event_loop_delay_max_seconds is missing from /metrics');
  return Number(m[1]) * 1000;
}

export const listing: SharedScenario = {
  id: 4,
  name: 'listing',
  firstBackendOnly: false,
  tokend: 'shared',
  settings: METRICS_ON,
  async run({ opts, backend }, tokend) {
    const page = (p: number) => `${LIST_PATH}?p=${p}&l=50`;
    const last = opts.spec.hotTokens / 50;
    for (const p of [1, last]) {
      const answer = await expectStatus(tokend.port, page(p), { headers: listingHeaders });
      const listed = (JSON.parse(answer.body) as { tokens: unknown[] }).tokens.length;
      if (listed !== 50) throw new Error(`page ${p} listed ${listed} tokens, expected 50`);
    }
    const spec = { headers: listingHeaders, connections: opts.connections };
    await loopDelayMaxMs(tokend.port); // resets the maximum
    const [first, deep, rounds] = await compareLoads(
      opts,
      { server: tokend, spec: { ...spec, path: page(1) } },
      { server: tokend, spec: { ...spec, path: page(last) } },
    );
    const ratio = deep.rps / first.rps;
    const heldMs = await loopDelayMaxMs(tokend.port);
    return {
      scenario: 4,
      title: `listing p=${last} vs p=1 (l=50; user with ${fmt(opts.spec.hotTokens)} of ${fmt(opts.spec.tokens)} tokens)`,
      backend,
      tokend: `p=${last}: ${describeLoad(deep)}`,
      baseline: `p=1: ${describeLoad(first)}`,
      ratio,
      ratioRange: range(rounds),
      checks: [
        check('req/s ratio', ratio, '>=', TARGET_RATIO),
        check('longest hold of the event loop (ms)', heldMs, '<=', TARGET_HELD_MS),
        check('no failed requests', deep.failures + first.failures, '<=', 0),
      ],
      settings: tokend.settings,
      figures: { firstPage: first, lastPage: deep, lastPageNumber: last, eventLoopHeldMaxMs: heldMs },
    };
  },
};
