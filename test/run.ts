// `npm test`: every test file (test/**/*.test.ts but the fresh clone's, which .ci/run runs as a step of its
// own), in two runs of node --test:
// 1. the files that share nothing (each makes its own databases, Redis key prefixes and ports), several
//    at a time: TEST_CONCURRENCY of them, by default twice the machine's cores (most of a file's time is
//    spent waiting for the database servers, whose work overlaps);
// 2. the files that must run alone (SERIAL below), one at a time.
// Both runs always happen; the exit code is the worst of the two. Then the slowest files and the sum of
// every file's time (test/durations-reporter.ts); with TEST_TIMES=FILE, every file's time is written there
// too (milliseconds, tab, path, slowest first).
import { spawn } from 'node:child_process';
import { globSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

function nodeTest(files: string[], concurrency: number, durations: string): Promise<number> {
  const args = [
    '--test',
    `--test-concurrency=${concurrency}`,
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
      // Each test file is a process of its own that loads much of src/ and its packages: with Node's
      // compile cache they reuse the type-stripped sources and compiled code of the processes before them
      // (the cache is checked against each file's contents), as the shipped entry (bin/tokend.js) does.
      env: { ...process.env, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? COMPILE_CACHE },
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
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
    process.stdout.write(`# ${parallel.length} files, ${concurrency} at a time\n`);
    const first = await nodeTest(parallel, concurrency, join(work, 'parallel.tsv'));
    process.stdout.write(`# ${serial.length} files that run alone, one at a time\n`);
    const parallelEnded = performance.now();
    const second = await nodeTest(serial, 1, join(work, 'serial.tsv'));
    const times = ['parallel.tsv', 'serial.tsv']
      .flatMap((name) => readFileSync(join(work, name), 'utf8').split('\n'))
      .filter((line) => line !== '')
      .map((line) => {
        const [ms, file] = line.split('\t') as [string, string];
        return { ms: Number(ms), file };
      })
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
    process.exitCode = Math.max(first, second);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
