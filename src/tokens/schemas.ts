// The JSON schemas of the token routes (routes.ts): what Fastify validates and serialises, what the API
// reference documents, and, through the JSON-schema type provider, the types of the handlers' requests.
// Each is declared `as const` so that its literal shape reaches the type provider.
import { envelopeProperties } from '../http/envelope.ts';
import { MAX_DESCRIPTION_LENGTH } from './description.ts';
import { MAX_EXPIRES_IN_S } from './expiry.ts';
import { repeatableValue } from '../http/first-value.ts';

// Every field may be absent or null. The required ones (username or id, and password) are checked by the
// handler, which answers 422 naming what is missing; the schema answers 400 for a wrong type or range.
export const createSchema = {
  tags: ['tokens'],
  summary: 'Create a token from a username or user id and a password',
  description:
    'Checks, in order: body, missing fields (422), user (404), login rate limit (429), legacy password (418), ' +
    'password (403), ban (402). The secret is returned once. `privileges` is limited to what the user may hold.',
  body: {
    type: 'object',
    properties: {
      username: { type: ['string', 'null'], description: 'Ignored when id is non-zero.' },
      id: { type: ['integer', 'null'], description: 'User id; takes precedence over username.' },
      password: { type: ['string', 'null'] },
      privileges: {
        type: ['integer', 'null'],
        minimum: 0,
        maximum: 2 ** 53,
        description: 'Requested token privileges (bit mask).',
      },
      description: { type: ['string', 'null'], maxLength: MAX_DESCRIPTION_LENGTH },
      expires_in: {
        type: ['integer', 'null'],
        minimum: 1,
        maximum: MAX_EXPIRES_IN_S,
        description: 'Seconds until the token expires (at most 10 years). Absent: it never expires.',
      },
    },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        ...envelopeProperties,
        username: { type: 'string' },
        id: { type: 'integer' },
        privileges: { type: 'integer' },
        token: { type: 'string', description: 'The secret (32 hex characters), shown only here.' },
        banned: { type: 'boolean' },
        expires_at: { type: 'integer', description: 'Unix seconds; only when expires_in was given.' },
      },
    },
    402: {
      description: 'The user is banned: no token was created.',
      type: 'object',
      properties: {
        ...envelopeProperties,
        banned: { type: 'boolean', const: true },
        id: { type: 'integer' },
        username: { type: 'string' },
        privileges: { type: 'integer', const: 0 },
      },
      required: ['code', 'message', 'banned', 'id', 'username', 'privileges'],
    },
  },
} as const;

const tokenProperties = {
  id: { type: 'integer' },
  privileges: { type: 'integer' },
  description: { type: 'string' },
  last_updated: {
    type: ['integer', 'string'],
    description:
      'The last use (the creation, until a use is recorded): Unix seconds, an integer; with ' +
      'RIPPLE_TIME_FORMAT=rfc3339 an RFC 3339 string in UTC instead.',
    examples: [1795669200, '2026-11-26T05:00:00Z'],
  },
} as const;

/**
 * A query parameter as Fastify's parser leaves it: a string, or an array of strings when repeated. The
 * handlers read the first value (http/first-value.ts) and parse it themselves: p and l leniently
 * (pagination.ts), an id with the envelope's 400 naming the value.
 */
const queryValue = (description: string) => ({ ...repeatableValue, description }) as const;

export const listSchema = {
  tags: ['tokens'],
  summary: "List the caller's public tokens",
  description:
    'Ordered by id. `p` is the page (from 1), `l` the page size (at most 50, the default). ' +
    '`id` (a non-negative integer) lists only the token with that id: an array of one, or empty. ' +
    'Expired tokens are not listed; `expires_at` appears only on tokens that expire.',
  querystring: {
    type: 'object',
    properties: {
      p: queryValue('Page, from 1; anything else is 1.'),
      l: queryValue('Page size, 1 to 50; anything else is 50.'),
      id: queryValue('A token id: list only that token (400 when not a non-negative integer).'),
    },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        ...envelopeProperties,
        tokens: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              ...tokenProperties,
              expires_at: { type: 'integer', description: 'Unix seconds; only on tokens that expire.' },
            },
          },
        },
      },
    },
  },
} as const;

export const selfSchema = {
  tags: ['tokens'],
  summary: 'Read the token this request is authenticated with',
  description:
    'Also who signed in: `user_id` and `username` for an API or bearer token (no scope needed). A token of ' +
    'the client credentials grant shows its client, scope, privileges 0 and created, and no user. 404 when ' +
    'the request carries no credential that matches; with `WWW-Authenticate: Bearer error="invalid_token"` ' +
    'when it was a bearer token.',
  response: {
    200: {
      type: 'object',
      properties: {
        ...envelopeProperties,
        ...tokenProperties,
        client: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            name: { type: 'string' },
            owner_id: { type: 'integer' },
            avatar: { type: 'string' },
          },
        },
        scope: { type: 'string' },
        created: { type: 'string' },
        user_id: {
          type: 'integer',
          description:
            'Who signed in: the user the token acts for (API and bearer tokens; absent for an application’s own token).',
        },
        username: { type: 'string', description: 'The username of `user_id`.' },
        client_id: { type: 'string', description: 'An access token’s client (`client.id`).' },
        expires_at: { type: 'integer', description: 'An access token’s expiry, Unix seconds.' },
      },
    },
  },
} as const;

const messageSchema = { type: 'object', properties: envelopeProperties } as const;

export const deleteSelfSchema = {
  tags: ['tokens'],
  summary: 'Delete the token (or bearer token) this request is authenticated with',
  response: { 200: messageSchema },
} as const;

/** A token id in a path: digits only (the routes' pattern; any other segment matches no route). */
export const TOKEN_ID_SEGMENT = '^[0-9]+$';

export const deleteByIdSchema = {
  tags: ['tokens'],
  summary: "Revoke one of the caller's public tokens by id",
  description:
    'Needs an API token with Write among its effective privileges (401 otherwise; a bearer token never ' +
    "can). 404 when the id is not one of the caller's tokens, whether or not it exists.",
  params: {
    type: 'object',
    properties: {
      id: {
        type: 'string',
        pattern: TOKEN_ID_SEGMENT,
        description: 'Token id (an integer). Any other segment is no path: the 404 with `X-Real-404`.',
      },
    },
    required: ['id'],
  },
  response: { 200: messageSchema },
} as const;

export const fixPrivilegesSchema = {
  tags: ['tokens'],
  summary: "Re-limit stored token privileges to their owners' current privileges",
  description:
    'Needs ManageUser and APIMeta. Query `id`: a user id, `self`, or absent/0 for every user. ' +
    'Answers at once; the job runs in the background.',
  querystring: {
    type: 'object',
    properties: { id: queryValue('A user id, `self`, or 0/absent for every user (400 otherwise).') },
  },
  response: { 200: messageSchema },
} as const;
