/**
 * Statements and blocks (docs/program-language.md §4.1 `stmt`, extensions #4 `match`, #10 `run_pipeline`).
 *
 * Two kinds of statement, told apart by their first two tokens:
 * - an unknown statement form — a keyword-like name followed by a name, literal or block
 *   (`for x in xs { … }`, `parallel { … }`, `send_goal nav with x;`, `reduce_speed 0.4 m/s;`)
 *   — becomes an `opaque` statement (the tolerant layer, §4.3);
 * - anything else starts a statement of the strict grammar (`let`, `if`, `publish`, a call,
 *   a member chain, an assignment, a keyword expression `spawn worker();` …). The simulator
 *   executes these, so a malformed one is a syntax error: kept as opaque, a typo like
 *   `drive(angular: )` would silently disable motion.
 */

import type { Quantity, Stmt } from './ast.js';
import { KEYWORD_EXPRESSIONS, parseDotted, parseExpr, parseType, readQuantity } from './expressions.js';
import type { TokenCursor } from './token-cursor.js';
import { describe } from './token-cursor.js';
import { joinTokens } from './token-join.js';
import { committed, opaqueStatement, scanDeclarationEnd, strictOrTolerant } from './tolerant.js';

/** `{ stmt* }` */
export function parseBlock(c: TokenCursor, context = 'to open the block'): Stmt[] {
  c.expect('{', context);
  const body: Stmt[] = [];
  while (!c.is('}')) {
    if (c.atEnd()) c.fatal('expected \'}\' to close the block, found end of file');
    if (c.eat(';')) continue;
    body.push(parseStatement(c));
  }
  c.next();
  return body;
}

/** Words that start a statement of the strict grammar, whatever follows them. */
const STATEMENT_WORDS = new Set(['let', 'const', 'var', 'if', 'loop', 'while', 'publish', 'enter', 'emergency_stop', 'return', 'match', 'run_pipeline', 'await']);

/**
 * An unknown statement form (docs/program-language.md §4.3 tolerant layer): a keyword-like name followed directly by a
 * name, number, string or block — `reduce_speed 0.4 m/s;`, `for x in xs { … }`, `parallel { … }`,
 * `send_goal nav with x;`. No expression statement of the strict grammar starts that way
 * (`x matches /re/` and keyword expressions aside), so these are kept as opaque statements.
 *
 * `execute f(…);`, `call S(…);`, `spawn t(…);` are keyword expressions used as statements
 * (docs/program-language.md §4.1 "Forms added in issue 18"): they go to the strict grammar and
 * run through the same code as `let h = spawn t(…);`, result discarded. Kept opaque they would be
 * silently skipped at run time, and `call svc;` (no call) would parse as a no-op; now it is the
 * same syntax error the expression form gives.
 */
function isUnknownStatementForm(c: TokenCursor): boolean {
  const first = c.tok;
  if (first.type !== 'ident' || STATEMENT_WORDS.has(first.lexeme)) return false;
  const second = c.peek(1);
  if (second.type === 'ident') return second.lexeme !== 'matches' && !KEYWORD_EXPRESSIONS.has(first.lexeme);
  // `navigate { goal: home; }` is a block statement (extension #12), even though `Name { field: … }`
  // also reads as a struct literal: a struct literal alone is never a useful statement.
  return second.type === 'number' || second.type === 'unit_number' || second.type === 'string' || second.type === 'regex' || (second.type === 'punct' && second.lexeme === '{');
}

export function parseStatement(c: TokenCursor, inMatchArm = false): Stmt {
  if (isUnknownStatementForm(c)) {
    const start = c.pos;
    const end = scanDeclarationEnd(c, start, true);
    if (end !== null) {
      c.pos = end;
      return opaqueStatement(c, start, end);
    }
  }
  if (c.is('@')) {
    // An annotated statement (`@retry(3) upload();`) is outside the grammar: kept whole if it can be.
    return strictOrTolerant(
      c,
      () => strictStatement(c, inMatchArm),
      (start, end) => opaqueStatement(c, start, end),
      true,
    );
  }
  return committed(() => strictStatement(c, inMatchArm));
}

/** The end of a simple statement: `;`, or nothing right before the closing `}` (last statement). */
function endStatement(c: TokenCursor, what: string, inMatchArm: boolean): void {
  if (c.eat(';')) return;
  if (inMatchArm && c.eat(',')) return;
  if (c.is('}')) return;
  c.fail(`expected ';' after ${what}, found ${describe(c.tok)}`);
}

/** `every` / `timeout` / `loop every` periods: a unit literal or a bare number. */
export function readPeriod(c: TokenCursor, what: string): Quantity {
  if (c.tok.type !== 'unit_number' && c.tok.type !== 'number') c.fail(`expected a duration after ${what}, found ${describe(c.tok)}`);
  return readQuantity(c);
}

