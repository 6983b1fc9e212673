import type { AlertingService } from '../alerting/alerting-service.js';
import type { MutationAudit } from '../audit/mutation-audit.js';
import type { AutonomyService } from '../autonomy/autonomy-service.js';
import type { RelayLinkStatus } from '../../api/domains/relay-link.js';
import type { Operation } from '../core/operation.js';
import type { Lazy } from '../core/lazy.js';
import type { DeviceActions } from '../devices/device-actions.js';
import type { DecisionService } from '../decisions/decision-service.js';
import type { DeploymentService } from '../deployment/deployment-service.js';
import type { GovernanceService } from '../governance/governance-service.js';
import type { SecretMetadataService } from '../secret-metadata/secret-metadata-service.js';
import type { DeviceHub } from '../devices/device-hub.js';
import type { DevicePool } from '../devices/device-pool.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { ReadinessRuns } from '../devices/readiness-runs.js';
import type { HalSettings } from '../settings/hal.js';
import type { EntityService } from '../entities/entity-service.js';
import type { IncidentService } from '../incidents/incidents.js';
import type { MeshService } from '../mesh/mesh-service.js';
import type { ChaosService } from '../chaos/chaos-service.js';
import type { ConfigControlService } from '../config-control/config-control-service.js';
import type { DriftService } from '../drift/drift-service.js';
import type { EventBus } from '../events/event-bus.js';
import type { FleetService } from '../fleet/fleet-service.js';
import type { AlertService } from '../observability/alerts.js';
import type { OperatorService } from '../operator/operator-service.js';
import type { OtaService } from '../ota/ota-service.js';
import type { TargetService } from '../ota/target-service.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import type { PersistentRing } from '../observability/persistent-ring.js';
import type { TraceRecord } from '../observability/traces.js';
import type { ProjectContext } from '../project/project-context.js';
import type { ProgramService } from '../programs/program-service.js';
import type { RecoveryService } from '../recovery/recovery-service.js';
import type { ReportsService } from '../reports/reports-service.js';
import type { Credentials } from '../security/credentials.js';
import type { OidcService } from '../security/oidc/oidc-service.js';
import type { UserDirectory } from '../security/users.js';
import type { RateLimiter } from '../security/rate-limit.js';
import type { Settings } from '../settings/settings.js';
import type { TelemetryStore } from '../telemetry/telemetry-store.js';
import type { SreService } from '../sre/sre-service.js';
import type { AnalyticsService } from '../analytics/analytics-service.js';
import type { OtlpService } from '../observability/otlp/otlp-service.js';
import type { MetricsService } from '../observability/metrics/metrics-service.js';
import type { TwinService } from '../twins/twin-service.js';
import type { HriService } from '../hri/hri-service.js';
import type { PeopleService } from '../people/people-service.js';
import type { PluginService } from '../plugins/plugin-service.js';
import type { SpacesService } from '../spaces/spaces-service.js';

/**
 * The relay trunk's state for `GET /v1/relay/status`: null while no trunk runs (no `--relay`). The
 * composition root fills `source` when `listen()` starts the trunk (agent/transports/relay).
 */
export interface RelayLinkPort {
  source: (() => RelayLinkStatus) | null;
}

/** Where the running agent listens; filled in once the listeners are bound. */
export interface ListenAddresses {
  bind: string | null;
  grpcBind: string | null;
}

/**
 * Everything an operation handler may use. Built once by the composition root (`runtime/agent.ts`);
 * transports receive it but the services never see a transport.
 */
