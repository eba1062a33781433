// tokend as a provider of Auth.js (next-auth v5, @auth/core): the generic OpenID Connect provider, with
// PKCE, state and nonce. In a Next.js app:
//
//   import NextAuth from 'next-auth';
//   import { tokendProvider } from './authjs-provider.mjs';
//   export const { handlers, auth, signIn, signOut } = NextAuth({
//     providers: [
//       tokendProvider({
//         issuer: 'https://tokend.example',
//         clientId: process.env.TOKEND_CLIENT_ID,
//         clientSecret: process.env.TOKEND_CLIENT_SECRET,
//       }),
//     ],
//   });
//
// Register the app with the redirect URI Auth.js uses: https://your.app/api/auth/callback/tokend.

/** The provider: `issuer` is tokend's PUBLIC_URL; `name` is what the sign-in button says. */
export function tokendProvider({ issuer, clientId, clientSecret, name = 'My Server' }) {
  return {
    id: 'tokend',
    name,
    type: 'oidc',
    issuer,
    clientId,
    clientSecret,
    authorization: { params: { scope: 'openid profile' } },
    checks: ['pkce', 'state', 'nonce'],
    profile: (claims) => ({ id: claims.sub, name: claims.preferred_username }),
  };
}
