import { conflict } from '../core/errors.js';

/** Device lifecycle states (docs/devices.md § Lifecycle and workflows). */
export const DEVICE_LIFECYCLE_STATES = [
  'discovered',
  'quarantined',
  'verified',
  'assigned',
  'active',
  'healthy',
  'degraded',
  'offline',
  'failed',
  'retired',
] as const;
export type DeviceLifecycleState = (typeof DEVICE_LIFECYCLE_STATES)[number];

/** Transitions allowed without override; any state may also go to `retired`. */
const ALLOWED: Record<DeviceLifecycleState, readonly DeviceLifecycleState[]> = {
  discovered: ['quarantined', 'verified'],
  quarantined: ['discovered', 'verified'],
  verified: ['assigned', 'quarantined'],
  assigned: ['active', 'offline'],
  active: ['degraded', 'offline', 'failed'],
  // `healthy` is a reported state of in-service devices; it moves like `active`.
  healthy: ['degraded', 'offline', 'failed', 'active'],
  degraded: ['active', 'offline', 'failed'],
  offline: ['active', 'degraded'],
  failed: ['quarantined', 'retired'],
  retired: [],
};

export function isLifecycleState(v: unknown): v is DeviceLifecycleState {
  return typeof v === 'string' && (DEVICE_LIFECYCLE_STATES as readonly string[]).includes(v);
}

export function transitionAllowed(from: DeviceLifecycleState, to: DeviceLifecycleState): boolean {
  return to === 'retired' || ALLOWED[from].includes(to);
}

export function allowedTransitions(from: DeviceLifecycleState): DeviceLifecycleState[] {
  return [...new Set([...ALLOWED[from], ...(from === 'retired' ? [] : (['retired'] as const))])];
}

/** Refuses a transition the table does not allow (409, naming what would be allowed). */
export function assertTransition(from: DeviceLifecycleState, to: DeviceLifecycleState, override = false): void {
  if (from === to || override || transitionAllowed(from, to)) return;
  const options = allowedTransitions(from);
  throw conflict(`lifecycle transition ${from} -> ${to} is not allowed (from ${from}: ${options.join(', ') || 'none'})`);
}

/** States in which a device serves a robot; health readings move it among these. */
export const IN_SERVICE: ReadonlySet<DeviceLifecycleState> = new Set(['active', 'healthy', 'degraded', 'offline']);
