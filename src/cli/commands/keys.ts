// tokend keys …: the OpenID Connect signing keys (src/oauth/signing-keys.ts). `list` shows each published
// key, its stage and times (never key material); `rotate` adds the next key, published at once and signing
// after KEY_PUBLISH_AHEAD_S, or with --now signing at once with every other key deleted (a key that
// leaked). SIGNING_KEY_SECRET must be the server's: a new key is sealed with it, and a rotation refuses
// keys it cannot open.
import { nowSeconds } from '../../auth/clock.ts';
import { rfc3339 } from '../../auth/credentials.ts';
import { CliError, type GroupCommand, type LeafCommand } from '../command.ts';
import { table } from '../format.ts';

const time = (s: number | undefined) => (s === undefined ? '' : rfc3339(s));

const list: LeafCommand = {
  name: 'list',
  summary: 'List the keys that sign id_tokens: the current one, the next, and those still published',
  options: {},
  async run(_args, ctx) {
    const store = await ctx.store();
    const { listKeys } = await import('../../oauth/signing-keys.ts');
    const keys = await listKeys(store.db, nowSeconds());
    const json = keys.map((k) => ({
      kid: k.kid,
      generation: k.generation,
      alg: k.alg,
      stage: k.stage,
      created: rfc3339(k.createdAt),
      signs_from: rfc3339(k.activeFrom),
      signs_until: k.supersededAt === undefined ? null : rfc3339(k.supersededAt),
      published_until: k.publishedUntil === undefined ? null : rfc3339(k.publishedUntil),
    }));
    const text =
      keys.length === 0
        ? 'No signing key yet: tokend serve makes the first at start.'
        : table(
            ctx.style,
            ['GEN', 'KID', 'ALG', 'STAGE', 'SIGNS FROM (UTC)', 'SIGNS UNTIL', 'PUBLISHED UNTIL'],
            keys.map((k) => [
              String(k.generation),
              k.kid,
              k.alg,
              k.stage,
              time(k.activeFrom),
              time(k.supersededAt),
              time(k.publishedUntil),
            ]),
          );
    return { json: { keys: json }, text };
  },
};

const rotate: LeafCommand = {
  name: 'rotate',
  summary:
    'Make a new signing key: published now, signing in 10 minutes; the old one stays published until its id_tokens expire',
  description:
    'Every instance reads the keys at least once a minute, so the new key is in every JWKS long before it signs. ' +
    'Run it with the server’s SIGNING_KEY_SECRET.',
  examples: ['tokend keys rotate', 'tokend keys rotate --now'],
  options: {
    now: {
      type: 'boolean',
      description:
        'for a key that leaked: sign with the new key at once and delete every other key (id_tokens they signed stop verifying; instances stop using them within a minute)',
    },
  },
  async run(args, ctx) {
    const config = await ctx.config();
    const store = await ctx.store();
    const { rotateKeys, SigningKeySealError } = await import('../../oauth/signing-keys.ts');
    const { KeySeal } = await import('../../oauth/key-seal.ts');
    let rotated;
    try {
      rotated = await rotateKeys(store.db, new KeySeal(config.signingKeySecrets), nowSeconds(), {
        immediately: args.flag('now'),
      });
    } catch (err) {
      if (err instanceof SigningKeySealError) throw new CliError(err.message);
      throw err;
    }
    const json = { kid: rotated.kid, signs_from: rfc3339(rotated.activeFrom), deleted: rotated.dropped };
    const text = [
      `${ctx.style.green('new signing key')} ${rotated.kid}: published now, signing from ${rfc3339(rotated.activeFrom)}`,
      ...(rotated.dropped > 0 ? [`deleted ${rotated.dropped} older key(s)`] : []),
    ].join('\n');
    return { json, text };
  },
};

export const keysCommand: GroupCommand = {
  name: 'keys',
  summary: 'The keys that sign OpenID Connect id_tokens: list and rotate',
  subcommands: [list, rotate],
};
