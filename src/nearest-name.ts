// "Did you mean …?": the known name nearest to a mistyped one, for the CLI's commands and options and for
// environment variables that look like tokend's. Two names are near when few edits (leven) turn one into
// the other as written, or when they are the same words once each word is in its plain form (Porter
// stemming by stemmer, a known abbreviation spelt out): TRUSTED_PROXIES is TRUST_PROXY, DB_URL is
// DATABASE_URL. Plain forms must match exactly: stems are short, and edits between them would make
// unrelated names near (TESTS and HOST).
import leven from 'leven';
import { stemmer } from 'stemmer';

/** Short forms people write for a word of tokend's names, by the word they stand for. */
const ABBREVIATIONS: Readonly<Record<string, string>> = {
  db: 'database',
  conn: 'connection',
  req: 'request',
};

/** A name as its words in plain form: lower case, split at `_` and `-`, abbreviations spelt out, stemmed. */
function wordForm(name: string): string {
  return name
    .toLowerCase()
    .split(/[-_]/)
    .map((word) => stemmer(ABBREVIATIONS[word] ?? word))
    .join('_');
}

/**
 * The name of `names` fewest edits away from `input` (letter case ignored), when it is at most
 * `maxDistance` edits away; a name of the same words in plain form is no edit away. On a tie the first
 * of `names`. Undefined when none is that near.
 */
export function nearestName(input: string, names: Iterable<string>, maxDistance: number): string | undefined {
  const wanted = input.toUpperCase();
  const wantedForm = wordForm(input);
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const name of names) {
    const distance =
      wordForm(name) === wantedForm ? 0 : leven(wanted, name.toUpperCase(), { maxDistance: bestDistance });
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}
