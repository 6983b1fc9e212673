/**
 * Methods on plain values: Result/Option records (`is_ok`, `unwrap`, …), lists and strings.
 * Unknown methods yield void rather than failing, like reading an absent field.
 */
import type { Loc } from '../language/ast.js';
import { argument } from './builtins.js';
import { ProgramRuntimeError } from './errors.js';
import { CallableRef, type ArgValue, type RecordValue, type Value, describeValue } from './values.js';

export function recordMethod(record: RecordValue, method: string, args: ArgValue[], loc: Loc, call: (callee: Value, args: ArgValue[], loc: Loc) => Value): Value {
  const field = record[method];
  if (field instanceof CallableRef) return call(field, args, loc);
  switch (method) {
    case 'is_ok':
      return record['ok'] === true;
    case 'is_err':
      return record['ok'] === false;
    case 'is_some':
      return record['some'] === true;
    case 'is_none':
      return record['some'] === false;
    case 'unwrap':
      if (record['ok'] === false || record['some'] === false) throw new ProgramRuntimeError('runtime', 'unwrap on an empty value', loc);
      return record['value'] ?? null;
    case 'unwrap_or':
      return record['ok'] === false || record['some'] === false ? (argument(args, 'default', 0) ?? null) : (record['value'] ?? null);
    default:
      return field ?? null;
  }
}

export function listMethod(list: Value[], method: string, args: ArgValue[]): Value {
  switch (method) {
    case 'len':
    case 'length':
      return list.length;
    case 'push':
      list.push(argument(args, 'value', 0) ?? null);
      return null;
    case 'first':
      return list[0] ?? null;
    case 'last':
      return list[list.length - 1] ?? null;
    case 'contains':
      return list.some((item) => describeValue(item) === describeValue(argument(args, 'value', 0) ?? null));
    default:
      return null;
  }
}

export function stringMethod(text: string, method: string, args: ArgValue[]): Value {
  switch (method) {
    case 'len':
    case 'length':
      return text.length;
    case 'contains':
      return text.includes(describeValue(argument(args, 'value', 0) ?? ''));
    case 'starts_with':
      return text.startsWith(describeValue(argument(args, 'value', 0) ?? ''));
    case 'to_upper':
      return text.toUpperCase();
    case 'to_lower':
      return text.toLowerCase();
    default:
      return null;
  }
}
