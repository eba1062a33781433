// A node:test reporter for test/run.ts: one line per test file, its time in milliseconds (from its start
// to its end, loading included) and its path, tab-separated. node:test reports each file as a test at
// nesting 0 named by its path.
import { isAbsolute, relative, resolve } from 'node:path';

interface ReportedEvent {
  type: string;
  data?: { name?: string; file?: string; nesting?: number; details?: { duration_ms?: number } };
}

export default async function* durations(source: AsyncIterable<ReportedEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { name, file, nesting, details } = event.data ?? {};
    if (nesting !== 0 || name === undefined || file === undefined || details?.duration_ms === undefined)
      continue;
    if (resolve(name) !== file && !(isAbsolute(name) && name === file)) continue;
    yield `${Math.round(details.duration_ms)}\t${relative(process.cwd(), file)}\n`;
  }
}
