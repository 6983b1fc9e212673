/**
 * The parser's view of the token stream: an index into one token array (never sliced), the
 * matching bracket of every bracket token (computed once, so the tolerant layer skips a block in
 * O(1) and unbalanced files fail early with a precise message), and the doc comments that precede
 * each token.
 */

import type { Loc } from './ast.js';
import type { Token } from './lexer.js';
import { ProgramSyntaxError, sourceLineAt } from './syntax-error.js';
import { markFatal } from './tolerant.js';

const OPENERS: Record<string, string> = { '{': '}', '(': ')', '[': ']' };
const CLOSERS: Record<string, string> = { '}': '{', ')': '(', ']': '[' };

export class TokenCursor {
  pos = 0;
  /** Token index of the matching bracket, or -1 for non-bracket tokens. */
  readonly match: Int32Array;
  /** Doc-comment text (`///` lines joined by newlines) immediately before token i, if any. */
  private readonly docs = new Map<number, string>();
  readonly tokens: Token[];

  constructor(
    allTokens: Token[],
    readonly source: string,
    readonly file: string,
  ) {
    const tokens: Token[] = [];
    let pendingDoc: string[] = [];
    for (const token of allTokens) {
      if (token.type === 'doc') {
        pendingDoc.push(String(token.value));
        continue;
      }
      if (pendingDoc.length > 0) {
        this.docs.set(tokens.length, pendingDoc.join('\n'));
        pendingDoc = [];
      }
      tokens.push(token);
    }
    this.tokens = tokens;
    this.match = this.matchBrackets();
  }

  private matchBrackets(): Int32Array {
    const match = new Int32Array(this.tokens.length).fill(-1);
    const stack: number[] = [];
    for (let i = 0; i < this.tokens.length; i += 1) {
      const token = this.tokens[i]!;
      if (token.type !== 'punct') continue;
      if (OPENERS[token.lexeme]) {
        stack.push(i);
      } else if (CLOSERS[token.lexeme]) {
        const open = stack.pop();
        if (open === undefined) this.fail(`unexpected '${token.lexeme}' with no matching '${CLOSERS[token.lexeme]}'`, token);
        const opener = this.tokens[open]!;
        if (OPENERS[opener.lexeme] !== token.lexeme) {
          this.fail(
            `expected '${OPENERS[opener.lexeme]}' to close '${opener.lexeme}' from line ${opener.line}, found '${token.lexeme}'`,
            token,
          );
        }
        match[open] = i;
        match[i] = open;
      }
    }
    const unclosed = stack.pop();
    if (unclosed !== undefined) {
      const opener = this.tokens[unclosed]!;
      this.fail(`unclosed '${opener.lexeme}': no matching '${OPENERS[opener.lexeme]}' before end of file`, opener);
    }
    return match;
  }

  get tok(): Token {
    return this.tokens[this.pos]!;
  }

  peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!;
  }

  /** The token at `offset` is punctuation, an identifier or a keyword spelled `lexeme` (never a string). */
  is(lexeme: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.lexeme === lexeme && (token.type === 'punct' || token.type === 'ident' || token.type === 'keyword');
  }

  isIdent(offset = 0): boolean {
    return this.peek(offset).type === 'ident';
  }

  atEnd(): boolean {
    return this.tok.type === 'eof';
  }

  next(): Token {
    const token = this.tok;
    if (token.type !== 'eof') this.pos += 1;
    return token;
  }

  eat(lexeme: string): boolean {
    if (!this.is(lexeme)) return false;
    this.pos += 1;
    return true;
  }

  expect(lexeme: string, context: string): Token {
    if (!this.is(lexeme)) this.fail(`expected '${lexeme}' ${context}, found ${describe(this.tok)}`);
    return this.next();
  }

  ident(context: string): string {
    if (!this.isIdent()) this.fail(`expected a name ${context}, found ${describe(this.tok)}`);
    return this.next().lexeme;
  }

  /** Index just past the bracket that closes the opener at `index`. */
  after(index: number): number {
    return this.match[index]! + 1;
  }

  loc(token: Token = this.tok): Loc {
    return { line: token.line, column: token.column };
  }

  docBefore(index: number): string | null {
    return this.docs.get(index) ?? null;
  }

  /** Fails in a way no enclosing tolerant fallback may absorb (garbage inside a block). */
  fatal(detail: string, token: Token = this.tok): never {
    try {
      this.fail(detail, token);
    } catch (error) {
      markFatal(error as ProgramSyntaxError);
      throw error;
    }
  }

  fail(detail: string, token: Token = this.tok): never {
    // The tolerant layer backtracks on these errors, so they must be cheap: no stack trace (the
    // message already points at the source; a JavaScript stack would only show parser internals).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      throw new ProgramSyntaxError('parse', this.file, token.line, token.column, this.lineText(token.line), detail);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  /**
   * Line text via a line-start table built on first use: the tolerant layer backtracks on errors,
   * and scanning from the top of the file for each one would make large files quadratic.
   */
  private lineStarts: number[] | null = null;
  private lineText(line: number): string {
    if (!this.lineStarts) {
      const starts = [0];
      for (let i = this.source.indexOf('\n'); i >= 0; i = this.source.indexOf('\n', i + 1)) starts.push(i + 1);
      this.lineStarts = starts;
    }
    const start = this.lineStarts[line - 1];
    if (start === undefined) return sourceLineAt(this.source, line);
    const end = this.lineStarts[line] ?? this.source.length + 1;
    return this.source.slice(start, end - 1).replace(/\r$/, '');
  }
}

export function describe(token: Token): string {
  return token.type === 'eof' ? 'end of file' : `'${token.lexeme}'`;
}
