import type { HttpMethod, Operation } from '../../core/operation.js';

/**
 * Finds the operation a request path names before the router dispatches it, so that the read-auth
 * policy (request pipeline step 10) can apply the operation's own access rule in the pipeline's
 * order, ahead of the version check and the rate limit. Literal paths are one map lookup; paths with
 * `{params}` are tried in table order (a literal path wins over a template, as in the router).
 */
export function operationMatcher(operations: readonly Operation[]): (method: string, path: string) => Operation | null {
  const literal = new Map<string, Operation>();
  const templated: Array<{ method: HttpMethod; re: RegExp; op: Operation }> = [];
  for (const op of operations) {
    if (!op.path.includes('{')) {
      literal.set(`${op.method} ${op.path}`, op);
      continue;
    }
    const source = op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    templated.push({ method: op.method, re: new RegExp(`^${source}$`), op });
  }
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    const hit = literal.get(`${m} ${path}`);
    if (hit) return hit;
    for (const t of templated) if (t.method === m && t.re.test(path)) return t.op;
    return null;
  };
}
