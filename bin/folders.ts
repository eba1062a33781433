// The folders of src/ in their import order, each above what it imports, from a scan of the sources'
// relative imports (static, type-only and dynamic: each ties the code as much). Each top-level file of
// src/ (app.ts, config.ts, …) counts as a folder of its own. Run it to see the order:
//
//   node bin/folders.ts
//
// Each line is a level: a folder is one level above the highest folder it imports, and the folders of a
// level import none of each other. test/unit/folders.test.ts holds the order DEVELOPERS.md documents to
// these imports, and fails on a loop of folders.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** Every import or re-export of a relative module, static or dynamic: `from './x.ts'`, `import('./x.ts')`. */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** A folder's imports of other folders, each with the file pairs behind it. */
export type FolderEdges = Map<string, Map<string, string[]>>;

/** The folder (first path segment under src/) of a file, or the file's own name for a top-level file. */
export function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? `${parts[0]}/` : (parts[0] ?? file);
}

/** Each folder's imports of other folders, with the file pairs behind each edge. */
export function folderEdges(files: readonly string[], read: (file: string) => string): FolderEdges {
  const edges: FolderEdges = new Map();
  for (const file of files) {
    const text = read(file);
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      const target = resolve(dirname(file), match[1] ?? '');
      const from = folderOf(file);
      const to = folderOf(target);
      if (from === to) continue;
      const out = edges.get(from) ?? new Map<string, string[]>();
      edges.set(from, out);
      const pairs = out.get(to) ?? [];
      out.set(to, pairs);
      pairs.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  return edges;
}

/** The first loop of folders found by a depth-first walk (each folder once), or undefined. */
export function findLoop(
  edges: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>,
): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    const at = path.indexOf(node);
    if (at >= 0) return [...path.slice(at), node];
    if (done.has(node)) return undefined;
    path.push(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      const loop = visit(next);
      if (loop) return loop;
    }
    path.pop();
    done.add(node);
    return undefined;
  };
  for (const node of [...edges.keys()].sort()) {
    const loop = visit(node);
    if (loop) return loop;
  }
  return undefined;
}

/**
 * The folders by level, the highest first: a folder that imports none is level 0, any other one level
 * above the highest it imports. Within a level, by name. The graph must have no loop (`findLoop`).
 */
export function folderLevels(
  edges: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>,
  folders: Iterable<string> = [],
): string[][] {
  const level = new Map<string, number>();
  const levelOf = (node: string): number => {
    const known = level.get(node);
    if (known !== undefined) return known;
    let mine = 0;
    for (const next of edges.get(node)?.keys() ?? []) mine = Math.max(mine, levelOf(next) + 1);
    level.set(node, mine);
    return mine;
  };
  const all = new Set([
    ...folders,
    ...edges.keys(),
    ...[...edges.values()].flatMap((out) => [...out.keys()]),
  ]);
  for (const node of all) levelOf(node);
  const levels: string[][] = [];
  for (const [node, at] of level) (levels[at] ??= []).push(node);
  return levels.map((names) => names.sort()).reverse();
}

/** Whether `from` imports `to`, directly or through other folders. */
export function reaches(
  edges: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>,
  from: string,
  to: string,
): boolean {
  const seen = new Set<string>();
  const walk = (node: string): boolean => {
    if (seen.has(node)) return false;
    seen.add(node);
    for (const next of edges.get(node)?.keys() ?? []) if (next === to || walk(next)) return true;
    return false;
  };
  return walk(from);
}

/** The .ts files under a folder. */
export function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The folders (not the top-level files) of src/. */
export const srcFolders = (): string[] =>
  readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${entry.name}/`)
    .sort();

/** The imports between the folders of src/ as they are now. */
export function srcEdges(): { files: string[]; edges: FolderEdges } {
  const files = sources(SRC);
  return { files, edges: folderEdges(files, (file) => readFileSync(file, 'utf8')) };
}

/** The folders' levels without the top-level files, written as DEVELOPERS.md documents them. */
export function folderOrderLine(
  levels: readonly (readonly string[])[],
  folders: ReadonlySet<string>,
): string {
  return levels
    .map((names) => names.filter((n) => folders.has(n)))
    .filter((names) => names.length > 0)
    .map((names) => names.join(' '))
    .join(' → ');
}

if (import.meta.main) {
  const { files, edges } = srcEdges();
  const loop = findLoop(edges);
  if (loop) {
    process.stderr.write(`a loop of folders: ${loop.join(' -> ')}\n`);
    process.exit(1);
  }
  const levels = folderLevels(edges, new Set(files.map(folderOf)));
  process.stdout.write('src/ by level, each above what it imports (the folders alone on the last line):\n');
  for (const names of levels) process.stdout.write(`  ${names.join(' ')}\n`);
  process.stdout.write(`folders: ${folderOrderLine(levels, new Set(srcFolders()))}\n`);
}
