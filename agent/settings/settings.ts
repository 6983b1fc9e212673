import path from 'node:path';
import { SettingsError } from './errors.js';
import { parseHalEnv, type HalOverrides } from './hal.js';

export { SettingsError } from './errors.js';
export { HAL_DEFAULTS, resolveHalSettings, type HalOverrides, type HalSettings } from './hal.js';

/**
 * Every `SVC_*` environment variable the agent and the CLI read, parsed once into one typed object
 * (docs/configuration.md lists them with their defaults; test/state/settings-single-source.test.ts
 * keeps every other file under agent/ off the environment). A value that cannot be parsed stops the
 * start with a message naming the variable: a typo in a limit must never silently fall back to a
 * default on a robot nobody is watching.
 */
export interface Settings {
  stateDir: string;
  tenantId: string;
  apiKey: string | null;
  apiKeysFile: string;
  /**
   * `SVC_API_KEY_PEPPER` when set, else null: the agent then uses the pepper it generated and keeps
   * in `<state dir>/secrets.json` (agent/security/secrets.ts; docs/security.md §2). Never derived
   * from a path or a constant.
   */
  pepper: string | null;
  /**
   * The pepper the specification's fallback would have used (the value of
   * `SVC_CONTROL_CENTER_STATE_DIR`, else `.svc-control-center`). Only ever used to verify, once, the
   * records of an older keys file that were hashed with it (docs/security.md §2, "Migration").
   */
  legacyPepper: string;
  /** `SVC_AUDIT_SIGNING_KEY` when set, else null (a generated key from secrets.json is used). */
  auditSigningKey: string | null;
  requireAuthReads: boolean;
  requireAuthAllReads: boolean;
  rateLimitPerMinute: number;
  maxBodyBytes: number;
  ws: {
    maxPendingFrames: number;
    heartbeatIntervalMs: number;
    streamSeconds: number;
  };
  rings: {
    traces: number;
    alerts: number;
    telemetry: number;
  };
  alertDedupSecs: { critical: number; warning: number; info: number };
  /** Telemetry history (JSONL) rotates when the current file passes this size. */
  telemetryHistoryMaxBytes: number;
  telemetryHistoryFiles: number;
  session: {
    /**
     * `SVC_SESSION_JWT_SECRET`, else null: a generated secret from secrets.json is used. Unlike the
     * earlier implementation it never falls back to the pepper (docs/security.md §3).
     */
    secret: string | null;
    issuer: string;
    ttlSecs: number;
    refreshWindowSecs: number;
  };
  oidc: {
    redirectUri: string | null;
    directoryJson: string | null;
  };
  /**
   * The audit chain's current file is sealed into a numbered segment at this size
   * (`SVC_AUDIT_SEGMENT_BYTES`, docs/configuration.md); 0 never seals.
   */
  auditSegmentBytes: number;
  /** Append-only JSONL copy of mutation audit records (`SVC_MUTATION_AUDIT_PATH`). */
  mutationAuditPath: string;
  /** The entity registry's overlay file (`SVC_ENTITY_OVERLAY_PATH`). */
  entityOverlayPath: string;
  /** `SVC_HAL_*` overrides of the project's `[hal]` table; `resolveHalSettings` merges them. */
  hal: HalOverrides;
  decisions: DecisionSettings;
  /** Autonomy store files and options (docs/autonomy.md § Configuration). */
  autonomy: AutonomySettings;
  /** `SVC_CONTROL_CENTER_URL`: the CLI runs operations over REST against this agent instead of in-process. */
  controlCenterUrl: string | null;
  /** Live mesh discovery (docs/mesh.md § Discovery). */
  mesh: MeshSettings;
  /** The dial-out trunk to a relay (docs/relay.md § The agent side); off while `url` is null. */
  relay: RelayLinkSettings;
  /** `SVC_DEPLOY_AGENTS`, else `<state dir>/deploy-agents.json`: the deploy agent registry OTA execute and drift read. */
  deployAgentsFile: string;
  /** `SVC_OUTBOUND_CA_FILE`: PEM roots trusted by outbound HTTPS besides the system store (agent/outbound). */
  outboundCaFile: string | null;
  /** Configuration snapshots and approvals (docs/operations.md § Configuration snapshots and approvals). */
  configControl: ConfigControlSettings;
  /** The drift scheduler (docs/operations.md § Drift). */
  drift: DriftSettings;
  /** `SVC_REPORT_SCHEDULE_INTERVAL_SECS` (default 0 = off): how often the report delivery scheduler looks for due schedules. */
  reportScheduleIntervalSecs: number;
  /** Alert delivery, admin integrations, Slack and the PagerDuty webhook (docs/operations.md § Alerting). */
  alerting: AlertingSettings;
  /**
   * Whether the process environment sets a variable (non-empty), by name: how `GET /v1/secrets` tells
   * that a program secret `from env("VAR")` is resolvable (docs/operations.md § Secrets). Only the
   * names of the environment are kept here, never a value.
   */
  envVariableSet: (name: string) => boolean;
  /** OTA rollouts (docs/operations.md § Rollouts, docs/configuration.md). */
  ota: OtaSettings;
  /** SLO, burn rate and the recorded health history (docs/observability.md § SRE summary). */
  sre: SreSettings;
  /** OTLP export of traces and metrics (docs/observability.md § OTLP). */
  otlp: OtlpSettings;
  /** People (docs/people.md). */
  people: PeopleSettings;
  /** Plugins (docs/plugins.md). */
  plugins: PluginSettings;
  governance: GovernanceSettings;
  /** Smart spaces (docs/spaces.md): bound of each gateway reachability probe (a TCP connect). */
  spaces: { gatewayProbeTimeoutMs: number };
}

