/**
 * The one error type of the language layer. Its message points at the exact spot:
 *
 *   patrol.sd:12:5: expected ';' after sensor declaration, found '}'
 *     sensor lidar: Lidar }
 *                         ^
 *
 * `kind` tells the service layer which prefix to use (`tokenize failed: …` / `parse failed: …`).
 */

export type SyntaxErrorKind = 'tokenize' | 'parse';

export class ProgramSyntaxError extends Error {
  override readonly name = 'ProgramSyntaxError';

  constructor(
    readonly kind: SyntaxErrorKind,
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly sourceLine: string,
    readonly detail: string,
  ) {
    super(formatMessage(file, line, column, sourceLine, detail));
  }
}

function formatMessage(file: string, line: number, column: number, sourceLine: string, detail: string): string {
  // Tabs are kept in the caret line so the caret lines up under the source in a terminal.
  const lead = sourceLine.slice(0, Math.max(0, column - 1)).replace(/[^\t]/g, ' ');
  return `${file}:${line}:${column}: ${detail}\n  ${sourceLine}\n  ${lead}^`;
}

/** The text of 1-based `line` in `source`, without its line break. */
export function sourceLineAt(source: string, line: number): string {
  let start = 0;
  for (let current = 1; current < line; current += 1) {
    const next = source.indexOf('\n', start);
    if (next < 0) return '';
    start = next + 1;
  }
  let end = source.indexOf('\n', start);
  if (end < 0) end = source.length;
  return source.slice(start, end).replace(/\r$/, '');
}
