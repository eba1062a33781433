// What the CLI does not do on a Ripple-family database served in place (DATABASE_SCHEMA=ripple): make
// users or load them from elsewhere. The family's users are the server's own: its website signs them up,
// with the columns only it knows (email, registration, its flags), and tokend reads them as they are.
// tokend making none also means that no name it makes can ever collide with one of the family's.
import type { DatabaseConfig } from '../config.ts';
import { CliError } from './command.ts';

/** Refuses `what` when DATABASE_URL is a Ripple-family database served in place. */
export function refuseInPlace(database: DatabaseConfig, what: string): void {
  if (database.kind === 'mysql' && database.schema === 'ripple')
    throw new CliError(
      `${what} is not done on a Ripple-family database (DATABASE_SCHEMA=ripple): its users are the ` +
        "server's own, signed up on its website; tokend reads them as they are (docs/compatibility.md)",
    );
}
