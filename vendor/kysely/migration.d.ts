// The types of `#kysely/migration` (vendor/kysely/migration.js, built at install by bin/bundle-kysely.js):
// Kysely's own.
// eslint-disable-next-line no-restricted-imports -- the one place that names the package
export * from 'kysely/migration';
