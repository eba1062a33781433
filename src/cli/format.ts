// Human-readable output: colour only on a terminal and only when NO_COLOR is unset (https://no-color.org).

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

/** Left-aligned columns separated by two spaces; the header line is dimmed. */
export function table(style: Style, headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [style.dim(line(headers)), ...rows.map(line)].join('\n');
}
