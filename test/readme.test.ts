// The README's promises: every npm command it and the guides it links show exists, and the configuration
// table of docs/configuration.md covers exactly the environment variables src/config.ts reads.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { configVariablesInSource } from './helpers/config-source.ts';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const README = read('README.md');
/** The guides the README links that show commands to type. */
const GUIDES = [
  'docs/api.md',
  'docs/cli.md',
  'docs/configuration.md',
  'docs/operations.md',
  'docs/testing.md',
];
const CONFIGURATION = read('docs/configuration.md');
const SCRIPTS = Object.keys(
  (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts,
);

/** npm commands that are not scripts (`npm test`/`npm start` run scripts, so they are checked as scripts). */
const NPM_BUILTINS = new Set(['ci', 'install', 'link', 'unlink', 'ls', 'pack', 'version']);
const NPM_SCRIPT_SHORTHANDS = new Set(['test', 'start', 'stop', 'restart']);

/** Text that is meant to be typed: fenced code blocks and inline code spans. */
function codeOf(markdown: string): string[] {
  const fenced = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1] ?? '');
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  const inline = [...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? '');
  return [...fenced, ...inline];
}

/** The first-column names of the table under "# Configuration", before the next section. */
function configTableVariables(markdown: string): string[] {
  const section = /^# Configuration\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1];
  assert.ok(section, 'docs/configuration.md has a "# Configuration" section');
  return [...section.matchAll(/^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/gm)].map((m) => m[1] ?? '');
}

/** The npm scripts a file's code runs, into `used`; fails on an npm command that is neither. */
function npmScriptsOf(file: string, markdown: string, used: Set<string>): void {
  for (const code of codeOf(markdown))
    for (const m of code.matchAll(
      /(?:^|[\s;&|(])npm\s+(?:run(?:-script)?\s+(?:-s\s+|--silent\s+)?([\w:.-]+)|([a-z][\w-]*))/g,
    )) {
      const script = m[1];
      const command = m[2];
      if (script) used.add(script);
      else if (command && NPM_SCRIPT_SHORTHANDS.has(command)) used.add(command);
      else if (command && !NPM_BUILTINS.has(command))
        assert.fail(`${file} uses "npm ${command}", which is neither a script nor a known npm command`);
    }
}

describe('README.md', () => {
  it('names only npm commands that exist, as do the guides it links', () => {
    const used = new Set<string>();
    npmScriptsOf('README', README, used);
    assert.ok(used.has('start') && used.has('test'), 'README shows how to start tokend and run the tests');
    for (const file of GUIDES) npmScriptsOf(file, read(file), used);
    for (const script of used)
      assert.ok(SCRIPTS.includes(script), `README or a guide runs "npm ${script}", not in package.json`);
  });

  it('documents every environment variable src/config.ts reads, and no other, in its table', () => {
    const read = configVariablesInSource();
    assert.ok(read.includes('DATABASE_URL') && read.includes('PORT'), `parsed ${read.join(', ')}`);
    const documented = configTableVariables(CONFIGURATION);
    for (const name of read)
      assert.ok(documented.includes(name), `${name} is missing from docs/configuration.md's table`);
    for (const name of documented)
      assert.ok(read.includes(name), `docs/configuration.md documents ${name}, which config.ts never reads`);
  });
});
