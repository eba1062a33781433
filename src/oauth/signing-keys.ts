// The keys that sign OpenID Connect id_tokens: kept in the database (oauth_signing_keys), the same on every
// instance, the private half sealed with SIGNING_KEY_SECRET where one is set (src/oauth/key-seal.ts).
//
// - The first key is made when an instance first needs one (`tokend serve` asks at start): generation 1,
//   signing at once. Two instances making it together make one: `generation` is unique, and the one
//   whose insert fails reads the other's.
// - `tokend keys rotate` adds the next generation, published at once and signing KEY_PUBLISH_AHEAD_S
//   later: every instance re-reads the keys at least every KEYS_RELOAD_S, and a client's cached JWKS may
//   be JWKS_MAX_AGE_S old, so by the time the new key signs, every JWKS anyone reads has it.
// - A key signs from its `active_from` until the next generation's; then it stays published for
//   KEY_RETAIN_S (the id_tokens it signed expire within ID_TOKEN_TTL_S, plus a margin for clocks), and
//   is then deleted.
// - `tokend keys rotate --now` (a key that leaked): the new key signs at once and every other key is
//   deleted; instances stop publishing and using the old one within KEYS_RELOAD_S.
// Nothing here logs a key; `tokend keys list` shows ids, algorithms and times, never key material.
import type { CryptoKey, JWK } from 'jose';
import type { Db } from '../store/database.ts';
import type { Clock } from '../auth/clock.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { KeySeal, isSealed } from './key-seal.ts';

export { SigningKeySealError } from './key-seal.ts';

/** The one JWS algorithm tokend signs with. */
export const SIGNING_ALG = 'RS256';
/** How long an id_token is valid. */
export const ID_TOKEN_TTL_S = 3600;
/** The longest an instance uses its copy of the keys before reading them again. */
export const KEYS_RELOAD_S = 60;
/** How long clients may cache the JWKS (its Cache-Control max-age). */
export const JWKS_MAX_AGE_S = 300;
/** A rotated key is published this long before it signs: longer than KEYS_RELOAD_S + JWKS_MAX_AGE_S. */
export const KEY_PUBLISH_AHEAD_S = 600;
/** A superseded key stays published this long: its last id_token's lifetime and five minutes for clocks. */
export const KEY_RETAIN_S = ID_TOKEN_TTL_S + 300;

interface KeyRow {
  kid: string;
  generation: number;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  created_at: number;
  active_from: number;
}

/** Where a key stands at a moment. */
export type KeyStage = 'next' | 'current' | 'retired';

export interface KeyState {
  kid: string;
  generation: number;
  alg: string;
  createdAt: number;
  activeFrom: number;
  /** when the next generation starts signing: this one stops (undefined: no successor yet) */
  supersededAt: number | undefined;
  /** when it leaves the JWKS (undefined: not while it has no successor) */
  publishedUntil: number | undefined;
  stage: KeyStage;
}

/**
 * Each key's stage at `now`, oldest generation first: the current key is the newest generation already
 * signing (or, while none is, as when the clock of the instance that rotated runs ahead, the oldest); a
 * later one is next; an earlier one is retired. A key is superseded when a later generation starts
 * signing, and published until KEY_RETAIN_S after that; keys past that are left out (they are deleted).
 */
export function keyStates(rows: readonly KeyRow[], now: number): KeyState[] {
  const sorted = [...rows].sort((a, b) => a.generation - b.generation);
  const signing = sorted.filter((r) => r.active_from <= now);
  const current = signing.length > 0 ? signing[signing.length - 1] : sorted[0];
  const states: KeyState[] = [];
  for (const [i, row] of sorted.entries()) {
    const later = sorted.slice(i + 1).map((r) => r.active_from);
    const supersededAt = later.length > 0 ? Math.min(...later) : undefined;
    const publishedUntil = supersededAt === undefined ? undefined : supersededAt + KEY_RETAIN_S;
    if (row !== current && publishedUntil !== undefined && publishedUntil <= now) continue;
    states.push({
      kid: row.kid,
      generation: row.generation,
      alg: row.alg,
      createdAt: row.created_at,
      activeFrom: row.active_from,
      supersededAt,
      publishedUntil,
      stage: row === current ? 'current' : row.generation > (current?.generation ?? 0) ? 'next' : 'retired',
    });
  }
  return states;
}

async function readKeys(db: Db): Promise<KeyRow[]> {
  return db.selectFrom('oauth_signing_keys').selectAll().orderBy('generation').execute();
}

