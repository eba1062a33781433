// The server-rendered small pages: sign-in, signed-in and error (the OAuth consent page builds on them, in
// src/oauth/pages/consent-page.ts). Small, accessible, no assets from elsewhere.
import { type Html, html } from './html.ts';
import { pageSender } from './layout.ts';

/** The small pages' own rules, after the shared theme (theme.ts). */
export const SMALL_PAGE_CSS = `
main{max-width:26rem}
label{display:block;margin-top:.9rem}
.actions{margin-top:1.25rem}
`;

/** The small pages' directives after the stylesheet's and the images': no base URI, never framed. */
export const SMALL_PAGE_POLICY: readonly string[] = ["base-uri 'none'", "frame-ancestors 'none'"];

/** Sends a page; nothing but its stylesheet and the icon may load, and nothing may run. */
export const sendPage = pageSender({ css: SMALL_PAGE_CSS, policy: SMALL_PAGE_POLICY });

/** A form's hidden fields, those whose value is undefined left out. */
export const hiddenFields = (fields: Readonly<Record<string, string | undefined>>): Html[] =>
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
  /** SERVER_NAME */
  serverName: string;
  /** the application an authorization request (the `next` page) continues to, by its name */
  continuesTo?: string;
}

/** Attributes of a sign-in field: the focus when the page opens, and the error's link when it is the one in error. */
function fieldState(view: LoginView, field: LoginField): Html | '' {
  // Without an error, the first empty field: the password when the username is filled in already.
  const focused = view.error
    ? view.errorField === field
    : field === (view.username !== undefined && view.username !== '' ? 'password' : 'username');
  const inError = view.error !== undefined && view.errorField === field;
  return html`${focused ? html` autofocus` : ''}${inError ? html` aria-invalid="true" aria-describedby="login-error"` : ''}`;
}

export function loginPage(view: LoginView) {
  return html`<h1>Sign in to ${view.serverName}</h1>
    ${view.continuesTo ? html`<p>to continue to <strong>${view.continuesTo}</strong></p>` : ''}
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

/** The sign-out button, a form of its own. */
export function logoutForm(csrf: string, label: string, className: string): Html {
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
