/**
 * Decision-tree conditions are stored as token-joined strings (docs/program-language.md §5.1: `lidar . nearest_distance <
 * 0.5m`, or with the dots kept, `gps.fix_quality == 0`). To evaluate one we re-tokenise it and
 * parse the expression subset a condition uses: names, member access, calls, numbers with glued
 * units, strings, comparisons, arithmetic and `and` / `or` / `not`.
 */
import type { BinaryOp, Expr, Loc } from '../language/ast.js';

type Token = { type: 'num'; value: number; unit: string | null; text: string } | { type: 'id' | 'op' | 'str'; text: string };

const OPERATORS = ['<=', '>=', '==', '!=', '<', '>', '(', ')', '.', ',', '+', '-', '*', '/', '%', '[', ']', ':'];
const UNIT_CHARS = /[A-Za-zµ°²³·/]/;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (/[0-9]/.test(ch)) {
      const match = /^(0x[0-9a-fA-F]+|\d+(?:\.\d+)?)/.exec(text.slice(i))!;
      const digits = match[1]!;
      let j = i + digits.length;
      let unit = '';
      while (j < text.length && UNIT_CHARS.test(text[j]!) && text[j] !== '%') unit += text[j++];
      tokens.push({ type: 'num', value: Number(digits), unit: unit === '' ? null : unit, text: text.slice(i, j) });
      i = j;
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))!;
      tokens.push({ type: 'id', text: match[0] });
      i += match[0].length;
      continue;
    }
    if (ch === '"') {
      const end = text.indexOf('"', i + 1);
      const stop = end < 0 ? text.length : end;
      tokens.push({ type: 'str', text: text.slice(i + 1, stop) });
      i = stop + 1;
      continue;
    }
    const op = OPERATORS.find((candidate) => text.startsWith(candidate, i));
    if (!op) throw new Error(`unexpected character '${ch}' in condition`);
    tokens.push({ type: 'op', text: op });
    i += op.length;
  }
  return tokens;
}

