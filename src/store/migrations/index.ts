import type { MigrationFactory } from './kit.ts';
import { usersAndTokens } from './0001_users_tokens.ts';
import { oauth } from './0002_oauth.ts';
import { tokenExpiry } from './0003_token_expiry.ts';
import { exactUsernames } from './0004_exact_usernames.ts';
import { listingIndex } from './0005_listing_index.ts';
import { tokensVersion } from './0006_tokens_version.ts';
import { tokensVersionLockOrder } from './0007_tokens_version_lock_order.ts';
import { webSessions } from './0008_web_sessions.ts';
import { foldedUsernames } from './0009_folded_usernames.ts';
import { dropTokensVersion } from './0010_drop_tokens_version.ts';
import { rippleImportedTokens } from './0011_ripple_imported_tokens.ts';
import { oauthBounds } from './0012_oauth_bounds.ts';
import { tokenCreatedAt } from './0013_token_created_at.ts';
import { tokenReveals } from './0014_token_reveals.ts';
import { oauthCodeAttempts } from './0015_oauth_code_attempts.ts';
import { oauthClientOwners } from './0016_oauth_client_owners.ts';
import { clientCredentials } from './0017_client_credentials.ts';
import { securityLog } from './0018_security_log.ts';
import { sessionPassword } from './0019_session_password.ts';
import { eventOutbox } from './0020_event_outbox.ts';
import { securityLogBounds } from './0021_security_log_bounds.ts';
import { openidConnect } from './0022_openid_connect.ts';
import { deviceCodes } from './0023_device_codes.ts';

/**
 * Every migration, in order: one file each, named as the migrator records it. Names sort in application
 * order. A migration that shipped is never edited or renamed (test/unit/shipped-migrations.test.ts holds
 * their text): a change to the schema is a new file, listed here.
 */
export const MIGRATIONS: ReadonlyArray<readonly [string, MigrationFactory]> = [
  ['0001_users_tokens', usersAndTokens],
  ['0002_oauth', oauth],
  ['0003_token_expiry', tokenExpiry],
  ['0004_exact_usernames', exactUsernames],
  ['0005_listing_index', listingIndex],
  ['0006_tokens_version', tokensVersion],
  ['0007_tokens_version_lock_order', tokensVersionLockOrder],
  ['0008_web_sessions', webSessions],
  ['0009_folded_usernames', foldedUsernames],
  ['0010_drop_tokens_version', dropTokensVersion],
  ['0011_ripple_imported_tokens', rippleImportedTokens],
  ['0012_oauth_bounds', oauthBounds],
  ['0013_token_created_at', tokenCreatedAt],
  ['0014_token_reveals', tokenReveals],
  ['0015_oauth_code_attempts', oauthCodeAttempts],
  ['0016_oauth_client_owners', oauthClientOwners],
  ['0017_client_credentials', clientCredentials],
  ['0018_security_log', securityLog],
  ['0019_session_password', sessionPassword],
  ['0020_event_outbox', eventOutbox],
  ['0021_security_log_bounds', securityLogBounds],
  ['0022_openid_connect', openidConnect],
  ['0023_device_codes', deviceCodes],
];

export type { MigrationFactory } from './kit.ts';