export interface PeopleSettings {
  /** `SVC_HUMAN_HEALTH_ENABLED` (1/true): the environment half of the human-health gate. */
  humanHealthEnabled: boolean;
}

export interface PluginSettings {
  /**
   * Trusted plugin publishers' Ed25519 public keys: `SVC_PLUGIN_TRUSTED_KEYS` (`publisher=key,…`, key
   * as PEM-less base64 SPKI DER or raw 32 bytes) merged with `SVC_PLUGIN_TRUSTED_KEYS_FILE` (a JSON
   * object `{publisher: key}`; path relative to the working directory).
   */
  trustedKeys: string | null;
  trustedKeysFile: string | null;
  /** `SVC_PLUGIN_REGISTRY_INDEX`: the registry index (JSON) giving trust tiers and versions; null = none. */
  registryIndex: string | null;
  /** `SVC_PLUGIN_REQUIRE_SIGNATURE` (1/true): refuse unsigned plugins of every tier. */
  requireSignature: boolean;
}

export interface ConfigControlSettings {
  /** `SVC_CONFIG_SNAPSHOTS_DIR`, else `<state dir>/config-snapshots`. */
  snapshotsDir: string;
  /** `SVC_CONFIG_SNAPSHOT_ENCRYPT` (`1`/`true`/`yes`): encrypt when a request does not say. */
  encryptByDefault: boolean;
  /** `SVC_CONFIG_SNAPSHOT_KEY`: key material; the AES-256 key is its SHA-256. Null when unset or blank. */
  snapshotKey: string | null;
  /** `SVC_CONFIG_APPROVALS_REQUIRED` when a whole number > 0, else null (a quorum of 1). */
  approvalsRequired: number | null;
  /** `<state dir>/config-approvals.json`. */
  approvalsFile: string;
}

export interface DriftSettings {
  /** `SVC_DRIFT_SCAN_INTERVAL_SECS`: 0 (default) leaves the scheduler off. */
  scanIntervalSecs: number;
  /** `SVC_DRIFT_SCAN_BASELINE_ID`: the baseline of scans that name none; null = the newest snapshot. */
  scanBaselineId: string | null;
}

