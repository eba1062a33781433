// The token page's HTML. Server-rendered and complete without JavaScript; the one script only adds
// the copy button next to a new secret.
import { Html, html } from './html.ts';
import { pageSender } from './layout.ts';
import { confirmPasswordField } from './session.ts';

const CSS = `
:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}
body{margin:0;display:flex;justify-content:center;padding:2rem 1rem;background:#f4f4f7;color:#1d1d24}
main{max-width:56rem;width:100%;background:#fff;border-radius:12px;padding:1.5rem 1.75rem;box-shadow:0 2px 12px #0002}
h1{font-size:1.4rem;margin:0}
h2{font-size:1.1rem;margin:1.75rem 0 .5rem}
header{display:flex;justify-content:space-between;align-items:center;gap:1rem;flex-wrap:wrap}
table{width:100%;border-collapse:collapse;margin-top:.5rem}
th,td{text-align:left;padding:.5rem .4rem;border-bottom:1px solid #ddd;vertical-align:top}
th{font-size:.9rem}
code,.secret{font-family:ui-monospace,monospace}
label{font-weight:600}
fieldset{border:1px solid #bbb;border-radius:8px;margin:1rem 0;padding:.5rem 1rem}
legend{font-weight:600;padding:0 .3rem}
.choices label{display:inline-flex;gap:.35rem;align-items:center;font-weight:400;margin:.25rem 1.25rem .25rem 0}
input[type=text],select{padding:.5rem;border:1px solid #888;border-radius:6px;font:inherit;max-width:100%}
input[type=text]{width:100%;box-sizing:border-box;margin-top:.25rem}
.secret{width:100%;box-sizing:border-box;padding:.5rem;font-size:1.05rem;border:2px solid #1f7a3a;border-radius:6px}
button,.button{font:inherit;padding:.45rem 1.1rem;border-radius:6px;border:1px solid #555;cursor:pointer;background:#fff;color:#1d1d24;text-decoration:none;display:inline-block}
button.primary{background:#2457d6;border-color:#2457d6;color:#fff}
button.danger{background:#b3261e;border-color:#b3261e;color:#fff}
button:focus-visible,input:focus-visible,select:focus-visible,a:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.actions{display:flex;gap:.75rem;margin-top:1rem;flex-wrap:wrap;align-items:center}
.notice{background:#e3f4e8;color:#0f4d22;border-radius:6px;padding:.75rem 1rem;margin-top:1rem}
.error{background:#fde8e8;color:#8a1111;border-radius:6px;padding:.6rem .8rem;margin-top:1rem}
.muted{color:#555;font-size:.92rem}
.inline{display:inline}
[hidden]{display:none!important}
.link{background:none;border:none;padding:0;color:#2457d6;text-decoration:underline}
input[type=password]{padding:.5rem;border:1px solid #888;border-radius:6px;font:inherit;width:100%;box-sizing:border-box;margin-top:.25rem}
.apps{list-style:none;padding:0;margin:.5rem 0}
.apps li{display:flex;gap:.75rem;align-items:center;padding:.6rem 0;border-bottom:1px solid #ddd;flex-wrap:wrap}
.apps img,.apps .initial{width:40px;height:40px;border-radius:8px;flex:none;object-fit:cover}
.apps .initial{display:flex;align-items:center;justify-content:center;background:#2457d6;color:#fff;font-weight:700}
.apps .about{flex:1 1 14rem;min-width:0;overflow-wrap:anywhere}
.danger-zone{border:1px solid #b3261e;border-radius:8px;padding:.25rem 1rem 1rem;margin-top:1.75rem}
@media (prefers-color-scheme:dark){body{background:#15151b;color:#e8e8ee}main{background:#22222b}
th,td{border-color:#444}button,.button{background:#22222b;color:#e8e8ee}.muted{color:#aaa}.link{color:#8fb0ff}
.notice{background:#163a22;color:#c9f2d5}.error{background:#4a1d1d;color:#ffd6d6}}
`;

/** Reveals the copy buttons and copies the secret named by data-copy; without it, the field is selectable. */
export const PAGE_SCRIPT = `
for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  if (!field || !navigator.clipboard) continue;
  button.hidden = false;
  const status = document.getElementById(button.dataset.status);
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = 'Copied to the clipboard.';
    } catch {
      field.select();
      status.textContent = 'Press Ctrl+C to copy.';
    }
  });
}
`;

export const SCRIPT_PATH = '/tokens/page.js';

