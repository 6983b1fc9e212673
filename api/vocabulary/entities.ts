/**
 * The status and relationship words of the entity registry on the wire (docs/entities.md): the
 * values of `health_status`, `readiness_status`, `trust_status`, `lifecycle_state` and a
 * relationship's `kind`. agent/entities/kinds.ts re-exports them; there is no second list.
 */

export const RELATIONSHIP_KINDS = [
  'owns',
  'contains',
  'connected_to',
  'controls',
  'monitors',
  'depends_on',
  'assigned_to',
  'communicates_with',
  'backs_up',
  'replaces',
  'reports_to',
  'belongs_to',
  'located_in',
  'secured_by',
  'managed_by',
  'provides',
  'consumes',
  'participates_in',
] as const;
export type RelationshipKind = (typeof RELATIONSHIP_KINDS)[number];

export const HEALTH_STATUSES = ['healthy', 'warning', 'degraded', 'offline', 'critical', 'unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export const READINESS_STATUSES = ['ready', 'not_ready', 'partial', 'unknown'] as const;
export type ReadinessStatus = (typeof READINESS_STATUSES)[number];

export const TRUST_STATUSES = ['verified', 'trusted', 'untrusted', 'compromised', 'unknown'] as const;
export type TrustStatus = (typeof TRUST_STATUSES)[number];

export const LIFECYCLE_STATES = [
  'discovered',
  'provisioned',
  'verified',
  'assigned',
  'active',
  'suspended',
  'degraded',
  'offline',
  'retired',
  'archived',
  'unknown',
] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];
