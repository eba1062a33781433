// The types of `#kysely` (vendor/kysely/index.js, built at install by bin/bundle-kysely.js): Kysely's own.
// eslint-disable-next-line no-restricted-imports -- the one place that names the package
export * from 'kysely';