/** Deletes the keys past their time in the JWKS; returns how many. */
async function dropExpiredKeys(db: Db, rows: readonly KeyRow[], now: number): Promise<number> {
  const kept = new Set(keyStates(rows, now).map((s) => s.kid));
  const gone = rows.filter((r) => !kept.has(r.kid)).map((r) => r.kid);
  if (gone.length === 0) return 0;
  await db.deleteFrom('oauth_signing_keys').where('kid', 'in', gone).execute();
  return gone.length;
}

/** A new RS256 key pair as JWKs, its kid the RFC 7638 thumbprint of the public key. */
async function newKeyPair(): Promise<{ kid: string; publicJwk: JWK; privateJwk: JWK }> {
  const { calculateJwkThumbprint, exportJWK, generateKeyPair } = await import('jose');
  const pair = await generateKeyPair(SIGNING_ALG, { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(pair.privateKey);
  return {
    kid,
    publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
    privateJwk: { ...privateJwk, kid, alg: SIGNING_ALG },
  };
}

/** Stores a new key of `generation`; false when another writer took that generation first. */
async function insertKey(
  db: Db,
  seal: KeySeal,
  generation: number,
  now: number,
  activeFrom: number,
): Promise<string | undefined> {
  const pair = await newKeyPair();
  try {
    await db
      .insertInto('oauth_signing_keys')
      .values({
        kid: pair.kid,
        generation,
        alg: SIGNING_ALG,
        public_jwk: JSON.stringify(pair.publicJwk),
        private_jwk: seal.seal(pair.kid, JSON.stringify(pair.privateJwk)),
        created_at: now,
        active_from: activeFrom,
      })
      .execute();
    return pair.kid;
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
}

/** Refuses keys this process could not open: sealed without a secret here, or with another secret. */
function checkOpens(seal: KeySeal, rows: readonly KeyRow[]): void {
  for (const row of rows) seal.open(row.kid, row.private_jwk);
}

/** `tokend keys rotate`: the next generation, signing after KEY_PUBLISH_AHEAD_S (or at once, `now`). */
export async function rotateKeys(
  db: Db,
  seal: KeySeal,
  now: number,
  options: { immediately: boolean },
): Promise<{ kid: string; activeFrom: number; dropped: number }> {
  const rows = await readKeys(db);
  checkOpens(seal, rows);
  const generation = rows.reduce((max, r) => Math.max(max, r.generation), 0) + 1;
  const activeFrom = options.immediately || rows.length === 0 ? now : now + KEY_PUBLISH_AHEAD_S;
  const kid = await insertKey(db, seal, generation, now, activeFrom);
  if (kid === undefined)
    throw new Error('another rotation stored a key at the same moment: see tokend keys list, then try again');
  const dropped = options.immediately
    ? Number(
        (await db.deleteFrom('oauth_signing_keys').where('kid', '<>', kid).executeTakeFirst()).numDeletedRows,
      )
    : await dropExpiredKeys(db, rows, now);
  return { kid, activeFrom, dropped };
}

/** `tokend keys list`: each key that is published, with its stage. */
export async function listKeys(db: Db, now: number): Promise<KeyState[]> {
  return keyStates(await readKeys(db), now);
}

/** What an instance signs with: the current key's id and private key. */
interface SigningKey {
  kid: string;
  key: CryptoKey | Uint8Array;
}

/**
 * An instance's copy of the keys: read from the database at most every KEYS_RELOAD_S (by the app's
 * clock), the first key made when there is none. The JWKS and the signing key come from the copy, so the
 * per-request path never waits on a key query but once a minute. Owned by the app (Services).
 */
export class SigningKeys {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly seal: KeySeal;
  private copy: { rows: KeyRow[]; readAt: number } | undefined;
  private reading: Promise<KeyRow[]> | undefined;
  /** imported private keys by kid */
  private readonly opened = new Map<string, Promise<CryptoKey | Uint8Array>>();

  constructor(db: Db, clock: Clock, secrets: readonly string[]) {
    this.db = db;
    this.clock = clock;
    this.seal = new KeySeal(secrets);
  }

  /**
   * Makes sure a key exists and that this instance can open the keys it would sign with (`tokend serve`
   * asks at start, so that a wrong or missing SIGNING_KEY_SECRET stops it there); a key sealed with an
   * older secret of SIGNING_KEY_SECRET is sealed again with the first, and so are the keys stored before a
   * secret was first set.
   */
  async ready(): Promise<void> {
    const rows = await this.rows(true);
    checkOpens(this.seal, rows);
    // Plain keys are sealed when a secret is first set (every key then plain); once one is sealed, a
    // plain one beside it was not stored by a tokend with the secret, and is left out (trusted()).
    const firstSealing = !rows.some((r) => isSealed(r.private_jwk));
    let resealed = 0;
    for (const row of rows) {
      if (!isSealed(row.private_jwk) && !firstSealing) continue;
      const sealed = this.seal.reseal(row.kid, row.private_jwk);
      if (sealed === undefined) continue;
      await this.db
        .updateTable('oauth_signing_keys')
        .set({ private_jwk: sealed })
        .where('kid', '=', row.kid)
        .where('private_jwk', '=', row.private_jwk)
        .execute();
      resealed++;
    }
    // The keys as now stored: the ones just sealed are among those this process trusts (trusted()).
    if (resealed > 0) await this.rows(true);
  }

  /**
   * The keys this process publishes and signs with. With SIGNING_KEY_SECRET set, only sealed ones: every
   * key tokend stores then is sealed (and `ready` sealed the older plain ones at start), so a plain key
   * found later was not written by a tokend with the secret, say planted by someone who could write the
   * table: it is neither published nor used, and the secret guards the keys' integrity, not only their
   * secrecy.
   */
  private trusted(rows: readonly KeyRow[]): KeyRow[] {
    return this.seal.sealing ? rows.filter((r) => isSealed(r.private_jwk)) : [...rows];
  }

  /** The rows as of at most KEYS_RELOAD_S ago; read now with `fresh`. One read at a time. */
  private async rows(fresh = false): Promise<KeyRow[]> {
    const now = this.clock();
    if (!fresh && this.copy && Math.abs(now - this.copy.readAt) < KEYS_RELOAD_S) return this.copy.rows;
    // While the database does not answer, the copy stays in use (the JWKS and signing go on); the next
    // call tries again.
    const copy = this.copy;
    this.reading ??= this.read(now)
      .catch((err: unknown) => {
        if (copy === undefined || fresh) throw err;
        return copy.rows;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  private async read(now: number): Promise<KeyRow[]> {
    let rows = await readKeys(this.db);
    if (rows.length === 0) {
      // No key yet: the first one, signing at once (another instance making it too makes one).
      await insertKey(this.db, this.seal, 1, now, now);
      rows = await readKeys(this.db);
    }
    this.copy = { rows, readAt: now };
    // Keys deleted since (retired, or dropped by a rotation --now) are forgotten here too.
    for (const kid of this.opened.keys()) if (!rows.some((r) => r.kid === kid)) this.opened.delete(kid);
    return rows;
  }

  /** The public keys a client may meet in an id_token now (RFC 7517 JWK Set). */
  async jwks(): Promise<{ keys: JWK[] }> {
    const rows = this.trusted(await this.rows());
    const published = new Set(keyStates(rows, this.clock()).map((s) => s.kid));
    return {
      keys: rows.filter((r) => published.has(r.kid)).map((r) => JSON.parse(r.public_jwk) as JWK),
    };
  }

  /** The key that signs now. */
  private async signingKey(): Promise<SigningKey> {
    const rows = this.trusted(await this.rows());
    const current = keyStates(rows, this.clock()).find((s) => s.stage === 'current');
    const row = rows.find((r) => r.kid === current?.kid);
    if (!row) throw new Error('no signing key is current');
    let key = this.opened.get(row.kid);
    if (!key) {
      const privateJwk = JSON.parse(this.seal.open(row.kid, row.private_jwk)) as JWK;
      key = import('jose').then(({ importJWK }) => importJWK(privateJwk, SIGNING_ALG));
      key.catch(() => this.opened.delete(row.kid));
      this.opened.set(row.kid, key);
    }
    return { kid: row.kid, key: await key };
  }

  /**
   * Throws what signing now would throw (no key this process can open: a SIGNING_KEY_SECRET that does not
   * open the current key), and otherwise leaves the key opened for the signing to come. A grant asks
   * before it spends its code or refresh token, so that such a failure leaves them to be presented again.
   */
  async canSign(): Promise<void> {
    await this.signingKey();
  }

  /** A signed JWT of `claims` (RS256, with the current key's kid). */
  async sign(claims: Record<string, unknown>): Promise<string> {
    const { kid, key } = await this.signingKey();
    const { SignJWT } = await import('jose');
    return new SignJWT(claims).setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'JWT' }).sign(key);
  }

  /** Deletes the keys past their time in the JWKS (the periodic OAuth sweep). */
  async sweep(): Promise<number> {
    return dropExpiredKeys(this.db, await readKeys(this.db), this.clock());
  }
}
