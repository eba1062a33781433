// The HTML of "Your applications" (applications-page.ts): the list, the registration and edit forms, a
// new secret shown once with its copy button, and the confirmations of a new secret and of deletion.
// Server-rendered and complete without JavaScript; the account pages' script only adds the copy button.
import { type Html, html } from '../../web/html.ts';
import { confirmPasswordField } from '../../web/session.ts';
import { avatar } from '../../web/avatar.ts';
import {
  accountPageSender,
  csrfField,
  messagePage,
  secretOnce,
  signedInHeader,
} from '../../web/account-pages.ts';
import { asset, fileText } from '../../web/assets.ts';
import { utcDate } from '../../utc-time.ts';
import type { ClientField } from '../clients.ts';

/** The pages' own rules (applications.css), after the account pages': the forms' fields, the header. */
export const APPLICATIONS_STYLESHEET = asset(
  'applications',
  'css',
  fileText(import.meta.url, './applications.css'),
);

/** Sends an applications page: one of the account pages, with their script (the copy button). */
export const sendApplicationsPage = accountPageSender([APPLICATIONS_STYLESHEET]);

/** An application as these pages show it. */
export interface ApplicationSummary {
  id: string;
  name: string;
  avatar: string;
  redirectUris: readonly string[];
  confidential: boolean;
  /** how many users have approved it */
  authorizedUsers: number;
  /** Unix seconds */
  created: number;
}

const path = (a: { id: string }, action = '') => `/applications/${encodeURIComponent(a.id)}${action}`;

const usersText = (n: number) =>
  n === 0
    ? 'No user has authorized it yet.'
    : n === 1
      ? '1 user has authorized it.'
      : `${n} users have authorized it.`;

function facts(a: ApplicationSummary): Html {
  return html`<dl class="facts">
    <dt>Client ID</dt>
    <dd><code>${a.id}</code></dd>
    <dt>Type</dt>
    <dd>
      ${
        a.confidential
          ? 'Confidential: a server that keeps a client secret'
          : 'Public: a browser or native app, no secret (PKCE only)'
      }
    </dd>
    <dt>Redirect URIs</dt>
    <dd>
      <ul>
        ${a.redirectUris.map((u) => html`<li><code>${u}</code></li>`)}
      </ul>
    </dd>
    <dt>Users</dt>
    <dd>${usersText(a.authorizedUsers)}</dd>
    <dt>Registered</dt>
    <dd>${utcDate(a.created)}</dd>
  </dl>`;
}

/** Where a developer finds the authorization server: its addresses and the API reference. */
export interface DeveloperLinks {
  /** the issuer (the server's origin) */
  issuer: string;
  /** the path of the API reference page */
  apiReference: string;
}

/** The addresses a developer needs, and where the guide is. */
function forDevelopers(links: DeveloperLinks): Html {
  return html`<section aria-labelledby="developers-title">
    <h2 id="developers-title">For developers</h2>
    <dl class="facts">
      <dt>Authorization endpoint</dt>
      <dd><code>${links.issuer}/oauth/authorize</code></dd>
      <dt>Token endpoint</dt>
      <dd><code>${links.issuer}/oauth/token</code></dd>
      <dt>Metadata</dt>
      <dd>
        <a href="/.well-known/openid-configuration"
          ><code>${links.issuer}/.well-known/openid-configuration</code></a
        >
        (OpenID Connect discovery; RFC 8414's at <code>/.well-known/oauth-authorization-server</code>)
      </dd>
      <dt>API reference</dt>
      <dd><a href="${links.apiReference}">The API's routes, credentials and answers</a></dd>
      <dt>Guide</dt>
      <dd>
        <code>docs/oauth.md</code> in tokend's source: the code flow with PKCE, OpenID Connect, signing in
        from a device, each with a working example
      </dd>
    </dl>
  </section>`;
}

export interface ListView {
  username: string;
  csrf: string;
  developers: DeveloperLinks;
  applications: readonly ApplicationSummary[];
  max: number;
  notice?: string;
}