/** Parse a token-joined condition string into an expression; throws on anything it cannot read. */
export function parseCondition(text: string, loc: Loc = { line: 0, column: 0 }): Expr {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (value: string): boolean => {
    const token = peek();
    return token !== undefined && token.type === 'op' && token.text === value;
  };
  const isWord = (value: string): boolean => {
    const token = peek();
    return token !== undefined && token.type === 'id' && token.text === value;
  };
  const expect = (value: string): void => {
    if (!isOp(value)) throw new Error(`expected '${value}' in condition`);
    pos += 1;
  };

  const binary = (op: BinaryOp, left: Expr, right: Expr): Expr => ({ kind: 'binary', op, left, right, loc });

  function parseOr(): Expr {
    let left = parseAnd();
    while (isWord('or')) {
      pos += 1;
      left = binary('or', left, parseAnd());
    }
    return left;
  }
  function parseAnd(): Expr {
    let left = parseCompare();
    while (isWord('and')) {
      pos += 1;
      left = binary('and', left, parseCompare());
    }
    return left;
  }
  function parseCompare(): Expr {
    const left = parseAdd();
    const token = peek();
    if (token?.type === 'op' && ['<', '<=', '>', '>=', '==', '!='].includes(token.text)) {
      pos += 1;
      return binary(token.text as BinaryOp, left, parseAdd());
    }
    return left;
  }
  function parseAdd(): Expr {
    let left = parseMul();
    while (isOp('+') || isOp('-')) {
      const op = (tokens[pos++] as { text: string }).text as BinaryOp;
      left = binary(op, left, parseMul());
    }
    return left;
  }
  function parseMul(): Expr {
    let left = parseUnary();
    while (isOp('*') || isOp('/') || isOp('%')) {
      const op = (tokens[pos++] as { text: string }).text as BinaryOp;
      // `30 %` (a percent written after a number) ends the operand: the number is kept as written.
      if (op === '%' && !startsOperand(peek())) continue;
      left = binary(op, left, parseUnary());
    }
    return left;
  }
  function startsOperand(token: Token | undefined): boolean {
    if (token === undefined) return false;
    if (token.type !== 'op') return !(token.type === 'id' && (token.text === 'and' || token.text === 'or'));
    return token.text === '(' || token.text === '-';
  }
  function parseUnary(): Expr {
    if (isOp('-')) {
      pos += 1;
      return { kind: 'unary', op: '-', operand: parseUnary(), loc };
    }
    if (isWord('not')) {
      pos += 1;
      return { kind: 'unary', op: 'not', operand: parseUnary(), loc };
    }
    return parsePostfix();
  }
  function parsePostfix(): Expr {
    let expr = parsePrimary();
    for (;;) {
      if (isOp('.')) {
        pos += 1;
        const name = peek();
        if (name?.type !== 'id') throw new Error('expected a name after . in condition');
        pos += 1;
        expr = { kind: 'member', object: expr, property: name.text, loc };
      } else if (isOp('(')) {
        pos += 1;
        const args: { name: string | null; value: Expr }[] = [];
        while (!isOp(')')) {
          let name: string | null = null;
          const token = peek();
          if (token?.type === 'id' && tokens[pos + 1]?.type === 'op' && tokens[pos + 1]!.text === ':') {
            name = token.text;
            pos += 2;
          }
          args.push({ name, value: parseOr() });
          if (isOp(',')) pos += 1;
          else break;
        }
        expect(')');
        expr = { kind: 'call', callee: expr, args, loc };
      } else {
        return expr;
      }
    }
  }
  function parsePrimary(): Expr {
    const token = peek();
    if (token === undefined) throw new Error('condition ended early');
    pos += 1;
    if (token.type === 'num') return { kind: 'number', value: token.value, unit: token.unit, text: token.text, loc };
    if (token.type === 'str') return { kind: 'string', value: token.text, loc };
    if (token.type === 'id') {
      if (token.text === 'true' || token.text === 'false') return { kind: 'bool', value: token.text === 'true', loc };
      return { kind: 'ident', name: token.text, loc };
    }
    if (token.text === '(') {
      const inner = parseOr();
      expect(')');
      return inner;
    }
    throw new Error(`unexpected '${token.text}' in condition`);
  }

  const expr = parseOr();
  if (pos < tokens.length) throw new Error(`unexpected '${tokens[pos]!.text}' in condition`);
  return expr;
}

/**
 * Signals read by a condition, in order of appearance: maximal member chains rooted at a name
 * (`lidar.nearest_distance`, `lidar.read().nearest_distance`), written without spaces.
 */
export function conditionSignals(expr: Expr): string[] {
  const names: string[] = [];
  const visit = (node: Expr): void => {
    const chain = chainText(node);
    if (chain !== null && chain.includes('.')) {
      if (!names.includes(chain)) names.push(chain);
      return;
    }
    switch (node.kind) {
      case 'unary':
        visit(node.operand);
        break;
      case 'binary':
        visit(node.left);
        visit(node.right);
        break;
      case 'member':
        visit(node.object);
        break;
      case 'call':
        visit(node.callee);
        node.args.forEach((arg) => visit(arg.value));
        break;
      case 'list':
        node.items.forEach(visit);
        break;
      default:
        break;
    }
  };
  visit(expr);
  return names;
}

/** `a.b().c` for a chain of names, members and argument-less calls; else null. */
export function chainText(expr: Expr): string | null {
  if (expr.kind === 'ident') return expr.name;
  if (expr.kind === 'member') {
    const base = chainText(expr.object);
    return base === null ? null : `${base}.${expr.property}`;
  }
  if (expr.kind === 'call' && expr.args.length === 0) {
    const base = chainText(expr.callee);
    return base === null ? null : `${base}()`;
  }
  return null;
}
