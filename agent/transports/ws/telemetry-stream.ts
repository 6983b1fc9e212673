import type { Hono } from 'hono';
import { upgradeWebSocket } from '@hono/node-server';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { notFound, unauthorized } from '../../core/errors.js';
import { TELEMETRY_STREAM_PATH } from '../../../api/stream-paths.js';
import { publishAuthFailed } from '../../security/access.js';
import type { Services } from '../../runtime/services.js';
import type { HttpEnv } from '../http/http-env.js';
import { authenticate } from '../../security/authenticate.js';
import { errorResponse } from '../http/responses.js';
import { StreamConnection } from './stream-connection.js';

/**
 * `WS /v1/stream/telemetry`. The upgrade is checked like a REST read of a sensitive path (docs/wire-decisions.md D6):
 * a credential from `Authorization` or, for browsers, the `access_token` query parameter; a principal
 * is required when either read-auth flag is on; a foreign tenant is refused before the upgrade.
 */
export function mountTelemetryStream(app: Hono<HttpEnv>, services: Services, openStreams: Set<StreamConnection>): void {
  const upgrade = upgradeWebSocket((c) => {
    let connection: StreamConnection | null = null;
    // `?tail=N`: start each replay N items before the head (docs/streaming.md § Delivery); anything else replays all.
    const tailParam = c.req.query('tail');
    const tail = tailParam !== undefined && /^\d{1,9}$/.test(tailParam) ? Number(tailParam) : undefined;
    return {
      onOpen(_event, ws) {
        const raw = ws.raw as WebSocket;
        connection = new StreamConnection(
          {
            send: (data, done) => {
              if (raw.readyState !== raw.OPEN) return done(new Error('socket closed'));
              raw.send(data, done);
            },
            close: (code, reason) => raw.close(code, reason),
            bufferedAmount: () => raw.bufferedAmount,
            batch: (writes) => {
              // `ws` writes each frame straight to its net socket; corked, a turn's frames leave in one writev.
              const socket = (raw as unknown as { _socket?: Socket | null })._socket;
              if (!socket || socket.writableCorked > 0) return writes();
              socket.cork();
              try {
                writes();
              } finally {
                socket.uncork();
              }
            },
          },
          { telemetry: services.telemetry.ring, traces: services.traces, alerts: services.alerts.ring },
          { ...services.settings.ws, tenantId: services.settings.tenantId, tail },
        );
        openStreams.add(connection);
        services.metrics.wsOpened();
        connection.start();
      },
      onMessage(event) {
        if (typeof event.data === 'string') connection?.receive(event.data);
        else if (event.data instanceof ArrayBuffer) connection?.receive(Buffer.from(event.data).toString('utf8'));
      },
      onClose() {
        if (connection) {
          connection.dispose();
          if (openStreams.delete(connection)) services.metrics.wsClosed();
        }
      },
      onError() {
        if (connection) {
          connection.dispose();
          if (openStreams.delete(connection)) services.metrics.wsClosed();
        }
      },
    };
  });

  app.get(TELEMETRY_STREAM_PATH, async (c, next) => {
    // A plain GET of the stream path is not a route (pipeline step 1, docs/architecture.md; docs/streaming.md § Access).
    if ((c.req.header('upgrade') ?? '').toLowerCase() !== 'websocket') return errorResponse(notFound());
    const accessToken = c.req.query('access_token');
    const header = c.req.header('authorization') ?? (accessToken !== undefined && accessToken !== '' ? `Bearer ${accessToken}` : undefined);
    const auth = await authenticate(header, services);
    // Another tenant's credential: 403 tenant_mismatch (docs/security.md §7).
    if (auth.error) return errorResponse(auth.error);
    // A credential was presented but is not one (unknown, revoked, forged, expired, or not a Bearer
    // value): refused with 401 like a REST mutation, not downgraded to an anonymous stream
    // (docs/security.md §5, the paragraph on the stream, and §6).
    if (header !== undefined && !auth.principal) {
      publishAuthFailed(services.bus, 'missing_or_invalid_token', null, { path: TELEMETRY_STREAM_PATH });
      return errorResponse(unauthorized());
    }
    const { requireAuthReads, requireAuthAllReads } = services.settings;
    if (!auth.principal && (requireAuthReads || requireAuthAllReads)) {
      publishAuthFailed(services.bus, 'read_auth_required', null, { path: TELEMETRY_STREAM_PATH });
      return errorResponse(unauthorized());
    }
    return upgrade(c, next);
  });
}