/** Sends a token page: its script comes from this server, its forms post only here, it fetches nothing. */
export const sendTokensPage = pageSender({
  css: CSS,
  policy: [
    "script-src 'self'",
    // data: for the icon; http(s): for the avatars of connected applications (their own images)
    'img-src data: https: http:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ],
  head: html`<link rel="icon" href="data:," />
    <script src="${SCRIPT_PATH}" defer></script>`,
});

export interface TokenRowView {
  id: number;
  description: string;
  privilegeNames: string[];
  lastUsed: number;
  expiresAt: number | undefined;
}

export interface PrivilegeChoice {
  name: string;
  bit: number;
  checked: boolean;
}

export interface TokensPageView {
  username: string;
  csrf: string;
  tokens: TokenRowView[];
  now: number;
  choices: PrivilegeChoice[];
  expiryChoices: ReadonlyArray<{ value: string; label: string }>;
  page: number;
  hasNext: boolean;
  /** the token just created: its secret is shown this once */
  created?: { secret: string; description: string; privilegeNames: string[] };
  notice?: string;
  error?: string;
  description?: string;
  /** sudo mode has lapsed: forms that need it ask for the password */
  needsPassword: boolean;
  applications: ApplicationView[];
}

export interface ApplicationView {
  clientId: string;
  name: string;
  avatar: string;
  /** what it may do, in a few words each */
  abilities: string[];
  approvedAt: number | null;
  lastUsedAt: number | null;
}

const UNITS: ReadonlyArray<readonly [Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
];
// Made on first use: the formatter loads ICU's locale data (~8 MB of memory), which serving the API never needs.
let relative: Intl.RelativeTimeFormat | undefined;

/** "3 minutes ago", "in 2 days", "just now". */
export function timeFromNow(at: number, now: number): string {
  const delta = at - now;
  const size = Math.abs(delta);
  if (size < 60) return delta <= 0 ? 'just now' : 'in less than a minute';
  for (const [unit, seconds] of UNITS) {
    relative ??= new Intl.RelativeTimeFormat('en', { numeric: 'always' });
    if (size >= seconds) return relative.format(Math.trunc(delta / seconds), unit);
  }
  return 'just now';
}

const isoTime = (at: number): string => new Date(at * 1000).toISOString().replace('.000Z', 'Z');

function when(at: number, now: number): Html {
  return html`<time datetime="${isoTime(at)}" title="${isoTime(at)}">${timeFromNow(at, now)}</time>`;
}

function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}" />`;
}

function createdBox(created: NonNullable<TokensPageView['created']>): Html {
  return html`<section class="notice" aria-labelledby="created-title">
    <h2 id="created-title">Your new token</h2>
    <p>
      Copy it now: it is shown only this once. Privileges:
      ${created.privilegeNames.length ? created.privilegeNames.join(', ') : 'none'}.
    </p>
    <label for="new-token">Token${created.description ? html` “${created.description}”` : ''}</label>
    <div class="actions">
      <input
        id="new-token"
        class="secret"
        type="text"
        readonly
        value="${created.secret}"
        autocomplete="off"
        spellcheck="false"
        aria-describedby="copy-status"
      />
      <button type="button" data-copy="new-token" data-status="copy-status" hidden>Copy</button>
      <span id="copy-status" class="muted" role="status"></span>
    </div>
  </section>`;
}

