import * as z from 'zod';
import { defineOperation, type Operation } from '../core/operation.js';
import { rpcCount } from '../api/rpc-contract.js';
import { STREAM_PATHS } from '../api/stream-paths.js';
import type { Services } from '../runtime/services.js';
import { projectRelative } from '../project/project-context.js';
import { DEVICE_LIFECYCLE_STATES, type DeviceLifecycleState } from '../devices/lifecycle.js';
import {
  API_VERSION,
  CONTROL_CENTER_UI_VERSION,
  PROTO_FILE,
  PROTO_PACKAGE,
  PROTO_SEMVER,
  SERVICE_NAME,
  SUPPORTED_API_VERSIONS,
  SVC_VERSION,
} from '../runtime/versions.js';

export function healthBody(services: Services) {
  return {
    ok: true,
    version: API_VERSION,
    service: SERVICE_NAME,
    status: 'ok',
    uptime_ms: Date.now() - services.startedAtMs,
    grpc: { proto_semver: PROTO_SEMVER, rpc_count: rpcCount(services.operations) },
  };
}

function fleetAgentCount(s: Services): number {
  return s.project.config?.robots.length ?? 0;
}

/** critical / degraded / healthy from the pool's failed and health-degraded counts (docs/api.md § Meta endpoints). */
function overallStatus(s: Services): 'critical' | 'degraded' | 'healthy' {
  const pool = s.devices.summary();
  if (pool.failed > 0) return 'critical';
  if (pool.degraded > 0) return 'degraded';
  return 'healthy';
}

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