/** docs/configuration.md § Environment variables, alerting rows. */
export interface AlertingSettings {
  /** Initial channels (`SVC_ALERT_*`), in this order; none → the log channel. */
  webhookUrl: string | null;
  pagerdutyUrl: string | null;
  /** `SVC_ALERT_PAGERDUTY_ROUTING_KEY`, default `svc`. */
  pagerdutyRoutingKey: string;
  teamsUrl: string | null;
  emailTo: string | null;
  /** `SVC_ALERT_EMAIL_DRY_RUN`: log e-mails instead of sending them. */
  emailDryRun: boolean;
  smtp: { host: string | null; port: number; from: string; user: string | null; password: string | null };
  /** Attempts per channel and alert (`SVC_ALERT_DELIVERY_ATTEMPTS`, 1–10, default 3). */
  deliveryAttempts: number;
  /** Wait before the second attempt (`SVC_ALERT_DELIVERY_BACKOFF_MS`, default 500); ×4 for each further one. */
  deliveryBackoffMs: number;
  /** Entries kept in `<state dir>/alert-deliveries.json` (`SVC_ALERT_DELIVERY_LOG_SIZE`, default 2000). */
  deliveryLogSize: number;
  /** `SVC_PAGERDUTY_WEBHOOK_SECRET`: the inbound webhook's shared secret (`X-Svc-Webhook-Secret`). */
  pagerdutyWebhookSecret: string | null;
  /** `SVC_SLACK_OAUTH_REDIRECT_URI`: redirect URI fallback of the Slack wizard. */
  slackRedirectUri: string | null;
  /** `SVC_SLACK_API_URL`, default `https://slack.com/api`: where the OAuth code is exchanged. */
  slackApiUrl: string;
  /** `SVC_GRAFANA_URL`: shown in the integrations summary. */
  grafanaUrl: string | null;
}

/** OTA rollout settings (docs/operations.md § Rollouts). */
export interface OtaSettings {
  /** `SVC_OTA_SIGNING_KEY`: a PEM or JWK Ed25519 private key signs with Ed25519; any other value is an HMAC-SHA256 secret; null = unsigned bundles. */
  signingKey: string | null;
  /** `SVC_OTA_VERIFY_KEY`: what a deploy target verifies bundles with (PEM/JWK Ed25519 public key, or the HMAC secret); falls back to the signing key. */
  verifyKey: string | null;
  /** `SVC_OTA_REQUIRE_CERTIFY` ∈ 1/true/yes. */
  requireCertify: boolean;
  /** `SVC_PRODUCTION_POLICY` = `production` (any case): forces the strict certification gate. */
  productionPolicy: boolean;
  /** `SVC_OTA_ROLLBACK_ON_READINESS_FAIL` ∈ 1/true/yes. */
  rollbackOnReadinessFail: boolean;
}

/** docs/configuration.md § Observability. */
export interface SreSettings {
  /** `SVC_SRE_SLO_PERCENT` when in (0, 100], else 99. */
  sloPercent: number;
  /** `SVC_SRE_BURN_RATE_FAST` when > 0, else 2. */
  burnRateFast: number;
  /** `SVC_SRE_BURN_WINDOW_HOURS` when > 0, else 1. */
  burnWindowHours: number;
  /** `SVC_SRE_BURN_SCAN_INTERVAL_SECS` (0 = the fast-burn monitor is off). */
  burnScanIntervalSecs: number;
  /** `SVC_SRE_SAMPLE_INTERVAL_SECS` (default 60; 0 = no health samples are recorded). */
  sampleIntervalSecs: number;
  /** `SVC_SRE_SAMPLE_RING_SIZE` (default 10 080: a week of one-minute samples). */
  sampleRingSize: number;
  /** `SVC_SRE_SLO_WINDOW_HOURS` when > 0, else 168: the window of the time-based availability. */
  sloWindowHours: number;
}

/** Raw OTLP variables; agent/observability/otlp-endpoints.ts resolves them (docs/observability.md § Endpoints). */
export interface OtlpSettings {
  tracesEndpoint: string | null;
  jaegerEndpoint: string | null;
  collectorUrl: string | null;
  endpoint: string | null;
  metricsEndpoint: string | null;
  token: string | null;
  traceAutoPush: boolean;
}

/** Keys of the governance area (docs/governance.md § Keys). Key values are inline PEM/JWK or a PEM file path. */
export interface GovernanceSettings {
  /** `SVC_GOVERNANCE_SIGNING_KEY`: Ed25519 private key signing policy assignments; null = one generated in the state directory. */
  signingKey: string | null;
  /** `SVC_COMPLIANCE_CATALOG_PUBKEY`: the compliance catalogue publisher's Ed25519 public key; null = nothing verifies. */
  catalogPubkey: string | null;
  /** `SVC_COMPLIANCE_CATALOG_DIR`: directory holding `catalog.json` and the template files; null = the built-in (unsigned) templates. */
  catalogDir: string | null;
}

