/** Route options that place a route in the API reference (no validation: the endpoints check their own input). */
export const doc = (summary: string) => ({ schema: { tags: ['oauth'], summary } });
