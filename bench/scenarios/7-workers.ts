// Scenario 7: scenario 1's reads against tokend with `WORKERS=2`, against the same reads on the shared
// 1-worker tokend, alternating. Reported, no target.
import { availableParallelism } from 'node:os';
import { childrenOf } from '../processes.ts';
import {
  check,
  compareLoads,
  describeLoad,
  range,
  readSpec,
  sleep,
  startTokend,
  type SharedScenario,
} from '../support.ts';

export const workers: SharedScenario = {
  id: 7,
  name: 'WORKERS=2',
  firstBackendOnly: true,
  tokend: 'shared',
  settings: {},
  async run({ opts, backend, database }, one) {
    const title = 'scale: `WORKERS=2` vs 1 worker (read req/s)';
    const two = await startTokend({ opts, database }, { ...one.settings, WORKERS: '2' });
    try {
      await sleep(500); // let every worker come up; the first answer may come from the first one ready
      const workerProcesses = childrenOf(two.child.pid ?? -1).length;
      if (workerProcesses < 2)
        return {
          scenario: 7,
          title,
          backend,
          tokend: 'not measurable yet',
          baseline: '—',
          ratio: null,
          checks: [],
          settings: two.settings,
          note: `WORKERS=2 started ${workerProcesses} worker processes: src/server.ts does not fork workers yet`,
          figures: { workerProcesses },
        };
      const [oneWorker, twoWorkers, rounds] = await compareLoads(
        opts,
        { server: one, spec: readSpec(opts) },
        { server: two, spec: readSpec(opts) },
      );
      return {
        scenario: 7,
        title,
        backend,
        tokend: `2 workers: ${describeLoad(twoWorkers)}`,
        baseline: `1 worker: ${describeLoad(oneWorker)}`,
        ratio: twoWorkers.rps / oneWorker.rps,
        ratioRange: range(rounds),
        checks: [check('no failed requests', twoWorkers.failures + oneWorker.failures, '<=', 0)],
        settings: two.settings,
        note: `${availableParallelism()} cores, shared with the load generator`,
        figures: { twoWorkers, oneWorker, workerProcesses },
      };
    } finally {
      await two.stop();
    }
  },
};
