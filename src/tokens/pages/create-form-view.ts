// The token page's creation form: description, privileges, expiry (a choice of the list or a date), and
// the password when sudo mode has lapsed; the field an error is about has the focus and its message.
import { Html, html } from '../../web/html.ts';
import { confirmPasswordField } from '../../web/session.ts';
import { csrfField } from '../../web/account-pages.ts';

/** What the creation form shows: the choices, and after a refusal the values sent and the error. */
export interface CreateFormView {
  csrf: string;
  choices: PrivilegeChoice[];
  expiryChoices: ReadonlyArray<{ value: string; label: string }>;
  /** the dates the custom expiry may take (YYYY-MM-DD, UTC) */
  dateRange: { min: string; max: string };
  error?: string;
  errorField?: CreateField;
  description?: string;
  expiry?: ExpiryInput;
  /** sudo mode has lapsed: forms that need it ask for the password */
  needsPassword: boolean;
  /** the same form editing a token (`tokens/:id/edit`): its address, no expiry, a way back */
  editing?: { tokenId: number };
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

/** The id of the error's message when it sits next to the field it is about. */
const FIELD_ERROR_ID = 'field-error';

/** What says whether a field is in error: the error and the field it is about. */
type ErrorState = Pick<CreateFormView, 'error' | 'errorField'>;

const inError = (view: ErrorState, field: CreateField): boolean =>
  view.error !== undefined && view.errorField === field;

/**
 * The error's message, to place next to `field` (above it, so that the field's focus scrolls both into
 * view), when the error is about that field.
 */
function fieldError(view: ErrorState, field: CreateField): Html | '' {
  return inError(view, field)
    ? html`<p class="error field-error" role="alert" id="${FIELD_ERROR_ID}">${view.error}</p>`
    : '';
}

/**
 * The attributes of a form field: what describes it (`describedBy`, a hint's id), and when the error is
 * about it, the focus, the mark and the error's message first among what describes it.
 */
function fieldState(view: ErrorState, field: CreateField, describedBy?: string): Html | '' {
  if (!inError(view, field)) return describedBy === undefined ? '' : html` aria-describedby="${describedBy}"`;
  const ids = describedBy === undefined ? FIELD_ERROR_ID : `${FIELD_ERROR_ID} ${describedBy}`;
  return html` autofocus aria-invalid="true" aria-describedby="${ids}"`;
}

function privilegeChoices(view: CreateFormView): Html {
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

/** What the expiry fields show: the choices, the dates, what was sent, and an error. */
export type ExpiryFieldsView = Pick<CreateFormView, 'expiryChoices' | 'dateRange' | 'expiry'> & ErrorState;

/**
 * The expiry: a list of choices (after `leading`, e.g. the regeneration's "as now", chosen by default) or
 * a date.
 */
export function expiryFields(view: ExpiryFieldsView, leading?: { value: string; label: string }): Html {
  const chosen = view.expiry?.choice ?? leading?.value ?? '';
  const choices = [
    ...(leading ? [leading] : []),
    ...view.expiryChoices,
    { value: 'custom', label: 'On a date…' },
  ];
  const options = choices.map((e) =>
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

export function createForm(view: CreateFormView): Html {
  const editing = view.editing;
  const action = editing ? `/tokens/${editing.tokenId}/edit` : '/tokens';
  return html`<form method="post" action="${action}" aria-labelledby="create-title">
    ${csrfField(view.csrf)}
    <h2 id="create-title">${editing ? 'Edit this token' : 'Create a token'}</h2>
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
    ${editing ? '' : expiryFields(view)}
    ${
      view.needsPassword
        ? confirmPasswordField(
            inError(view, 'password') ? { error: view.error, errorId: FIELD_ERROR_ID } : {},
          )
        : ''
    }
    ${
      editing
        ? html`<div class="actions">
            <button type="submit" class="primary">Save changes</button><a href="/tokens">Cancel</a>
          </div>`
        : html`<div class="actions"><button type="submit" class="primary">Create token</button></div>`
    }
  </form>`;
}