export interface Services {
  settings: Settings;
  startedAtMs: number;
  listen: ListenAddresses;
  relayLink: RelayLinkPort;
  project: ProjectContext;
  bus: EventBus;
  /** The one outbound HTTP client (TLS with the system trust store, bounded timeouts, http(s) only). */
  outbound: OutboundHttp;
  traces: PersistentRing<TraceRecord>;
  alerts: AlertService;
  telemetry: TelemetryStore;
  devices: DeviceRegistry;
  /** Provisioning, lifecycle workflows, health and (through the HAL) the devices themselves. */
  devicePool: DevicePool;
  /** The last `POST /v1/readiness/run`, persisted (`GET /v1/readiness/impact`). */
  readinessRuns: ReadinessRuns;
  hal: HalSettings;
  /** Live HAL attachments: what devices say arrives here; commands and firmware go out from here. */
  deviceHub: DeviceHub;
  /** What recovery and chaos experiments do to devices: reset, reconnect, failover, quarantine, link loss, noise. */
  deviceActions: DeviceActions;
  incidents: IncidentService;
  /** Alert channels and delivery (log, webhook, Slack, Teams, PagerDuty, e-mail), the Slack wizard and the PagerDuty webhook. */
  alerting: AlertingService;
  /** Fleet views (robots, device tree, device reports, failover chains), package trust and the policies in force. */
  fleet: FleetService;
  /** The entity registry: every source's entities as one graph, plus the operator's overlay. */
  entities: EntityService;
  /** Operator controls: mission lifecycle (via the entity overlay), mission approvals, quarantine, fleet agents. */
  operator: OperatorService;
  /** API keys (`credentials.keys`) and session tokens (`credentials.sessions`). */
  credentials: Credentials;
  users: UserDirectory;
  audit: MutationAudit;
  /** OIDC sign-in; what `/v1/auth/config` reports of it. */
  oidc: OidcService;
  rateLimiter: RateLimiter;
  /** Program analysis, simulation and replay (`/v1/programs/*`, `/v1/trust/program`). */
  programs: ProgramService;
  /** The recovery orchestrator: plans, executions and the evidence history (`/v1/recovery/*`). */
  recovery: Lazy<RecoveryService>;
  /** The entity mesh: registry + persisted mesh store (docs/mesh.md). */
  mesh: Lazy<MeshService>;
  /** Chaos experiments: the static experiment over the program and live fault injection (docs/mesh.md § Chaos). */
  chaos: Lazy<ChaosService>;
  /** Distributed decisions: decision policies of the program, escalations, the fleet decision mesh. */
  decisions: DecisionService;
  /** Resilient autonomy: reflexes and their traces, homeostasis, immunity, attention, fusion, memory, maintenance windows. */
  autonomy: AutonomyService;
  /** Configuration snapshots, approvals, publish and history (docs/operations.md). */
  configControl: Lazy<ConfigControlService>;
  /** Operational drift reports, scans and the drift scheduler (docs/operations.md § Drift). */
  drift: Lazy<DriftService>;
  /** Executive reporting: scorecard, digital thread, report exports and scheduled deliveries (`/v1/reports/*`). */
  reports: Lazy<ReportsService>;
  /** Deploy gate, deployment profiles and verification (docs/operations.md). */
  deployment: Lazy<DeploymentService>;
  /** Operational governance and compliance: policies, certifications, accountability, compliance exports (docs/governance.md). */
  governance: Lazy<GovernanceService>;
  /** Metadata (never values) of the program's declared secrets, with rotation records (docs/operations.md § Secrets). */
  secretMetadata: Lazy<SecretMetadataService>;
  /** OTA rollouts run by this agent: plans, executions, deploy state (docs/operations.md § Rollouts). */
  ota: Lazy<OtaService>;
  /** This agent as a deploy target: received bundles, rollback, status, readiness. */
  otaTarget: Lazy<TargetService>;
  /** Fleet health and SRE rollups over the recorded health history; the SLO fast-burn monitor. */
  sre: SreService;
  /** Program analytics over the loaded program and the recorded readiness samples (`/v1/analytics/*`). */
  analytics: Lazy<AnalyticsService>;
  /** OTLP/JSON documents of traces and gauges and their push to a collector. */
  otlp: Lazy<OtlpService>;
  /** The Prometheus endpoint's metrics (`GET /metrics`; prom-client loads on the first scrape). */
  metrics: MetricsService;
  /** Mission twins: snapshots per twin id and tenant, history rings, usage counters (docs/twins.md). */
  twins: Lazy<TwinService>;
  /** HRI sessions, persisted with their annotations; replay from the telemetry store (docs/twins.md). */
  hri: Lazy<HriService>;
  /** Humans, wearables, the human-health gate and human readiness (docs/people.md). */
  people: Lazy<PeopleService>;
  /** Installed plugins, their panels and bundles, install/enable/disable (docs/plugins.md). */
  plugins: Lazy<PluginService>;
  /** Smart spaces: facilities, zones, energy and emergency status, computed on request (docs/spaces.md). */
  spaces: Lazy<SpacesService>;
  /** The operation table, for the operations that describe the API itself (OpenAPI, version). */
  operations: readonly Operation[];
}
