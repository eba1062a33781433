// Human-readable output: colour only on a terminal and only when NO_COLOR is unset (https://no-color.org);
// stored text only as src/shown-text.ts's terminalText writes it (every table cell).
import { terminalText } from '../shown-text.ts';

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  red(s: string): string;
}

const sgr =
  (open: number, close: number) =>
  (s: string): string =>
    `\x1b[${open}m${s}\x1b[${close}m`;

const plain = (s: string): string => s;

export function makeStyle(colour: boolean): Style {
  if (!colour) return { bold: plain, dim: plain, green: plain, yellow: plain, red: plain };
  return { bold: sgr(1, 22), dim: sgr(2, 22), green: sgr(32, 39), yellow: sgr(33, 39), red: sgr(31, 39) };
}

export function wantsColour(isTTY: boolean | undefined, env: Record<string, string | undefined>): boolean {
  return isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

/** A cell the CLI writes itself, in its style's colours: printed as it is, as wide as `plain`. */
export interface OwnCell {
  plain: string;
  shown: string;
}

/**
 * Left-aligned columns separated by two spaces; the header line is dimmed. Every text cell is stored text
 * as a terminal may print it (terminalText: a control or formatting character as an escape); an OwnCell
 * is the CLI's own words, coloured.
 */
export function table(style: Style, headers: string[], cells: Array<Array<string | OwnCell>>): string {
  const rows = cells.map((row) =>
    row.map((cell) => (typeof cell === 'string' ? { plain: terminalText(cell), shown: '' } : cell)),
  );
  for (const row of rows) for (const cell of row) if (cell.shown === '') cell.shown = cell.plain;
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.plain.length ?? 0)));
  const line = (row: OwnCell[]) =>
    row
      .map((c, i) =>
        i === row.length - 1 ? c.shown : c.shown + ' '.repeat(Math.max(0, (widths[i] ?? 0) - c.plain.length)),
      )
      .join('  ')
      .trimEnd();
  const header = headers.map((h) => ({ plain: h, shown: h }));
  return [style.dim(line(header)), ...rows.map(line)].join('\n');
}
