// The example app of docs/examples/ (oauth-loopback.mjs), run as a reader would run it against a real
// tokend on SQLite: it prints the authorization URL, a person signs in and allows it (over HTTP here), the
// browser comes back to its loopback listener, and it prints who signed in and that its refreshed token works.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startTokend } from '../helpers/real-server.ts';
import { runCli } from '../helpers/cli.ts';
import { consentInBrowser } from '../helpers/fetch-browser.ts';
import { within } from '../helpers/waiting.ts';

const EXAMPLE = fileURLToPath(new URL('../../docs/examples/oauth-loopback.mjs', import.meta.url));
const LIMIT_MS = 30_000;

async function cli(env: Record<string, string>, args: string[]): Promise<Record<string, unknown>> {
  const r = await runCli([...args, '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

async function serverWithUser(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'tokend-example-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}` };
  const tokend = await startTokend(env);
  t.after(() => tokend.kill());
  const user = { username: 'example_reader', password: 'correct horse battery' };
  const created = await cli(env, [
    'user',
    'create',
    '--username',
    user.username,
    '--password',
    user.password,
  ]);
  return { env, tokend, user: { ...user, id: Number(created.id) } };
}

/** Runs the example until it exits, doing the person's part when it prints the URL to open. */
async function runExample(
  origin: string,
  env: Record<string, string>,
  user: { username: string; password: string; id: number },
) {
  const child = spawn(process.execPath, [EXAMPLE], {
    env: { PATH: process.env.PATH ?? '', TOKEND_URL: origin, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const opened = new Promise<string>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const m = /open this URL in your browser: (\S+)/.exec(stdout);
      if (m) resolve(m[1] as string);
    });
  });
  try {
    const url = await within(
      LIMIT_MS,
      'the URL',
      Promise.race([opened, exited.then(() => `exited early: ${stdout} ${stderr}`)]),
    );
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?/, url);
    const back = await consentInBrowser(origin, new URL(url), user);
    // The browser follows the redirect to the app's loopback listener.
    const landing = await fetch(back);
    assert.equal(landing.status, 200, await landing.text());
    const code = await within(LIMIT_MS, 'the example to finish', exited);
    return { code, stdout, stderr };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

describe('docs/examples/oauth-loopback.mjs against a real tokend [sqlite]', () => {
  for (const kind of ['confidential', 'public'] as const)
    it(`signs in, learns who signed in, refreshes (a ${kind} app)`, async (t) => {
      const { env, tokend, user } = await serverWithUser(t);
      const port = await freePort();
      const client = await cli(env, [
        'client',
        'create',
        '--name',
        'Example app',
        '--redirect-uri',
        `http://127.0.0.1:${port}/callback`,
        '--owner',
        user.username,
        ...(kind === 'public' ? ['--public'] : []),
      ]);
      const origin = `http://127.0.0.1:${tokend.port}`;
      const run = await runExample(
        origin,
        {
          CLIENT_ID: String(client.id),
          ...(kind === 'confidential' ? { CLIENT_SECRET: String(client.secret) } : {}),
          PORT: String(port),
          SCOPE: 'read_confidential',
        },
        user,
      );
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(
        run.stdout,
        /tokens: access token for 3600 s, scope "read_confidential", refresh token yes/,
      );
      assert.match(
        run.stdout,
        new RegExp(
          `signed in: user_id=${user.id} username=${user.username} client_id=${String(client.id)}\\n`,
        ),
      );
      assert.match(run.stdout, /refreshed: new access token differs, works: yes/);
    });
});
