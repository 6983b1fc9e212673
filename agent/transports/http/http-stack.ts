import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import type { Operation } from '../../core/operation.js';
import type { Services } from '../../runtime/services.js';
import type { StreamConnection } from '../ws/stream-connection.js';
import { mountTelemetryStream } from '../ws/telemetry-stream.js';
import { createHttpApp } from './http-app.js';
import { healthFastPath } from './pipeline/request-pipeline.js';

export interface HttpStack {
  /** The WebSocket server of the telemetry stream (no own listener: upgrades come from `server`). */
  wss: WebSocketServer;
  /** Node request listener of the REST app. */
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * The same REST app for a request that did not come through the socket (the relay trunk): every
   * pipeline step applies (correlation id, authentication, read policy, rate limit, access, audit, trace).
   */
  dispatch: (req: Request) => Promise<Response>;
}

/**
 * The REST + WebSocket stack (Hono, the node adapter, ws, the routes of every operation) on an
 * already listening `server`. Loaded by `Agent.listen()` through a dynamic import on the first
 * request or upgrade: the adapter touches `Request`/`Response` at load, which makes Node load its
 * fetch implementation (undici, ~9 MiB), and an agent nobody has talked to yet does not need any of it.
 * Registers the adapter's `upgrade` (and `close`) listeners on `server`; the caller installs `listener`.
 */
export function attachHttpStack(
  server: Server,
  options: { hostname: string; services: Services; operations: readonly Operation[]; openStreams: Set<StreamConnection>; maxPayload: number },
): HttpStack {
  const { services, operations, openStreams } = options;
  const app = createHttpApp(services, operations, (a) => mountTelemetryStream(a, services, openStreams));
  // Clients only ever send small control messages (ping, resume): cap them, or one anonymous socket
  // could make the agent buffer a message of up to ws's 100 MiB default.
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload });
  let listener: HttpStack['listener'] | null = null;
  createAdaptorServer({
    fetch: app.fetch,
    hostname: options.hostname,
    websocket: { server: wss },
    // The adapter builds its request listener and wires the WebSocket upgrade onto "its" server: ours.
    createServer: ((_opts: unknown, requestListener: HttpStack['listener']) => {
      listener = requestListener;
      return server;
    }) as unknown as typeof import('node:http').createServer,
  });
  if (!listener) throw new Error('the HTTP adapter did not provide a request listener');
  const viaApp: HttpStack['listener'] = listener;
  // The health probe's plain GET skips the fetch objects and the router (pipeline/request-pipeline.ts#healthFastPath).
  const fast = healthFastPath(services, operations);
  return { wss, listener: (req, res) => void (fast(req, res) || viaApp(req, res)), dispatch: async (req) => app.fetch(req) };
}