export function applicationsPage(view: ListView): Html {
  const full = view.applications.length >= view.max;
  const items = view.applications.map(
    (a) =>
      html`<li>
        ${avatar(a.name, a.avatar, 40)}
        <div class="about">
          <a href="${path(a)}"><strong>${a.name}</strong></a>
          <div class="muted">
            ${a.confidential ? 'Confidential' : 'Public'} · <code>${a.id}</code> ·
            ${usersText(a.authorizedUsers)}
          </div>
        </div>
      </li>`,
  );
  return html`${signedInHeader('Your applications', view)}
    <p class="muted">
      OAuth applications you registered: they ask users for access to their accounts on the consent page.
      <a href="/tokens">Back to your API tokens</a>
    </p>
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${
      view.applications.length === 0
        ? html`<p>You have not registered an application yet.</p>`
        : html`<ul class="apps" aria-label="Your applications">
            ${items}
          </ul>`
    }
    <p class="muted">You have ${view.applications.length} of at most ${view.max} applications.</p>
    ${
      full
        ? html`<p class="error" role="alert">
            You have the most applications allowed (${view.max}). Delete one before registering another.
          </p>`
        : html`<div class="actions">
            <a class="button" href="/applications/new">Register an application</a>
          </div>`
    }
    ${forDevelopers(view.developers)}`;
}

/** What the registration and edit forms hold (as typed, when they come back with an error). */
export interface FormValues {
  name: string;
  redirectUris: string;
  avatar: string;
  confidential: boolean;
}

export interface FormView {
  csrf: string;
  values: FormValues;
  needsPassword: boolean;
  error?: string;
  /** the field the error is about (else it is the page's, or the password's) */
  errorField?: ClientField | 'password';
}

/** A field's label, its error next to it and the attributes that tie them. */
function fieldError(view: FormView, field: ClientField): { message: Html | ''; state: Html | '' } {
  if (view.error === undefined || view.errorField !== field) return { message: '', state: '' };
  const id = `${field}-error`;
  return {
    message: html`<span class="error field-error" role="alert" id="${id}">${view.error}</span>`,
    state: html`autofocus aria-invalid="true" aria-describedby="${id}"`,
  };
}

function commonFields(view: FormView): Html {
  const name = fieldError(view, 'name');
  const uris = fieldError(view, 'redirect_uris');
  const picture = fieldError(view, 'avatar');
  return html`<label for="name">Name</label>
    <span class="hint muted" id="name-hint"
      >Users see it on the consent page. Each of your applications has its own.</span
    >
    ${name.message}
    <input
      type="text"
      id="name"
      name="name"
      required
      maxlength="255"
      value="${view.values.name}"
      ${name.state}
    />
    <label for="redirect_uris">Redirect URIs</label>
    <span class="hint muted"
      >One per line. A user is sent back only to one of these, compared exactly (no wildcards, no fragment),
      except that http://127.0.0.1/… and http://[::1]/… also match at any port.</span
    >
    ${uris.message}
    <textarea id="redirect_uris" name="redirect_uris" required spellcheck="false" ${uris.state}>
${view.values.redirectUris}</textarea>
    <label for="avatar">Avatar URL <span class="muted">(optional)</span></label>
    <span class="hint muted">An http(s) address of the app's icon, shown on the consent page.</span>
    ${picture.message}
    <input
      type="url"
      id="avatar"
      name="avatar"
      maxlength="2048"
      value="${view.values.avatar}"
      ${picture.state}
    />`;
}

function pageError(view: FormView): Html | '' {
  return view.error !== undefined && view.errorField === undefined
    ? html`<p class="error" role="alert">${view.error}</p>`
    : '';
}

function passwordField(view: FormView): Html | '' {
  if (view.errorField === 'password')
    return confirmPasswordField(view.error === undefined ? { autofocus: true } : { error: view.error });
  return view.needsPassword ? confirmPasswordField() : '';
}

export function registerPage(view: FormView): Html {
  const confidential = view.values.confidential;
  return html`<h1>Register an application</h1>
    <p class="muted"><a href="/applications">Back to your applications</a></p>
    ${pageError(view)}
    <form method="post" action="/applications/new">
      ${csrfField(view.csrf)} ${commonFields(view)}
      <fieldset>
        <legend>Type</legend>
        <label
          ><input type="radio" name="type" value="confidential" ${confidential ? html`checked` : ''} />
          <span
            >Confidential: it runs on a server and keeps a client secret (shown to you once, after
            registering).</span
          ></label
        >
        <label
          ><input type="radio" name="type" value="public" ${confidential ? '' : html`checked`} />
          <span>Public: a browser or native app, which cannot keep a secret. It gets none.</span></label
        >
      </fieldset>
      <p class="muted">Every application proves each authorization with PKCE (S256).</p>
      ${passwordField(view)}
      <div class="actions">
        <button type="submit" class="primary">Register</button>
        <a href="/applications">Cancel</a>
      </div>
    </form>`;
}

