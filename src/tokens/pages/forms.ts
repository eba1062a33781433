// The token page's forms and queries, declared (src/web/forms.ts says how the pages' forms are read).
import { repeatableValue } from '../../http/first-value.ts';
import { form, text } from '../../web/forms.ts';

/** The token page's creation form: privileges are checkboxes, so repeated. */
export const createTokenForm = form({
  description: text,
  privileges: repeatableValue,
  expires_in: text,
  expires_on: text,
  confirm_password: text,
});

/** Editing a token: its description and privileges (checkboxes, so repeated), the password in sudo mode. */
export const editTokenForm = form({ description: text, privileges: repeatableValue, confirm_password: text });

/** Regenerating a token: its new expiry ('keep', a choice of the list, or a date), the password in sudo mode. */
export const regenerateTokenForm = form({ expires_in: text, expires_on: text, confirm_password: text });

/** Signing out everywhere: the confirming checkbox and, in sudo mode, the password. */
export const signOutEverywhereForm = form({ confirm: text, confirm_password: text });

/** The token page's query: page, order, and the notes after a creation, revocation or disconnection. */
export const tokensPageQuery = {
  type: 'object',
  properties: {
    p: repeatableValue,
    sort: repeatableValue,
    created: repeatableValue,
    revoked: repeatableValue,
    edited: repeatableValue,
    disconnected: repeatableValue,
  },
} as const;

/** A path naming one token by id (`parseTokenId` reads it). */
export const tokenIdParams = { type: 'object', properties: { id: text }, required: ['id'] } as const;
