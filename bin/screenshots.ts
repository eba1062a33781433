// Screenshots of every page tokend serves, at 1280×800 (a desktop) and 390×844 (a phone), for the
// documentation and for looking the pages over: docs/screenshots/<page>-1280.png and <page>-390.png
// (a JPEG of quality 70 instead, <page>-<width>.jpg, when the PNG would be larger than 300 KB).
//
//   node bin/screenshots.ts            (Node 24; needs /usr/bin/chromium)
//
// It serves tokend in this process on a fresh SQLite database in a temporary directory, with
// SERVER_NAME=Akatsuki, makes a user with a few tokens, registers an application through its page,
// approves another on the consent page, starts a device sign-in, and then walks every page in headless
// Chromium (playwright-core), light colours and no animations. Pages that are shown once (a new token's
// secret, a new application's secret) are taken in the desktop window and again after narrowing it to
// 390 px; every other page is loaded afresh in a phone's window (mobile, touch).
import { mkdirSync, mkdtempSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash, randomBytes } from 'node:crypto';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { openStore } from '../src/store/database.ts';
import { insertUser } from '../src/users/repository.ts';
import { PasswordHasher, CURRENT_PASSWORD_VERSION } from '../src/users/passwords.ts';
import { nowSeconds } from '../src/auth/clock.ts';
import { insertToken } from '../src/auth/mint.ts';
import { hashTokenSecret, newTokenSecret } from '../src/auth/secret.ts';
import { TokenPrivilege } from '../src/auth/privileges.ts';
import { createClient } from '../src/oauth/clients.ts';
import { actOutsideRequest } from '../src/auth/security-log.ts';
import { docsPath } from '../src/docs/plugin.ts';

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const LARGEST_PNG = 300 * 1024;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const DAY = 86_400;
const USER = { username: 'alice', password: 'correct horse battery' };
const CALLBACK = 'https://app.example/callback';
const SERVER_NAME = 'Akatsuki';
/** How many times the walk presses Tab on a page, looking for a focused element without a visible ring. */
const TABS = 25;
/** The two windows: where each says it is, and (the phone) the browser it says it is. */
const DESKTOP_FROM = '2001:db8:4b7e:1c20:9a3f:12ff:fe4d:7781';
const PHONE_FROM = '203.0.113.77';
const PHONE_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';

/**
 * What a page measures in the browser: the sideways scroll of the page, a missing viewport meta tag, a
 * title or page that does not name the server, and up to three elements whose box ends right of main's
 * content box (by how many pixels); empty when there is none of these.
 */
const MEASURE = `(() => {
  const notes = [];
  const wide = document.documentElement.scrollWidth - window.innerWidth;
  if (wide > 0) notes.push('page ' + wide + ' px wider than the window');
  if (!document.querySelector('meta[name=viewport]'))
    notes.push('no viewport meta tag: laid out ' + window.innerWidth + ' px wide');
  const server = ${JSON.stringify(SERVER_NAME)};
  if (!document.title.includes(server)) notes.push('the title does not name ' + server);
  if (!document.body.innerText.includes(server)) notes.push('the page does not name ' + server);
  const main = document.querySelector('main');
  if (main) {
    const style = getComputedStyle(main);
    const edge = main.getBoundingClientRect().right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
    const past = [];
    // Not what is clipped away on purpose (a visually hidden table head).
    const clipped = (element) => {
      for (let e = element; e && e !== main; e = e.parentElement)
        if (getComputedStyle(e).clipPath !== 'none') return true;
      return false;
    };
    for (const element of main.querySelectorAll('*')) {
      if (clipped(element)) continue;
      const over = Math.round(element.getBoundingClientRect().right - edge);
      if (over > 0 && !past.some((p) => p.element.contains(element))) past.push({ element, over });
    }
    for (const { element, over } of past.slice(0, 3)) {
      const name = element.tagName.toLowerCase() + (element.className ? '.' + String(element.className).split(' ').join('.') : '');
      notes.push(name + ' ' + over + ' px past the card');
    }
  }
  return notes.length ? '  (' + notes.join('; ') + ')' : '';
})()`;

