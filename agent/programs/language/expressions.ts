/**
 * Expressions (docs/program-language.md §4.1): or → and → comparison (incl. `matches`) → additive →
 * multiplicative → unary (`-`, `not`, `await`) → postfix (member, call) → primary.
 * Also small shared readers: quantities, types, parameter lists and name lists.
 */

import type { Arg, BinaryOp, Expr, Param, Quantity } from './ast.js';
import type { Token } from './lexer.js';
import { TokenCursor, describe } from './token-cursor.js';
import { joinCondition } from './token-join.js';
import { IDENTIFIER_UNITS } from './units.js';
import { ProgramSyntaxError } from './syntax-error.js';

export interface ExprOptions {
  /** In `if` / `while` / `when` / contract conditions a `{` opens the block, never a struct literal. */
  noStruct?: boolean;
  /**
   * What precedes the expression (`angular:`, `let x =`, `if`): when no expression starts here the
   * error names it, so a typo such as `drive(angular: )` points at the missing value.
   */
  after?: string;
  /** How the missing expression is called in that error (default `an expression`, e.g. `a condition`). */
  what?: string;
}

const COMPARISON = new Set(['<', '<=', '>', '>=', '==', '!=']);

export function parseExpr(c: TokenCursor, options: ExprOptions = {}): Expr {
  if (options.after !== undefined && !startsExpression(c, options)) {
    c.fail(`expected ${options.what ?? 'an expression'} after '${options.after}', found ${describe(c.tok)}`);
  }
  return parseOr(c, options);
}

/** The current token can begin an expression (a `{` only as a struct literal `{ name: … }`). */
function startsExpression(c: TokenCursor, o: ExprOptions): boolean {
  if (startsOperand(c.tok)) return true;
  return !o.noStruct && c.is('{') && c.isIdent(1) && c.is(':', 2);
}

/** The text right before the current token, for "expected an expression after …" messages. */
function precedingText(c: TokenCursor): string | null {
  const previous = c.tokens[c.pos - 1];
  if (!previous) return null;
  const before = c.tokens[c.pos - 2];
  // A named argument or struct field: `angular:` reads better than a lone `:`.
  if (previous.type === 'punct' && previous.lexeme === ':' && before?.type === 'ident') return `${before.lexeme}:`;
  return previous.type === 'string' ? JSON.stringify(previous.value) : previous.lexeme;
}

function binary(op: BinaryOp, left: Expr, right: Expr): Expr {
  return { kind: 'binary', op, left, right, loc: left.loc };
}

function parseOr(c: TokenCursor, o: ExprOptions): Expr {
  let left = parseAnd(c, o);
  while (c.tok.type === 'keyword' && c.tok.lexeme === 'or') {
    c.next();
    left = binary('or', left, parseAnd(c, o));
  }
  return left;
}

function parseAnd(c: TokenCursor, o: ExprOptions): Expr {
  let left = parseComparison(c, o);
  while (c.tok.type === 'keyword' && c.tok.lexeme === 'and') {
    c.next();
    left = binary('and', left, parseComparison(c, o));
  }
  return left;
}

function parseComparison(c: TokenCursor, o: ExprOptions): Expr {
  const left = parseAdditive(c, o);
  const token = c.tok;
  if (token.type === 'punct' && COMPARISON.has(token.lexeme)) {
    c.next();
    return binary(token.lexeme as BinaryOp, left, parseAdditive(c, o));
  }
  if (token.type === 'ident' && token.lexeme === 'matches') {
    c.next();
    return binary('matches', left, parseAdditive(c, o));
  }
  return left;
}

function parseAdditive(c: TokenCursor, o: ExprOptions): Expr {
  let left = parseMultiplicative(c, o);
  // `x += 1` lexes as `+` `=`: the statement parser reads it as a compound assignment.
  while (c.tok.type === 'punct' && (c.tok.lexeme === '+' || c.tok.lexeme === '-') && !c.is('=', 1)) {
    const op = c.next().lexeme as BinaryOp;
    left = binary(op, left, parseMultiplicative(c, o));
  }
  return left;
}

function parseMultiplicative(c: TokenCursor, o: ExprOptions): Expr {
  let left = parseUnary(c, o);
  while (c.tok.type === 'punct' && (c.tok.lexeme === '*' || c.tok.lexeme === '/' || c.tok.lexeme === '%') && !c.is('=', 1)) {
    const op = c.next().lexeme as BinaryOp;
    left = binary(op, left, parseUnary(c, o));
  }
  return left;
}

