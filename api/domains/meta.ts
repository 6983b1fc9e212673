import * as z from 'zod';
import { defineSpec } from '../spec.js';
import { DEVICE_LIFECYCLE_STATES, type DeviceLifecycleState } from '../vocabulary/devices.js';

// Health counters partition the pool by health_status; lifecycle counts are kept apart under
// `lifecycle` (docs/api.md § Meta endpoints), so `healthy` never means "lifecycle state healthy".
const devicePoolSchema = z.lazy(() => z.object({
  total: z.number(),
  healthy: z.number(),
  degraded: z.number(),
  offline: z.number(),
  unknown: z.number(),
  failed: z.number(),
  lifecycle: z.object(Object.fromEntries(DEVICE_LIFECYCLE_STATES.map((k) => [k, z.number()])) as Record<DeviceLifecycleState, z.ZodNumber>),
}));

/** The API describing itself and its instance: health, versions, instance, tenant, dashboard, OpenAPI. */
export const getHealth = defineSpec({
  id: 'getHealth',
  group: 'meta',
  summary: 'Liveness and protocol versions (also served at /health and /healthz, any method)',
  method: 'GET',
  path: '/v1/health',
  access: { kind: 'public' },
  // Older clients call it on the JSON-RPC gateway by its legacy name (docs/grpc.md § JSON-RPC gateway).
  rpc: { name: 'GetHealth', request: 'Empty' },
  jsonRpcAliases: ['svc.v1.SvcService/GetHealth'],
  cli: ['health'],
  response: z.lazy(() => z.object({
    ok: z.literal(true),
    version: z.literal('v1'),
    service: z.string(),
    status: z.string(),
    uptime_ms: z.number(),
    grpc: z.object({ proto_semver: z.string(), rpc_count: z.number() }),
  })),
});

export const getVersion = defineSpec({
  id: 'getVersion',
  group: 'meta',
  summary: 'Platform, UI, REST and gRPC versions',
  method: 'GET',
  path: '/v1/version',
  access: { kind: 'public' },
  cli: ['version'],
});

export const getInstance = defineSpec({
  id: 'getInstance',
  group: 'meta',
  summary: 'Instance descriptor computed from live state',
  method: 'GET',
  path: '/v1/instance',
  access: { kind: 'public' },
  cli: ['instance'],
  response: z.lazy(() => z.object({
    ok: z.literal(true),
    service: z.string(),
    bind: z.string().nullable(),
    config_path: z.string().nullable(),
    program_path: z.string().nullable(),
    config_loaded: z.boolean(),
    overall_status: z.enum(['healthy', 'degraded', 'critical']),
    device_pool: devicePoolSchema,
    fleet_agent_count: z.number(),
    alert_count: z.number(),
    control_center_ui_version: z.string(),
  }).passthrough()),
});

export const getTenant = defineSpec({
  id: 'getTenant',
  group: 'meta',
  summary: 'Tenant of this instance',
  method: 'GET',
  path: '/v1/tenant',
  access: { kind: 'public' },
  rpc: { name: 'GetTenant', request: 'Empty' },
  cli: ['tenant'],
});

export const getDashboard = defineSpec({
  id: 'getDashboard',
  group: 'meta',
  summary: 'Device pool, fleet and alert counters',
  method: 'GET',
  path: '/v1/dashboard',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetDashboard', request: 'Empty' },
  jsonRpcAliases: ['svc.v1.SvcService/GetDashboard'],
  cli: ['dashboard'],
});

export const getOpenApi = defineSpec({
  id: 'getOpenApi',
  group: 'meta',
  summary: 'This OpenAPI 3.1 document (served for any method)',
  method: 'GET',
  path: '/v1/openapi.json',
  access: { kind: 'public' },
  rpc: { name: 'GetOpenApi', request: 'Empty' },
  cli: ['openapi'],
});

export const metaSpecs = [getHealth, getVersion, getInstance, getTenant, getDashboard, getOpenApi];
