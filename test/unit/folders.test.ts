// The folders of src/ form layers: no two folders import each other, directly or round a longer loop
// (type-only imports count: they tie the code as much). Each top-level file of src/ (app.ts, config.ts, …)
// counts as a folder of its own. `node --test test/unit/folders.test.ts` prints the loop when one appears.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** Every import or re-export of a relative module, static or dynamic: `from './x.ts'`, `import('./x.ts')`. */
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The folder (first path segment under src/) of a file, or the file's own name for a top-level file. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? `${parts[0]}/` : (parts[0] ?? file);
}

/** Each folder's imports of other folders, with the file pairs behind each edge. */
function folderEdges(files: readonly string[], read: (file: string) => string) {
  const edges = new Map<string, Map<string, string[]>>();
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
function findLoop(edges: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>): string[] | undefined {
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

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the folders of src/', () => {
  it('import each other in one direction only: no loop of folders', () => {
    const edges = folderEdges(sources(SRC), (file) => readFileSync(file, 'utf8'));
    assert.ok((edges.get('app.ts')?.size ?? 0) > 5, 'the imports were read');
    const loop = findLoop(edges);
    const why = loop?.slice(1).map((to, i) => {
      const from = loop[i] ?? '';
      return `${from} -> ${to}: ${(edges.get(from)?.get(to) ?? []).join(', ')}`;
    });
    assert.equal(loop, undefined, `a loop of folders:\n${why?.join('\n')}`);
  });

  it('a loop is found when there is one, and named from where it starts', () => {
    const graph = (pairs: [string, string][]) => {
      const edges = new Map<string, Map<string, string[]>>();
      for (const [a, b] of pairs) edges.set(a, (edges.get(a) ?? new Map()).set(b, [`${a}${b}`]));
      return edges;
    };
    assert.equal(
      findLoop(
        graph([
          ['a/', 'b/'],
          ['b/', 'c/'],
          ['a/', 'c/'],
        ]),
      ),
      undefined,
    );
    assert.deepEqual(
      findLoop(
        graph([
          ['a/', 'b/'],
          ['b/', 'c/'],
          ['c/', 'b/'],
        ]),
      ),
      ['b/', 'c/', 'b/'],
    );
    assert.deepEqual(
      findLoop(
        graph([
          ['x/', 'x.ts'],
          ['x.ts', 'x/'],
        ]),
      ),
      ['x.ts', 'x/', 'x.ts'],
    );
  });

  it('reads static, type-only and dynamic imports', () => {
    const file = join(SRC, 'a', 'one.ts');
    const text = [
      "import { x } from '../b/two.ts';",
      "import type { Y } from '../c/three.ts';",
      "const z = await import('../d/four.ts');",
      "export { w } from '../top.ts';",
      "import './side-effect.ts';",
      "import { q } from 'fastify';",
    ].join('\n');
    const edges = folderEdges([file], () => text);
    assert.deepEqual([...(edges.get('a/')?.keys() ?? [])].sort(), ['b/', 'c/', 'd/', 'top.ts']);
  });
});
