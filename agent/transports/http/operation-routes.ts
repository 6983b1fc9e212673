import type { Hono } from 'hono';
import { accessOf, isMutation, type Operation } from '../../core/operation.js';
import { parseInput } from '../../core/validate.js';
import { enforceAccess } from '../../security/access.js';
import { commitState } from '../../state/commit.js';
import type { Services } from '../../runtime/services.js';
import { parseJsonObject, readBodyText } from './body.js';
import type { HttpEnv } from './http-env.js';
import { jsonResponse } from './responses.js';

/** `/v1/devices/{id}` → `/v1/devices/:id`. */
export function honoPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/** Steps 14–15: one route per table entry; access first, then body (D3), then validation and logic. */
export function mountOperations(app: Hono<HttpEnv>, services: Services, operations: readonly Operation[]): void {
  for (const op of operations) {
    app.on(op.method, honoPath(op.path), async (c) => {
      const principal = c.get('principal');
      enforceAccess(accessOf(op), principal, services, { operation: op.id });
      const body = op.method === 'GET' ? {} : parseJsonObject(await readBodyText(c.req.raw, services.settings.maxBodyBytes));
      const input = {
        body: parseInput(op.body, body, 'body'),
        query: parseInput(op.query, c.req.query(), 'query'),
        params: c.req.param() as Record<string, string>,
      };
      const correlationId = c.get('correlationId');
      const result = await op.handler(input, { services, principal, correlationId, transport: 'rest' });
      // A 2xx promises the change is on disk (docs/security.md §10, "Durability").
      if (op.method !== 'GET') await commitState();
      // Only mutations are audited, exactly once (docs/security.md §10): a read-like POST (programs
      // readiness, entities query, verify, …) is a read, and `POST /v1/rpc` is a public gateway whose
      // inner mutation `invokeRpcOperation` records itself.
      if (isMutation(op)) {
        services.audit.recordApiMutation({ method: op.method, path: c.req.path, status: 200, correlationId, principal });
        // The record too is on disk before the answer (one group fsync of the chain).
        await commitState();
      }
      return jsonResponse(result, 200, c.get('responseHeaders'));
    });
  }
}
