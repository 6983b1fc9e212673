import type { z } from 'zod';
import { badRequest } from './errors.js';

function valueAt(value: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * Validates one part of an operation's input; the first issue becomes a 400 naming the field:
 * `missing <field>` when it is absent (the reference's wording), else `invalid field '<field>': …`.
 */
export function parseInput<T>(schema: z.ZodType<T> | undefined, value: unknown, part: 'body' | 'query'): T {
  if (!schema) return value as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.join('.') : part;
  // An absent field reads "missing X" whatever rule it failed (a type, an enumeration, every branch of a union).
  if ((issue.code === 'invalid_type' || issue.code === 'invalid_union' || issue.code === 'invalid_value') && issue.path.length > 0 && valueAt(value, issue.path) === undefined) {
    throw badRequest(`missing ${where}`);
  }
  throw badRequest(`invalid ${part === 'body' ? 'field' : 'query parameter'} '${where}': ${issue.message}`);
}
