// Colour in human output: only on a terminal, never with NO_COLOR set, never with --json (runCli in-process).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { allCommands } from '../../src/cli/commands/index.ts';
import { runCli } from '../../src/cli/run.ts';
import { wantsColour } from '../../src/cli/format.ts';

const ESC = '\u001b[';
const commands = await allCommands();

async function runInProcess(args: string[], isTTY: boolean, env: Record<string, string | undefined>) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(commands, args, {
    stdout: { isTTY, write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Readable.from([]),
    env,
  });
  return { code, stdout, stderr };
}

describe('tokend output colour', () => {
  it('wantsColour: a terminal, and NO_COLOR unset or empty', () => {
    assert.equal(wantsColour(true, {}), true);
    assert.equal(wantsColour(true, { NO_COLOR: '' }), true);
    assert.equal(wantsColour(true, { NO_COLOR: '1' }), false);
    assert.equal(wantsColour(false, {}), false);
    assert.equal(wantsColour(undefined, {}), false);
  });

  it('colours text on a terminal only, and never the --json object', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-colour-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // The configuration comes from the environment runCli is given.
    const env = { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`, BCRYPT_COST: '4' };
    const create = (name: string) => ['user', 'create', '--username', name, '--password', 'p'];

    const tty = await runInProcess(create('a'), true, env);
    assert.equal(tty.code, 0, tty.stderr);
    assert.ok(tty.stdout.includes(ESC), tty.stdout);

    const noColor = await runInProcess(create('b'), true, { ...env, NO_COLOR: '1' });
    assert.equal(noColor.code, 0, noColor.stderr);
    assert.ok(!noColor.stdout.includes(ESC), noColor.stdout);

    const pipe = await runInProcess(create('c'), false, env);
    assert.ok(!pipe.stdout.includes(ESC), pipe.stdout);

    const json = await runInProcess([...create('d'), '--json'], true, env);
    assert.ok(!json.stdout.includes(ESC));
    assert.equal((JSON.parse(json.stdout) as { username: string }).username, 'd');
  });
});