function parseUnary(c: TokenCursor, o: ExprOptions): Expr {
  const token = c.tok;
  if (token.type === 'punct' && token.lexeme === '-') {
    c.next();
    return { kind: 'unary', op: '-', operand: parseUnary(c, o), loc: c.loc(token) };
  }
  if (token.type === 'keyword' && token.lexeme === 'not') {
    c.next();
    return { kind: 'unary', op: 'not', operand: parseUnary(c, o), loc: c.loc(token) };
  }
  if (token.type === 'ident' && token.lexeme === 'await' && startsOperand(c.peek(1))) {
    c.next();
    return { kind: 'unary', op: 'await', operand: parseUnary(c, o), loc: c.loc(token) };
  }
  return parsePostfix(c, o);
}

function parsePostfix(c: TokenCursor, o: ExprOptions): Expr {
  const start = c.pos;
  let expr = parsePrimary(c, o);
  for (;;) {
    if (c.is('.')) {
      // `wheels.;` is a broken member chain, never the end of an expression.
      if (!c.isIdent(1)) c.fail(`expected a member name after '${chainText(c, start)}.', found ${describe(c.peek(1))}`, c.peek(1));
      c.next();
      expr = { kind: 'member', object: expr, property: c.next().lexeme, loc: expr.loc };
    } else if (c.is('(')) {
      expr = { kind: 'call', callee: expr, args: parseArgs(c), loc: expr.loc };
    } else {
      return expr;
    }
  }
}

/** A member chain as written, without spaces (`robot.arm.gripper`), shortened when long. */
function chainText(c: TokenCursor, start: number): string {
  let text = '';
  for (let i = start; i < c.pos; i += 1) {
    const token = c.tokens[i]!;
    text += token.type === 'string' ? JSON.stringify(token.value) : token.lexeme;
  }
  return text.length > 40 ? `…${text.slice(-39)}` : text;
}

function parseArgs(c: TokenCursor): Arg[] {
  c.expect('(', 'to open the argument list');
  const args: Arg[] = [];
  while (!c.is(')')) {
    let name: string | null = null;
    if (c.isIdent() && c.is(':', 1)) {
      name = c.next().lexeme;
      c.next();
    }
    args.push({ name, value: parseExpr(c, name === null ? {} : { after: `${name}:` }) });
    if (!c.eat(',')) break;
  }
  c.expect(')', 'to close the argument list');
  return args;
}

/** Tokens that can begin an operand (used to tell `20%` from `a % b`). */
function startsOperand(token: Token): boolean {
  if (token.type === 'ident' || token.type === 'number' || token.type === 'unit_number' || token.type === 'string' || token.type === 'regex') {
    return true;
  }
  if (token.type === 'keyword') return token.lexeme === 'not';
  return token.type === 'punct' && (token.lexeme === '(' || token.lexeme === '[' || token.lexeme === '-');
}

function parsePrimary(c: TokenCursor, o: ExprOptions): Expr {
  const token = c.tok;
  const loc = c.loc(token);
  switch (token.type) {
    case 'unit_number':
    case 'number': {
      const q = readQuantity(c);
      return { kind: 'number', value: q.value, unit: q.unit, text: q.text, loc };
    }
    case 'string':
      c.next();
      return { kind: 'string', value: String(token.value), loc };
    case 'regex':
      c.next();
      return { kind: 'regex', pattern: String(token.value), loc };
    case 'ident': {
      if (token.lexeme === 'true' || token.lexeme === 'false') {
        c.next();
        return { kind: 'bool', value: token.lexeme === 'true', loc };
      }
      if (!o.noStruct && c.is('{', 1) && c.isIdent(2) && c.is(':', 3)) {
        c.next();
        return parseStructBody(c, token.lexeme, loc);
      }
      if (KEYWORD_EXPRESSIONS.has(token.lexeme) && c.isIdent(1)) return parseKeywordExpression(c, o);
      if (!o.noStruct && c.is('<', 1)) {
        const typeArgs = tryGenericStructHead(c);
        if (typeArgs !== null) return { ...(parseStructBody(c, token.lexeme, loc) as Extract<Expr, { kind: 'struct' }>), typeArgs };
      }
      c.next();
      return { kind: 'ident', name: token.lexeme, loc };
    }
    case 'punct': {
      if (token.lexeme === '(') {
        c.next();
        const first = parseExpr(c);
        if (c.eat(')')) return first;
        // A tuple `(x, y)` is kept as a list.
        const items = [first];
        while (c.eat(',') && !c.is(')')) items.push(parseExpr(c));
        c.expect(')', 'to close the parenthesised expression');
        return { kind: 'list', items, loc };
      }
      if (token.lexeme === '[') {
        c.next();
        const items: Expr[] = [];
        while (!c.is(']')) {
          items.push(parseExpr(c));
          if (!c.eat(',')) break;
        }
        c.expect(']', 'to close the list');
        return { kind: 'list', items, loc };
      }
      if (token.lexeme === '{' && !o.noStruct && c.isIdent(1) && c.is(':', 2)) {
        return parseStructBody(c, '', loc);
      }
      break;
    }
    default:
      break;
  }
  const preceding = precedingText(c);
  return c.fail(`expected an expression${preceding === null ? '' : ` after '${preceding}'`}, found ${describe(token)}`);
}