function strictStatement(c: TokenCursor, inMatchArm: boolean): Stmt {
  const token = c.tok;
  const loc = c.loc(token);
  if (token.type === 'ident') {
    switch (token.lexeme) {
      case 'let':
      case 'const':
      case 'var': {
        c.next();
        if (c.is('mut') && c.isIdent(1)) c.next();
        const name = c.ident(`after '${token.lexeme}'`);
        const type = c.eat(':') ? parseType(c) : null;
        // `let scan: Topic<LidarScan>;` declares an unset variable (docs/program-language.md §4.1 "Forms added in issue 18"):
        // allowed only with a type, which is all the type check then knows about it.
        if (type !== null && (c.is(';') || c.is('}') || (inMatchArm && c.is(',')))) {
          endStatement(c, 'let statement', inMatchArm);
          return { kind: 'let', name, type, value: null, loc };
        }
        if (type === null && (c.is(';') || c.is('}'))) {
          c.fail(`expected '=' after '${token.lexeme} ${name}': a ${token.lexeme} without an initializer needs a type (${token.lexeme} ${name}: Type;)`);
        }
        c.expect('=', `after '${token.lexeme} ${name}${type === null ? '' : `: ${type}`}'`);
        const value = parseExpr(c, { after: `${token.lexeme} ${name} =` });
        endStatement(c, 'let statement', inMatchArm);
        return { kind: 'let', name, type, value, loc };
      }
      case 'if':
        return parseIf(c);
      case 'loop': {
        c.next();
        c.expect('every', "after 'loop'");
        const every = readPeriod(c, "'loop every'");
        return { kind: 'loop', every, body: parseBlock(c, 'to open the loop body'), loc };
      }
      case 'while': {
        c.next();
        const condition = parseExpr(c, { noStruct: true, after: 'while', what: 'a condition' });
        return { kind: 'while', condition, body: parseBlock(c, 'to open the while body'), loc };
      }
      case 'publish': {
        if (c.is('(', 1)) break; // a call to a function named publish
        c.next();
        const topic = parseDotted(c, "for the topic after 'publish'");
        let value = null;
        if (c.eat('with')) value = parseExpr(c, { after: `publish ${topic} with` });
        else if (c.is('(')) value = parseExpr(c);
        endStatement(c, 'publish statement', inMatchArm);
        return { kind: 'publish', topic, value, loc };
      }
      case 'enter': {
        if (c.is('(', 1)) break;
        c.next();
        const mode = c.ident("for the mode after 'enter'");
        endStatement(c, 'enter statement', inMatchArm);
        return { kind: 'enter', mode, loc };
      }
      case 'emergency_stop': {
        if (c.is('(', 1)) break;
        c.next();
        endStatement(c, 'emergency_stop', inMatchArm);
        return { kind: 'emergency_stop', loc };
      }
      case 'return': {
        c.next();
        const value = c.is(';') || c.is('}') || (inMatchArm && c.is(',')) ? null : parseExpr(c);
        endStatement(c, 'return statement', inMatchArm);
        return { kind: 'return', value, loc };
      }
      case 'match':
        return parseMatch(c);
      case 'run_pipeline': {
        if (c.is('(', 1)) break;
        c.next();
        const pipeline = c.ident("for the pipeline after 'run_pipeline'");
        endStatement(c, 'run_pipeline statement', inMatchArm);
        return { kind: 'run_pipeline', pipeline, loc };
      }
      default:
        break;
    }
  }
  const expr = parseExpr(c);
  if (c.is('=')) {
    c.next();
    const value = parseExpr(c, { after: '=' });
    endStatement(c, 'assignment', inMatchArm);
    return { kind: 'assign', target: expr, value, loc };
  }
  const op = c.tok.lexeme;
  if ((op === '+' || op === '-' || op === '*' || op === '/') && c.is('=', 1)) {
    // Compound assignment `x += 1` (lexed `+` `=`): kept as `x = x + 1`.
    c.next();
    c.next();
    const value = parseExpr(c, { after: `${op}=` });
    endStatement(c, 'assignment', inMatchArm);
    return { kind: 'assign', target: expr, value: { kind: 'binary', op, left: expr, right: value, loc: expr.loc }, loc };
  }
  endStatement(c, 'statement', inMatchArm);
  return { kind: 'expr', expr, loc };
}

function parseIf(c: TokenCursor): Stmt {
  const loc = c.loc();
  c.expect('if', 'to start the if statement');
  const condition = parseExpr(c, { noStruct: true, after: 'if', what: 'a condition' });
  const then = parseBlock(c, 'to open the if body');
  let otherwise: Stmt[] | null = null;
  if (c.eat('else')) otherwise = c.is('if') ? [parseIf(c)] : parseBlock(c, "to open the else body");
  return { kind: 'if', condition, then, else: otherwise, loc };
}

function parseMatch(c: TokenCursor): Stmt {
  const loc = c.loc();
  c.expect('match', 'to start the match statement');
  const subject = parseExpr(c, { noStruct: true, after: 'match' });
  const open = c.pos;
  c.expect('{', 'to open the match arms');
  const close = c.match[open]!;
  const arms: { pattern: string; body: Stmt[] }[] = [];
  while (c.pos < close) {
    if (c.eat(',') || c.eat(';')) continue;
    const patternStart = c.pos;
    while (c.pos < close && !c.is('=>')) {
      if (c.is('(') || c.is('[') || c.is('{')) c.pos = c.after(c.pos);
      else c.next();
    }
    if (c.pos >= close) c.fail("expected '=>' in match arm");
    const pattern = joinTokens(c.tokens, patternStart, c.pos);
    c.next();
    const body = c.is('{') ? parseBlock(c, 'to open the match arm') : [parseStatement(c, true)];
    arms.push({ pattern, body });
  }
  c.pos = close + 1;
  c.eat(';');
  return { kind: 'match', subject, arms, loc };
}
