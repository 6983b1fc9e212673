import { Hono } from 'hono';
import { notFound } from '../../core/errors.js';
import type { Operation } from '../../core/operation.js';
import type { Services } from '../../runtime/services.js';
import type { HttpEnv } from './http-env.js';
import { mountOperations } from './operation-routes.js';
import { requestPipeline } from './pipeline/request-pipeline.js';
import { errorResponse, toApiError } from './responses.js';

/**
 * The REST transport: the pipeline, then one route per operation, then the streaming routes that
 * `extraRoutes` mounts (the WebSocket stream). Everything else is a JSON 404 (no 405, as the reference).
 */
export function createHttpApp(
  services: Services,
  operations: readonly Operation[],
  extraRoutes: (app: Hono<HttpEnv>) => void = () => undefined,
): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.use('*', requestPipeline(services, operations));
  extraRoutes(app);
  mountOperations(app, services, operations);
  app.notFound(() => errorResponse(notFound()));
  app.onError((err) => errorResponse(toApiError(err, (m) => process.stderr.write(`${m}\n`))));
  return app;
}
