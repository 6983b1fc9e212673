/**
 * The event catalogue (docs/events.md § Platform events, docs/architecture.md rule 4): the one place
 * that names every platform event and says who hears it. `audited` events are appended to the audit
 * chain by its bus subscription (`audit/mutation-audit.ts`); `streamed` events reach stream clients
 * as `kind: platform` telemetry (WebSocket, `StreamTelemetry`) and through gRPC `StreamEvents`.
 * Every other listener (incidents, …) subscribes to the bus for the names it wants.
 */
export interface EventTraits {
  /** Recorded in the hash-chained audit log (docs/security.md §10). */
  readonly audited: boolean;
  /** Sent to stream clients: telemetry store → WebSocket/StreamTelemetry, and gRPC StreamEvents. */
  readonly streamed: boolean;
  readonly description: string;
}

const fact = (description: string): EventTraits => ({ audited: true, streamed: true, description });
const notice = (description: string): EventTraits => ({ audited: false, streamed: true, description });

export const PLATFORM_EVENTS = {
  EntityCreated: fact('an entity was registered (API, or a device first identified on a link)'),
  EntityUpdated: fact('an entity was re-registered, or the overlay was synced to the project'),
  EntityDeleted: fact('an entity was removed'),
  EntityTagged: fact("an entity's tags were edited"),
  EntityRelated: fact('a relationship between two entities was declared'),
  HealthChanged: fact("an entity's (or a device's) health status differs from the last one seen"),
  HealthCheckFailed: fact('an entity evaluation had at least one failed check'),
  DegradedModeEntered: fact('an entity gained a critical or error diagnostic after having none'),
  ReadinessChanged: fact("an entity's readiness status, mission-ready flag or score changed"),
  ReadinessGateFailed: fact('an entity became not mission ready'),
  MissionStarted: notice('a mission started'),
  MissionCompleted: notice('a mission completed'),
  MissionAborted: fact('a mission was aborted (operator cancel)'),
  MissionPaused: fact('a mission was paused'),
  MissionResumed: fact('a mission was started or resumed by an operator'),
  MissionApproved: fact('an operator approved a mission awaiting sign-off'),
  MissionRejected: fact('an operator rejected a mission awaiting sign-off'),
  RecoveryTriggered: fact('a recovery procedure was triggered'),
  RecoveryCompleted: fact('a recovery procedure completed'),
  RecoveryFailed: fact('a recovery procedure failed'),
  TrustUpdated: fact('a trust score was updated'),
  TrustGateFailed: notice('a trust gate refused an action'),
  TamperDetected: fact('tampering was detected'),
  SpoofingDetected: notice('spoofed input was detected'),
  SecretRotated: fact('a secret was rotated'),
  AuthFailed: notice('the access check refused a request (reason and principal, never the token)'),
  PackageInstalled: notice('a package was installed'),
  PackageRemoved: notice('a package was removed'),
  PackageVerified: notice('a package was verified'),
  TraceFrameRecorded: notice('a trace frame was recorded'),
  MetricEmitted: notice('a metric was emitted'),
  LogEmitted: notice('a log line was emitted'),
  FleetMemberJoined: notice('a robot joined the fleet, or mesh discovery found a node it had not stored (source svc-mesh)'),
  FleetMemberLeft: notice('a robot left the fleet'),
  OtaRolloutStarted: notice('an OTA rollout was planned or started (source svc-ota; {fleet_id, artifact, targets, strategy, dry_run}; docs/operations.md § Rollouts)'),
  OtaRolloutCompleted: notice('an OTA plan or rollout finished ({fleet_id, artifact, status: success|failed, deployed_targets, step_count, dry_run}); one per plan and per execute'),
  FirmwareUpdateProgress: notice(
    'a device firmware update moved on (source svc-hal, entity the device; {device_id, version, phase: started|transfer|done, sent_bytes, total_bytes, result?, running_version?, detail?}; docs/devices.md)',
  ),
  HriSessionStarted: notice('an HRI session was started (source svc-hri; {session_id, session_type, robot_id}; docs/twins.md)'),
  HriAnnotationAdded: notice('an annotation was added to an active HRI session ({session_id, layer, author_human_id})'),
  // Not streamed: stream clients already receive every stored alert as an `alert` frame from the
  // alert ring; streaming the event too would send each alert twice. Not audited, as before.
  AlertRaised: {
    audited: false,
    streamed: false,
    description: 'an alert passed de-duplication and was stored (payload: { alert }); incidents listen for critical ones',
  },
} as const satisfies Record<string, EventTraits>;

export type PlatformEventName = keyof typeof PLATFORM_EVENTS;

/** Every platform event name, in catalogue order. */
export const PLATFORM_EVENT_NAMES = Object.keys(PLATFORM_EVENTS) as PlatformEventName[];

export function isAudited(name: PlatformEventName): boolean {
  return PLATFORM_EVENTS[name].audited;
}

export function isStreamed(name: PlatformEventName): boolean {
  return PLATFORM_EVENTS[name].streamed;
}

/** The names stream clients may see and filter on (gRPC StreamEvents `event_types`). */
export const STREAMED_EVENT_NAMES: readonly PlatformEventName[] = PLATFORM_EVENT_NAMES.filter(isStreamed);

export interface PlatformEvent {
  type: PlatformEventName;
  /** RFC 3339. */
  timestamp: string;
  source: string;
  entity_id?: string;
  payload: Record<string, unknown>;
}

/** `HealthChanged` → `health_changed`: the name stream clients see. */
export function streamEventName(name: PlatformEventName): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

export function platformEvent(
  type: PlatformEventName,
  source: string,
  payload: Record<string, unknown>,
  entityId?: string,
): PlatformEvent {
  const event: PlatformEvent = { type, timestamp: new Date().toISOString(), source, payload };
  if (entityId !== undefined) event.entity_id = entityId;
  return event;
}
