import type { Hono } from 'hono';
import { invoke } from '../../core/invoke.js';
import type { Operation } from '../../core/operation.js';
import type { Services } from '../../runtime/services.js';
import { parseJsonObject, readBodyText } from './body.js';
import type { HttpEnv } from './http-env.js';
import { jsonResponse } from './responses.js';

/** `/v1/devices/{id}` → `/v1/devices/:id`. */
export function honoPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/** Steps 14–15: one route per operation, each handed to the invoke kernel (access, body, validation, handler, audit). */
export function mountOperations(app: Hono<HttpEnv>, services: Services, operations: readonly Operation[]): void {
  for (const op of operations) {
    app.on(op.method, honoPath(op.path), async (c) => {
      const result = await invoke(
        op,
        {
          principal: c.get('principal'),
          correlationId: c.get('correlationId'),
          transport: 'rest',
          params: c.req.param() as Record<string, string>,
          query: c.req.query(),
          // Empty = `{}`, anything but a JSON object = 400 (docs/wire-decisions.md D3).
          body: async () => parseJsonObject(await readBodyText(c.req.raw, services.settings.maxBodyBytes)),
          auditPath: c.req.path,
          header: (name) => c.req.header(name),
        },
        services,
      );
      return jsonResponse(result, 200, c.get('responseHeaders'));
    });
  }
}
