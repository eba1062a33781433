// What the pages show and end of the OAuth server's grants: the server gives it (app.ts, through the web
// plugin's options), since web/ imports nothing from oauth/ (src/oauth/applications.ts implements it).
import type { Act } from '../auth/security-log.ts';
import type { Db } from '../store/database.ts';
import type { EndGrantsOfUser } from '../auth/revocation.ts';

/** An application that can act for the user, as the connected applications list shows it. */
export interface ConnectedApplication {
  clientId: string;
  name: string;
  avatar: string;
  /** the scopes the user approved (space-separated); '' for a grant an operator made without approval */
  scope: string;
  /** Unix seconds of the latest approval; null for an operator's grant */
  approvedAt: number | null;
  /**
   * Unix seconds when the application obtained the newest token it still holds for this user; null: it
   * holds none now. Ended and expired tokens are deleted, so null does not tell whether it ever had one
   * (an approval not yet used, or tokens all revoked, by reuse detection for one).
   */
  lastUsedAt: number | null;
}

export interface UserGrants {
  /**
   * The applications that can act for the user at `now`, at most `max` of them, the first by name, and
   * how many there are; with `only`, just that application.
   */
  connected(
    db: Db,
    userId: number,
    now: number,
    max: number,
    only?: string,
  ): Promise<{ applications: ConnectedApplication[]; total: number }>;
  /** Withdraws the user's approval of the application and ends what it holds; false: nothing was there. */
  revoke(db: Db, userId: number, clientId: string, act: Act): Promise<boolean>;
  /** Ends every grant of the user (sign out everywhere). */
  endAll: EndGrantsOfUser;
}
