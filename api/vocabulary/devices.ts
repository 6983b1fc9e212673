/** Device lifecycle states (docs/devices.md § Lifecycle and workflows): the words of `lifecycle_state` on the wire. */
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
