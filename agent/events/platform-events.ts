/** Platform event names (docs/events.md § Platform events). */
export const PLATFORM_EVENT_NAMES = [
  'EntityCreated',
  'EntityUpdated',
  'EntityDeleted',
  'EntityTagged',
  'EntityRelated',
  'HealthChanged',
  'HealthCheckFailed',
  'DegradedModeEntered',
  'ReadinessChanged',
  'ReadinessGateFailed',
  'MissionStarted',
  'MissionCompleted',
  'MissionAborted',
  'MissionPaused',
  'RecoveryTriggered',
  'RecoveryCompleted',
  'RecoveryFailed',
  'TrustUpdated',
  'TrustGateFailed',
  'TamperDetected',
  'SpoofingDetected',
  'SecretRotated',
  'AuthFailed',
  'PackageInstalled',
  'PackageRemoved',
  'PackageVerified',
  'TraceFrameRecorded',
  'MetricEmitted',
  'LogEmitted',
  'FleetMemberJoined',
  'FleetMemberLeft',
  'OtaRolloutStarted',
  'OtaRolloutCompleted',
] as const;

export type PlatformEventName = (typeof PLATFORM_EVENT_NAMES)[number];

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
