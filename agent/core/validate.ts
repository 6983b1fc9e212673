import type { z } from 'zod';
import { badRequest } from './errors.js';

/** Validates one part of an operation's input; the first issue becomes a 400 naming the field. */
export function parseInput<T>(schema: z.ZodType<T> | undefined, value: unknown, part: 'body' | 'query'): T {
  if (!schema) return value as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.join('.') : part;
  throw badRequest(`invalid ${part === 'body' ? 'field' : 'query parameter'} '${where}': ${issue.message}`);
}
