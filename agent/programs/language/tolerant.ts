/**
 * The tolerant layer (docs/program-language.md §4.3): anything the strict parser does not model is kept
 * as a `GenericDecl` (top level, robot level) or an `opaque` statement (inside blocks), as long as
 * it has the shape `IDENT [IDENT …] { balanced tokens }` or `IDENT … ;`. Brackets are already
 * known to balance (TokenCursor), so skipping a block is a single jump.
 */

import type { GenericDecl, Stmt } from './ast.js';
import { ProgramSyntaxError } from './syntax-error.js';
import type { TokenCursor } from './token-cursor.js';
import { joinTokens } from './token-join.js';

/**
 * Index just past the declaration starting at `start`: through the first `;` at depth 0, or
 * through the first `{…}` block at depth 0 (plus an optional `;`, and `else {…}` continuations).
 * With `allowOpenEnd`, a statement may also end right before its enclosing `}`.
 * Returns null when the tokens cannot be absorbed (`}` or end of file reached first).
 */
export function scanDeclarationEnd(c: TokenCursor, start: number, allowOpenEnd = false): number | null {
  const tokens = c.tokens;
  for (let i = start; i < tokens.length; ) {
    const token = tokens[i]!;
    if (token.type === 'eof') return null;
    if (token.type === 'punct') {
      switch (token.lexeme) {
        case ';':
          return i + 1;
        case '{': {
          let end = c.after(i);
          const following = tokens[end]!;
          if (following.type === 'ident' && following.lexeme === 'else') {
            i = end;
            continue;
          }
          if (following.type === 'punct' && following.lexeme === ';') end += 1;
          return end;
        }
        case '(':
        case '[':
          i = c.after(i);
          continue;
        case '}':
        case ')':
        case ']':
          return allowOpenEnd && i > start ? i : null;
        default:
          break;
      }
    }
    i += 1;
  }
  return null;
}

/** Keeps tokens `[start, end)` as a generic declaration; `@policy(…) Name` reads as keyword `policy`. */
export function genericDecl(c: TokenCursor, start: number, end: number): GenericDecl {
  const tokens = c.tokens;
  const first = tokens[start]!;
  let keyword = first.lexeme;
  let nameIndex = start + 1;
  if (first.lexeme === '@' && tokens[start + 1]?.type === 'ident') {
    keyword = tokens[start + 1]!.lexeme;
    nameIndex = start + 2;
    if (tokens[nameIndex]?.lexeme === '(' && tokens[nameIndex]!.type === 'punct') nameIndex = c.after(nameIndex);
  }
  const nameToken = nameIndex < end ? tokens[nameIndex]! : null;
  const name = nameToken && (nameToken.type === 'ident' || nameToken.type === 'string') ? String(nameToken.value) : null;
  const lexemes: string[] = [];
  for (let i = start + 1; i < end; i += 1) lexemes.push(tokens[i]!.lexeme);
  return { keyword, name, tokens: lexemes, text: joinTokens(tokens, start, end), loc: c.loc(first) };
}

/**
 * Runs a strict parser; when it fails, falls back to the tolerant layer: the same tokens are
 * kept via `fallback(start, end)`. If the tolerant layer cannot absorb them either, the strict
 * parser's error (the precise one) is thrown.
 */
/**
 * Errors the tolerant layer already failed to absorb: an enclosing declaration must not swallow
 * them (a robot with a broken member is an error, not a generic `robot` block).
 */
const fatalErrors = new WeakSet<Error>();

export function markFatal(error: ProgramSyntaxError): ProgramSyntaxError {
  fatalErrors.add(error);
  return error;
}

export function isFatal(error: unknown): boolean {
  return error instanceof Error && fatalErrors.has(error);
}

export function strictOrTolerant<T>(
  c: TokenCursor,
  strict: () => T,
  fallback: (start: number, end: number, error: ProgramSyntaxError) => T,
  allowOpenEnd = false,
): T {
  const start = c.pos;
  try {
    return strict();
  } catch (error) {
    if (!(error instanceof ProgramSyntaxError) || isFatal(error)) throw error;
    const end = scanDeclarationEnd(c, start, allowOpenEnd);
    if (end === null) throw markFatal(error);
    c.pos = end;
    return fallback(start, end, error);
  }
}

/**
 * Runs the parser of a construct whose opening words already committed it to the strict grammar
 * (`sensor lidar …`, `wheels.drive(…)`, `let x = …`): a syntax error inside it is a typo in
 * something the analyses or the simulator read, so no enclosing tolerant layer may turn it into
 * a generic declaration or an opaque statement (that would silently drop it).
 */
export function committed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ProgramSyntaxError) markFatal(error);
    throw error;
  }
}

/** An unknown statement inside a block, kept as joined tokens (never executed). */
export function opaqueStatement(c: TokenCursor, start: number, end: number): Stmt {
  const first = c.tokens[start]!;
  return { kind: 'opaque', keyword: first.lexeme, text: joinTokens(c.tokens, start, end), loc: c.loc(first) };
}