const dir = mkdtempSync(join(tmpdir(), 'tokend-screenshots-'));
const config = loadConfig({
  DATABASE_URL: `sqlite:${join(dir, 'tokend.db')}`,
  SERVER_NAME,
  LOG_LEVEL: 'silent',
  BCRYPT_COST: '4',
  HOST: '127.0.0.1',
  PORT: '0',
  // The browser's requests say which address they come from (X-Forwarded-For), so that the security log
  // shows an IPv6 address and an IPv4 one, as a proxy in front of tokend would pass them on.
  TRUST_PROXY: 'loopback',
});
const store = await openStore(config.database);
const app = await buildApp(config, { store });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (address === null || typeof address !== 'object') throw new Error('tokend is not listening');
const origin = `http://127.0.0.1:${address.port}`;

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  timeout: 30_000,
});

/**
 * Names of the files written, each with what the page measured: how far it scrolls sideways, and the
 * elements that reach past the right edge of the page's card (main) content box.
 */
const written: string[] = [];
const problems: string[] = [];

try {
  // The user, the developer of two other applications, and the user's tokens (times that read the same
  // on every run).
  const hasher = new PasswordHasher({ cost: 4, concurrency: 2 });
  const now = nowSeconds();
  const userId = await insertUser(store.db, {
    username: USER.username,
    passwordHash: await hasher.hash(USER.password),
    passwordVersion: CURRENT_PASSWORD_VERSION,
    privileges: 3,
    now,
  });
  const developerId = await insertUser(store.db, {
    username: 'tracker_dev',
    passwordHash: await hasher.hash(randomBytes(12).toString('hex')),
    passwordVersion: CURRENT_PASSWORD_VERSION,
    privileges: 3,
    now,
  });
  const tokens = [
    {
      description: 'score uploader',
      privileges: TokenPrivilege.ReadConfidential,
      used: 3 * 3600,
      age: 40 * DAY,
    },
    {
      description:
        'Chat bot of the community server: announces new top plays and answers !rank and !recent in the lobby',
      privileges: TokenPrivilege.Write | TokenPrivilege.Bancho,
      used: 2 * DAY,
      age: 14 * DAY,
      expires: 30 * DAY,
    },
    {
      description: 'leaderboard-importer-on-the-staging-cluster-node-0042-nightly',
      privileges: TokenPrivilege.ReadConfidential | TokenPrivilege.Write,
      used: 40 * 60,
      age: 3 * DAY,
      expires: 7 * DAY,
    },
    { description: '', privileges: 0, used: 90 * DAY, age: 90 * DAY, expires: 365 * DAY },
  ];
  const tokenIds: number[] = [];
  for (const token of tokens) {
    const id = await insertToken(store.db, {
      userId,
      privileges: token.privileges,
      description: token.description,
      private: false,
      now,
      tokenHash: hashTokenSecret(newTokenSecret()),
    });
    await store.db
      .updateTable('tokens')
      .set({
        created_at: now - token.age,
        last_updated: now - token.used,
        expires_at: token.expires === undefined ? null : now + token.expires,
      })
      .where('id', '=', id)
      .execute();
    tokenIds.push(id);
  }
  const tokenId = tokenIds[0] as number;
  const act = actOutsideRequest('cli', now);
  const tracker = await createClient(
    store.db,
    { name: 'Score Tracker', ownerId: developerId, avatar: '', redirectUris: [CALLBACK], public: false, now },
    act,
  );
  const uploader = await createClient(
    store.db,
    {
      name: 'Replay Uploader',
      ownerId: developerId,
      avatar: '',
      redirectUris: [CALLBACK],
      public: true,
      now,
    },
    act,
  );

  // A device sign-in waiting for its code to be entered.
  const started = await app.inject({
    method: 'POST',
    url: '/oauth/device_authorization',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ client_id: uploader.client.id, scope: 'openid profile' }).toString(),
  });
  if (started.statusCode !== 200)
    throw new Error(`device authorization: ${started.statusCode} ${started.body}`);
  const userCode = (started.json() as { user_code: string }).user_code;

  // An authorization request of Score Tracker, for the sign-in page that continues to it and the consent.
  const verifier = randomBytes(32).toString('base64url');
  const authorize =
    '/oauth/authorize?' +
    new URLSearchParams({
      response_type: 'code',
      client_id: tracker.client.id,
      redirect_uri: CALLBACK,
      scope: 'read_confidential',
      state: 'screenshots',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();

  const desktop = await openContext(DESKTOP, DESKTOP_FROM);
  const phone = await openContext(PHONE, PHONE_FROM);
  const d = await desktop.newPage();
  const p = await phone.newPage();
  for (const page of [d, p]) watch(page);

  /** Loads `path` in both windows and takes each; `ready` waits for what the page must show. */
  const both = async (name: string, path: string, ready?: (page: Page) => Promise<unknown>) => {
    for (const [page, width] of [
      [d, DESKTOP.width],
      [p, PHONE.width],
    ] as const) {
      await page.goto(`${origin}${path}`);
      if (ready) await ready(page);
      await shoot(page, name, width);
      const unringed = await focusWithoutRing(page);
      if (unringed.length > 0)
        written.push(`  ${name}-${width}: focus shows no ring on ${unringed.join(', ')}`);
    }
  };
  /** The page in the desktop window as it is, then narrowed to a phone's width, then widened again. */
  const once = async (name: string) => {
    await shoot(d, name, DESKTOP.width);
    await d.setViewportSize(PHONE);
    await shoot(d, name, PHONE.width);
    await d.setViewportSize(DESKTOP);
  };
  const heading = (name: string | RegExp) => (page: Page) =>
    page.getByRole('heading', { name }).first().waitFor();

  // Sign-in: plain, and reached from the authorization request (a wrong password first, for the log).
  await both('login', '/login', heading(/Sign in/));
  await both('login-oauth', authorize, heading(/Sign in/));
  for (const page of [d, p]) {
    await page.getByLabel('Username').fill(USER.username);
    await page.getByLabel('Password').fill(page === d ? 'not the password' : USER.password);
    await page.getByLabel('Password').press('Enter');
    await page.waitForLoadState();
  }
  await d.getByLabel('Password').fill(USER.password);
  await d.getByLabel('Password').press('Enter');
  await d.getByRole('button', { name: 'Allow' }).waitFor();
  await p.getByRole('button', { name: 'Allow' }).waitFor();

  // Consent, in both windows; then allowed in the desktop one (the application's address answers here).
  await shoot(d, 'consent', DESKTOP.width);
  await shoot(p, 'consent', PHONE.width);
  await desktop.route('https://app.example/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<p>back at the application</p>' }),
  );
  await d.getByRole('button', { name: 'Allow' }).click();
  await d.waitForURL(/^https:\/\/app\.example\//);

  // A token made on the token page: its secret shown once.
  await d.goto(`${origin}/tokens`);
  await d.getByLabel('Description').fill('stream overlay');
  await d.getByRole('button', { name: 'Create token' }).click();
  await d.locator('#new-token').waitFor();
  await once('tokens-created');

  // Your applications: the form, then registering through it (the secret shown once).
  await both('applications-empty', '/applications', heading(/applications/i));
  await both('applications-new', '/applications/new', heading(/egister/));
  await d.getByLabel('Name').fill('Akatsuki Stats');
  await d
    .getByLabel('Redirect URIs')
    .fill('https://stats.akatsuki.example/oauth/callback\nhttp://127.0.0.1:48123/callback');
  await d.getByRole('button', { name: 'Register' }).click();
  await d.locator('#client-secret').waitFor();
  const ownId = new URL(d.url()).pathname.split('/').pop() as string;
  await once('application-registered');

  // Every other page, in both windows.
  await both('tokens', '/tokens', heading(/token/i));
  await both('token-edit', `/tokens/${tokenId}/edit`, heading('Edit this token'));
  await both('token-regenerate', `/tokens/${tokenId}/regenerate`, heading('Regenerate this token?'));
  await both('token-revoke', `/tokens/${tokenId}/revoke`, heading('Revoke this token?'));
  await both('sign-out-everywhere', '/tokens/sign-out-everywhere', heading('Sign out everywhere?'));
  await both(
    'connected-app-revoke',
    `/tokens/applications/${tracker.client.id}/revoke`,
    heading(/Revoke access/),
  );
  await both('security-log', '/security-log', heading('Security log'));
  await both('applications', '/applications', heading(/applications/i));
  await both('application', `/applications/${ownId}`, heading('Akatsuki Stats'));
  await both('application-secret', `/applications/${ownId}/secret`, heading(/new client secret/));
  await both('application-delete', `/applications/${ownId}/delete`, heading('Delete Akatsuki Stats?'));
  await both('device', `/device?user_code=${encodeURIComponent(userCode)}`, heading('Sign in on a device'));
  for (const [page, width] of [
    [d, DESKTOP.width],
    [p, PHONE.width],
  ] as const) {
    await page.goto(`${origin}/device?user_code=${encodeURIComponent(userCode)}`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await shoot(page, 'device-confirm', width);
  }
  await both('not-found', '/no/such/page', heading('Page not found'));
  await both('api-docs', docsPath(config.basePath), (page) =>
    page.locator('.opblock').first().waitFor({ timeout: 30_000 }),
  );
} finally {
  await browser.close();
  await app.close();
  rmSync(dir, { recursive: true, force: true });
}

for (const name of written) process.stdout.write(`${name}\n`);
// The walk expects the not-found page's own 404 and the 403 of the wrong password; anything else the
// pages reported is listed.
const unexpected = problems.filter(
  (problem) => problem !== `404 ${origin}/no/such/page` && problem !== `403 ${origin}/login`,
);
if (unexpected.length > 0) {
  process.stderr.write(`problems the pages reported:\n${unexpected.map((x) => `  ${x}\n`).join('')}`);
  process.exitCode = 1;
}

async function openContext(
  viewport: { width: number; height: number },
  from: string,
): Promise<BrowserContext> {
  const mobile = viewport.width < 500;
  const context = await browser.newContext({
    viewport,
    extraHTTPHeaders: { 'x-forwarded-for': from },
    ...(mobile ? { userAgent: PHONE_AGENT } : {}),
    deviceScaleFactor: 1,
    colorScheme: 'light',
    reducedMotion: 'reduce',
    isMobile: mobile,
    hasTouch: mobile,
  });
  context.setDefaultTimeout(15_000);
  return context;
}

function watch(page: Page): void {
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().startsWith('https://app.example/'))
      problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(e.message));
}

