// The token page's HTML. Server-rendered and complete without JavaScript; the one script only adds
// the copy button next to a new secret.
import { Html, html } from './html.ts';
import { pageSender } from './layout.ts';
import { confirmPasswordField } from './session.ts';
import { timeFromNow } from './relative-time.ts';
import { COLOURS } from './theme.ts';

/**
 * The token pages' own rules, after the shared theme (theme.ts). Under 45rem the token table becomes one
 * card per token, each value under its column's name, so that a phone shows every column in its width.
 */
const CSS = `
main{max-width:56rem}
h1{font-size:1.4rem;margin:0}
h2{font-size:1.1rem;margin:1.75rem 0 .5rem}
header{display:flex;justify-content:space-between;align-items:center;gap:.5rem 1rem;flex-wrap:wrap}
table{width:100%;border-collapse:collapse;margin-top:.5rem}
th,td{text-align:left;padding:.5rem .4rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.9rem}
.tokens .description{overflow-wrap:anywhere;min-width:8rem}
.tokens .revoke{text-align:right}
.tokens time{white-space:nowrap}
code,.secret{font-family:ui-monospace,monospace}
fieldset{border:1px solid #bbb;border-radius:8px;margin:1rem 0;padding:.5rem 1rem;min-width:0}
legend{font-weight:600;padding:0 .3rem}
.choices label{display:inline-flex;gap:.35rem;align-items:center;font-weight:400;margin:.25rem 1.25rem .25rem 0}
.secret{width:100%;padding:.5rem;font-size:1.05rem;border:2px solid #1f7a3a;border-radius:6px}
.notice,.error{margin-top:1rem}
.apps{list-style:none;padding:0;margin:.5rem 0}
.apps li{display:flex;gap:.75rem;align-items:center;padding:.6rem 0;border-bottom:1px solid var(--line);flex-wrap:wrap}
.apps img,.apps .initial{width:40px;height:40px;border-radius:8px;flex:none;object-fit:cover}
.apps .initial{display:flex;align-items:center;justify-content:center;background:${COLOURS.accent};color:#fff;font-weight:700}
.apps .about{flex:1 1 14rem;min-width:0;overflow-wrap:anywhere}
.danger-zone{border:1px solid ${COLOURS.danger};border-radius:8px;padding:.25rem 1rem 1rem;margin-top:1.75rem}
@media (max-width:45rem){
.tokens thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.tokens,.tokens tbody,.tokens tr,.tokens td{display:block}
.tokens tr{border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem;margin:.75rem 0}
.tokens td{border:none;padding:.2rem 0;display:grid;grid-template-columns:6rem minmax(0,1fr);gap:.75rem}
.tokens td::before{content:attr(data-label);font-weight:600;font-size:.9rem}
.tokens td.description{display:block;font-weight:600;padding-bottom:.35rem}
.tokens td.description::before,.tokens td.revoke::before{content:none}
.tokens td.revoke{display:block;text-align:left;padding-top:.5rem}
.secret{font-size:.95rem}
}
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
  // the avatars of connected applications (their own images)
  imageSources: ['https:', 'http:'],
  policy: [
    "script-src 'self'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ],
  head: html`<script src="${SCRIPT_PATH}" defer></script>`,
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
  /** how many applications can act for the user; more than `applications` holds when the list is capped */
  applicationsTotal: number;
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
  // The explicit roles keep the table a table for assistive technology when a narrow screen shows it as cards.
  const rows = view.tokens.map(
    (t) =>
      html`<tr role="row">
        <td role="cell" class="description" data-label="Description">
          ${t.description || html`<span class="muted">(no description)</span>`}
        </td>
        <td role="cell" data-label="Privileges">
          ${t.privilegeNames.length ? t.privilegeNames.join(', ') : html`<span class="muted">none</span>`}
        </td>
        <td role="cell" data-label="Last used">${when(t.lastUsed, view.now)}</td>
        <td role="cell" class="expires" data-label="Expires">
          ${t.expiresAt === undefined ? html`<span class="muted">never</span>` : when(t.expiresAt, view.now)}
        </td>
        <td role="cell" class="revoke">
          <a
            class="button"
            href="/tokens/${t.id}/revoke"
            aria-label="Revoke ${t.description || `token ${t.id}`}"
            >Revoke</a
          >
        </td>
      </tr>`,
  );
  return html`<table class="tokens" role="table" aria-label="Your API tokens">
    <thead role="rowgroup">
      <tr role="row">
        <th role="columnheader" scope="col">Description</th>
        <th role="columnheader" scope="col">Privileges</th>
        <th role="columnheader" scope="col">Last used</th>
        <th role="columnheader" scope="col">Expires</th>
        <th role="columnheader" scope="col"><span class="muted">Action</span></th>
      </tr>
    </thead>
    <tbody role="rowgroup">
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
  const shown = view.applications.length;
  const capped =
    view.applicationsTotal > shown
      ? html`<p class="muted" role="status">
          Showing ${grouped(shown)} of ${grouped(view.applicationsTotal)} applications (the first by name).
          Revoke the access of some to see the others, or sign out everywhere.
        </p>`
      : '';
  return html`${capped}
    <ul class="apps" aria-label="Connected applications">
      ${items}
    </ul>`;
}

/** 2345 as "2,345" (without a number formatter, which would load ICU's locale data). */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

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
