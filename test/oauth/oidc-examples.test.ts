// The examples of docs/oauth.md's "Sign in with OpenID Connect" and "Sign in from a device", run as a
// reader would run them against a real tokend on SQLite: docs/examples/openid-client-login.mjs (openid-client,
// a person signs in and allows it over HTTP), docs/examples/authjs-provider.mjs (the Auth.js provider,
// driven through @auth/core as a Next.js app's route handlers would be) and docs/examples/device-login.mjs
// (it prints a code, a signed-in browser approves it on /device, it polls and reads /v1/tokens/self).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startTokend } from '../helpers/real-server.ts';
import { runCli } from '../helpers/cli.ts';
import { FetchBrowser, consentInBrowser } from '../helpers/fetch-browser.ts';
import { within } from '../helpers/waiting.ts';
import { Auth, type AuthConfig } from '@auth/core';
// @ts-expect-error -- a plain JavaScript example without type declarations
import { tokendProvider } from '../../docs/examples/authjs-provider.mjs';

const EXAMPLES = fileURLToPath(new URL('../../docs/examples/', import.meta.url));
const LIMIT_MS = 40_000;

async function cli(env: Record<string, string>, args: string[]): Promise<Record<string, unknown>> {
  const r = await runCli([...args, '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

async function serverWithUser(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'tokend-oidc-example-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}` };
  const tokend = await startTokend(env);
  t.after(() => tokend.kill());
  const user = { username: 'device_reader', password: 'correct horse battery' };
  const created = await cli(env, [
    'user',
    'create',
    '--username',
    user.username,
    '--password',
    user.password,
  ]);
  return { env, origin: `http://127.0.0.1:${tokend.port}`, user: { ...user, id: Number(created.id) } };
}

/** Runs an example; `act` does the person's part once `prompt` matches its output. */
async function runExample(
  file: string,
  env: Record<string, string>,
  prompt: RegExp,
  act: (match: RegExpExecArray) => Promise<void>,
) {
  const child = spawn(process.execPath, [join(EXAMPLES, file)], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const prompted = new Promise<RegExpExecArray>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const m = prompt.exec(stdout);
      if (m) resolve(m);
    });
  });
  try {
    const match = await within(
      LIMIT_MS,
      'the prompt',
      Promise.race([
        prompted,
        exited.then(() => Promise.reject(new Error(`exited early: ${stdout} ${stderr}`))),
      ]),
    );
    await act(match);
    const code = await within(LIMIT_MS, 'the example to finish', exited);
    return { code, stdout, stderr };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** A person signed in on a browser of their own enters the code on /device and allows it. */
async function approveOnDevicePage(
  origin: string,
  user: { username: string; password: string },
  url: string,
) {
  const browser = new FetchBrowser();
  const field = (html: string, name: string) =>
    (new RegExp(`name="${name}"\\s+value="([^"]*)"`).exec(html)?.[1] ?? '').replace(/&amp;/g, '&');
  const toLogin = await browser.go(url);
  assert.equal(toLogin.status, 303);
  const loginPage = await (
    await browser.go(new URL(toLogin.headers.get('location') as string, origin).href)
  ).text();
  const signedIn = await browser.go(`${origin}/login`, {
    method: 'POST',
    form: { _csrf: field(loginPage, '_csrf'), next: field(loginPage, 'next'), ...user },
  });
  assert.equal(signedIn.status, 303);
  const page = await (
    await browser.go(new URL(signedIn.headers.get('location') as string, origin).href)
  ).text();
  const code = field(page, 'user_code');
  assert.match(code, /^[A-Z]{4}-[A-Z]{4}$/);
  const confirm = await browser.go(`${origin}/device`, {
    method: 'POST',
    form: { _csrf: field(page, '_csrf'), user_code: code },
  });
  const confirmPage = await confirm.text();
  assert.equal(confirm.status, 200, confirmPage);
  const decided = await browser.go(`${origin}/device/decide`, {
    method: 'POST',
    form: { _csrf: field(confirmPage, '_csrf'), user_code: code, decision: 'allow' },
  });
  assert.equal(decided.status, 200, await decided.text());
}

describe('the OpenID Connect and device examples against a real tokend [sqlite]', () => {
  for (const kind of ['confidential', 'public'] as const)
    it(`docs/examples/device-login.mjs signs in from a device (a ${kind} app)`, async (t) => {
      const { env, origin, user } = await serverWithUser(t);
      const client = await cli(env, [
        'client',
        'create',
        '--name',
        'Uploader',
        '--redirect-uri',
        'http://127.0.0.1:1/unused',
        ...(kind === 'public' ? ['--public'] : []),
      ]);
      const run = await runExample(
        'device-login.mjs',
        {
          TOKEND_URL: origin,
          CLIENT_ID: String(client.id),
          ...(kind === 'confidential' ? { CLIENT_SECRET: String(client.secret) } : {}),
        },
        /\(or open (\S+)\)/,
        async (m) => approveOnDevicePage(origin, user, m[1] as string),
      );
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, new RegExp(`open ${origin}/device and enter the code [A-Z]{4}-[A-Z]{4}`));
      assert.match(run.stdout, /tokens: access token for 3600 s, scope "openid profile", refresh token yes/);
      assert.match(
        run.stdout,
        new RegExp(
          `signed in: user_id=${user.id} username=${user.username} client_id=${String(client.id)}\\n`,
        ),
      );
    });

  it('docs/examples/openid-client-login.mjs signs in with openid-client: id_token claims and userinfo', async (t) => {
    const { env, origin, user } = await serverWithUser(t);
    const port = await freePort();
    const client = await cli(env, [
      'client',
      'create',
      '--name',
      'Stats site',
      '--redirect-uri',
      `http://127.0.0.1:${port}/callback`,
    ]);
    const run = await runExample(
      'openid-client-login.mjs',
      {
        TOKEND_URL: origin,
        CLIENT_ID: String(client.id),
        CLIENT_SECRET: String(client.secret),
        PORT: String(port),
      },
      /open this URL in your browser: (\S+)/,
      async (m) => {
        const back = await consentInBrowser(origin, new URL(m[1] as string), user);
        const landing = await fetch(back);
        assert.equal(landing.status, 200, await landing.text());
      },
    );
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(
      run.stdout,
      new RegExp(`signed in: sub=${user.id} preferred_username=${user.username} auth_time=\\d+`),
    );
    assert.match(
      run.stdout,
      new RegExp(`userinfo: \\{"sub":"${user.id}","preferred_username":"${user.username}"\\}`),
    );
  });

  it('docs/examples/authjs-provider.mjs signs in with Auth.js (@auth/core): the session names the user', async (t) => {
    const { env, origin, user } = await serverWithUser(t);
    const app = 'http://app.test';
    const client = await cli(env, [
      'client',
      'create',
      '--name',
      'Auth.js site',
      '--redirect-uri',
      `${app}/api/auth/callback/tokend`,
    ]);
    const config: AuthConfig = {
      providers: [
        tokendProvider({ issuer: origin, clientId: String(client.id), clientSecret: String(client.secret) }),
      ],
      secret: 'an Auth.js secret for this test only, 32+ characters',
      trustHost: true,
      basePath: '/api/auth',
    };
    // The app's cookies, as its users' browser keeps them.
    const jar = new Map<string, string>();
    const call = async (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
      const response = await Auth(new Request(new URL(path, app), { ...init, headers }), config);
      for (const cookie of response.headers.getSetCookie()) {
        const [pair = ''] = cookie.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
      return response;
    };
    const { csrfToken } = (await (await call('/api/auth/csrf')).json()) as { csrfToken: string };
    const started = await call('/api/auth/signin/tokend', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken }),
    });
    assert.equal(started.status, 302, await started.text());
    const authorization = new URL(started.headers.get('location') as string);
    assert.equal(`${authorization.origin}${authorization.pathname}`, `${origin}/oauth/authorize`);
    for (const name of ['code_challenge', 'state', 'nonce'])
      assert.ok(authorization.searchParams.get(name), `Auth.js sends ${name}`);

    const back = await consentInBrowser(origin, authorization, user);
    assert.equal(`${back.origin}${back.pathname}`, `${app}/api/auth/callback/tokend`);
    const landed = await call(`${back.pathname}${back.search}`);
    assert.equal(landed.status, 302, await landed.text());
    assert.doesNotMatch(String(landed.headers.get('location')), /error/);

    const session = (await (await call('/api/auth/session')).json()) as { user?: { name?: string } };
    assert.equal(session.user?.name, user.username);
  });
});
