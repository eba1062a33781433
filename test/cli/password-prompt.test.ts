// A new password typed at a terminal prompt (no --password, no --password-stdin) is asked twice, unseen:
// the two must agree, or nothing is changed. Run on a pseudo-terminal through script(1), answering each
// prompt as it appears, as a person would.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cliHarness, MAIN } from '../helpers/cli.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';

/** Runs `tokend ARGS` on a terminal, typing `answers` one per prompt that ends with ": ". */
function onTerminal(args: string[], env: Record<string, string>, answers: string[]) {
  const command = [process.execPath, MAIN, ...args].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', BCRYPT_COST: '4', LOG_LEVEL: 'silent', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  let answered = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const prompts = output.match(/Password( again)?: /g)?.length ?? 0;
    while (answered < prompts && answered < answers.length) child.stdin.write(`${answers[answered++]}\n`);
  });
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on('close', (code) => {
      child.stdin.destroy();
      resolve({ code, output });
    }),
  );
}

describe('tokend user create at a terminal prompt', () => {
  it('asks twice without echo, and creates the user when both agree', async (t) => {
    const h = await cliHarness(t);
    const r = await onTerminal(['user', 'create', '--username', 'bob'], h.database.env, [
      'horse staple',
      'horse staple',
    ]);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /Password: [\s\S]*Password again: [\s\S]*Created user/);
    assert.ok(!r.output.includes('horse staple'), 'the password is never echoed');
    // The password is the one typed: signing in with it works (signIn throws otherwise).
    const browser = new InjectBrowser(await h.app());
    await browser.signIn({ id: 0, username: 'bob', password: 'horse staple' });
  });

  it('refuses when the two differ, and makes no user', async (t) => {
    const h = await cliHarness(t);
    const r = await onTerminal(['user', 'create', '--username', 'carol'], h.database.env, [
      'horse staple',
      'horse stapel',
    ]);
    assert.equal(r.code, 2, r.output);
    assert.match(r.output, /the two passwords typed differ: nothing was changed/);
    const list = await h.json(['user', 'list']);
    assert.ok(!JSON.stringify(list).includes('carol'), JSON.stringify(list));
  });
});
