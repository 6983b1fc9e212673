import * as z from 'zod';
import { defineSpec } from '../spec.js';
import { createAdminApiKey } from './admin.js';

/**
 * Routes of the fleet relay (docs/relay.md). They are served by `relay/` only: they are not part of
 * the agent's `SPECS` (the agent never answers them). Forwarded agent routes
 * (`ANY /agents/{agent_id}/v1/...`) are not listed here: they are the agent's own contract.
 */

const ID = /^[A-Za-z0-9._-]{1,128}$/; // api/relay-protocol.ts TOPIC_ID

const enrollmentBody = z.lazy(() =>
  z.object({
    tenant_id: z.string().regex(ID, 'tenant_id: letters, digits, . _ - (1..128)'),
    agent_id: z.string().regex(ID, 'agent_id: letters, digits, . _ - (1..128)'),
    /** Token lifetime; default 24 h, at most 365 days. */
    ttl_secs: z.number().int().min(60).max(365 * 86400).optional(),
  }),
);

const fleetQueryBody = z.lazy(() =>
  z.object({
    method: z.literal('GET'),
    path: z.string().regex(/^\/v1\//, 'path must start with /v1/'),
    /** Agent ids of the caller's tenant; default every agent the relay knows in the tenant. */
    agents: z.array(z.string().regex(ID)).max(10_000).optional(),
  }),
);

export const getRelayHealth = defineSpec({
  id: 'getRelayHealth',
  group: 'relay',
  summary: 'Relay liveness: node id, broker mode, agents seen',
  method: 'GET',
  path: '/v1/health',
  access: { kind: 'public' },
  cli: false,
});

export const createRelayEnrollment = defineSpec<z.infer<typeof enrollmentBody>>({
  id: 'createRelayEnrollment',
  group: 'relay',
  summary: 'Issue an enrollment token (EdDSA JWT, the agent\'s MQTT password) and return the relay public key',
  method: 'POST',
  path: '/v1/relay/enrollments',
  access: { kind: 'admin' },
  body: enrollmentBody,
  cli: false,
});

export const revokeRelayEnrollment = defineSpec({
  id: 'revokeRelayEnrollment',
  group: 'relay',
  summary: 'Revoke every enrollment token issued so far for an agent; its MQTT connection is closed and refused',
  method: 'DELETE',
  path: '/v1/relay/enrollments/{agent_id}',
  access: { kind: 'admin' },
  cli: false,
});

export const listRelayFleetAgents = defineSpec({
  id: 'listRelayFleetAgents',
  group: 'relay',
  summary: 'Agents of the caller\'s tenant with their presence (never a token)',
  method: 'GET',
  path: '/v1/fleet/agents',
  access: { kind: 'sensitive-read' },
  cli: false,
});

export const queryRelayFleet = defineSpec<z.infer<typeof fleetQueryBody>>({
  id: 'queryRelayFleet',
  group: 'relay',
  summary: 'The same read on many agents of the caller\'s tenant in parallel; per-agent results, partial failure reported',
  method: 'POST',
  path: '/v1/fleet/query',
  access: { kind: 'sensitive-read' },
  body: fleetQueryBody,
  cli: false,
});

export const streamRelayFleet = defineSpec({
  id: 'streamRelayFleet',
  group: 'relay',
  summary: 'WebSocket: event frames of every agent of the caller\'s tenant, each with agent_id; fleet membership changes',
  method: 'GET',
  path: '/v1/fleet/stream',
  access: { kind: 'sensitive-read' },
  cli: false,
});

/** Every route the relay serves itself, `POST /v1/admin/api-keys` included (the agent's spec, reused). */
export const relaySpecs = [
  getRelayHealth,
  createAdminApiKey,
  createRelayEnrollment,
  revokeRelayEnrollment,
  listRelayFleetAgents,
  queryRelayFleet,
  streamRelayFleet,
];
