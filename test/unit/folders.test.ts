// The folders of src/ form layers: no two folders import each other, directly or round a longer loop
// (type-only imports count: they tie the code as much), and their order, each above what it imports, is
// the one DEVELOPERS.md documents. Each top-level file of src/ (app.ts, config.ts, …) counts as a folder
// of its own. `node --test test/unit/folders.test.ts` prints the loop when one appears; `node
// bin/folders.ts` prints the order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SRC,
  findLoop,
  folderEdges,
  folderLevels,
  folderOf,
  folderOrderLine,
  reaches,
  srcEdges,
  srcFolders,
} from '../../bin/folders.ts';

/** The order DEVELOPERS.md documents: the line after its `folders, each above what it imports` marker. */
function documentedOrder(): string {
  const text = readFileSync(new URL('../../DEVELOPERS.md', import.meta.url), 'utf8');
  const line = /<!-- folders, each above what it imports[^>]*-->\n+`?([^`\n]+)`?/.exec(text)?.[1];
  assert.ok(line, 'DEVELOPERS.md documents the order of the folders');
  return line.trim();
}

describe('the folders of src/', () => {
  it('import each other in one direction only: no loop of folders', () => {
    const { edges } = srcEdges();
    assert.ok((edges.get('app.ts')?.size ?? 0) > 5, 'the imports were read');
    const loop = findLoop(edges);
    const why = loop?.slice(1).map((to, i) => {
      const from = loop[i] ?? '';
      return `${from} -> ${to}: ${(edges.get(from)?.get(to) ?? []).join(', ')}`;
    });
    assert.equal(loop, undefined, `a loop of folders:\n${why?.join('\n')}`);
  });

  it('are in the order DEVELOPERS.md documents, each above what it imports', () => {
    const { files, edges } = srcEdges();
    const documented = documentedOrder();
    const groups = documented.split(' → ').map((group) => group.split(' '));
    assert.deepEqual([...groups.flat()].sort(), srcFolders(), 'every folder of src/ is in the order, once');
    // Each folder is above every folder it imports, directly or through others (top-level files too).
    const at = new Map(groups.flatMap((group, i) => group.map((folder) => [folder, i] as const)));
    for (const [from, i] of at)
      for (const [to, j] of at)
        if (from !== to && reaches(edges, from, to))
          assert.ok(i < j, `${from} imports ${to}, so DEVELOPERS.md must list it above`);
    // And the order is the one the imports give (node bin/folders.ts prints it).
    const levels = folderLevels(edges, new Set(files.map(folderOf)));
    assert.equal(documented, folderOrderLine(levels, new Set(srcFolders())), 'run node bin/folders.ts');
  });

  it('levels a graph: each above what it imports, the same level when neither imports the other', () => {
    const graph = (pairs: [string, string][]) => {
      const edges = new Map<string, Map<string, string[]>>();
      for (const [a, b] of pairs) edges.set(a, (edges.get(a) ?? new Map()).set(b, [`${a}${b}`]));
      return edges;
    };
    const edges = graph([
      ['app/', 'web/'],
      ['web/', 'store/'],
      ['cli/', 'store/'],
      ['app/', 'cli/'],
    ]);
    assert.deepEqual(folderLevels(edges, ['lone/']), [['app/'], ['cli/', 'web/'], ['lone/', 'store/']]);
    assert.equal(reaches(edges, 'app/', 'store/'), true);
    assert.equal(reaches(edges, 'store/', 'app/'), false);
    assert.equal(
      folderOrderLine(folderLevels(edges), new Set(['app/', 'web/', 'store/'])),
      'app/ → web/ → store/',
    );
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
