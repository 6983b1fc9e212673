/**
 * Shared readers for `{ item; item; … }` blocks (hardware, policies, missions): each item is
 * handed to a handler; items the handler does not know, or cannot read, are skipped so one
 * unusual line does not hide the rest of a declaration from the analyses.
 */

import type { Token } from './lexer.js';
import { ProgramSyntaxError } from './syntax-error.js';
import type { TokenCursor } from './token-cursor.js';
import { joinCondition, joinTokens } from './token-join.js';
import { isFatal, scanDeclarationEnd } from './tolerant.js';

/** Returns true when it consumed the item (through its `;` or block), false to skip it. */
export type ItemHandler = (word: Token) => boolean;

export function forEachItem(c: TokenCursor, context: string, handler: ItemHandler): void {
  const open = c.pos;
  c.expect('{', context);
  const close = c.match[open]!;
  while (c.pos < close) {
    if (c.eat(';') || c.eat(',')) continue;
    const start = c.pos;
    let consumed = false;
    try {
      consumed = handler(c.tok);
    } catch (error) {
      if (!(error instanceof ProgramSyntaxError) || isFatal(error)) throw error;
      c.pos = start;
    }
    if (consumed && c.pos > start && c.pos <= close) continue;
    c.pos = start;
    const end = scanDeclarationEnd(c, start, true);
    c.pos = end === null || end > close ? close : end;
  }
  c.pos = close + 1;
}

/** Index of the first token at depth 0 from `c.pos` that is `;`, an opening `{`, or the enclosing closer. */
export function findStop(c: TokenCursor, stopAtBrace: boolean): number {
  const tokens = c.tokens;
  for (let i = c.pos; i < tokens.length; ) {
    const token = tokens[i]!;
    if (token.type === 'eof') return i;
    if (token.type === 'punct') {
      const l = token.lexeme;
      if (l === ';' || l === '}' || l === ')' || l === ']') return i;
      if (l === '{') {
        if (stopAtBrace) return i;
        i = c.after(i);
        continue;
      }
      if (l === '(' || l === '[') {
        i = c.after(i);
        continue;
      }
    }
    i += 1;
  }
  return tokens.length - 1;
}

/** Tokens up to `;` (consumed) joined by the docs/program-language.md §5.1 rule. */
export function readTextUntilSemicolon(c: TokenCursor, asCondition = false): string {
  const start = c.pos;
  const stop = findStop(c, false);
  const text = asCondition ? joinCondition(c.tokens, start, stop) : joinTokens(c.tokens, start, stop);
  c.pos = stop;
  c.eat(';');
  return text;
}

/** Tokens up to the `{` that opens a handler block (not consumed), by the condition rule or plain join. */
export function readTextUntilBrace(c: TokenCursor, what: string, asCondition: boolean): string {
  const start = c.pos;
  const stop = findStop(c, true);
  if (!c.tokens[stop] || c.tokens[stop]!.lexeme !== '{' || stop === start) {
    c.pos = stop;
    c.fail(`expected a condition and '{' ${what}`);
  }
  c.pos = stop;
  return asCondition ? joinCondition(c.tokens, start, stop) : joinTokens(c.tokens, start, stop);
}

/**
 * `{ ACTION; ACTION; }` as strings: each action is the token sequence up to `;` at depth 0 (or
 * through a nested block), joined by the docs/program-language.md §5.1 rule.
 */
export function readActionBlock(c: TokenCursor, context: string): string[] {
  const open = c.pos;
  c.expect('{', context);
  const close = c.match[open]!;
  const actions: string[] = [];
  while (c.pos < close) {
    if (c.eat(';')) continue;
    const start = c.pos;
    const end = scanDeclarationEnd(c, start, true);
    const stop = end === null || end > close ? close : end;
    const text = joinTokens(c.tokens, start, stop);
    if (text) actions.push(text);
    c.pos = stop;
  }
  c.pos = close + 1;
  return actions;
}

/** Skips an optional `:` or `=` between an item word and its value. */
export function eatSeparator(c: TokenCursor): void {
  if (!c.eat(':')) c.eat('=');
}
