// `npm test`: every test file (test/**/*.test.ts but the fresh clone's, which .ci/run runs as a step of its
// own), in node:test runs whose processes each load many files one after another (--test-isolation=none):
// a file's process no longer starts Node, strips and compiles src/ and its packages, and warms the JIT up
// for its few seconds of tests only (that was about half of the suite's CPU):
// 1. the files that share nothing (each makes its own databases, Redis key prefixes and ports), dealt into
//    shards of about equal time (FILE_TIMES), TEST_CONCURRENCY shards at a time (by default twice the
//    machine's cores: much of a shard's time is spent waiting for the database servers, whose work overlaps);
// 2. the files that must run alone (SERIAL below), one after another in one process of their own.
// Both runs always happen; the exit code is the worst of them. Then the slowest files and the sum of every
// file's time (test/durations-reporter.ts); with TEST_TIMES=FILE, every file's time is written there too
// (milliseconds, tab, path, slowest first).
import { spawn } from 'node:child_process';
import { globSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where Node keeps its compile cache unless NODE_COMPILE_CACHE says otherwise (module.enableCompileCache). */
const COMPILE_CACHE = join(tmpdir(), 'node-compile-cache');

/** Not part of `npm test`: the README on a fresh clone runs `npm test` itself (.ci/run's last step). */
export const SEPARATE = ['test/fresh-clone.test.ts'];

/**
 * Files (or folders) that run alone, each for a reason: their subject is timing or load, which other
 * files running beside them would change.
 */
export const SERIAL = [
  // the benchmark's comparison of two checkouts measures them
  'test/bench/compare.test.ts',
  // failing commands, Node's start-up included, must end within a deadline (a start-up beside the
  // shards' load took longer)
  'test/cli/errors.test.ts',
  // floods, outages, crashes and shutdowns on real sockets, with deadlines on the server's answers
  'test/reliability/',
  // several tokend processes (WORKERS=2, two instances) and the events between them, with deadlines
  'test/scale/',
];

const isSerial = (file: string): boolean =>
  SERIAL.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry));

/** The files `npm test` runs, split into the two runs. */
export function testFiles(): { parallel: string[]; serial: string[] } {
  const all = globSync('test/**/*.test.ts', { cwd: ROOT })
    .map((file) => file.split('\\').join('/'))
    .filter((file) => !SEPARATE.includes(file))
    .sort();
  return { parallel: all.filter((f) => !isSerial(f)), serial: all.filter(isSerial) };
}

/** Where each file's time in a recent run is kept, the shards' weights: `TEST_TIMES=test/file-times.tsv npm test` renews it. */
export const FILE_TIMES = join(ROOT, 'test', 'file-times.tsv');

/**
 * Each file's weight: its time in a recent run (`recorded`, milliseconds by path); a file not recorded
 * (a new one) weighs its size at the recorded files' milliseconds per byte, three times that for a
 * browser test (Chromium draws each page).
 */
export function fileWeights(
  recorded: ReadonlyMap<string, number>,
  size: (file: string) => number,
): (file: string) => number {
  const sized = (file: string) => size(file) * (file.endsWith('.browser.test.ts') ? 3 : 1);
  let ms = 0;
  let bytes = 0;
  for (const [file, time] of recorded) {
    let weight = 0;
    try {
      weight = sized(file);
    } catch {
      // recorded, since gone
    }
    if (weight > 0) {
      ms += time;
      bytes += weight;
    }
  }
  const perByte = bytes > 0 ? ms / bytes : 1;
  return (file) => recorded.get(file) ?? sized(file) * perByte;
}

/** The recorded times of FILE_TIMES (TEST_TIMES's form: milliseconds, tab, path); none when it is missing. */
function recordedTimes(): Map<string, number> {
  try {
    return new Map(
      readFileSync(FILE_TIMES, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const [ms, file] = line.split('\t');
          return [file!, Number(ms)] as const;
        })
        .filter(([, ms]) => Number.isFinite(ms) && ms >= 0),
    );
  } catch {
    return new Map();
  }
}

/**
 * The files dealt into `count` shards of about equal weight, heaviest first to the lightest shard; the
 * heaviest shards come first, so the last to start are short.
 */
