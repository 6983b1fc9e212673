/**
 * Expression evaluation. The evaluator knows the operators and the value model; everything that
 * touches the robot (identifiers of declared entities, calls, members of sensors) goes through an
 * `ExpressionHost`, which the interpreter implements.
 */
import type { Expr, Loc } from '../language/ast.js';
import { ProgramRuntimeError } from './errors.js';
import { toSI } from './si-units.js';
import { exprText as calleeText } from '../language/expr-text.js';
import { Environment, type ArgValue, type Value, isRecord, truthy, describeValue } from './values.js';

export interface ExpressionHost {
  /** An identifier not bound in the environment (robot entities, built-ins, types). */
  resolveName(name: string, loc: Loc): Value;
  member(object: Value, property: string, loc: Loc): Value;
  callMethod(object: Value, method: string, args: ArgValue[], loc: Loc): Value;
  callValue(callee: Value, args: ArgValue[], loc: Loc): Value;
  /** `execute f(…)`, `call f(…)`, `spawn f(…)`; `target` is the callee as written (`navigate`, `nav.go`). */
  keywordCall(keyword: 'execute' | 'call' | 'spawn', target: string, args: ArgValue[], loc: Loc): Value;
}

export function evaluate(expr: Expr, env: Environment, host: ExpressionHost): Value {
  switch (expr.kind) {
    case 'number':
      return toSI(expr.value, expr.unit);
    case 'string':
      return expr.value;
    case 'bool':
      return expr.value;
    case 'regex':
      return expr.pattern;
    case 'ident': {
      const bound = env.get(expr.name);
      return bound === undefined ? host.resolveName(expr.name, expr.loc) : bound;
    }
    case 'list':
      return expr.items.map((item) => evaluate(item, env, host));
    case 'struct': {
      const type = expr.typeArgs && expr.typeArgs.length > 0 ? `${expr.name}<${expr.typeArgs.join(', ')}>` : expr.name;
      const record: Record<string, Value> = { type };
      for (const field of expr.fields) record[field.name] = evaluate(field.value, env, host);
      return record;
    }
    case 'unary': {
      const operand = evaluate(expr.operand, env, host);
      if (expr.op === 'not') return !truthy(operand);
      if (expr.op === 'await') return operand;
      return -numberOf(operand, '-', expr.loc);
    }
    case 'binary':
      return evaluateBinary(expr, env, host);
    case 'member':
      return host.member(evaluate(expr.object, env, host), expr.property, expr.loc);
    case 'call': {
      const args = expr.args.map((arg) => ({ name: arg.name, value: evaluate(arg.value, env, host) }));
      if (expr.callee.kind === 'member') {
        const object = evaluate(expr.callee.object, env, host);
        return host.callMethod(object, expr.callee.property, args, expr.loc);
      }
      return host.callValue(evaluate(expr.callee, env, host), args, expr.loc);
    }
    case 'keyword': {
      const args = expr.call.args.map((arg) => ({ name: arg.name, value: evaluate(arg.value, env, host) }));
      return host.keywordCall(expr.keyword, calleeText(expr.call.callee), args, expr.loc);
    }
  }
}

function numberOf(value: Value, op: string, loc: Loc): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw new ProgramRuntimeError('runtime', `operator '${op}' needs a number, got ${describeValue(value)}`, loc);
}

function equalValues(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-12;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => equalValues(item, b[i]!));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => equalValues(a[key]!, b[key] ?? null));
  }
  return false;
}

function evaluateBinary(expr: Extract<Expr, { kind: 'binary' }>, env: Environment, host: ExpressionHost): Value {
  if (expr.op === 'and') return truthy(evaluate(expr.left, env, host)) && truthy(evaluate(expr.right, env, host));
  if (expr.op === 'or') return truthy(evaluate(expr.left, env, host)) || truthy(evaluate(expr.right, env, host));
  const left = evaluate(expr.left, env, host);
  const right = evaluate(expr.right, env, host);
  switch (expr.op) {
    case '==':
      return equalValues(left, right);
    case '!=':
      return !equalValues(left, right);
    case '<':
    case '<=':
    case '>':
    case '>=': {
      // A void reading (a sensor the simulator does not model) compares false rather than failing.
      if (left === null || right === null) return false;
      if (typeof left === 'string' && typeof right === 'string') return compare(expr.op, left.localeCompare(right), 0);
      return compare(expr.op, numberOf(left, expr.op, expr.loc), numberOf(right, expr.op, expr.loc));
    }
    case '+':
      if (typeof left === 'string' || typeof right === 'string') return `${describeValue(left)}${describeValue(right)}`;
      if (Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
      return numberOf(left, '+', expr.loc) + numberOf(right, '+', expr.loc);
    case '-':
      return numberOf(left, '-', expr.loc) - numberOf(right, '-', expr.loc);
    case '*':
      return numberOf(left, '*', expr.loc) * numberOf(right, '*', expr.loc);
    case '/': {
      const divisor = numberOf(right, '/', expr.loc);
      if (divisor === 0) throw new ProgramRuntimeError('runtime', 'division by zero', expr.loc);
      return numberOf(left, '/', expr.loc) / divisor;
    }
    case '%': {
      const divisor = numberOf(right, '%', expr.loc);
      if (divisor === 0) throw new ProgramRuntimeError('runtime', 'division by zero', expr.loc);
      return numberOf(left, '%', expr.loc) % divisor;
    }
    case 'matches':
      return new RegExp(String(right)).test(describeValue(left));
  }
}

function compare(op: '<' | '<=' | '>' | '>=', a: number, b: number): boolean {
  if (op === '<') return a < b;
  if (op === '<=') return a <= b;
  if (op === '>') return a > b;
  return a >= b;
}

/** Expression text for messages (`lidar.read().nearest_distance < 0.35m`). */
export { exprText } from '../language/expr-text.js';
