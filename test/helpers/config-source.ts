// The environment variables src/config.ts reads, found in its source text: env.NAME, env['NAME'] and
// helpers called as f(env, 'NAME', …). The table of docs/configuration.md and the start-up's list of
// known names are both held to it.
import { readFileSync } from 'node:fs';

export function configVariablesInSource(): string[] {
  const source = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8');
  const names = new Set<string>();
  for (const re of [
    /\benv\.([A-Z][A-Z0-9_]*)/g,
    /\benv\[['"]([A-Z][A-Z0-9_]*)['"]\]/g,
    /\benv,\s*'([A-Z][A-Z0-9_]*)'/g,
  ])
    for (const m of source.matchAll(re)) names.add(m[1] ?? '');
  return [...names].sort();
}
