// The server-rendered pages: sign-in, signed-in, consent and error. Small, accessible, no assets from
// elsewhere (the client's avatar is the one exception, and it is the client's own).
import { type Html, html } from './html.ts';
import { pageSender } from './layout.ts';
import { confirmPasswordField } from './session.ts';
import { AVATAR_CSS, avatar } from './avatar.ts';
import { FAVICON_PATH } from './theme.ts';

/** The sign-in and consent pages' own rules, after the shared theme (theme.ts). */
const CSS = `
main{max-width:26rem}
label{display:block;margin-top:.9rem}
.actions{margin-top:1.25rem}
.client{display:flex;gap:1rem;align-items:center;margin-bottom:1rem}
.client .avatar{width:64px;height:64px;border-radius:12px;font-size:2rem}
.scopes li{margin:.35rem 0}
.signout{margin-top:1.25rem}
.brand{display:flex;gap:.5rem;align-items:center;margin:0 0 .75rem;font-weight:600;font-size:1.05rem}
.brand img{width:28px;height:28px}
${AVATAR_CSS}`;

/** Sends a page; nothing but its stylesheet, the icon and the client's avatar may load, and nothing may run. */
export const sendPage = pageSender({
  css: CSS,
  imageSources: ['https:', 'http:'],
  policy: ["base-uri 'none'", "frame-ancestors 'none'"],
});

const hiddenFields = (fields: Readonly<Record<string, string | undefined>>): Html[] =>
  Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`);

/** The sign-in form's fields, each of which an error may be about. */
export type LoginField = 'username' | 'password';

export interface LoginView {
  csrf: string;
  next: string | undefined;
  error?: string;
  /** the field the error is about: it has the focus and is marked invalid (otherwise the username has it) */
  errorField?: LoginField;
  username?: string;
  /** a note above the form (e.g. that the browser was signed out) */
  notice?: string;
}

/** Attributes of a sign-in field: the focus when the page opens, and the error's link when it is the one in error. */
function fieldState(view: LoginView, field: LoginField): Html | '' {
  const focused = view.error ? view.errorField === field : field === 'username';
  const inError = view.error !== undefined && view.errorField === field;
  return html`${focused ? html` autofocus` : ''}${inError ? html` aria-invalid="true" aria-describedby="login-error"` : ''}`;
}

export function loginPage(view: LoginView) {
  // The service's name on the page itself, not only in the tab's title.
  return html`<p class="brand"><img src="${FAVICON_PATH}" alt="" width="28" height="28" />tokend</p>
    <h1>Sign in</h1>
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${view.error ? html`<p class="error" role="alert" id="login-error">${view.error}</p>` : ''}
    <form method="post" action="/login">
      ${hiddenFields({ _csrf: view.csrf, next: view.next })}
      <label for="username">Username</label>
      <input
        type="text"
        id="username"
        name="username"
        autocomplete="username"
        required
        value="${view.username ?? ''}"
        ${fieldState(view, 'username')}
      />
      <label for="password">Password</label>
      <input
        type="password"
        id="password"
        name="password"
        autocomplete="current-password"
        required
        ${fieldState(view, 'password')}
      />
      <div class="actions"><button type="submit" class="primary">Sign in</button></div>
    </form>`;
}

function logoutForm(csrf: string, label: string, className: string): Html {
  return html`<form method="post" action="/logout" class="inline">
    <input type="hidden" name="_csrf" value="${csrf}" /><button type="submit" class="${className}">
      ${label}
    </button>
  </form>`;
}

export function signedInPage(view: { username: string; csrf: string }) {
  return html`<h1>Signed in</h1>
    <p>You are signed in as <strong>${view.username}</strong>.</p>
    <div class="actions">${logoutForm(view.csrf, 'Sign out', '')}</div>`;
}

export interface ConsentView {
  csrf: string;
  username: string;
  client: { name: string; avatar: string; ownerName: string };
  scopes: ReadonlyArray<{ name: string; description: string }>;
  /** the authorization request, carried to the POST */
  request: Readonly<Record<string, string | undefined>>;
  /** sudo mode has lapsed: the form asks for the password again */
  needsPassword: boolean;
  error?: string;
}

export function consentPage(view: ConsentView) {
  const { client } = view;
  const picture = avatar(client.name, client.avatar, 64);
  const abilities = [
    html`<li>Know who you are: your user id and username.</li>`,
    ...view.scopes.map((s) => html`<li>${s.description} <span class="muted">(${s.name})</span></li>`),
  ];
  return html`<div class="client">
      ${picture}
      <div>
        <h1>Authorize ${client.name}?</h1>
        <p class="muted">An app by <strong>${client.ownerName}</strong></p>
      </div>
    </div>
    <p>
      <strong>${client.name}</strong> wants to act for your account <strong>${view.username}</strong>. It will
      be able to:
    </p>
    <ul class="scopes">
      ${abilities}
    </ul>
    <p class="muted">
      It will not be able to create API tokens, revoke your other tokens or change your password. You can
      withdraw its access at any time under “Connected applications” on your <a href="/tokens">token page</a>.
    </p>
    ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    <form method="post" action="/oauth/authorize">
      ${hiddenFields({ _csrf: view.csrf, ...view.request })}
      ${view.needsPassword ? confirmPasswordField() : ''}
      <div class="actions">
        <button type="submit" name="decision" value="allow" class="primary">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </div>
    </form>
    <div class="muted signout">Not ${view.username}? ${logoutForm(view.csrf, 'Sign out', 'link')}</div>`;
}

export function errorPage(message: string, detail?: string) {
  return html`<h1>Something went wrong</h1>
    <p class="error" role="alert">${message}</p>
    ${detail ? html`<p class="muted">${detail}</p>` : ''}`;
}

/** The page a browser gets for an address the server has no page for, with the way back. */
export function notFoundPage() {
  return html`<h1>Page not found</h1>
    <p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
    <p><a href="/tokens">Go to your API tokens</a> (you sign in first if you have not).</p>`;
}
