import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * The agent's own view of its relay trunk (docs/relay.md, "The agent side"): whether it is connected,
 * to which relay host, as which agent, and how much the outbox holds. Served by every agent (the
 * relay, with its own domain file, serves the fleet's view); `configured: false` without `--relay`.
 */
export const relayLinkStatusSchema = z.lazy(() =>
  z.object({
    configured: z.boolean(),
    connected: z.boolean(),
    /** idle (not configured), connecting, connected, backoff (waiting to retry), closed */
    state: z.enum(['idle', 'connecting', 'connected', 'backoff', 'closed']),
    /** Host (and port) of the relay URL: never its credentials or path. */
    relay_host: z.string().nullable(),
    transport: z.enum(['mqtt', 'mqtts', 'ws', 'wss']).nullable(),
    agent_id: z.string().nullable(),
    tenant_id: z.string(),
    enrollment_expires_ms: z.number().nullable(),
    connected_since_ms: z.number().nullable(),
    last_connect_error: z.string().nullable(),
    last_connect_error_ms: z.number().nullable(),
    reconnect_attempts: z.number(),
    outbox: z.object({
      depth: z.number(),
      capacity: z.number(),
      /** Frames dropped because the outbox was full, since the agent started. */
      dropped_total: z.number(),
      /** Dropped frames not yet announced to the relay (the next frame's `dropped_before`). */
      dropped_pending: z.number(),
      next_seq: z.number(),
    }),
    requests: z.object({
      answered: z.number(),
      expired: z.number(),
      rejected: z.number(),
    }),
    /** Relayed WebSocket streams (`WS /agents/{agent_id}/v1/stream/telemetry` on the relay). */
    streams: z.object({
      /** Agent-side sockets open now. */
      open: z.number(),
      opened: z.number(),
      /** Refused before a socket was opened (bad path, too many streams, not listening). */
      refused: z.number(),
    }),
  }),
);

export type RelayLinkStatus = z.infer<typeof relayLinkStatusSchema>;

export const getRelayLinkStatus = defineSpec({
  id: 'getRelayLinkStatus',
  group: 'meta',
  summary: "State of this agent's dial-out trunk to a relay (connected, relay host, agent id, outbox)",
  method: 'GET',
  path: '/v1/relay/status',
  access: { kind: 'sensitive-read' },
  cli: ['relay-link', 'status'],
  response: relayLinkStatusSchema,
});

export const relayLinkSpecs = [getRelayLinkStatus];