export interface ApplicationView {
  csrf: string;
  developers: DeveloperLinks;
  application: ApplicationSummary;
  form: FormView;
  notice?: string;
  /** a secret just made: shown this once */
  secret?: string;
}

/** A new secret, focused, with its copy button. */
const secretBox = (secret: string): Html =>
  secretOnce({
    id: 'client-secret',
    titleId: 'secret-title',
    title: 'Your client secret',
    about:
      'Copy it now and keep it on your server: it is shown only this once. Nobody can show it again; if it is lost, make a new one.',
    label: 'Client secret',
    secret,
  });

export function applicationPage(view: ApplicationView): Html {
  const a = view.application;
  return html`<div class="app-head">
      ${avatar(a.name, a.avatar, 40)}
      <h1>${a.name}</h1>
    </div>
    <p class="muted"><a href="/applications">Back to your applications</a></p>
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${view.secret !== undefined ? secretBox(view.secret) : ''} ${facts(a)}
    <h2>Change it</h2>
    ${pageError(view.form)}
    <form method="post" action="${path(a)}">
      ${csrfField(view.csrf)} ${commonFields(view.form)} ${passwordField(view.form)}
      <div class="actions"><button type="submit" class="primary">Save changes</button></div>
    </form>
    ${forDevelopers(view.developers)}
    <section class="danger-zone" aria-labelledby="danger-title">
      <h2 id="danger-title">Secret and deletion</h2>
      ${
        a.confidential
          ? html`<p class="muted">
              A new client secret replaces the old one at once: the old one stops working on every server.
            </p>`
          : ''
      }
      <div class="actions">
        ${a.confidential ? html`<a class="button" href="${path(a, '/secret')}">New client secret…</a>` : ''}
        <a class="button" href="${path(a, '/delete')}">Delete application…</a>
      </div>
    </section>`;
}

export interface ConfirmView {
  csrf: string;
  application: ApplicationSummary;
  needsPassword: boolean;
  error?: string;
  /** the password was refused (then the error sits by its field) */
  passwordError?: boolean;
  endTokens?: boolean;
}

function confirmPassword(view: ConfirmView): Html | '' {
  if (view.passwordError) return confirmPasswordField(view.error === undefined ? {} : { error: view.error });
  return view.needsPassword ? confirmPasswordField() : '';
}

export function rotatePage(view: ConfirmView): Html {
  const a = view.application;
  return html`<h1>A new client secret for ${a.name}?</h1>
    ${facts(a)}
    <p>
      The new secret is shown once. <strong>The old secret stops working at once</strong>: give your server
      the new one. Tokens the application already holds keep working unless you end them here.
    </p>
    ${view.error !== undefined && !view.passwordError ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    <form method="post" action="${path(a, '/secret')}">
      ${csrfField(view.csrf)}
      <p>
        <label
          ><input type="checkbox" name="end_tokens" value="yes" ${view.endTokens ? html`checked` : ''} /> Also
          end every token it holds now, for every user (their approvals stay: it asks them for new
          tokens)</label
        >
      </p>
      ${confirmPassword(view)}
      <div class="actions">
        <button type="submit" class="primary">Make a new secret</button>
        <a href="${path(a)}">Cancel</a>
      </div>
    </form>`;
}

export function deletePage(view: ConfirmView): Html {
  const a = view.application;
  return html`<h1>Delete ${a.name}?</h1>
    ${facts(a)}
    <p>
      Every token, code and approval of it ends at once, for every user: it stops working for good. This
      cannot be undone.
    </p>
    ${view.error !== undefined && !view.passwordError ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    <form method="post" action="${path(a, '/delete')}">
      ${csrfField(view.csrf)} ${confirmPassword(view)}
      <div class="actions">
        <button type="submit" class="danger">Delete application</button>
        <a href="${path(a)}">Cancel</a>
      </div>
    </form>`;
}

/** A short page: a title, a message and the way back to the list. */
export const applicationsMessage = (title: string, message: string): Html =>
  messagePage(title, message, { href: '/applications', label: 'Back to your applications' });
