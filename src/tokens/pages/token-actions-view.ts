// The confirmations of a token's revocation and regeneration, with the token's facts.
import { type Html, html } from '../../web/html.ts';
import { confirmPasswordField } from '../../web/session.ts';
import { csrfField } from '../../web/account-pages.ts';
import { createdText, expiresText, lastUsedText, type TokenRowView } from './list-view.ts';
import { expiryFields, type ExpiryFieldsView } from './create-form-view.ts';
import { plainTime } from '../../utc-time.ts';

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

/** The regeneration's choice of expiry: "as now" first, then the creation form's choices. */
export const KEEP_EXPIRY = 'keep';

export function regeneratePage(
  view: TokenActionView & { needsPassword: boolean; error?: string; expiry: ExpiryFieldsView },
): Html {
  const t = view.token;
  const expiryError = view.expiry.errorField === 'expiry';
  return html`<h1>Regenerate this token?</h1>
    ${tokenFacts(t, view.now, view.describe)}
    <p>
      A new token with a new secret and a new ID replaces it, with the same description and privileges, and
      the expiry you choose (as now, unless you change it).
      <strong>Anything using the old secret stops working at once</strong>: give it the new one.
    </p>
    ${view.error && !expiryError ? html`<p class="error" role="alert" id="page-error">${view.error}</p>` : ''}
    <form method="post" action="/tokens/${t.id}/regenerate">
      ${csrfField(view.csrf)}
      ${expiryFields(view.expiry, {
        value: KEEP_EXPIRY,
        label: t.expiresAt === undefined ? 'As now: never' : `As now: ${plainTime(t.expiresAt)} UTC`,
      })}
      ${view.needsPassword ? confirmPasswordField({ autofocus: view.error !== undefined && !expiryError }) : ''}
      <div class="actions">
        <button type="submit" class="primary">Regenerate token</button>
        <a href="/tokens">Cancel</a>
      </div>
    </form>`;
}
