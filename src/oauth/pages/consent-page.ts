// The consent page of the authorization endpoint (authorize.ts): which application asks, for whom, what it
// will be able to do, and the Allow/Deny form. It is one of the web's small pages, with its own rules.
import { html, type Html } from '../../web/html.ts';
import { pageSender } from '../../web/layout.ts';
import { SMALL_PAGE_CSS, SMALL_PAGE_POLICY, hiddenFields, logoutForm } from '../../web/pages.ts';
import { confirmPasswordField } from '../../web/session.ts';
import { AVATAR_CSS, avatar } from '../../web/avatar.ts';

/** The consent page's rules, after the small pages' own. */
const CONSENT_CSS = `
.client{display:flex;gap:1rem;align-items:center;margin-bottom:1rem}
.client .avatar{width:64px;height:64px;border-radius:12px;font-size:2rem}
.scopes li{margin:.35rem 0}
.signout{margin-top:1.25rem}
${AVATAR_CSS}`;

/** Sends the consent page: its stylesheet, the icon and the client's avatar (from anywhere) may load, nothing may run. */
export const sendConsentPage = pageSender({
  css: SMALL_PAGE_CSS + CONSENT_CSS,
  imageSources: ['https:', 'http:'],
  policy: SMALL_PAGE_POLICY,
});

/** A scope as the page words it; no description: an identity scope, which the first line covers. */
export interface ScopeView {
  name: string;
  description: string | undefined;
}

/**
 * What an application will be able to do, in the consent page's words (the device page says the same):
 * who you are (the identity scopes named there), then each scope's plain words.
 */
export function abilities(scopes: readonly ScopeView[]) {
  const identity = scopes.filter((s) => s.description === undefined).map((s) => s.name);
  return [
    html`<li>
      Know who you are: your user id and
      username.${identity.length > 0 ? html` <span class="muted">(${identity.join(', ')})</span>` : ''}
    </li>`,
    ...scopes
      .filter((s) => s.description !== undefined)
      .map((s) => html`<li>${s.description} <span class="muted">(${s.name})</span></li>`),
  ];
}

interface ConsentView {
  csrf: string;
  username: string;
  /** SERVER_NAME: whose accounts these are */
  serverName: string;
  client: { name: string; avatar: string; ownerName: string };
  scopes: readonly ScopeView[];
  /** the authorization request, carried to the POST */
  request: Readonly<Record<string, string | undefined>>;
  /** sudo mode has lapsed: the form asks for the password again */
  needsPassword: boolean;
  error?: string;
}

/**
 * What an application asking for access may do, and may not, for whose account: the one wording of the
 * consent page and the device page.
 */
export function whatItMayDo(
  clientName: string,
  view: { serverName: string; username: string; scopes: readonly ScopeView[] },
): Html {
  return html`<p>
      <strong>${clientName}</strong> wants to act for your ${view.serverName} account
      <strong>${view.username}</strong>. It will be able to:
    </p>
    <ul class="scopes">
      ${abilities(view.scopes)}
    </ul>
    <p class="muted">
      It will not be able to create API tokens, revoke your other tokens or change your password. You can
      withdraw its access at any time under “Connected applications” on your <a href="/tokens">token page</a>.
    </p>`;
}

export function consentPage(view: ConsentView) {
  const { client } = view;
  const picture = avatar(client.name, client.avatar, 64);
  return html`<div class="client">
      ${picture}
      <div>
        <h1>Authorize ${client.name}?</h1>
        <p class="muted">An app by <strong>${client.ownerName}</strong></p>
      </div>
    </div>
    ${whatItMayDo(client.name, view)}
    ${view.error ? html`<p class="error" role="alert">${view.error}</p>` : ''}
    ${decisionForm('/oauth/authorize', { _csrf: view.csrf, ...view.request }, view)}`;
}

/**
 * The Allow/Deny form of the consent page and the device page (the password when sudo mode has lapsed),
 * and the way to sign out for someone else's account.
 */
export function decisionForm(
  action: string,
  fields: Readonly<Record<string, string | undefined>>,
  view: { csrf: string; username: string; needsPassword: boolean },
): Html {
  return html`<form method="post" action="${action}">
      ${hiddenFields(fields)} ${view.needsPassword ? confirmPasswordField() : ''}
      <div class="actions">
        <button type="submit" name="decision" value="allow" class="primary">Allow</button>
        <button type="submit" name="decision" value="deny">Deny</button>
      </div>
    </form>
    <div class="muted signout">Not ${view.username}? ${logoutForm(view.csrf, 'Sign out', 'link')}</div>`;
}
