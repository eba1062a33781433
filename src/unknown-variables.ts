// Environment variables that look like tokend's but are none of them: a misspelt DATABSE_URL would
// otherwise start tokend on its defaults without a word. Each is named at start, with the variable it
// most likely meant. The names tokend knows come from config.ts alone (knownVariables).
import { loadConfig } from './config.ts';
import { nearestName } from './nearest-name.ts';

/**
 * The variables config.ts reads: loadConfig run once on an empty environment that notes every name it
 * is asked for. loadConfig reads every variable on every load (none only under a condition), so this
 * is all of them; test/unit/unknown-variables.test.ts holds it to the names in config.ts's source.
 */
export function knownVariables(): string[] {
  const asked = new Set<string>();
  const note = (name: string | symbol) => {
    if (typeof name === 'string') asked.add(name);
  };
  const recorder = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get: (_target, name) => void note(name),
      has: (_target, name) => (note(name), false),
      getOwnPropertyDescriptor: (_target, name) => void note(name),
    },
  );
  loadConfig(recorder);
  return [...asked].sort();
}

/**
 * A variable that looks like tokend's and is not: `suggestion` is the name it is a near miss of, else
 * `family` lists tokend's names that begin with the same word, `prefix`.
 */
export interface UnknownVariable {
  name: string;
  suggestion: string | undefined;
  prefix: string;
  family: string[];
}

/**
 * Edits a name may be away from one of tokend's to count as a misspelling of it: one for names of up
 * to 4 letters (PORT, HOST: HOME is two away from HOST), two for longer ones.
 */
const nearMiss = (name: string): number => (name.length <= 4 ? 1 : 2);

/**
 * Names of other programs' variables that look like tokend's and are not mistakes: sudo's (SUDO_USER,
 * SUDO_UID, … beside SUDO_WINDOW_S) and PostgreSQL's client's (PGHOST, PGPORT, …, which pg reads itself
 * where DATABASE_URL leaves them out).
 */
const OTHER_PROGRAMS = /^(SUDO_(ASKPASS|COMMAND|EDITOR|GID|HOME|HOST|PROMPT|PS1|TTY|UID|USER)|PG[A-Z]+)$/i;

/** The first word of each of tokend's names of several words (DB_, REDIS_, LOGIN_, …). */
function prefixesOf(known: readonly string[]): Set<string> {
  return new Set(known.filter((n) => n.includes('_')).map((n) => n.slice(0, n.indexOf('_') + 1)));
}

/**
 * The variables of `env` that tokend does not read but that look like its own: a near miss of one of
 * its names (letter case ignored), or a name that begins with the first word of one of them.
 */
export function unknownVariables(
  env: Readonly<Record<string, string | undefined>>,
  known: readonly string[] = knownVariables(),
): UnknownVariable[] {
  const knownSet = new Set(known);
  const prefixes = [...prefixesOf(known)];
  const found: UnknownVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name) || OTHER_PROGRAMS.test(name) || !/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) continue;
    const suggestion = nearestName(name, known, nearMiss(name));
    const prefix = prefixes.find((p) => name.toUpperCase().startsWith(p));
    if (suggestion === undefined && prefix === undefined) continue;
    const family = suggestion === undefined ? known.filter((k) => k.startsWith(prefix ?? '')) : [];
    found.push({ name, suggestion, prefix: prefix ?? '', family });
  }
  return found;
}

/** One line about an unknown variable, for the warnings at start. */
export function describeUnknownVariable({ name, suggestion, prefix, family }: UnknownVariable): string {
  const what = `the environment variable ${name} is not one of tokend's and is ignored`;
  if (suggestion !== undefined) return `${what}; did you mean ${suggestion}?`;
  const list =
    family.length === 1 ? family[0] : `${family.slice(0, -1).join(', ')} and ${family[family.length - 1]}`;
  return `${what}; tokend's ${prefix} ${family.length === 1 ? 'variable is' : 'variables are'} ${list}`;
}
