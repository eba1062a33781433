// A migration that shipped has run on databases that will never run it again: editing it would leave
// them and new databases with different schemas. This test holds each shipped migration's text (and the
// kit they share) to the SHA-256 it had when it shipped, the list to the folder's files in order, and the
// in-place mode's own statements likewise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import {
  FAMILY_CHANGES,
  FAMILY_CHANGES_UNDONE,
  OWN_TABLES_CONVERTED,
} from '../../src/store/in-place-migrations.ts';

const FOLDER = new URL('../../src/store/migrations/', import.meta.url);

/** Each shipped file's SHA-256, its line endings as LF. A new migration adds its line here. */
const SHIPPED: Readonly<Record<string, string>> = {
  '0001_users_tokens.ts': 'fbf38e6cd2b0006e3a63eb4cc2563141ca8021f9ac9a6e767cefde9dde4f67a2',
  '0002_oauth.ts': '7539bd960b4b8c81c1868837f7e5de00aeacfe4e27b43cf5ce55763c42d856fe',
  '0003_token_expiry.ts': '668da9b1cc390b837aa583bf4d150831289d99c3c6dbaeff258048858d4d44a1',
  '0004_exact_usernames.ts': '4d2500fe6a12af3cf0ba9bfa26ded820757cb5354b640b9b02e3d74062e1a6e8',
  '0005_listing_index.ts': '53f2c554ca62cf2a44500137ffd7dd38aa72c189fe04943f5e9755c79f9e9c82',
  '0006_tokens_version.ts': '9b0f085c41b47ca4212ac2a10127c382573a6016160e033cf78db4c438ed3e12',
  '0007_tokens_version_lock_order.ts': 'e6038c9dc6ea899f9b370896f2b8564eecabb275c0afbf4a756e855ca8564903',
  '0008_web_sessions.ts': '9fdc3cef881c3eadd492539c0e4d471abbe25e0741a888b418c7ee511eaa0b27',
  '0009_folded_usernames.ts': '30a06284a3322cc0f5798e0079ea5ffca9ecae88cc5d6dddd4e95a74dc42e4d0',
  '0010_drop_tokens_version.ts': '24e6c173a51537c5d7e776aa8c35b77cc9a262a54ab8d77b8ed47e0928069bc1',
  '0011_ripple_imported_tokens.ts': '311053327a5cad2d9e8b8e05b250088061a303329dce06e34e85e28590002228',
  '0012_oauth_bounds.ts': '79f9a17a508f524032107c22d7b1c51560f9c868522efb51e306ba9b3e23daa4',
  '0013_token_created_at.ts': '069fead538eb5f146a7deaa8645285f54ae9b35ae3866aad702014f0328af0f5',
  '0014_token_reveals.ts': 'a7489f507f0c1e79077cefe9c5e2802a8673bf28e005c5e85203fdc1aff8cfe0',
  '0015_oauth_code_attempts.ts': '92bc23e69b64828d345f05595c818ae52e9e170996d1959b0257334f0312573f',
  '0016_oauth_client_owners.ts': '8f47b7338e7c80b0be0ec1dcd9ba1fdf24a0e25ee28e55d11284fdcf7ba8f949',
  '0017_client_credentials.ts': '4654860137d9eaabf6c4bdb1821e5f8f1b88eef5427b481b4bc8e963da79f699',
  '0018_security_log.ts': '1dbc87ddb3915c53b615ad09ab7442c5077d4ae4a0c7ecc6d0feecd205a8ba17',
  '0019_session_password.ts': '46b97b2bcf5e796102038ca8ccbf9c538d3340a6ef15dd80248c2f0b9622507a',
  '0020_event_outbox.ts': 'df454ec4725cb351c27ecbcd1d251404d6884b267b592267a958f5674cb75e9c',
  '0021_security_log_bounds.ts': 'd3d271bad15d763c4f1954de59d7450d6f9613007e05bac16bd67e6ca6c44d3b',
  '0022_openid_connect.ts': 'b9ca2338d668ebdc5402776a94d66578b9dc915962b784414e9b58ebab083829',
  '0023_device_codes.ts': 'e0a40ef69adac3dcc48abaafee5c750dc2291f11a3ee7a5c51d8fe09fa9aaa43',
  'kit.ts': 'fe3dfd679a9f3f23731d3c8a7703b17003135a496c8ad191cacb484d3fa30429',
};

const checksum = (file: string): string =>
  createHash('sha256')
    .update(readFileSync(new URL(file, FOLDER), 'utf8').replaceAll('\r\n', '\n'))
    .digest('hex');

const migrationFiles = (): string[] =>
  readdirSync(FOLDER)
    .filter((name) => /^\d{4}_\w+\.ts$/.test(name))
    .sort();

test('no shipped migration (or the kit they share) has changed since it shipped', () => {
  for (const [file, shipped] of Object.entries(SHIPPED))
    assert.equal(
      checksum(file),
      shipped,
      `src/store/migrations/${file} differs from the text it shipped with. A shipped migration is never ` +
        'edited: databases that already ran it would keep the old schema. Undo the edit and add a new ' +
        'migration (the next number, listed in src/store/migrations/index.ts) that makes the change.',
    );
});

test('every migration file has its shipped checksum recorded', () => {
  const unrecorded = migrationFiles().filter((file) => !(file in SHIPPED));
  assert.deepEqual(
    unrecorded,
    [],
    `record the SHA-256 of each new migration in SHIPPED (test/unit/shipped-migrations.test.ts) when it ` +
      `is added; from then on it is never edited: ${unrecorded.join(', ')}`,
  );
});

test('MIGRATIONS lists every migration file once, in the order of their names', () => {
  const names = MIGRATIONS.map(([name]) => name);
  assert.deepEqual(names, [...names].sort(), 'the migrator applies migrations by name');
  assert.deepEqual(
    names.map((name) => `${name}.ts`),
    migrationFiles(),
    'each file in src/store/migrations/ named NNNN_name.ts is one migration, listed under its file name',
  );
});

test("the in-place mode's own migrations (0000 and 0019 in place) run the statements they shipped with", () => {
  // What FAMILY_CHANGES runs on a family's tables is shown by `tokend migrate --dry-run` and undone by
  // FAMILY_CHANGES_UNDONE as documented: a database migrated in place keeps what it was given.
  const shipped: ReadonlyArray<readonly [string, readonly string[], string]> = [
    ['FAMILY_CHANGES', FAMILY_CHANGES, 'e1c44431558f984b75d15a58d13eca18b652cbd8589193e3dfbc80e43ea3befe'],
    [
      'FAMILY_CHANGES_UNDONE',
      FAMILY_CHANGES_UNDONE,
      'f144256ce687f3de6fad51991ff071bab31b70fa146c73e3888be795cb9f6093',
    ],
    [
      'OWN_TABLES_CONVERTED',
      OWN_TABLES_CONVERTED,
      '9e038ca2f14d81da5bb9353a1cc680f6ffaab1a61844afdc5ca6e7745c1d1a94',
    ],
  ];
  for (const [name, statements, sha256] of shipped)
    assert.equal(
      createHash('sha256').update(JSON.stringify(statements)).digest('hex'),
      sha256,
      `${name} (src/store/in-place-migrations.ts) differs from what its migration shipped with. A shipped ` +
        'migration is never edited: add a new in-place migration that makes the change.',
    );
});
