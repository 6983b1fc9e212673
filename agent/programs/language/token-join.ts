/**
 * The token-join rule (docs/program-language.md §5.1): policy blocks store free token sequences as
 * strings, and these strings appear verbatim in operation output, so the rule is exact:
 * - lexemes joined by single spaces (`audit.record("x");` → `audit . record ( x )`);
 * - unit literals stay glued, because the lexer already glued them (`0.5 m/s` → `0.5m/s`);
 * - string quotes are dropped (the unescaped value is used);
 * - no trailing `;`.
 * A condition after `on` / `if` that is a plain dotted name keeps its dots (`gps.failed`).
 */

import type { Token } from './lexer.js';

function spelling(token: Token): string {
  return token.type === 'string' ? String(token.value) : token.lexeme;
}

/** Joins `tokens[start, end)` (default: all) by the docs/program-language.md §5.1 rule. */
export function joinTokens(tokens: readonly Token[], start = 0, end = tokens.length): string {
  let last = end;
  while (last > start && (tokens[last - 1]!.type === 'eof' || tokens[last - 1]!.type === 'doc')) last -= 1;
  if (last > start && tokens[last - 1]!.type === 'punct' && tokens[last - 1]!.lexeme === ';') last -= 1;
  const parts: string[] = [];
  for (let i = start; i < last; i += 1) {
    const token = tokens[i]!;
    if (token.type === 'doc' || token.type === 'eof') continue;
    parts.push(spelling(token));
  }
  return parts.join(' ');
}

/** True when `tokens[start, end)` is `IDENT { . IDENT }`. */
export function isDottedName(tokens: readonly Token[], start = 0, end = tokens.length): boolean {
  if (end <= start || (end - start) % 2 === 0) return false;
  for (let i = start; i < end; i += 1) {
    const token = tokens[i]!;
    const wantIdent = (i - start) % 2 === 0;
    if (wantIdent ? token.type !== 'ident' : token.type !== 'punct' || token.lexeme !== '.') return false;
  }
  return true;
}

/**
 * A policy condition (after `on` / `if`): a dotted name is stored as written (`gps.failed`),
 * anything else by the token-join rule (`battery . level < 20 %`).
 */
export function joinCondition(tokens: readonly Token[], start = 0, end = tokens.length): string {
  if (isDottedName(tokens, start, end)) {
    const parts: string[] = [];
    for (let i = start; i < end; i += 1) parts.push(tokens[i]!.lexeme);
    return parts.join('');
  }
  return joinTokens(tokens, start, end);
}
