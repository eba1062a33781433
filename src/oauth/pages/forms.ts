// The forms and queries of "Your applications", declared (src/web/forms.ts says how the pages' forms are
// read).
import { repeatableValue } from '../../http/first-value.ts';
import { form, text } from '../../web/forms.ts';

/** Registering or changing an OAuth application ("Your applications"); redirect URIs one per line. */
export const applicationForm = form({
  name: text,
  redirect_uris: text,
  avatar: text,
  type: text,
  confirm_password: text,
});

/** A new secret for an application: the checkbox that also ends its tokens, and the password in sudo mode. */
export const rotateSecretForm = form({ end_tokens: text, confirm_password: text });

/** The applications list's query: the note after a deletion. */
export const applicationsQuery = { type: 'object', properties: { deleted: repeatableValue } } as const;

/** An application's page's query: the note after its changes were saved. */
export const applicationQuery = {
  type: 'object',
  properties: { saved: repeatableValue, registered: repeatableValue, rotated: repeatableValue },
} as const;
