// The token page's HTML. Server-rendered and complete without JavaScript; the one script only adds
// the copy button next to a new secret.
import { Html, html } from '../../web/html.ts';
import { pageSender } from '../../web/layout.ts';
import { confirmPasswordField } from '../../web/session.ts';
import { timeFromNow } from '../../web/relative-time.ts';
import { COLOURS } from '../../web/theme.ts';
import { AVATAR_CSS, avatar } from '../../web/avatar.ts';
import type { PageOrder } from '../repository.ts';

/**
 * The token pages' own rules, after the shared theme (theme.ts). Under 60rem the token table becomes one
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
.tokens .actions-cell .button{display:block;text-align:center;margin:0 0 .35rem}
.tokens time{white-space:nowrap}
.tokens .address code,.events .agent{overflow-wrap:anywhere}
.filter{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin:.75rem 0}
.filter select{font:inherit;padding:.4rem;border:1px solid #888;border-radius:6px;background:var(--card);color:var(--text);max-width:100%}
code,.secret,pre{font-family:ui-monospace,monospace}
p code{white-space:nowrap}
pre{background:var(--page);border-radius:6px;padding:.6rem .8rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
.sort{display:flex;gap:.25rem .75rem;flex-wrap:wrap;align-items:baseline;margin:.25rem 0}
.sort [aria-current]{font-weight:600;color:var(--text);text-decoration:none}
fieldset{border:1px solid #bbb;border-radius:8px;margin:1rem 0;padding:.5rem 1rem;min-width:0}
legend{font-weight:600;padding:0 .3rem}
.choices{list-style:none;padding:0;margin:0}
.choices li{margin:.4rem 0}
.choices label{display:inline-flex;gap:.35rem;align-items:center;font-weight:400}
.choices .about{display:block;margin-left:1.6rem}
.expiry{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:start;margin-top:.9rem}
.expiry label,.expiry .hint{display:block}
.expiry .hint{margin-top:.25rem}
.expiry input[type=date]{font:inherit;padding:.45rem;border:1px solid #888;border-radius:6px;background:var(--card);color:var(--text);margin-top:.25rem}
form:not(:has(option[value=custom]:checked)) .custom-date{display:none}
.secret-row{display:flex;flex-wrap:wrap;gap:.5rem .75rem;align-items:center;margin-top:.5rem}
input.secret{flex:1 1 100%;width:100%;min-width:0;margin:0;padding:.5rem;font-size:clamp(.75rem,3.7vw,1.05rem);border:2px solid #1f7a3a;border-radius:6px}
@media (max-width:30rem){.created{padding:.75rem .5rem}}
.notice,.error{margin-top:1rem}
.created h2{margin-top:.25rem}
.error.field-error{display:block;margin:.25rem 0;padding:.4rem .7rem}
[aria-invalid=true]{scroll-margin-top:6rem}
.apps{list-style:none;padding:0;margin:.5rem 0}
.apps li{display:flex;gap:.75rem;align-items:center;padding:.6rem 0;border-bottom:1px solid var(--line);flex-wrap:wrap}
.apps .avatar{width:40px;height:40px;border-radius:8px;font-size:1.1rem}
.apps .about{flex:1 1 14rem;min-width:0;overflow-wrap:anywhere}
.danger-zone{border:1px solid ${COLOURS.danger};border-radius:8px;padding:.25rem 1rem 1rem;margin-top:1.75rem}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0;overflow-wrap:anywhere}
@media (max-width:60rem){
.tokens thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.tokens,.tokens tbody,.tokens tr,.tokens td{display:block}
.tokens tr{border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem;margin:.75rem 0}
.tokens td{border:none;padding:.2rem 0;display:grid;grid-template-columns:6rem minmax(0,1fr);gap:.75rem}
.tokens td::before{content:attr(data-label);font-weight:600;font-size:.9rem}
.tokens td.description{display:block;font-weight:600;padding-bottom:.35rem}
.tokens td.description::before,.tokens td.actions-cell::before{content:none}
.tokens td.actions-cell{display:flex;gap:.5rem;flex-wrap:wrap;padding-top:.5rem}
.tokens td.actions-cell .button{margin:0}
}
${AVATAR_CSS}`;

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

/**
 * A sender of pages of the token page's family (the token page, its confirmations, "Your applications"):
 * its stylesheet with `css` after it; its script comes from this server, its forms post only here, it
 * fetches nothing, and applications' avatars (their own images) may load from anywhere.
 */
