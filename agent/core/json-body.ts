import { badRequest } from './errors.js';

export const MAX_JSON_DEPTH = 64;

function depthExceeds(value: unknown, limit: number): boolean {
  // Iterative walk: a hostile body must not be able to overflow our stack.
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
    }
  }
  return false;
}

/**
 * docs/wire-decisions.md D3: an empty body is `{}`; anything else must be a JSON object, else 400
 * `invalid JSON body: <detail>`. Nesting is bounded so later processing stays cheap.
 */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`invalid JSON body: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('invalid JSON body: expected a JSON object');
  }
  if (depthExceeds(value, MAX_JSON_DEPTH)) {
    throw badRequest(`invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return value as Record<string, unknown>;
}