/** `svc serve --relay URL --enroll-token TOKEN` or their variables (docs/configuration.md § Relay). */
export interface RelayLinkSettings {
  /** `SVC_RELAY_URL`: the relay's MQTT URL (`mqtt://host:1883`, `mqtts://…`, `ws(s)://relay/mqtt`); null = no trunk. */
  url: string | null;
  /** `SVC_RELAY_ENROLL_TOKEN`: the enrollment token the relay issued (EdDSA JWT; the MQTT password). */
  enrollToken: string | null;
  /** `SVC_RELAY_OUTBOX_FRAMES` (default 10 000): event frames kept on disk while the relay is unreachable. */
  outboxFrames: number;
}

/** `POST /v1/mesh/discover` live sources (docs/configuration.md § Mesh). */
export interface MeshSettings {
  /** `SVC_LIVE_MQTT` ∈ 1/true: the `mqtt` source probes the broker. */
  liveMqtt: boolean;
  /** `SVC_MQTT_BROKER` as `host:port` (default `127.0.0.1:1883`). */
  mqttBroker: string;
  /** `SVC_MESH_DISCOVERY_TIMEOUT_MS` (default 2000): how long a live probe may take. */
  discoveryTimeoutMs: number;
}

export interface AutonomySettings {
  /** `SVC_AUTONOMY_TRACE_FILE`, default `<state dir>/autonomy-reflex-traces.json`. */
  traceFile: string;
  /** `SVC_EPISODIC_STORE_FILE`, default `<state dir>/autonomy-episodic-memory.json`. */
  episodicFile: string;
  /** `SVC_MAINTENANCE_WINDOW_FILE`, default `<state dir>/maintenance-windows.json`. */
  maintenanceFile: string;
  /** `SVC_LIVE_FUSION_SENSORS` (1/true): fusion also compares `sensor` telemetry (program sensors) by sensor type. */
  liveFusionSensors: boolean;
}

/** How program runs trace and sign their decisions (docs/configuration.md § Programs). */
export interface DecisionSettings {
  /** `SVC_DECISION_TRACE` ∈ 1/true/yes/on (case-insensitive): trace decisions without being asked per run. */
  trace: boolean;
  /** `SVC_DECISION_POLICY_SIGNING_KEY`, or null for unsigned decision envelopes. */
  policySigningKey: string | null;
  /** `SVC_DECISION_ESCALATION_STORE`: the escalation store file; default `<state dir>/decision-escalations.json`. */
  escalationStore: string | null;
  /** `SVC_DECISION_POLICY_CACHE`: the signed offline-policy cache; default `<state dir>/decision-policy-cache.json`. */
  policyCache: string | null;
  /** `SVC_DECISION_POLICY_TRUST_KEY`: HMAC key that verifies signed decision trees and offline policies. */
  policyTrustKey: string | null;
  /** `SVC_DECISION_REQUIRE_SIGNED_TREES` ∈ 1/true/yes/on: decision simulation skips trees it cannot verify. */
  requireSignedTrees: boolean;
  /** `SVC_SIM_TIME_MS`: "now" for escalation and cache timestamps and offline-policy expiry; null = the clock. */
  simTimeMs: number | null;
  /** `SVC_FLEET_MESH_URL`: the fleet decision mesh the decision-mesh routes proxy to; null = this agent's own mesh state. */
  fleetMeshUrl: string | null;
  /** `SVC_FLEET_MESH_TOKEN`: bearer token sent to the fleet decision mesh. */
  fleetMeshToken: string | null;
}

/** Decision settings of a run nobody configured: no tracing unless asked, unsigned. */
export const NO_DECISION_SETTINGS: DecisionSettings = {
  trace: false,
  policySigningKey: null,
  escalationStore: null,
  policyCache: null,
  policyTrustKey: null,
  requireSignedTrees: false,
  simTimeMs: null,
  fleetMeshUrl: null,
  fleetMeshToken: null,
};

