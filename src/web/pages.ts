// The server-rendered pages: sign-in, signed-in, consent and error. Small, accessible, no external assets
// (the client's avatar is the one image, and it is the client's own).
import { type Html, html } from './html.ts';
import { pageSender } from './layout.ts';
import { confirmPasswordField } from './session.ts';

const CSS = `
:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}
body{margin:0;display:flex;justify-content:center;padding:2rem 1rem;background:#f4f4f7;color:#1d1d24}
main{max-width:26rem;width:100%;background:#fff;border-radius:12px;padding:1.5rem 1.75rem;box-shadow:0 2px 12px #0002}
h1{font-size:1.35rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin-top:.9rem}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.55rem;margin-top:.25rem;border:1px solid #888;border-radius:6px;font:inherit}
button{font:inherit;padding:.55rem 1.2rem;border-radius:6px;border:1px solid #555;cursor:pointer;background:#fff;color:#1d1d24}
button.primary{background:#2457d6;border-color:#2457d6;color:#fff}
button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.actions{display:flex;gap:.75rem;margin-top:1.25rem;flex-wrap:wrap}
.client{display:flex;gap:1rem;align-items:center;margin-bottom:1rem}
.client img,.client .initial{width:64px;height:64px;border-radius:12px;flex:none;object-fit:cover}
.client .initial{display:flex;align-items:center;justify-content:center;background:#2457d6;color:#fff;font-size:2rem;font-weight:700}
.scopes li{margin:.35rem 0}
.error{background:#fde8e8;color:#8a1111;border-radius:6px;padding:.6rem .8rem}
.muted{color:#555;font-size:.92rem}
.signout{margin-top:1.25rem}
.inline{display:inline}
.link{background:none;border:none;padding:0;color:#2457d6;text-decoration:underline}
@media (prefers-color-scheme:dark){body{background:#15151b;color:#e8e8ee}main{background:#22222b}
button{background:#22222b;color:#e8e8ee}.muted{color:#aaa}.link{color:#8fb0ff}.error{background:#4a1d1d;color:#ffd6d6}}
`;

/** Sends a page; nothing but its stylesheet and the client's avatar may load, and nothing may run. */
export const sendPage = pageSender({
  css: CSS,
  policy: ['img-src https: http:', "base-uri 'none'", "frame-ancestors 'none'"],
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
