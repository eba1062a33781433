// The server-rendered pages: sign-in, signed-in, consent and error. Small, accessible, no assets from
// elsewhere (the client's avatar is the one exception, and it is the client's own).
import { type Html, html } from './html.ts';
import { pageSender } from './layout.ts';
import { COLOURS } from './theme.ts';
import { confirmPasswordField } from './session.ts';

/** The sign-in and consent pages' own rules, after the shared theme (theme.ts). */
const CSS = `
main{max-width:26rem}
label{display:block;margin-top:.9rem}
.actions{margin-top:1.25rem}
.client{display:flex;gap:1rem;align-items:center;margin-bottom:1rem}
.client img,.client .initial{width:64px;height:64px;border-radius:12px;flex:none;object-fit:cover}
.client .initial{display:flex;align-items:center;justify-content:center;background:${COLOURS.accent};color:#fff;font-size:2rem;font-weight:700}
.scopes li{margin:.35rem 0}
.signout{margin-top:1.25rem}
`;

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

export function loginPage(view: {
  csrf: string;
  next: string | undefined;
  error?: string;
  username?: string;
}) {
  return html`<h1>Sign in</h1>
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
        ${view.error ? html` aria-describedby="login-error"` : ''}
      />
      <label for="password">Password</label>
      <input type="password" id="password" name="password" autocomplete="current-password" required />
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
  const picture = client.avatar
    ? html`<img src="${client.avatar}" alt="" width="64" height="64" />`
    : html`<span class="initial" aria-hidden="true">${[...client.name][0]?.toUpperCase() ?? '?'}</span>`;
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