/**
 * Words that prefix a call to make a keyword expression (`let r = execute navigate(goal);`).
 * Exported for statements.ts: followed by a name they start a strict statement, never an opaque one.
 */
export const KEYWORD_EXPRESSIONS: ReadonlySet<string> = new Set(['execute', 'call', 'spawn']);

/**
 * `execute navigate(goal)`, `call GetBattery()`, `spawn tick()` (docs/program-language.md §4.1 "Forms
 * added in issue 18"): the keyword, then a call — a bare name without arguments is an error, so
 * `spawn tick;` is never silently a no-op.
 */
function parseKeywordExpression(c: TokenCursor, o: ExprOptions): Expr {
  const keywordToken = c.next();
  const keyword = keywordToken.lexeme as 'execute' | 'call' | 'spawn';
  const target = parsePostfix(c, o);
  if (target.kind !== 'call') {
    c.fail(`expected a call after '${keyword}' (e.g. ${keyword} ${exprName(target)}()), found ${describe(c.tok)}`);
  }
  return { kind: 'keyword', keyword, call: target, loc: c.loc(keywordToken) };
}

function exprName(expr: Expr): string {
  if (expr.kind === 'ident') return expr.name;
  if (expr.kind === 'member') return `${exprName(expr.object)}.${expr.property}`;
  return 'name';
}

/**
 * At `Name <`: when the tokens read as `Name<T, …> { field:`, consumes `Name<T, …>` and returns the
 * type arguments (a generic struct literal, `Sample<Float> { value: 1.5 }`); otherwise leaves the
 * cursor where it was and returns null (`a < b` is a comparison).
 */
function tryGenericStructHead(c: TokenCursor): string[] | null {
  const start = c.pos;
  try {
    c.next();
    c.next();
    const args: string[] = [];
    while (!c.is('>')) {
      args.push(parseType(c));
      if (!c.eat(',')) break;
    }
    if (args.length > 0 && c.eat('>') && c.is('{') && c.isIdent(1) && c.is(':', 2)) return args;
  } catch (error) {
    if (!(error instanceof ProgramSyntaxError)) throw error;
  }
  c.pos = start;
  return null;
}

function parseStructBody(c: TokenCursor, name: string, loc: Expr['loc']): Expr {
  c.expect('{', 'to open the struct literal');
  const fields: { name: string; value: Expr }[] = [];
  while (!c.is('}')) {
    const field = c.ident('for a struct field');
    c.expect(':', `after struct field '${field}'`);
    fields.push({ name: field, value: parseExpr(c) });
    if (!c.eat(',') && !c.eat(';')) break;
  }
  c.expect('}', 'to close the struct literal');
  return { kind: 'struct', name, fields, loc };
}

/**
 * A number with its unit: a unit literal (`100ms`), a number followed by `%` (`20%`) or by an
 * identifier unit (`8 GB`, `100 Mbps`, `32 TOPS`), or a bare number. A leading `-` is allowed.
 */
