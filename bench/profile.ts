// Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
// and the files with the most self time.
//
//   node bench/profile.ts PROFILE.cpuprofile [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

const shortUrl = (url: string): string =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '~/')
    .replace(/^.*\/(src|bench|test)\//, '$1/');

/** A dependency's files count as the package; tokend's own files and node's internals count one by one. */
const packageOf = (file: string): string => {
  const m = /^~\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  return m ? `${m[1]} (package)` : file;
};

/** Self time per function and per file or package, largest first. */
export function summarise(profile: CpuProfile): { totalMs: number; functions: Frame[]; files: Frame[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const functions = new Map<string, Frame>();
  const files = new Map<string, Frame>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '(native)';
    const name = frame.functionName || '(anonymous)';
    const fkey = `${name} ${where}`;
    const f = functions.get(fkey) ?? { name, where, selfMs: 0, share: 0 };
    f.selfMs += us / 1000;
    functions.set(fkey, f);
    const file = frame.url ? packageOf(shortUrl(frame.url)) : name.startsWith('(') ? name : '(native)';
    const g = files.get(file) ?? { name: file, where: '', selfMs: 0, share: 0 };
    g.selfMs += us / 1000;
    files.set(file, g);
  }
  const ranked = (m: Map<string, Frame>) =>
    [...m.values()]
      .map((f) => ({ ...f, share: total > 0 ? (f.selfMs * 1000) / total : 0 }))
      .sort((a, b) => b.selfMs - a.selfMs);
  return { totalMs: total / 1000, functions: ranked(functions), files: ranked(files) };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  const path = positionals[0];
  if (!path) throw new Error('usage: node bench/profile.ts PROFILE.cpuprofile [--top N]');
  const top = Number(values.top);
  const { totalMs, functions, files } = summarise(JSON.parse(readFileSync(path, 'utf8')) as CpuProfile);
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(`total sampled: ${totalMs.toFixed(0)} ms\n\nself time by function:\n`);
  for (const f of functions.slice(0, top)) process.stdout.write(`${pct(f.share)}  ${f.name}  ${f.where}\n`);
  process.stdout.write('\nself time by file or package:\n');
  for (const f of files.slice(0, top)) process.stdout.write(`${pct(f.share)}  ${f.name}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
