// The one way tokend runs work now and then (the expiry sweeps, the last-used flush): on a timer that
// never keeps the process alive, runs that never overlap, and a stop that waits for the run in progress.

export class PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private readonly work: () => Promise<void>;

  /** `work` reports its own failures (it should not reject; a rejection is dropped, not retried twice). */
  constructor(work: () => Promise<void>) {
    this.work = work;
  }

  /** Runs every `intervalMs` until stopped; starting twice keeps the first timer. */
  start(intervalMs: number): void {
    this.timer ??= setInterval(() => void this.runNow(), intervalMs);
    this.timer.unref();
  }

  /** Runs once more, after any run in progress; resolves when this run is done. */
  runNow(): Promise<void> {
    this.running = this.running.then(this.work).catch(() => undefined);
    return this.running;
  }

  /** Stops the timer and waits for the run in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
