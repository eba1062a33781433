// How the API reads a value that may come more than once (a repeated query parameter or header): the
// first, as the Ripple family's API does (`?id=1&id=2` is id 1). OAuth refuses a repeated parameter
// instead (src/oauth/params.ts).

/** The first value of a parameter as Fastify leaves it (a string, or an array when repeated), if a string. */
export function firstValue(value: unknown): string | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
}

/** The JSON schema of such a value, for the routes' schemas. */
export const repeatableValue = {
  anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
} as const;