export const tokenPagesSender = (css = '') =>
  pageSender({
    css: CSS + css,
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

/** Sends a token page. */
export const sendTokensPage = tokenPagesSender();

/**
 * A new secret as a read-only field that has the focus, with the copy button PAGE_SCRIPT reveals (without
 * JavaScript the field's text is selectable).
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

export interface TokenRowView {
  id: number;
  description: string;
  privilegeNames: string[];
  /** Unix seconds; null for a token made before tokend recorded creation times */
  createdAt: number | null;
  /** Unix seconds of the latest use; undefined: never used */
  lastUsed: number | undefined;
  /** the client address of the latest use (canonical: an IPv6 client by its /64); undefined: not recorded */
  lastAddress: string | undefined;
  expiresAt: number | undefined;
}

export interface PrivilegeChoice {
  name: string;
  bit: number;
  checked: boolean;
  /** what it allows, in plain words */
  description: string;
}

/** The fields of the creation form that an error can be about (the one in error gets the focus). */
export type CreateField = 'description' | 'privileges' | 'expiry' | 'password';

/** The form's expiry: a choice of the list ('' never, seconds, or 'custom'), and the custom date. */
export interface ExpiryInput {
  choice: string;
  date: string;
}

export interface TokensPageView {
  username: string;
  csrf: string;
  tokens: TokenRowView[];
  now: number;
  /** the order of the list (`?sort=`) */
  order: PageOrder;
  choices: PrivilegeChoice[];
  expiryChoices: ReadonlyArray<{ value: string; label: string }>;
  /** the dates the custom expiry may take (YYYY-MM-DD, UTC) */
  dateRange: { min: string; max: string };
  page: number;
  hasNext: boolean;
  /** the token just made or regenerated: its secret is shown this once */
  created?: CreatedToken;
  notice?: string;
  error?: string;
  errorField?: CreateField;
  description?: string;
  expiry?: ExpiryInput;
  /** sudo mode has lapsed: forms that need it ask for the password */
  needsPassword: boolean;
  applications: ApplicationView[];
  /** how many applications can act for the user; more than `applications` holds when the list is capped */
  applicationsTotal: number;
  /** how to send a token: an address of the API to show it with, and the API reference */
  usage: UsageView;
}

export interface CreatedToken {
  id: number;
  secret: string;
  description: string;
  privilegeNames: string[];
  expiresAt: number | undefined;
}

export interface UsageView {
  /** an absolute URL of the API's "who am I" endpoint */
  exampleUrl: string;
  /** the path of the API reference */
  docsPath: string;
}

export interface ApplicationView {
  clientId: string;
  name: string;
  avatar: string;
  /** what it may do, in a few words each, besides knowing who you are; undefined: an operator's grant */
  abilities: string[] | undefined;
  approvedAt: number | null;
  /** when it obtained the newest token it still holds; null: it holds none (whether it ever had one is unknown) */
  lastUsedAt: number | null;
}

const isoTime = (at: number): string => new Date(at * 1000).toISOString().replace('.000Z', 'Z');

function when(at: number, now: number): Html {
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

const privilegeList = (names: readonly string[]): string => (names.length ? names.join(', ') : 'none');

const tokenName = (t: { id: number; description: string }): string => t.description || `token ${t.id}`;

function lastUsedText(t: TokenRowView, now: number): Html {
  if (t.lastUsed === undefined) return html`<span class="muted">Never used</span>`;
  return t.lastAddress === undefined
    ? when(t.lastUsed, now)
    : html`${when(t.lastUsed, now)}<span class="address"> from <code>${t.lastAddress}</code></span>`;
}

function createdText(t: TokenRowView, now: number): Html {
  return t.createdAt === null ? html`<span class="muted">unknown</span>` : when(t.createdAt, now);
}

function expiresText(expiresAt: number | undefined, now: number): Html {
  return expiresAt === undefined ? html`<span class="muted">never</span>` : when(expiresAt, now);
}

/** The new secret, focused when the page opens, with how to use it. */
function createdBox(created: CreatedToken, view: TokensPageView): Html {
  return html`<section class="notice created" aria-labelledby="created-title">
    <h2 id="created-title">Your new token</h2>
    <p>
      Copy it now: it is shown only this once, and this page will not show it again if you reload it.
      Privileges: ${privilegeList(created.privilegeNames)}; expires:
      ${expiresText(created.expiresAt, view.now)}.
    </p>
    <label for="new-token"
      >Token ${created.id}${created.description ? html` “${created.description}”` : ''}</label
    >
    ${secretField('new-token', created.secret)}
    <p>
      Send it with each request in the <code>X-Ripple-Token</code> header: see
      <a href="#using">Using a token</a>.
    </p>
  </section>`;
}

const orderQuery = (order: PageOrder): string => (order === 'created' ? '' : `sort=${order}`);

/** A link to the list in `order`, page `page`. */
function listHref(order: PageOrder, page: number): string {
  const query = [orderQuery(order), page > 1 ? `p=${page}` : ''].filter((q) => q !== '').join('&');
  return query ? `/tokens?${query}` : '/tokens';
}

const ORDERS: ReadonlyArray<{ order: PageOrder; label: string }> = [
  { order: 'created', label: 'Created (oldest first)' },
  { order: 'last-used', label: 'Last used (latest first)' },
];

function sortLinks(view: TokensPageView): Html {
  const links = ORDERS.map(({ order, label }) =>
    order === view.order
      ? html`<a href="${listHref(order, 1)}" aria-current="true">${label}</a>`
      : html`<a href="${listHref(order, 1)}">${label}</a>`,
  );
  return html`<nav class="sort muted" aria-label="Sort your tokens">Sort by: ${links}</nav>`;
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
        <td role="cell" class="id" data-label="ID">${t.id}</td>
        <td role="cell" data-label="Privileges">
          ${t.privilegeNames.length ? t.privilegeNames.join(', ') : html`<span class="muted">none</span>`}
        </td>
        <td role="cell" class="created" data-label="Created">${createdText(t, view.now)}</td>
        <td role="cell" class="last-used" data-label="Last used">${lastUsedText(t, view.now)}</td>
        <td role="cell" class="expires" data-label="Expires">${expiresText(t.expiresAt, view.now)}</td>
        <td role="cell" class="actions-cell">
          <a class="button" href="/tokens/${t.id}/regenerate" aria-label="Regenerate ${tokenName(t)}"
            >Regenerate</a
          ><a class="button" href="/tokens/${t.id}/revoke" aria-label="Revoke ${tokenName(t)}">Revoke</a>
        </td>
      </tr>`,
  );
  return html`${sortLinks(view)}
    <table class="tokens" role="table" aria-label="Your API tokens">
      <thead role="rowgroup">
        <tr role="row">
          <th role="columnheader" scope="col">Description</th>
          <th role="columnheader" scope="col">ID</th>
          <th role="columnheader" scope="col">Privileges</th>
          <th role="columnheader" scope="col">Created</th>
          <th role="columnheader" scope="col">Last used</th>
          <th role="columnheader" scope="col">Expires</th>
          <th role="columnheader" scope="col"><span class="muted">Actions</span></th>
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
    ${view.page > 1 ? html`<a href="${listHref(view.order, view.page - 1)}">Previous page</a>` : ''}
    <span class="muted">Page ${view.page}</span>
    ${view.hasNext ? html`<a href="${listHref(view.order, view.page + 1)}">Next page</a>` : ''}
  </nav>`;
}

/** The id of the error's message when it sits next to the field it is about. */
const FIELD_ERROR_ID = 'field-error';

const inError = (view: TokensPageView, field: CreateField): boolean =>
  view.error !== undefined && view.errorField === field;

/**
 * The error's message, to place next to `field` (above it, so that the field's focus scrolls both into
 * view), when the error is about that field.
 */
function fieldError(view: TokensPageView, field: CreateField): Html | '' {
  return inError(view, field)
    ? html`<p class="error field-error" role="alert" id="${FIELD_ERROR_ID}">${view.error}</p>`
    : '';
}

/**
 * The attributes of a form field: what describes it (`describedBy`, a hint's id), and when the error is
 * about it, the focus, the mark and the error's message first among what describes it.
 */
function fieldState(view: TokensPageView, field: CreateField, describedBy?: string): Html | '' {
  if (!inError(view, field)) return describedBy === undefined ? '' : html` aria-describedby="${describedBy}"`;
  const ids = describedBy === undefined ? FIELD_ERROR_ID : `${FIELD_ERROR_ID} ${describedBy}`;
  return html` autofocus aria-invalid="true" aria-describedby="${ids}"`;
}

function privilegeChoices(view: TokensPageView): Html {
  if (!view.choices.length)
    return html`<p class="muted">Your account may not give tokens any privileges.</p>`;
  const items = view.choices.map(
    (c, i) =>
      html`<li>
        <label
          ><input
            type="checkbox"
            name="privileges"
            value="${c.name}"
            ${c.checked ? new Html('checked') : ''}
            ${i === 0 ? fieldState(view, 'privileges', `privilege-${c.name}`) : html` aria-describedby="privilege-${c.name}"`}
          />
          ${c.name}</label
        >
        <span class="about muted" id="privilege-${c.name}">${c.description}</span>
      </li>`,
  );
  return html`<ul class="choices">
    ${items}
  </ul>`;
}

function expiryFields(view: TokensPageView): Html {
  const chosen = view.expiry?.choice ?? '';
  const options = [...view.expiryChoices, { value: 'custom', label: 'On a date…' }].map((e) =>
    e.value === chosen
      ? html`<option value="${e.value}" selected>${e.label}</option>`
      : html`<option value="${e.value}">${e.label}</option>`,
  );
  // An expiry error is about the date when "On a date…" is chosen, else about the list.
  const custom = chosen === 'custom';
  return html`<div class="expiry">
    <div>
      <label for="expires_in">Expires</label>
      ${custom ? '' : fieldError(view, 'expiry')}
      <select id="expires_in" name="expires_in" ${custom ? '' : fieldState(view, 'expiry')}>
        ${options}
      </select>
    </div>
    <div class="custom-date">
      <label for="expires_on">Expiry date <span class="muted">(with “On a date…”)</span></label>
      ${custom ? fieldError(view, 'expiry') : ''}
      <input
        type="date"
        id="expires_on"
        name="expires_on"
        min="${view.dateRange.min}"
        max="${view.dateRange.max}"
        value="${view.expiry?.date ?? ''}"
        ${custom ? fieldState(view, 'expiry', 'expires-on-about') : html`aria-describedby="expires-on-about"`}
      />
      <span class="muted hint" id="expires-on-about">The token works until the end of that day (UTC).</span>
    </div>
  </div>`;
}

function createForm(view: TokensPageView): Html {
  return html`<form method="post" action="/tokens" aria-labelledby="create-title">
    ${csrfField(view.csrf)}
    <h2 id="create-title">Create a token</h2>
    <label for="description">Description</label>
    ${fieldError(view, 'description')}
    <input
      type="text"
      id="description"
      name="description"
      maxlength="1024"
      placeholder="What is this token for?"
      value="${view.description ?? ''}"
      ${fieldState(view, 'description')}
    />
    <fieldset>
      <legend>Privileges</legend>
      ${fieldError(view, 'privileges')} ${privilegeChoices(view)}
    </fieldset>
    ${expiryFields(view)}
    ${
      view.needsPassword
        ? confirmPasswordField(
            inError(view, 'password') ? { error: view.error, errorId: FIELD_ERROR_ID } : {},
          )
        : ''
    }
    <div class="actions"><button type="submit" class="primary">Create token</button></div>
  </form>`;
}

/** How to send a token, and where the API is described. */
function usageSection(usage: UsageView): Html {
  return html`<section aria-labelledby="using">
    <h2 id="using">Using a token</h2>
    <p>
      Send the token with each request, in the <code>X-Ripple-Token</code> header or as
      <code>Authorization: Bearer</code> followed by the token. For example, to see which token and privileges
      a request carries:
    </p>
    <pre><code>curl -H "X-Ripple-Token: YOUR_TOKEN" ${usage.exampleUrl}</code></pre>
    <p>
      Every endpoint, with what it needs and answers, is in the
      <a href="${usage.docsPath}">API reference</a>.
    </p>
  </section>`;
}

/** What an application may do, as a sentence. */
function mayDo(a: ApplicationView): string {
  if (a.abilities === undefined) return 'Access given by the server’s operator.';
  return `May know who you are${a.abilities.map((x) => `, ${x}`).join('')}.`;
}

function applicationList(view: TokensPageView): Html {
  if (view.applications.length === 0)
    return html`<p class="muted">No application can act for your account.</p>`;
  const items = view.applications.map(
    (a) =>
      html`<li>
        ${avatar(a.name, a.avatar, 40)}
        <div class="about">
          <strong>${a.name}</strong><br />
          <span class="muted"
            >${mayDo(a)} ${a.approvedAt === null ? '' : html`Approved ${when(a.approvedAt, view.now)}.`}
            ${a.lastUsedAt === null ? 'No live tokens.' : html`Last used ${when(a.lastUsedAt, view.now)}.`}</span
          >
        </div>
        <a
          class="button"
          href="/tokens/applications/${encodeURIComponent(a.clientId)}/revoke"
          aria-label="Revoke access of ${a.name}…"
          >Revoke access…</a
        >
      </li>`,
  );
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
  return html`${signedInHeader('API tokens', view)}
    ${
      view.error !== undefined && view.errorField === undefined
        ? html`<p class="error" role="alert" id="page-error">${view.error}</p>`
        : ''
    }
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${view.created ? createdBox(view.created, view) : ''}
    <h2>Your tokens</h2>
    <p><a href="/security-log">Security log</a>: sign-ins, tokens made and revoked, and more.</p>
    ${tokenTable(view)} ${pager(view)} ${createForm(view)} ${usageSection(view.usage)}
    <h2 id="apps-title">Connected applications</h2>
    ${applicationList(view)}
    <p class="muted">
      Building an app that signs users in with their account?
      <a href="/applications">Your applications</a>: register and manage your own OAuth applications.
    </p>
    <section class="danger-zone" aria-labelledby="everywhere-title">
      <h2 id="everywhere-title">Sign out everywhere</h2>
      <p class="muted">
        Ends every session of yours in every browser, disconnects every application and revokes every API
        token, at once. Use it when a token or your password may have leaked.
      </p>
      <a class="button" href="/tokens/sign-out-everywhere">Sign out everywhere…</a>
    </section>`;
}

/** A token's facts on its confirmation pages. */
function tokenFacts(t: TokenRowView, now: number, describe: (name: string) => string): Html {
  const privileges = t.privilegeNames.length
    ? html`<ul>
        ${t.privilegeNames.map((n) => html`<li><strong>${n}</strong>: ${describe(n)}</li>`)}
      </ul>`
    : 'none';
  return html`<dl class="facts">
    <dt>Description</dt>
    <dd>${t.description || html`<span class="muted">(no description)</span>`}</dd>
    <dt>ID</dt>
    <dd>${t.id}</dd>
    <dt>Created</dt>
    <dd>${createdText(t, now)}</dd>
    <dt>Last used</dt>
    <dd>${lastUsedText(t, now)}</dd>
    <dt>Expires</dt>
    <dd>${expiresText(t.expiresAt, now)}</dd>
    <dt>Privileges</dt>
    <dd>${privileges}</dd>
  </dl>`;
}

export interface TokenActionView {
  csrf: string;
  token: TokenRowView;
  now: number;
  /** a privilege's description by name */
  describe: (name: string) => string;
}

export function revokePage(view: TokenActionView): Html {
  const t = view.token;
  return html`<h1>Revoke this token?</h1>
    ${tokenFacts(t, view.now, view.describe)}
    <p>Anything using it stops working at once. This cannot be undone.</p>
    <form method="post" action="/tokens/${t.id}/revoke">
      ${csrfField(view.csrf)}
      <div class="actions">
        <button type="submit" class="danger">Revoke</button>
        <a href="/tokens">Cancel</a>
      </div>
    </form>`;
}

export function regeneratePage(view: TokenActionView & { needsPassword: boolean; error?: string }): Html {
  const t = view.token;
  return html`<h1>Regenerate this token?</h1>
    ${tokenFacts(t, view.now, view.describe)}
    <p>
      A new token with a new secret and a new ID replaces it, with the same description, privileges and
      expiry. <strong>Anything using the old secret stops working at once</strong>: give it the new one.
    </p>
    ${view.error ? html`<p class="error" role="alert" id="page-error">${view.error}</p>` : ''}
    <form method="post" action="/tokens/${t.id}/regenerate">
      ${csrfField(view.csrf)}
      ${view.needsPassword ? confirmPasswordField({ autofocus: view.error !== undefined }) : ''}
      <div class="actions">
        <button type="submit" class="primary">Regenerate token</button>
        <a href="/tokens">Cancel</a>
      </div>
    </form>`;
}

export function revokeApplicationPage(view: {
  csrf: string;
  application: ApplicationView;
  now: number;
}): Html {
  const a = view.application;
  return html`<h1>Revoke access of ${a.name}?</h1>
    <div class="apps">${avatar(a.name, a.avatar, 40)}</div>
    <p>
      <strong>${a.name}</strong>: ${mayDo(a)}
      ${a.lastUsedAt === null ? 'It holds no live token for you.' : html`It last used its access ${when(a.lastUsedAt, view.now)}.`}
    </p>
    <p>
      Its access ends at once: every token it holds for you stops working, and it must ask for your approval
      again to act for you.
    </p>
    <form method="post" action="/tokens/applications/${encodeURIComponent(a.clientId)}/revoke">
      ${csrfField(view.csrf)}
      <div class="actions">
        <button type="submit" class="danger">Revoke access</button>
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
