// What the CLI does not do on a Ripple-family database served in place (DATABASE_SCHEMA=ripple): make
// users or load them from elsewhere. The family's users are the server's own: its website signs them up,
// with the columns only it knows (email, registration, its flags), and tokend reads them as they are.
// tokend making none also means that no name it makes can ever collide with one of the family's.
import type { DatabaseConfig } from '../config.ts';
import { layoutOf } from '../store/layout.ts';
import { CliError } from './command.ts';

/**
 * Refuses `what` when tokend makes no users on the database of DATABASE_URL (StoreLayout.makesUsers: a
 * Ripple-family database served in place); asked before the store is opened, so that nothing is created
 * or migrated first.
 */
export function refuseInPlace(database: DatabaseConfig, what: string): void {
  if (!layoutOf(database).makesUsers)
    throw new CliError(
      `${what} is not done on a Ripple-family database (DATABASE_SCHEMA=ripple): its users are the ` +
        "server's own, signed up on its website; tokend reads them as they are (docs/compatibility.md)",
    );
}
