// The /device page in a real browser (headless Chromium via playwright-core) with JavaScript off, at 390 and
// 1280 px: sign in from verification_uri_complete, see the code filled in and the warning, continue, see the
// application and its scopes, allow; the device's poll then gets its tokens. No page is wider than the
// screen. Screenshots go to test/artifacts/device-*.png.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from '../helpers/app.ts';
import { ARTIFACTS, launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';
import { pollDevice, registerClient, startDevice } from '../helpers/oauth.ts';

describe('the /device page in a real browser [sqlite]', () => {
  for (const width of [390, 1280])
    it(
      `signs a device in without JavaScript at ${width} px`,
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        await h.createUser({ username: 'player_three', password: 'battery staple' });
        const maker = await h.createUser({ username: 'uploader_dev' });
        const client = await registerClient(h, { ownerId: maker.id, name: 'Replay Uploader', public: true });
        const started = (await startDevice(h, client, 'openid profile')).json() as {
          device_code: string;
          user_code: string;
          verification_uri_complete: string;
        };

        const browser = await launchChromium(t);
        const context = await browser.newContext({
          viewport: { width, height: 800 },
          javaScriptEnabled: false,
        });
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        const fits = async (what: string) => {
          const overflow = await page.evaluate(
            'document.documentElement.scrollWidth - document.documentElement.clientWidth',
          );
          assert.ok(Number(overflow) <= 0, `${what} is wider than ${width} px by ${String(overflow)} px`);
        };
        const shot = (name: string) =>
          page.screenshot({ path: join(ARTIFACTS, `device-${name}-${width}.png`) });

        await page.goto(started.verification_uri_complete.replace('http://localhost', origin));
        assert.match(page.url(), /\/login\?next=/);
        await page.getByLabel('Username').fill('player_three');
        await page.getByLabel('Password').fill('battery staple');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Sign in on a device' }).waitFor();
        assert.equal(await page.getByLabel('Code').inputValue(), started.user_code);
        assert.match(
          await page.locator('main').innerText(),
          /Only enter a code that a device or program you/,
        );
        await fits('the code page');
        await shot('code');
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('heading', { name: 'Sign in to Replay Uploader on your device?' }).waitFor();
        const text = await page.locator('main').innerText();
        assert.match(text, /Know who you are: your user id and username\. \(openid, profile\)/);
        assert.ok(text.includes(started.user_code));
        await fits('the confirmation');
        await shot('confirm');
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.getByRole('heading', { name: 'Device signed in' }).waitFor();
        await fits('the last page');

        const polled = await pollDevice(h, client, started.device_code);
        assert.equal(polled.statusCode, 200, polled.body);
      },
    );
});
