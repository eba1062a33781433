// The examples of the README and of the guides that go on from its tour, as written: every `$` command of
// their `console` blocks, taken from the markdown itself, runs in order in one bash session (so TOKEN and
// the other variables carry over) against one fresh tokend on a fresh SQLite file and a free port, with B
// (the API's address) and DATABASE_URL set as a reader's shell would have them. The files run in the order
// of EXAMPLE_FILES, each continuing the state the one before left: the README's five-minute tour makes
// alice, docs/api.md goes on with the API (more users, tokens 2 to 9), and docs/cli.md with the tokend
// command (tokens from 10 on). Each answer must be the one the file shows under the command, with
// secrets, times and Retry-After's seconds masked on both sides; a line "…" in a file stands for any
// lines, and "…" within a line for any text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IN_CI } from './helpers/dialects.ts';
import { startTokend } from './helpers/real-server.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The files whose examples run, in this order, on one tokend: each goes on from the state the one before left. */
const EXAMPLE_FILES = ['README.md', 'docs/api.md', 'docs/cli.md'];

interface Example {
  /** The command as typed, continuation lines included. */
  command: string;
  /** The lines the file shows under it. */
  answer: string[];
  /** Where it is, for messages: the file and its line number. */
  file: string;
  line: number;
}

/** Every `$` command of a file's console blocks, in order, with the answer shown under it. */
function examples(file: string, markdown: string): Example[] {
  const found: Example[] = [];
  const lines = markdown.split('\n');
  /** The indentation of the console block we are in (a block in a list item is indented), or -1. */
  let indent = -1;
  let current: Example | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    if (indent < 0) {
      if (raw.trim() === '```console') indent = raw.length - raw.trimStart().length;
      continue;
    }
    const line = raw.slice(Math.min(indent, raw.length - raw.trimStart().length));
    if (line.startsWith('```')) {
      indent = -1;
      current = undefined;
    } else if (line.startsWith('$ ')) {
      current = { command: line.slice(2), answer: [], file, line: i + 1 };
      // A line ending in a backslash goes on on the next one, as in the shell.
      while (current.command.endsWith('\\') && i + 1 < lines.length) current.command += `\n${lines[++i]}`;
      found.push(current);
    } else if (current) current.answer.push(line);
  }
  return found;
}

/** What differs from one run to the next: secrets, times (Unix and UTC), Retry-After's seconds. */
const mask = (text: string): string =>
  text
    .replace(/\b[0-9a-f]{32}\b/g, '<secret>')
    .replace(/\b1[0-9]{9}\b/g, '<time>')
    .replace(/\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b/g, '<date-time>')
    .replace(/^(retry-after): \d+$/gim, '$1: <seconds>');

/** Whether `actual` (lines) is what the file shows, "…" lines and "…" within lines included. */
function matches(shown: string[], actual: string): boolean {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = shown
    .map((line) =>
      line === '…' ? '(?:[^\\n]*\\n)*?' : `${escape(mask(line)).replaceAll('…', '[^\\n]*')}\\n`,
    )
    .join('');
  const text = mask(actual);
  return new RegExp(`^${pattern}$`).test(text === '' || text.endsWith('\n') ? text : `${text}\n`);
}

const missing = ['bash', 'curl', 'jq'].filter(
  (tool) => spawnSync('bash', ['-c', `command -v ${tool}`]).status !== 0,
);
const skip =
  missing.length === 0 || IN_CI ? false : `the examples need ${missing.join(', ')} (apt-get install …)`;

describe("the README's examples, and those of the guides that go on from it", () => {
  it('run in order against a fresh tokend and answer as shown', { skip, timeout: 300_000 }, async (t) => {
    assert.deepEqual(missing, [], 'bash, curl and jq');
    const found = EXAMPLE_FILES.flatMap((file) => {
      const inFile = examples(file, readFileSync(join(ROOT, file), 'utf8'));
      assert.ok(inFile.length > 0, `${file} has no console example`);
      return inFile;
    });
    assert.ok(found.length > 40, `found only ${found.length} examples`);

    const dir = mkdtempSync(join(tmpdir(), 'tokend-readme-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const database = `sqlite:${join(dir, 'tokend.db')}`;
    const server = await startTokend({ DATABASE_URL: database, LOG_LEVEL: 'warn' }, [
      'bin/tokend.js',
      'serve',
    ]);
    t.after(() => server.kill());

    // One shell for all of them; after each command a line of its own marks where its answer ends.
    const mark = (n: number) => `@@readme-example ${n}@@`;
    const script = found.map((e, n) => `${e.command}\nprintf '\\n%s\\n' '${mark(n)}'`).join('\n');
    const output = await new Promise<string>((resolve, reject) => {
      // The inner shell writes into a pipe the outer one made: `tee /dev/stderr` can open a pipe, not
      // the socket Node gives a child for its stdout.
      const shell = spawn('bash', ['-c', 'bash -s 2>&1 | cat'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? dir,
          B: server.baseUrl,
          DATABASE_URL: database,
          npm_config_update_notifier: 'false',
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      shell.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      const timer = setTimeout(() => shell.kill('SIGKILL'), 240_000);
      shell.on('error', reject);
      shell.on('close', () => {
        clearTimeout(timer);
        resolve(out);
      });
      shell.stdin.end(`${script}\n`);
    });

    const mismatches: string[] = [];
    let rest = output.replace(/\r\n/g, '\n');
    found.forEach((example, n) => {
      const end = rest.indexOf(`\n${mark(n)}\n`);
      assert.ok(end >= 0, `${example.file}:${example.line}: no end of its answer (the shell stopped?)`);
      const actual = rest.slice(0, end);
      rest = rest.slice(end + mark(n).length + 2);
      if (!matches(example.answer, actual))
        mismatches.push(
          `${example.file}:${example.line}: $ ${example.command}\n` +
            `--- shown\n${example.answer.join('\n')}\n--- answered\n${actual}`,
        );
    });
    assert.deepEqual(mismatches, [], `\n${mismatches.join('\n\n')}`);
  });
});
