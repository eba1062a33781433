// A user agent as the security log page shows it: the browser and the system it names ("Chrome on
// Linux"), in words from the parser's own list of known browsers and systems (bowser), never the text the
// client sent. A User-Agent is whatever the client writes, an attacker's too ("Security notice: your
// account is locked, call …"): shown as it is, it would read like a message from this server. The raw
// text stays in the log for `tokend audit`. bowser is loaded with the page's first use.

/** The words for a user agent: the browser and the system, whichever bowser knows by name. */
export async function userAgentWords(raw: string | null): Promise<string | undefined> {
  if (raw === null) return undefined;
  const { default: Bowser, BROWSER_MAP, OS_MAP } = await import('bowser');
  const parsed = Bowser.parse(raw);
  // bowser names a browser it does not know by the text before its first "/": only its own names count.
  const browser = known(parsed.browser.name, Object.values(BROWSER_MAP));
  const system = known(parsed.os.name, Object.values(OS_MAP));
  if (browser && system) return `${browser} on ${system}`;
  if (browser) return browser;
  if (system) return `a program on ${system}`;
  return 'an unrecognised program';
}

const known = (name: string | undefined, names: readonly string[]): string | undefined =>
  name !== undefined && names.includes(name) ? name : undefined;
