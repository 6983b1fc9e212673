import { getDashboard, getHealth, getInstance, getOpenApi, getTenant, getVersion } from '../../api/domains/meta.js';
import { getRelayLinkStatus, type RelayLinkStatus } from '../../api/domains/relay-link.js';
import { rpcCount } from '../../api/rpc-contract.js';
import { STREAM_PATHS } from '../../api/stream-paths.js';
import {
  API_VERSION,
  PROTO_FILE,
  PROTO_PACKAGE,
  PROTO_SEMVER,
  SERVICE_NAME,
  SUPPORTED_API_VERSIONS,
} from '../../api/versions.js';
import { handlersFor } from '../core/handlers.js';
import { FleetAgentRegistry } from '../operator/fleet-agents.js';
import { projectRelative } from '../project/project-context.js';
import type { Services } from '../runtime/services.js';
import { CONTROL_CENTER_UI_VERSION, SVC_VERSION } from '../runtime/versions.js';

const on = handlersFor(['settings', 'startedAtMs', 'listen', 'project', 'devices', 'alerts', 'credentials', 'operations', 'relayLink']);
type MetaServices = Pick<Services, 'startedAtMs' | 'operations'>;

export function healthBody(services: MetaServices) {
  return {
    ok: true,
    version: API_VERSION,
    service: SERVICE_NAME,
    status: 'ok',
    uptime_ms: Date.now() - services.startedAtMs,
    grpc: { proto_semver: PROTO_SEMVER, rpc_count: rpcCount(services.operations) },
  };
}

/**
 * The fleet agents this agent knows: the entries of the registry `GET /v1/fleet/agents` lists
 * (`<state dir>/fleet-agents.json`, operator/fleet-agents.ts), not the configured robots — a robot
 * without a registered agent endpoint has no agent (docs/api.md § Meta endpoints). The file is
 * written by another process, so it is read on every call, as the deploy gate does.
 */
function fleetAgentCount(s: Pick<Services, 'settings'>): number {
  return new FleetAgentRegistry(s.settings.stateDir).count();
}

/** critical / degraded / healthy from the pool's failed and health-degraded counts (docs/api.md § Meta endpoints). */
function overallStatus(s: Pick<Services, 'devices'>): 'critical' | 'degraded' | 'healthy' {
  const pool = s.devices.summary();
  if (pool.failed > 0) return 'critical';
  if (pool.degraded > 0) return 'degraded';
  return 'healthy';
}

export const metaHandlers = [
  on(getHealth, (_input, ctx) => healthBody(ctx.services)),
  on(getVersion, (_input, ctx) => ({
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
  })),
  on(getInstance, (_input, ctx) => {
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
  }),
  on(getRelayLinkStatus, (_input, ctx): RelayLinkStatus => ctx.services.relayLink.source?.() ?? relayNotConfigured(ctx.services.settings.tenantId)),
  on(getTenant, (_input, ctx) => ({
    version: API_VERSION,
    tenant_id: ctx.services.settings.tenantId,
    isolation: 'api_keys must match SVC_TENANT_ID on this Control Center instance',
  })),
  on(getDashboard, (_input, ctx) => ({
    version: API_VERSION,
    device_pool: ctx.services.devices.summary(),
    fleet_agent_count: fleetAgentCount(ctx.services),
    alert_count: ctx.services.alerts.count,
    // Kept for compatibility with the reference: despite the name, the number of loaded API keys.
    rbac_roles: ctx.services.credentials.keysLoaded,
  })),
  // The generator (and zod's JSON Schema conversion) loads on the first request for the document.
  on(getOpenApi, async (_input, ctx) =>
    (await import('../../api/openapi.js')).buildOpenApiDocument(ctx.services.operations, STREAM_PATHS, SVC_VERSION),
  ),
];

/** `GET /v1/relay/status` of an agent started without `--relay`. */
function relayNotConfigured(tenantId: string): RelayLinkStatus {
  return {
    configured: false,
    connected: false,
    state: 'idle',
    relay_host: null,
    transport: null,
    agent_id: null,
    tenant_id: tenantId,
    enrollment_expires_ms: null,
    connected_since_ms: null,
    last_connect_error: null,
    last_connect_error_ms: null,
    reconnect_attempts: 0,
    outbox: { depth: 0, capacity: 0, dropped_total: 0, dropped_pending: 0, next_seq: 0 },
    requests: { answered: 0, expired: 0, rejected: 0 },
    streams: { open: 0, opened: 0, refused: 0 },
  };
}