/**
 * Presses Tab up to TABS times from the top of the page; returns the elements (tag, and their text or
 * name) that had the focus with neither an outline nor a box shadow to show it.
 */
async function focusWithoutRing(page: Page): Promise<string[]> {
  await page.locator('body').focus();
  const found = new Set<string>();
  for (let i = 0; i < TABS; i++) {
    await page.keyboard.press('Tab');
    const seen = String(
      await page.evaluate(`(() => {
        const element = document.activeElement;
        if (!element || element === document.body) return '';
        const style = getComputedStyle(element);
        const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
        if (ring) return '';
        const label = (element.innerText || element.getAttribute('aria-label') || element.getAttribute('name') || '').trim();
        return element.tagName.toLowerCase() + (label ? ' "' + label.slice(0, 30) + '"' : '');
      })()`),
    );
    if (seen !== '') found.add(seen);
  }
  return [...found];
}

/** A full-page screenshot: a PNG, or a JPEG of quality 70 when the PNG would be too large. */
async function shoot(page: Page, name: string, width: number): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  await page.evaluate('window.scrollTo(0, 0)');
  const measured = String(await page.evaluate(MEASURE));
  const png = join(OUT, `${name}-${width}.png`);
  const jpeg = join(OUT, `${name}-${width}.jpg`);
  await page.screenshot({ path: png, fullPage: true, type: 'png' });
  if (statSync(png).size <= LARGEST_PNG) {
    rmSync(jpeg, { force: true });
    written.push(`${name}-${width}.png${measured}`);
    return;
  }
  unlinkSync(png);
  await page.screenshot({ path: jpeg, fullPage: true, type: 'jpeg', quality: 70 });
  written.push(`${name}-${width}.jpg${measured}`);
}
