// "Did you mean …?": the known name nearest to a mistyped one, by edit distance (leven), for the CLI's
// commands and options and for environment variables that look like tokend's.
import leven from 'leven';

/**
 * The name of `names` fewest edits away from `input` (letter case ignored), when it is at most
 * `maxDistance` edits away; on a tie the first of `names`. Undefined when none is that near.
 */
export function nearestName(input: string, names: Iterable<string>, maxDistance: number): string | undefined {
  const wanted = input.toUpperCase();
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const name of names) {
    const distance = leven(wanted, name.toUpperCase(), { maxDistance: bestDistance });
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}
