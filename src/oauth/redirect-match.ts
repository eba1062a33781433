// Whether a redirect_uri an authorization request presents is one the client registered. Exact string
// equality, with one exception (RFC 8252 §7.3): a registered http URI on a loopback IP literal,
// `http://127.0.0.1…` or `http://[::1]…`, also matches the same URI at any port, because a native app
// (a desktop tool, a bot) listens on whatever port is free when it signs in. Only the port may differ:
// scheme, host, path and query are compared as the exact text registered. `localhost` gets no such
// rule (RFC 8252 §8.3 advises against it: a name can resolve elsewhere), nor does any other host.

/** `http://` + a loopback IP literal, an optional port, then the rest (path, query) as sent. */
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/s;

/** The URI without its port when it is an http URI on a loopback IP literal with a valid port; else undefined. */
function withoutLoopbackPort(uri: string): string | undefined {
  const match = LOOPBACK.exec(uri);
  if (!match) return undefined;
  const [, host, port, rest] = match;
  if (port !== undefined && !(Number(port) >= 1 && Number(port) <= 65535 && !port.startsWith('0')))
    return undefined;
  return `http://${host}${rest ?? ''}`;
}

export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  const presentedKey = withoutLoopbackPort(presented);
  if (presentedKey === undefined) return false;
  return registered.some((uri) => withoutLoopbackPort(uri) === presentedKey);
}