const ON_WORDS = ['1', 'true', 'yes', 'on'];

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v;
}

function flag(env: Env, name: string): boolean {
  const v = text(env, name);
  return v !== null && ['1', 'true'].includes(v.trim().toLowerCase());
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = text(env, name);
  if (v === null) return fallback;
  if (!/^\s*\d+\s*$/.test(v)) throw new SettingsError(name, `expected a whole number, got '${v}'`);
  const n = Number(v);
  if (n < min || n > max) throw new SettingsError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A positive number, or `fallback` when unset, not a number or outside (0, max] (lenient, as the reference's SRE variables). */
function positive(env: Env, name: string, fallback: number, max = Number.MAX_VALUE): number {
  const v = text(env, name);
  const n = v === null ? NaN : Number(v.trim());
  return Number.isFinite(n) && n > 0 && n <= max ? n : fallback;
}

export const DEFAULT_STATE_DIR = '.svc-control-center';

/** A state file: the variable's path (relative to the working directory) when set, else `name` in the state directory. */
function stateFile(env: Env, cwd: string, stateDir: string, variable: string, name: string): string {
  const v = text(env, variable);
  return v ? path.resolve(cwd, v) : path.join(stateDir, name);
}
export const DEFAULT_AUDIT_SEGMENT_BYTES = 8 * 1024 * 1024;

function auditSegmentBytes(env: Env): number {
  const n = integer(env, 'SVC_AUDIT_SEGMENT_BYTES', DEFAULT_AUDIT_SEGMENT_BYTES, 0, 1024 * 1024 * 1024);
  if (n !== 0 && n < 4096) throw new SettingsError('SVC_AUDIT_SEGMENT_BYTES', `must be 0 (never seal) or at least 4096, got ${n}`);
  return n;
}
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** The only reader of the process environment: callers pass `env` in tests, nothing in production. */
export function loadSettings(env: Env = process.env, cwd: string = process.cwd()): Settings {
  const stateDirValue = text(env, 'SVC_CONTROL_CENTER_STATE_DIR');
  const stateDir = path.resolve(cwd, stateDirValue ?? DEFAULT_STATE_DIR);
  const keysFile = text(env, 'SVC_API_KEYS_FILE');
  const auditPath = text(env, 'SVC_MUTATION_AUDIT_PATH');
  const overlayPath = text(env, 'SVC_ENTITY_OVERLAY_PATH');
  const directory = text(env, 'SVC_OIDC_DIRECTORY_JSON');
  return {
    stateDir,
    tenantId: text(env, 'SVC_TENANT_ID')?.trim() ?? 'default',
    apiKey: text(env, 'SVC_API_KEY'),
    apiKeysFile: keysFile ? path.resolve(cwd, keysFile) : path.join(stateDir, 'api-keys.json'),
    pepper: text(env, 'SVC_API_KEY_PEPPER'),
    // The specification's fallback (Authentication rule 4), kept for the keys-file migration only.
    legacyPepper: stateDirValue ?? DEFAULT_STATE_DIR,
    auditSigningKey: text(env, 'SVC_AUDIT_SIGNING_KEY'),
    requireAuthReads: flag(env, 'SVC_API_REQUIRE_AUTH_READS'),
    requireAuthAllReads: flag(env, 'SVC_API_REQUIRE_AUTH_ALL_READS'),
    rateLimitPerMinute: integer(env, 'SVC_API_RATE_LIMIT_PER_MINUTE', 0, 0),
    maxBodyBytes: integer(env, 'SVC_API_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1, 64 * 1024 * 1024),
    ws: {
      maxPendingFrames: integer(env, 'SVC_WS_MAX_PENDING_FRAMES', 64, 1, 1_000_000),
      heartbeatIntervalMs: integer(env, 'SVC_WS_HEARTBEAT_INTERVAL_MS', 15_000, 10),
      streamSeconds: integer(env, 'SVC_WS_STREAM_SECONDS', 0, 0),
    },
    rings: {
      traces: integer(env, 'SVC_TRACE_RING_SIZE', 1000, 1, 1_000_000),
      alerts: integer(env, 'SVC_ALERT_RING_SIZE', 500, 1, 1_000_000),
      telemetry: integer(env, 'SVC_TELEMETRY_RING_SIZE', 10_000, 1, 10_000_000),
    },
    alertDedupSecs: {
      critical: integer(env, 'SVC_ALERT_DEDUP_WINDOW_CRITICAL_SECS', 0, 0),
      warning: integer(env, 'SVC_ALERT_DEDUP_WINDOW_WARNING_SECS', 120, 0),
      info: integer(env, 'SVC_ALERT_DEDUP_WINDOW_INFO_SECS', 300, 0),
    },
    telemetryHistoryMaxBytes: integer(env, 'SVC_TELEMETRY_HISTORY_MAX_BYTES', 16 * 1024 * 1024, 1024),
    telemetryHistoryFiles: integer(env, 'SVC_TELEMETRY_HISTORY_FILES', 4, 1, 1000),
    session: {
      secret: text(env, 'SVC_SESSION_JWT_SECRET'),
      issuer: text(env, 'SVC_SESSION_JWT_ISSUER')?.trim() ?? 'svc-control-center',
      ttlSecs: integer(env, 'SVC_SESSION_TTL_SECS', 900, 1, 31 * 86400),
      refreshWindowSecs: integer(env, 'SVC_SESSION_REFRESH_WINDOW_SECS', 86400, 0, 365 * 86400),
    },
    oidc: {
      redirectUri: text(env, 'SVC_OIDC_REDIRECT_URI'),
      directoryJson: directory ? path.resolve(cwd, directory) : null,
    },
    // 0 (never seal) or at least 4 KiB: a smaller segment would hold a record or two.
    auditSegmentBytes: auditSegmentBytes(env),
    mutationAuditPath: auditPath ? path.resolve(cwd, auditPath) : path.join(stateDir, 'control-center-mutations.jsonl'),
    entityOverlayPath: overlayPath ? path.resolve(cwd, overlayPath) : path.join(stateDir, 'entity-overlays.json'),
    hal: parseHalEnv(env),
    autonomy: {
      traceFile: stateFile(env, cwd, stateDir, 'SVC_AUTONOMY_TRACE_FILE', 'autonomy-reflex-traces.json'),
      episodicFile: stateFile(env, cwd, stateDir, 'SVC_EPISODIC_STORE_FILE', 'autonomy-episodic-memory.json'),
      maintenanceFile: stateFile(env, cwd, stateDir, 'SVC_MAINTENANCE_WINDOW_FILE', 'maintenance-windows.json'),
      liveFusionSensors: flag(env, 'SVC_LIVE_FUSION_SENSORS'),
    },
    decisions: {
      trace: ON_WORDS.includes((env['SVC_DECISION_TRACE'] ?? '').trim().toLowerCase()),
      policySigningKey: env['SVC_DECISION_POLICY_SIGNING_KEY'] || null,
      escalationStore: text(env, 'SVC_DECISION_ESCALATION_STORE') === null ? null : path.resolve(cwd, text(env, 'SVC_DECISION_ESCALATION_STORE')!),
      policyCache: text(env, 'SVC_DECISION_POLICY_CACHE') === null ? null : path.resolve(cwd, text(env, 'SVC_DECISION_POLICY_CACHE')!),
      policyTrustKey: text(env, 'SVC_DECISION_POLICY_TRUST_KEY'),
      requireSignedTrees: ON_WORDS.includes((env['SVC_DECISION_REQUIRE_SIGNED_TREES'] ?? '').trim().toLowerCase()),
      simTimeMs: text(env, 'SVC_SIM_TIME_MS') === null ? null : integer(env, 'SVC_SIM_TIME_MS', 0, 0),
      fleetMeshUrl: text(env, 'SVC_FLEET_MESH_URL')?.trim().replace(/\/+$/, '') ?? null,
      fleetMeshToken: text(env, 'SVC_FLEET_MESH_TOKEN'),
    },
    controlCenterUrl: text(env, 'SVC_CONTROL_CENTER_URL'),
    mesh: {
      liveMqtt: flag(env, 'SVC_LIVE_MQTT'),
      mqttBroker: text(env, 'SVC_MQTT_BROKER')?.trim() ?? '127.0.0.1:1883',
      discoveryTimeoutMs: integer(env, 'SVC_MESH_DISCOVERY_TIMEOUT_MS', 2000, 1, 600_000),
    },
    relay: {
      url: text(env, 'SVC_RELAY_URL')?.trim() ?? null,
      enrollToken: text(env, 'SVC_RELAY_ENROLL_TOKEN')?.trim() ?? null,
      outboxFrames: integer(env, 'SVC_RELAY_OUTBOX_FRAMES', 10_000, 1, 10_000_000),
    },
    deployAgentsFile: stateFile(env, cwd, stateDir, 'SVC_DEPLOY_AGENTS', 'deploy-agents.json'),
    outboundCaFile: (() => {
      const v = text(env, 'SVC_OUTBOUND_CA_FILE');
      return v ? path.resolve(cwd, v.trim()) : null;
    })(),
    configControl: {
      snapshotsDir: stateFile(env, cwd, stateDir, 'SVC_CONFIG_SNAPSHOTS_DIR', 'config-snapshots'),
      encryptByDefault: ['1', 'true', 'yes'].includes((env['SVC_CONFIG_SNAPSHOT_ENCRYPT'] ?? '').trim().toLowerCase()),
      snapshotKey: text(env, 'SVC_CONFIG_SNAPSHOT_KEY'),
      // Lenient on purpose (reference rule): a value that is not a whole number > 0 means the default quorum.
      approvalsRequired: (() => {
        const v = text(env, 'SVC_CONFIG_APPROVALS_REQUIRED')?.trim() ?? '';
        return /^\d+$/.test(v) && Number(v) > 0 ? Math.min(Number(v), 100) : null;
      })(),
      approvalsFile: path.join(stateDir, 'config-approvals.json'),
    },
    drift: {
      scanIntervalSecs: integer(env, 'SVC_DRIFT_SCAN_INTERVAL_SECS', 0, 0, 366 * 86400),
      scanBaselineId: text(env, 'SVC_DRIFT_SCAN_BASELINE_ID')?.trim() ?? null,
    },
    reportScheduleIntervalSecs: integer(env, 'SVC_REPORT_SCHEDULE_INTERVAL_SECS', 0, 0, 366 * 86400),
    alerting: {
      webhookUrl: text(env, 'SVC_ALERT_WEBHOOK_URL')?.trim() ?? null,
      pagerdutyUrl: text(env, 'SVC_ALERT_PAGERDUTY_URL')?.trim() ?? null,
      pagerdutyRoutingKey: text(env, 'SVC_ALERT_PAGERDUTY_ROUTING_KEY')?.trim() ?? 'svc',
      teamsUrl: text(env, 'SVC_ALERT_TEAMS_URL')?.trim() ?? null,
      emailTo: text(env, 'SVC_ALERT_EMAIL_TO')?.trim() ?? null,
      emailDryRun: ON_WORDS.includes((env['SVC_ALERT_EMAIL_DRY_RUN'] ?? '').trim().toLowerCase()),
      smtp: {
        host: text(env, 'SVC_SMTP_HOST')?.trim() ?? null,
        port: integer(env, 'SVC_SMTP_PORT', 587, 1, 65535),
        from: text(env, 'SVC_SMTP_FROM')?.trim() ?? 'svc-control-center@localhost',
        user: text(env, 'SVC_SMTP_USER')?.trim() ?? null,
        password: text(env, 'SVC_SMTP_PASSWORD'),
      },
      deliveryAttempts: integer(env, 'SVC_ALERT_DELIVERY_ATTEMPTS', 3, 1, 10),
      deliveryBackoffMs: integer(env, 'SVC_ALERT_DELIVERY_BACKOFF_MS', 500, 0, 60_000),
      deliveryLogSize: integer(env, 'SVC_ALERT_DELIVERY_LOG_SIZE', 2000, 10, 1_000_000),
      pagerdutyWebhookSecret: text(env, 'SVC_PAGERDUTY_WEBHOOK_SECRET')?.trim() ?? null,
      slackRedirectUri: text(env, 'SVC_SLACK_OAUTH_REDIRECT_URI')?.trim() ?? null,
      slackApiUrl: text(env, 'SVC_SLACK_API_URL')?.trim().replace(/\/+$/, '') ?? 'https://slack.com/api',
      grafanaUrl: text(env, 'SVC_GRAFANA_URL')?.trim() ?? null,
    },
    envVariableSet: (() => {
      const names = new Set(Object.keys(env).filter((k) => (env[k] ?? '') !== ''));
      return (name: string) => names.has(name);
    })(),
    ota: {
      signingKey: text(env, 'SVC_OTA_SIGNING_KEY'),
      verifyKey: text(env, 'SVC_OTA_VERIFY_KEY'),
      requireCertify: ['1', 'true', 'yes'].includes((env['SVC_OTA_REQUIRE_CERTIFY'] ?? '').trim().toLowerCase()),
      productionPolicy: (env['SVC_PRODUCTION_POLICY'] ?? '').trim().toLowerCase() === 'production',
      rollbackOnReadinessFail: ['1', 'true', 'yes'].includes((env['SVC_OTA_ROLLBACK_ON_READINESS_FAIL'] ?? '').trim().toLowerCase()),
    },
    sre: {
      sloPercent: positive(env, 'SVC_SRE_SLO_PERCENT', 99, 100),
      burnRateFast: positive(env, 'SVC_SRE_BURN_RATE_FAST', 2),
      burnWindowHours: positive(env, 'SVC_SRE_BURN_WINDOW_HOURS', 1),
      burnScanIntervalSecs: integer(env, 'SVC_SRE_BURN_SCAN_INTERVAL_SECS', 0, 0, 86_400 * 7),
      sampleIntervalSecs: integer(env, 'SVC_SRE_SAMPLE_INTERVAL_SECS', 60, 0, 86_400),
      sampleRingSize: integer(env, 'SVC_SRE_SAMPLE_RING_SIZE', 10_080, 2, 1_000_000),
      sloWindowHours: positive(env, 'SVC_SRE_SLO_WINDOW_HOURS', 168),
    },
    governance: {
      signingKey: text(env, 'SVC_GOVERNANCE_SIGNING_KEY'),
      catalogPubkey: text(env, 'SVC_COMPLIANCE_CATALOG_PUBKEY'),
      catalogDir: (() => {
        const v = text(env, 'SVC_COMPLIANCE_CATALOG_DIR');
        return v ? path.resolve(cwd, v.trim()) : null;
      })(),
    },
    spaces: {
      gatewayProbeTimeoutMs: integer(env, 'SVC_GATEWAY_PROBE_TIMEOUT_MS', 2000, 50, 30_000),
    },
    otlp: {
      tracesEndpoint: text(env, 'SVC_OTLP_TRACES_ENDPOINT')?.trim() ?? null,
      jaegerEndpoint: text(env, 'SVC_JAEGER_OTLP_ENDPOINT')?.trim() ?? null,
      collectorUrl: text(env, 'SVC_OTEL_COLLECTOR_URL')?.trim() ?? null,
      endpoint: text(env, 'SVC_OTLP_ENDPOINT')?.trim() ?? null,
      metricsEndpoint: text(env, 'SVC_OTLP_METRICS_ENDPOINT')?.trim() ?? null,
      token: text(env, 'SVC_OTLP_TOKEN')?.trim() ?? null,
      traceAutoPush: flag(env, 'SVC_OTLP_TRACE_AUTO_PUSH'),
    },
    people: { humanHealthEnabled: flag(env, 'SVC_HUMAN_HEALTH_ENABLED') },
    plugins: {
      trustedKeys: text(env, 'SVC_PLUGIN_TRUSTED_KEYS')?.trim() ?? null,
      trustedKeysFile: ((v) => (v ? path.resolve(cwd, v.trim()) : null))(text(env, 'SVC_PLUGIN_TRUSTED_KEYS_FILE')),
      registryIndex: ((v) => (v ? path.resolve(cwd, v.trim()) : null))(text(env, 'SVC_PLUGIN_REGISTRY_INDEX')),
      requireSignature: flag(env, 'SVC_PLUGIN_REQUIRE_SIGNATURE'),
    },
  };
}