export function readQuantity(c: TokenCursor): Quantity {
  let sign = 1;
  let prefix = '';
  if (c.is('-') && (c.peek(1).type === 'number' || c.peek(1).type === 'unit_number')) {
    c.next();
    sign = -1;
    prefix = '-';
  }
  const token = c.tok;
  if (token.type === 'unit_number') {
    c.next();
    return { value: sign * Number(token.value), unit: token.unit, text: prefix + token.lexeme };
  }
  if (token.type !== 'number') return c.fail(`expected a number, found ${describe(token)}`);
  c.next();
  const value = sign * Number(token.value);
  const following = c.tok;
  // `20%` is a percentage unless a number or `(` follows (`20 % (x)` is the rare modulo).
  const afterPercent = c.peek(1);
  if (following.type === 'punct' && following.lexeme === '%' && afterPercent.type !== 'number' && afterPercent.type !== 'unit_number' && !(afterPercent.type === 'punct' && afterPercent.lexeme === '(')) {
    c.next();
    return { value, unit: '%', text: `${prefix}${token.lexeme}%` };
  }
  if (following.type === 'ident' && IDENTIFIER_UNITS.has(following.lexeme)) {
    c.next();
    return { value, unit: following.lexeme, text: `${prefix}${token.lexeme}${following.lexeme}` };
  }
  return { value, unit: null, text: prefix + token.lexeme };
}

/**
 * A type as written: `Float`, `a.B`, `Result<Pose, Error>`, `[Waypoint]`, `(Int, Int)`.
 * Rendered without spaces except after commas.
 */
export function parseType(c: TokenCursor): string {
  // `dyn Trait` (docs/program-language.md §4.1 "Forms added in issue 18"): a value of any type implementing Trait.
  if (c.is('dyn') && c.isIdent(1)) {
    c.next();
    return `dyn ${parseType(c)}`;
  }
  if (c.eat('[')) {
    const inner = parseType(c);
    c.expect(']', 'to close the list type');
    return `[${inner}]`;
  }
  if (c.eat('(')) {
    const items: string[] = [];
    while (!c.is(')')) {
      items.push(parseType(c));
      if (!c.eat(',')) break;
    }
    c.expect(')', 'to close the tuple type');
    return `(${items.join(', ')})`;
  }
  let name = c.ident('for a type');
  while (c.is('.') && c.isIdent(1)) {
    c.next();
    name += `.${c.next().lexeme}`;
  }
  if (c.is('<')) {
    c.next();
    const args: string[] = [];
    while (!c.is('>')) {
      args.push(parseType(c));
      if (!c.eat(',')) break;
    }
    c.expect('>', 'to close the type arguments');
    name += `<${args.join(', ')}>`;
  }
  return name;
}

/** `( [mut] name [: Type] [= default], … )` */
export function parseParams(c: TokenCursor): Param[] {
  c.expect('(', 'to open the parameter list');
  const params: Param[] = [];
  while (!c.is(')')) {
    if (c.is('mut') && c.isIdent(1)) c.next();
    const name = c.ident('for a parameter');
    const type = c.eat(':') ? parseType(c) : null;
    if (c.eat('=')) parseExpr(c);
    params.push({ name, type });
    if (!c.eat(',')) break;
  }
  c.expect(')', 'to close the parameter list');
  return params;
}

/**
 * `[a, b.c, "d"]` — items separated by commas (trailing comma allowed); each item stored by the
 * condition rule (dotted names as written, strings unquoted).
 */
export function parseNameList(c: TokenCursor): string[] {
  const open = c.pos;
  c.expect('[', 'to open the list');
  const close = c.match[open]!;
  const names: string[] = [];
  let itemStart = c.pos;
  for (let i = c.pos; i <= close; i += 1) {
    const token = c.tokens[i]!;
    if (token.type === 'punct' && (token.lexeme === '(' || token.lexeme === '[' || token.lexeme === '{')) {
      i = c.match[i]!;
      continue;
    }
    if (i === close || (token.type === 'punct' && token.lexeme === ',')) {
      if (i > itemStart) names.push(joinCondition(c.tokens, itemStart, i));
      itemStart = i + 1;
    }
  }
  c.pos = close + 1;
  return names;
}

/** `a.b.c` as written. */
export function parseDotted(c: TokenCursor, context: string): string {
  let name = c.ident(context);
  while (c.is('.') && c.isIdent(1)) {
    c.next();
    name += `.${c.next().lexeme}`;
  }
  return name;
}