function tokenTable(view: TokensPageView): Html {
  if (view.tokens.length === 0)
    return html`<p class="muted">${view.page > 1 ? 'No more tokens.' : 'You have no API tokens yet.'}</p>`;
  const rows = view.tokens.map(
    (t) =>
      html`<tr>
        <td>${t.description || html`<span class="muted">(no description)</span>`}</td>
        <td>
          ${t.privilegeNames.length ? t.privilegeNames.join(', ') : html`<span class="muted">none</span>`}
        </td>
        <td>${when(t.lastUsed, view.now)}</td>
        <td>
          ${t.expiresAt === undefined ? html`<span class="muted">never</span>` : when(t.expiresAt, view.now)}
        </td>
        <td>
          <a
            class="button"
            href="/tokens/${t.id}/revoke"
            aria-label="Revoke ${t.description || `token ${t.id}`}"
            >Revoke</a
          >
        </td>
      </tr>`,
  );
  return html`<table aria-label="Your API tokens">
    <thead>
      <tr>
        <th scope="col">Description</th>
        <th scope="col">Privileges</th>
        <th scope="col">Last used</th>
        <th scope="col">Expires</th>
        <th scope="col"><span class="muted">Action</span></th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

function pager(view: TokensPageView): Html | '' {
  if (view.page <= 1 && !view.hasNext) return '';
  return html`<nav class="actions" aria-label="Pages">
    ${view.page > 1 ? html`<a href="/tokens?p=${view.page - 1}">Previous page</a>` : ''}
    <span class="muted">Page ${view.page}</span>
    ${view.hasNext ? html`<a href="/tokens?p=${view.page + 1}">Next page</a>` : ''}
  </nav>`;
}

function createForm(view: TokensPageView): Html {
  const choices = view.choices.length
    ? view.choices.map(
        (c) =>
          html`<label
            ><input
              type="checkbox"
              name="privileges"
              value="${c.name}"
              ${c.checked ? new Html('checked') : ''}
            />
            ${c.name}</label
          >`,
      )
    : html`<p class="muted">Your account may not give tokens any privileges.</p>`;
  const expiries = view.expiryChoices.map((e) => html`<option value="${e.value}">${e.label}</option>`);
  return html`<form method="post" action="/tokens" aria-labelledby="create-title">
    ${csrfField(view.csrf)}
    <h2 id="create-title">Create a token</h2>
    <label for="description">Description</label>
    <input
      type="text"
      id="description"
      name="description"
      maxlength="1024"
      placeholder="What is this token for?"
      value="${view.description ?? ''}"
    />
    <fieldset class="choices">
      <legend>Privileges</legend>
      ${choices}
    </fieldset>
    <label for="expires_in">Expires</label>
    <select id="expires_in" name="expires_in">
      ${expiries}
    </select>
    ${view.needsPassword ? confirmPasswordField() : ''}
    <div class="actions"><button type="submit" class="primary">Create token</button></div>
  </form>`;
}

function applicationList(view: TokensPageView): Html {
  if (view.applications.length === 0)
    return html`<p class="muted">No application can act for your account.</p>`;
  const items = view.applications.map((a) => {
    const picture = a.avatar
      ? html`<img src="${a.avatar}" alt="" width="40" height="40" />`
      : html`<span class="initial" aria-hidden="true">${[...a.name][0]?.toUpperCase() ?? '?'}</span>`;
    return html`<li>
      ${picture}
      <div class="about">
        <strong>${a.name}</strong><br />
        <span class="muted"
          >May ${a.abilities.length ? a.abilities.join(', ') : 'know who you are'}.
          ${a.approvedAt === null ? '' : html`Approved ${when(a.approvedAt, view.now)}.`}
          ${a.lastUsedAt === null ? 'Not used yet.' : html`Last used ${when(a.lastUsedAt, view.now)}.`}</span
        >
      </div>
      <form
        method="post"
        action="/tokens/applications/${encodeURIComponent(a.clientId)}/revoke"
        class="inline"
      >
        ${csrfField(view.csrf)}
        <button type="submit" class="danger" aria-label="Revoke access of ${a.name}">Revoke access</button>
      </form>
    </li>`;
  });
  return html`<ul class="apps" aria-label="Connected applications">
    ${items}
  </ul>`;
}

export function tokensPage(view: TokensPageView): Html {
  return html`<header>
      <h1>API tokens</h1>
      <form method="post" action="/logout" class="inline">
        ${csrfField(view.csrf)}
        <span class="muted">Signed in as <strong>${view.username}</strong> ·</span>
        <button type="submit" class="link">Sign out</button>
      </form>
    </header>
    ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${view.created ? createdBox(view.created) : ''}
    <h2>Your tokens</h2>
    ${tokenTable(view)} ${pager(view)} ${createForm(view)}
    <h2 id="apps-title">Connected applications</h2>
    ${applicationList(view)}
    <section class="danger-zone" aria-labelledby="everywhere-title">
      <h2 id="everywhere-title">Sign out everywhere</h2>
      <p class="muted">
        Ends every session of yours in every browser, disconnects every application and revokes every API
        token, at once. Use it when a token or your password may have leaked.
      </p>
      <a class="button" href="/tokens/sign-out-everywhere">Sign out everywhere…</a>
    </section>`;
}

export function revokePage(view: { csrf: string; token: TokenRowView; now: number }): Html {
  const t = view.token;
  return html`<h1>Revoke this token?</h1>
    <p>
      <strong>${t.description || `Token ${t.id}`}</strong>, with privileges
      ${t.privilegeNames.length ? t.privilegeNames.join(', ') : 'none'}, last used
      ${when(t.lastUsed, view.now)}.
    </p>
    <p>Anything using it stops working at once. This cannot be undone.</p>
    <form method="post" action="/tokens/${t.id}/revoke">
      ${csrfField(view.csrf)}
      <div class="actions">
        <button type="submit" class="danger">Revoke</button>
        <a href="/tokens">Cancel</a>
      </div>
    </form>`;
}

export function signOutEverywherePage(view: { csrf: string; needsPassword: boolean; error?: string }): Html {
  return html`<h1>Sign out everywhere?</h1>
    <p>This ends, at once and for good:</p>
    <ul>
      <li>every session of yours, in every browser (this one too);</li>
      <li>the access of every connected application (their tokens stop working);</li>
      <li>every API token of yours, listed or not.</li>
    </ul>
    <p>Anything using them stops working. You then sign in again and make new tokens.</p>
    ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    <form method="post" action="/tokens/sign-out-everywhere">
      ${csrfField(view.csrf)}
      <p>
        <label><input type="checkbox" name="confirm" value="yes" required /> Yes, end all of them</label>
      </p>
      ${view.needsPassword ? confirmPasswordField() : ''}
      <div class="actions">
        <button type="submit" class="danger">Sign out everywhere</button>
        <a href="/tokens">Cancel</a>
      </div>
    </form>`;
}

export function messagePage(title: string, message: string): Html {
  return html`<h1>${title}</h1>
    <p class="error" role="alert">${message}</p>
    <p><a href="/tokens">Back to your tokens</a></p>`;
}
