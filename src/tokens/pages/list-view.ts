// The token page's HTML (GET /tokens): the new secret shown once, the list of tokens, the creation form
// (create-form-view.ts), how to use a token, the connected applications and the way to sign out
// everywhere. Server-rendered and complete without JavaScript.
import { type Html, html } from '../../web/html.ts';
import { secretOnce, signedInHeader, when } from '../../web/account-pages.ts';
import { avatar } from '../../web/avatar.ts';
import type { PageOrder } from '../repository.ts';
import { createForm, type CreateFormView } from './create-form-view.ts';

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

export interface TokensPageView extends CreateFormView {
  username: string;
  tokens: TokenRowView[];
  now: number;
  /** the order of the list (`?sort=`) */
  order: PageOrder;
  page: number;
  hasNext: boolean;
  /** the token just made or regenerated: its secret is shown this once */
  created?: CreatedToken;
  notice?: string;
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

const privilegeList = (names: readonly string[]): string => (names.length ? names.join(', ') : 'none');

const tokenName = (t: { id: number; description: string }): string => t.description || `token ${t.id}`;

export function lastUsedText(t: TokenRowView, now: number): Html {
  if (t.lastUsed === undefined) return html`<span class="muted">Never used</span>`;
  return t.lastAddress === undefined
    ? when(t.lastUsed, now)
    : html`${when(t.lastUsed, now)}<span class="address"> from <code>${t.lastAddress}</code></span>`;
}

export function createdText(t: TokenRowView, now: number): Html {
  return t.createdAt === null ? html`<span class="muted">unknown</span>` : when(t.createdAt, now);
}

export function expiresText(expiresAt: number | undefined, now: number): Html {
  return expiresAt === undefined ? html`<span class="muted">never</span>` : when(expiresAt, now);
}

/** The new secret, focused when the page opens, with how to use it. */
function createdBox(created: CreatedToken, view: TokensPageView): Html {
  return secretOnce({
    id: 'new-token',
    titleId: 'created-title',
    title: 'Your new token',
    about: html`Copy it now: it is shown only this once, and this page will not show it again if you reload
    it. Privileges: ${privilegeList(created.privilegeNames)}; expires:
    ${expiresText(created.expiresAt, view.now)}.`,
    label: html`Token ${created.id}${created.description ? html` “${created.description}”` : ''}`,
    secret: created.secret,
    after: html`<p>
      Send it with each request in the <code>X-Ripple-Token</code> header: see
      <a href="#using">Using a token</a>.
    </p>`,
  });
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
          <a class="button" href="/tokens/${t.id}/edit" aria-label="Edit ${tokenName(t)}">Edit</a
          ><a class="button" href="/tokens/${t.id}/regenerate" aria-label="Regenerate ${tokenName(t)}"
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
export function mayDo(a: ApplicationView): string {
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