export function shards(
  files: readonly string[],
  count: number,
  weight: (file: string) => number,
): string[][] {
  const dealt = Array.from({ length: Math.max(1, Math.min(count, files.length)) }, () => ({
    files: [] as string[],
    weight: 0,
  }));
  for (const file of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const lightest = dealt.reduce((min, shard) => (shard.weight < min.weight ? shard : min));
    lightest.files.push(file);
    lightest.weight += weight(file);
  }
  return dealt
    .filter((shard) => shard.files.length > 0)
    .sort((a, b) => b.weight - a.weight)
    .map((shard) => shard.files.sort());
}

/** One node:test run of `files` in one process; its exit code. */
function nodeTest(files: string[], durations: string): Promise<number> {
  const args = [
    '--test',
    // Every file in this process, one after another: their tests run as when each had a process of its
    // own, but for what files share in a process (test/helpers/browser.ts: one Chromium for them all).
    '--test-isolation=none',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(ROOT, 'test', 'durations-reporter.ts')}`,
    `--test-reporter-destination=${durations}`,
    ...files,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      stdio: 'inherit',
      // With Node's compile cache each run reuses the type-stripped sources and compiled code of the runs
      // before it (the cache is checked against each file's contents), as the shipped entry (bin/tokend.js) does.
      env: { ...process.env, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? COMPILE_CACHE },
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

/** Runs the shards, `concurrency` at a time, in order; the worst exit code. */
async function runShards(all: string[][], concurrency: number, work: string): Promise<number> {
  let next = 0;
  let worst = 0;
  const lane = async () => {
    while (next < all.length) {
      const index = next++;
      const files = all[index]!;
      process.stdout.write(`# shard ${index + 1} of ${all.length}: ${files.length} files\n`);
      worst = Math.max(worst, await nodeTest(files, join(work, `shard-${index + 1}.tsv`)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, all.length) }, lane));
  return worst;
}

if (import.meta.main && process.argv.length > 2) {
  process.stderr.write('npm test runs every file and takes none: run one with node --test FILE\n');
  process.exitCode = 2;
} else if (import.meta.main) {
  const cores = availableParallelism();
  const concurrency = Number(process.env.TEST_CONCURRENCY ?? '') || 2 * cores;
  const { parallel, serial } = testFiles();
  const work = mkdtempSync(join(tmpdir(), 'tokend-test-run-'));
  const started = performance.now();
  try {
    // Twice as many shards as run at once: a shard that ends early makes way for the next.
    const weight = fileWeights(recordedTimes(), (file) => statSync(join(ROOT, file)).size);
    const dealt = shards(parallel, 2 * concurrency, weight);
    process.stdout.write(`# ${parallel.length} files in ${dealt.length} shards, ${concurrency} at a time\n`);
    const first = await runShards(dealt, concurrency, work);
    process.stdout.write(`# ${serial.length} files that run alone, one at a time\n`);
    const parallelEnded = performance.now();
    const second = await nodeTest(serial, join(work, 'serial.tsv'));
    const lines = globSync('*.tsv', { cwd: work })
      .flatMap((name) => readFileSync(join(work, name), 'utf8').split('\n'))
      .filter((line) => line !== '')
      .map((line) => line.split('\t'));
    const failures = lines.filter(([kind]) => kind === 'fail').map(([, file, name]) => `${file}: ${name}`);
    const times = lines
      .filter(([kind]) => kind !== 'fail')
      .map(([ms, file]) => ({ ms: Number(ms), file: file! }))
      .sort((a, b) => b.ms - a.ms);
    if (process.env.TEST_TIMES)
      writeFileSync(process.env.TEST_TIMES, times.map((t) => `${t.ms}\t${t.file}\n`).join(''));
    const seconds = (ms: number) => (ms / 1000).toFixed(1);
    const sum = times.reduce((total, t) => total + t.ms, 0);
    process.stdout.write(
      `# the slowest files:\n${times
        .slice(0, 5)
        .map((t) => `#   ${seconds(t.ms)} s ${t.file}\n`)
        .join('')}` +
        `# ${times.length} files: ${seconds(sum)} s of file time in ${seconds(performance.now() - started)} s ` +
        `(${seconds(parallelEnded - started)} s for the files run together)\n`,
    );
    // Every failure, including those node:test reports without counting them (durations-reporter.ts).
    if (failures.length > 0)
      process.stdout.write(`# failed:\n${[...new Set(failures)].map((f) => `#   ${f}\n`).join('')}`);
    process.exitCode = Math.max(first, second, failures.length > 0 ? 1 : 0);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
