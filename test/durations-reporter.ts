// A node:test reporter for test/run.ts, written to a file of the run's: one line per test file, the time
// of its tests in milliseconds and its path, tab-separated; and one line per failure, `fail`, the file and
// the name of the test or suite. In a run of many files in one process (--test-isolation=none) a file's
// top-level tests and suites (nesting 0) run one after another, and they name their file: its time is
// theirs summed. A suite whose own function fails there (before any of its tests ran) is reported as a
// failure but counted in no summary, and the process still exits 0: test/run.ts fails the run on these lines.
import { relative } from 'node:path';

interface ReportedEvent {
  type: string;
  data?: { name?: string; file?: string; nesting?: number; details?: { duration_ms?: number } };
}

export default async function* durations(source: AsyncIterable<ReportedEvent>): AsyncGenerator<string> {
  const byFile = new Map<string, number>();
  for await (const event of source) {
    const { name, file, nesting, details } = event.data ?? {};
    const path = file === undefined ? '?' : relative(process.cwd(), file);
    if (event.type === 'test:fail') yield `fail\t${path}\t${(name ?? '?').replace(/\s+/g, ' ')}\n`;
    if (event.type !== 'test:complete') continue;
    if (nesting !== 0 || file === undefined || details?.duration_ms === undefined) continue;
    byFile.set(file, (byFile.get(file) ?? 0) + details.duration_ms);
  }
  for (const [file, ms] of byFile) yield `${Math.round(ms)}\t${relative(process.cwd(), file)}\n`;
}
