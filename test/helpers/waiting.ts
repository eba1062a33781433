// Waiting without hanging: a deadline on a promise (a hang detector), bounded retries, a sleep.

/** Rejects with `what` when `promise` has not settled within `ms` (a hang detector, not a benchmark). */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries `attempt` until it returns true, at most `tries` times, `intervalMs` apart. */
export async function eventually(tries: number, intervalMs: number, attempt: () => Promise<boolean>) {
  for (let i = 0; i < tries; i++) {
    if (await attempt().catch(() => false)) return true;
    await sleep(intervalMs);
  }
  return false;
}
