// The pages' forms and queries, declared (the kit's here, each feature's beside its pages): each route's schema (Fastify validates a form before the route
// runs, so a field of the wrong shape, such as a text field sent twice or a JSON number, is a 400 page)
// and, through the JSON-schema type provider, the types the handlers read. What a value must be beyond
// its shape (a username's length, a description, an expiry) the handlers say next to the field.
import { repeatableValue } from '../http/first-value.ts';

export const text = { type: 'string' } as const;

/** A form body: absent (no body) or an object of these fields; others (the CSRF token `_csrf`) pass. */
export const form = <const Properties extends Record<string, unknown>>(properties: Properties) =>
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

/** A confirmation that may ask for the password again (sudo mode): regenerating a token, deleting an application. */
export const sudoForm = form({ confirm_password: text });

/** A path naming one application by client id (the token page's connected applications, Your applications). */
export const clientParams = { type: 'object', properties: { client: text }, required: ['client'] } as const;
