// Started through npm (`npm start`, `npm run tokend -- serve`), tokend runs under `sh -c`, under npm. On
// SIGTERM npm exits at once and the shell with it, without passing the signal on, and tokend would serve
// on as an orphan. So under npm a serving process watches its parent: once it is gone (the parent
// process id changes, as the orphan is adopted), tokend shuts down as on SIGTERM. Elsewhere (a process
// manager starting `node bin/tokend.js serve` itself) the parent is that manager and nothing is watched.

/** How often the parent is looked at: a shutdown begins within this long of npm's exit. */
const WATCH_INTERVAL_MS = 500;

/** Calls `onExit` once, when the process that started this one has exited; only when started by npm. */
export function whenNpmParentExits(onExit: () => void, env: NodeJS.ProcessEnv = process.env): void {
  if (env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    onExit();
  }, WATCH_INTERVAL_MS);
  watch.unref();
}
