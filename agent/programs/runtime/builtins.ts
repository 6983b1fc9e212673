/**
 * Built-in functions (docs/program-language.md §6): pose, trajectory, serialize/deserialize, Result/Option constructors,
 * and a few numeric helpers and logging calls that example programs use.
 */
import type { Loc } from '../language/ast.js';
import { ProgramRuntimeError } from './errors.js';
import { type ArgValue, type RecordValue, type Value, describeValue, isRecord, toJson } from './values.js';

export interface BuiltinContext {
  log(line: string): void;
  simTimeMs(): number;
}

type Builtin = (args: ArgValue[], ctx: BuiltinContext, loc: Loc) => Value;

/** The value of a named argument, else of the positional argument at `index`. */
export function argument(args: ArgValue[], name: string, index: number): Value | undefined {
  const named = args.find((arg) => arg.name === name);
  if (named) return named.value;
  const positional = args.filter((arg) => arg.name === null);
  return positional[index]?.value;
}

export function numberArgument(args: ArgValue[], name: string, index: number, fallback: number, loc: Loc, what: string): number {
  const value = argument(args, name, index);
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number') {
    throw new ProgramRuntimeError('runtime', `${what}: argument '${name}' must be a number, got ${describeValue(value)}`, loc);
  }
  return value;
}

function numbers(args: ArgValue[], loc: Loc, what: string): number[] {
  return args.map((arg) => {
    if (typeof arg.value !== 'number') throw new ProgramRuntimeError('runtime', `${what} needs numbers`, loc);
    return arg.value;
  });
}

function point(value: Value | undefined): { x: number; y: number } {
  if (isRecord(value) && typeof value['x'] === 'number' && typeof value['y'] === 'number') return { x: value['x'], y: value['y'] };
  return { x: 0, y: 0 };
}

function fromJson(value: unknown): Value {
  if (value === null || typeof value !== 'object') return value as Value;
  if (Array.isArray(value)) return value.map(fromJson);
  const out: RecordValue = {};
  for (const [key, item] of Object.entries(value)) out[key] = fromJson(item);
  return out;
}

export const BUILTINS: Record<string, Builtin> = {
  pose: (args, _ctx, loc) => ({
    x: numberArgument(args, 'x', 0, 0, loc, 'pose'),
    y: numberArgument(args, 'y', 1, 0, loc, 'pose'),
    theta: numberArgument(args, 'theta', 2, 0, loc, 'pose'),
  }),
  trajectory: (args, _ctx, loc) => {
    const from = point(argument(args, 'from', 0));
    const to = point(argument(args, 'to', 1));
    const steps = Math.max(1, Math.round(numberArgument(args, 'steps', 2, 10, loc, 'trajectory')));
    const points: Value[] = [];
    for (let i = 1; i <= steps; i += 1) {
      points.push({ x: from.x + ((to.x - from.x) * i) / steps, y: from.y + ((to.y - from.y) * i) / steps });
    }
    return points;
  },
  serialize: (args) => JSON.stringify(toJson(argument(args, 'value', 0) ?? null)),
  deserialize: (args, _ctx, loc) => {
    const text = argument(args, 'data', 0);
    try {
      return fromJson(JSON.parse(String(text)));
    } catch {
      throw new ProgramRuntimeError('runtime', 'deserialize: input is not valid JSON', loc);
    }
  },
  Ok: (args) => ({ ok: true, value: argument(args, 'value', 0) ?? null }),
  Err: (args) => ({ ok: false, error: argument(args, 'error', 0) ?? null }),
  Some: (args) => ({ some: true, value: argument(args, 'value', 0) ?? null }),
  None: () => ({ some: false, value: null }),
  print: (args, ctx) => {
    ctx.log(args.map((arg) => describeValue(arg.value)).join(' '));
    return null;
  },
  len: (args) => {
    const value = argument(args, 'value', 0);
    if (Array.isArray(value) || typeof value === 'string') return value.length;
    return isRecord(value) ? Object.keys(value).length : 0;
  },
  abs: (args, _ctx, loc) => Math.abs(numbers(args, loc, 'abs')[0] ?? 0),
  sqrt: (args, _ctx, loc) => Math.sqrt(numbers(args, loc, 'sqrt')[0] ?? 0),
  min: (args, _ctx, loc) => Math.min(...numbers(args, loc, 'min')),
  max: (args, _ctx, loc) => Math.max(...numbers(args, loc, 'max')),
  clamp: (args, _ctx, loc) => {
    const [value = 0, lo = -Infinity, hi = Infinity] = numbers(args, loc, 'clamp');
    return Math.max(lo, Math.min(hi, value));
  },
  /** Simulated seconds since the loop started — never the wall clock. */
  now: (_args, ctx) => ctx.simTimeMs() / 1000,
};
BUILTINS['println'] = BUILTINS['print']!;
BUILTINS['log'] = BUILTINS['print']!;
