// The pages of a signed-in user's account (the token page and its confirmations, the security log, "Your
// applications"): their stylesheet and script as files (src/web/assets/), their sender, and the pieces
// they share: the signed-in heading, the CSRF field, a short message page, a time, and a new secret
// shown once with its copy button. Server-rendered and complete without JavaScript; the one script only
// adds the copy button next to a new secret.
import { type Html, html } from './html.ts';
import { pageSender, type PageSender } from './layout.ts';
import { AVATAR_CSS } from './avatar.ts';
import { asset, fileText, type Asset } from './assets.ts';
import { timeFromNow } from './relative-time.ts';
import { isoTime } from '../utc-time.ts';
import type { SessionRule } from './hooks.ts';

/**
 * The account pages' rules, after the shared theme (theme.ts, inline). Under 60rem the token table becomes
 * one card per token, each value under its column's name, so that a phone shows every column in its width.
 */
export const ACCOUNT_STYLESHEET: Asset = asset(
  'account',
  'css',
  fileText(import.meta.url, './assets/account.css') + AVATAR_CSS,
);

/** Reveals the copy buttons and copies the secret named by data-copy; without it, the field is selectable. */
export const ACCOUNT_SCRIPT: Asset = asset('account', 'js', fileText(import.meta.url, './assets/account.js'));

/**
 * A sender of account pages, with `more` stylesheets after the family's: their script comes from this
 * server, their forms post only here, they fetch nothing, and applications' avatars (their own images)
 * may load from anywhere.
 */
export const accountPageSender = (more: readonly Asset[] = []): PageSender =>
  pageSender({
    css: '',
    stylesheets: [ACCOUNT_STYLESHEET, ...more],
    scripts: [ACCOUNT_SCRIPT],
    imageSources: ['https:', 'http:'],
    policy: [
      "script-src 'self'",
      "connect-src 'none'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ],
  });

/** Sends an account page. */
export const sendAccountPage = accountPageSender();

/**
 * A new secret as a read-only field that has the focus, with the copy button ACCOUNT_SCRIPT reveals
 * (without JavaScript the field's text is selectable).
 */
export function secretField(id: string, secret: string): Html {
  return html`<div class="secret-row">
    <input
      id="${id}"
      class="secret"
      type="text"
      readonly
      autofocus
      value="${secret}"
      autocomplete="off"
      spellcheck="false"
      aria-describedby="copy-status"
    />
    <button type="button" data-copy="${id}" data-status="copy-status" hidden>Copy</button>
    <span id="copy-status" class="muted" role="status"></span>
  </div>`;
}

/**
 * A secret shown this once (a new token's, a new client secret): a box with its heading, what to know
 * (`about`), the labelled field with its copy button, and what to do next (`after`).
 */
export function secretOnce(view: {
  /** the field's id */
  id: string;
  /** the heading's id, which labels the box */
  titleId: string;
  title: string;
  about: Html | string;
  label: Html | string;
  secret: string;
  after?: Html;
}): Html {
  return html`<section class="notice created" aria-labelledby="${view.titleId}">
    <h2 id="${view.titleId}">${view.title}</h2>
    <p>${view.about}</p>
    <label for="${view.id}">${view.label}</label>
    ${secretField(view.id, view.secret)} ${view.after ?? ''}
  </section>`;
}

/** A time on a page: relative to `now` in words, the exact time (UTC) on hover and for machines. */
export function when(at: number, now: number): Html {
  return html`<time datetime="${isoTime(at)}" title="${isoTime(at)}">${timeFromNow(at, now)}</time>`;
}

export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}" />`;
}

/** The heading of a signed-in page: its title, who is signed in, and the sign-out button. */
export function signedInHeader(title: string, view: { csrf: string; username: string }): Html {
  return html`<header>
    <h1>${title}</h1>
    <form method="post" action="/logout" class="inline">
      ${csrfField(view.csrf)}
      <span class="muted">Signed in as <strong>${view.username}</strong> ·</span>
      <button type="submit" class="link">Sign out</button>
    </form>
  </header>`;
}

/** A short page of the family: a title, a message and the way back (to the token page unless `back` says). */
export function messagePage(
  title: string,
  message: string,
  back: { href: string; label: string } = { href: '/tokens', label: 'Back to your tokens' },
): Html {
  return html`<h1>${title}</h1>
    <p class="error" role="alert">${message}</p>
    <p><a href="${back.href}">${back.label}</a></p>`;
}

/** Who may see an account page: a signed-in user (after a form, sign-in leads back to the token page), not banned. */
export const ACCOUNT_SESSION: SessionRule = {
  home: '/tokens',
  banned: (reply) =>
    sendAccountPage(reply, 403, 'Banned', messagePage('Account banned', 'This account is banned.')),
};