export const metaOperations: Operation[] = [
  defineOperation({
    id: 'getHealth',
    group: 'meta',
    summary: 'Liveness and protocol versions (also served at /health and /healthz, any method)',
    method: 'GET',
    path: '/v1/health',
    access: { kind: 'public' },
    cli: ['health'],
    response: z.lazy(() => z.object({
      ok: z.literal(true),
      version: z.literal('v1'),
      service: z.string(),
      status: z.string(),
      uptime_ms: z.number(),
      grpc: z.object({ proto_semver: z.string(), rpc_count: z.number() }),
    })),
    handler: (_input, ctx) => healthBody(ctx.services),
  }),
  defineOperation({
    id: 'getVersion',
    group: 'meta',
    summary: 'Platform, UI, REST and gRPC versions',
    method: 'GET',
    path: '/v1/version',
    access: { kind: 'public' },
    cli: ['version'],
    handler: (_input, ctx) => ({
      version: API_VERSION,
      control_center_ui_version: CONTROL_CENTER_UI_VERSION,
      svc_version: SVC_VERSION,
      api_version: API_VERSION,
      supported_versions: [...SUPPORTED_API_VERSIONS],
      grpc: {
        package: PROTO_PACKAGE,
        proto_semver: PROTO_SEMVER,
        proto_file: PROTO_FILE,
        rpc_count: rpcCount(ctx.services.operations),
        reflection_enabled: ctx.services.listen.grpcBind !== null,
        api_version_header: 'x-svc-api-version',
        supported_api_versions: [...SUPPORTED_API_VERSIONS],
        compatibility:
          'Additive RPCs and optional fields bump the patch version; breaking changes ship as a new package (e.g. svc.v2).',
        discovery: `Download ${PROTO_FILE} from the repository or use gRPC server reflection on the gRPC bind address.`,
      },
      rate_limit_per_minute: ctx.services.settings.rateLimitPerMinute,
      policy:
        'Breaking REST changes ship under a new /v2/ path prefix. gRPC follows grpc.proto_semver. Send X-Svc-Api-Version: v1 or omit the header.',
    }),
  }),
  defineOperation({
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
    handler: (_input, ctx) => {
      const s = ctx.services;
      const cfg = s.project.config;
      return {
        ok: true,
        version: API_VERSION,
        control_center_ui_version: CONTROL_CENTER_UI_VERSION,
        svc_version: SVC_VERSION,
        service: SERVICE_NAME,
        tenant_id: s.settings.tenantId,
        bind: s.listen.bind,
        grpc_bind: s.listen.grpcBind,
        // A public route: the files are named relative to the project root, never by where the
        // project sits on the robot's disk (docs/security.md §5, "Program files").
        config_path: projectRelative(s.project, s.project.configPath),
        program_path: projectRelative(s.project, s.project.programPath),
        config_loaded: cfg !== null,
        project_name: cfg?.projectName ?? null,
        fleet_id: cfg?.fleetId ?? null,
        overall_status: overallStatus(s),
        api_keys_loaded: s.credentials.keysLoaded,
        device_pool: s.devices.summary(),
        fleet_agent_count: fleetAgentCount(s),
        alert_count: s.alerts.count,
        uptime_ms: Date.now() - s.startedAtMs,
      };
    },
  }),
  defineOperation({
    id: 'getTenant',
    group: 'meta',
    summary: 'Tenant of this instance',
    method: 'GET',
    path: '/v1/tenant',
    access: { kind: 'public' },
    rpc: { name: 'GetTenant', request: 'Empty' },
    cli: ['tenant'],
    handler: (_input, ctx) => ({
      version: API_VERSION,
      tenant_id: ctx.services.settings.tenantId,
      isolation: 'api_keys must match SVC_TENANT_ID on this Control Center instance',
    }),
  }),
  defineOperation({
    id: 'getDashboard',
    group: 'meta',
    summary: 'Device pool, fleet and alert counters',
    method: 'GET',
    path: '/v1/dashboard',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetDashboard', request: 'Empty' },
    cli: ['dashboard'],
    handler: (_input, ctx) => ({
      version: API_VERSION,
      device_pool: ctx.services.devices.summary(),
      fleet_agent_count: fleetAgentCount(ctx.services),
      alert_count: ctx.services.alerts.count,
      // Kept for compatibility with the reference: despite the name, the number of loaded API keys.
      rbac_roles: ctx.services.credentials.keysLoaded,
    }),
  }),
  defineOperation({
    id: 'getOpenApi',
    group: 'meta',
    summary: 'This OpenAPI 3.1 document (served for any method)',
    method: 'GET',
    path: '/v1/openapi.json',
    access: { kind: 'public' },
    rpc: { name: 'GetOpenApi', request: 'Empty' },
    cli: ['openapi'],
    // The generator (and zod's JSON Schema conversion) loads on the first request for the document.
    handler: async (_input, ctx) => (await import('../api/openapi.js')).buildOpenApiDocument(ctx.services.operations, STREAM_PATHS),
  }),
  defineOperation({
    id: 'listAlerts',
    group: 'alerts',
    summary: 'Alerts held in the alert ring, oldest first',
    method: 'GET',
    path: '/v1/alerts',
    access: { kind: 'read' },
    rpc: { name: 'ListAlerts', request: 'Empty' },
    cli: ['alerts', 'list'],
    handler: (_input, ctx) => ({ version: API_VERSION, alerts: ctx.services.alerts.list() }),
  }),
  defineOperation<{ message?: string | undefined }>({
    id: 'testAlert',
    group: 'alerts',
    summary: 'Raise an informational test alert through the alert pipeline',
    method: 'POST',
    path: '/v1/alerts/test',
    access: { kind: 'action', action: 'Operate' },
    rpc: { name: 'TestAlert', request: 'Empty' },
    cli: ['alerts', 'test'],
    body: z.lazy(() => z.object({ message: z.string().min(1).max(1000).optional() })),
    handler: ({ body }, ctx) => {
      const who = ctx.principal?.key_id ?? 'anonymous';
      const alert = ctx.services.alerts.raise(
        { alert_type: 'custom', severity: 'info', source: 'control-center', message: body.message ?? `test alert requested by ${who}` },
        Date.now(),
        { dedup: false },
      );
      return { ok: true, alert };
    },
  }),
];
