// The pages' forms and queries, declared: each route's schema (Fastify validates a form before the route
// runs, so a field of the wrong shape, such as a text field sent twice or a JSON number, is a 400 page)
// and, through the JSON-schema type provider, the types the handlers read. What a value must be beyond
// its shape (a username's length, a description, an expiry) the handlers say next to the field.
import { repeatableValue } from '../http/first-value.ts';

const text = { type: 'string' } as const;

/** A form body: absent (no body) or an object of these fields; others (the CSRF token `_csrf`) pass. */
const form = <const Properties extends Record<string, unknown>>(properties: Properties) =>
  ({ type: ['object', 'null'], properties }) as const;

/** The sign-in form of /login. */
export const signInForm = form({ username: text, password: text, next: text });

/**
 * The `/login` query: where to go once signed in, the note after signing out, and `again` (the form even
 * to a signed-in browser: an application asked for a new sign-in, OpenID Connect's prompt=login or max_age).
 */
export const loginQuery = {
  type: 'object',
  properties: { next: repeatableValue, signed_out: repeatableValue, again: repeatableValue },
} as const;

/** A confirmation that may ask for the password again (sudo mode): regenerating a token. */
export const sudoForm = form({ confirm_password: text });

/** The token page's creation form: privileges are checkboxes, so repeated. */
export const createTokenForm = form({
  description: text,
  privileges: repeatableValue,
  expires_in: text,
  expires_on: text,
  confirm_password: text,
});

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
export const applicationQuery = { type: 'object', properties: { saved: repeatableValue } } as const;

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
    disconnected: repeatableValue,
  },
} as const;

/** A path naming one token by id (`parseTokenId` reads it) or one application by client id. */
export const tokenIdParams = { type: 'object', properties: { id: text }, required: ['id'] } as const;
export const clientParams = { type: 'object', properties: { client: text }, required: ['client'] } as const;

/** The security log page's query: one kind of event, and the page of events before an id. */
export const securityLogQuery = {
  type: 'object',
  properties: { kind: repeatableValue, before: repeatableValue },
} as const;
