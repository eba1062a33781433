// PeriodicJob: runs never overlap, stop waits for the run in progress, a failure does not stop the job.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { PeriodicJob } from '../../src/periodic.ts';

describe('PeriodicJob', () => {
  it('runs one at a time, in order, each runNow resolving after its own run', async () => {
    const events: string[] = [];
    let n = 0;
    const job = new PeriodicJob(async () => {
      const i = ++n;
      events.push(`start ${i}`);
      await sleep(10);
      events.push(`end ${i}`);
    });
    await Promise.all([job.runNow(), job.runNow(), job.runNow()]);
    assert.deepEqual(events, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
  });

  it('runs on its timer, and stop waits for the run in progress and ends the timer', async () => {
    let runs = 0;
    let finished = 0;
    const job = new PeriodicJob(async () => {
      runs++;
      await sleep(30);
      finished++;
    });
    job.start(5);
    job.start(5); // the second start keeps the first timer
    while (runs === 0) await sleep(2);
    await job.stop();
    assert.equal(finished, runs, 'stop resolved only after the run in progress');
    const after = runs;
    await sleep(30);
    assert.equal(runs, after, 'no run after stop');
  });

  it('goes on after a run that rejects', async () => {
    let calls = 0;
    const job = new PeriodicJob(async () => {
      calls++;
      if (calls === 1) throw new Error('boom');
    });
    await job.runNow();
    await job.runNow();
    assert.equal(calls, 2);
  });
});
