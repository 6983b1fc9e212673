/**
 * The vocabulary of the entity registry (docs/entities.md): entity kinds, relationship kinds and
 * the status enumerations. Plain data, no behaviour beyond parsing. The status and relationship
 * words are the contract's (api/vocabulary/entities.ts), re-exported here.
 */
import { RELATIONSHIP_KINDS, type RelationshipKind } from '../../api/vocabulary/entities.js';

/** The 37 built-in entity kinds; anything else is a custom kind. */
export const ENTITY_KINDS = [
  'human',
  'robot',
  'drone',
  'vehicle',
  'fleet',
  'swarm',
  'team',
  'device',
  'sensor',
  'actuator',
  'gateway',
  'controller',
  'wearable',
  'medical_device',
  'camera',
  'gps',
  'plc',
  'ai_agent',
  'cloud_service',
  'edge_service',
  'digital_twin',
  'provider',
  'package',
  'mission',
  'facility',
  'building',
  'zone',
  'hazard',
  'incident',
  'command_center',
  'control_center',
  'organization',
  'compute',
  'ar_device',
  'vr_device',
  'iot_device',
  'spatial_session',
] as const;
export type BuiltinKind = (typeof ENTITY_KINDS)[number];

export {
  HEALTH_STATUSES,
  LIFECYCLE_STATES,
  READINESS_STATUSES,
  RELATIONSHIP_KINDS,
  TRUST_STATUSES,
  type HealthStatus,
  type LifecycleState,
  type ReadinessStatus,
  type RelationshipKind,
  type TrustStatus,
} from '../../api/vocabulary/entities.js';

const BUILTIN: ReadonlySet<string> = new Set(ENTITY_KINDS);
const RELATIONSHIPS: ReadonlySet<string> = new Set(RELATIONSHIP_KINDS);

export const isBuiltinKind = (k: string): k is BuiltinKind => BUILTIN.has(k);
export const isRelationshipKind = (k: string): k is RelationshipKind => RELATIONSHIPS.has(k);

/** A custom kind name: lower-case words joined by `_`, `-` or `.` (so it reads well in ids and filters). */
export const CUSTOM_KIND_PATTERN = /^[a-z][a-z0-9_.-]{0,63}$/;

/**
 * `"robot"` → robot; `{custom:"forklift"}`, `"custom:forklift"` or any other well-formed name → the
 * custom kind `forklift`. Returns null for something that is not a kind at all.
 */
export function parseKind(value: unknown): { kind: string; custom: boolean } | null {
  let name: unknown = value;
  let forcedCustom = false;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    name = (value as Record<string, unknown>)['custom'];
    forcedCustom = true;
  } else if (typeof value === 'string' && value.toLowerCase().startsWith('custom:')) {
    name = value.slice('custom:'.length);
    forcedCustom = true;
  }
  if (typeof name !== 'string') return null;
  const k = name.trim().toLowerCase().replace(/\s+/g, '_');
  if (!CUSTOM_KIND_PATTERN.test(k)) return null;
  if (!forcedCustom && isBuiltinKind(k)) return { kind: k, custom: false };
  // `{custom:"robot"}` is still a robot: a built-in name never becomes a custom kind.
  return { kind: k, custom: !isBuiltinKind(k) };
}

/** The wire form of an entity type: the snake_case name, or `{custom: name}`. */
export function entityTypeJson(kind: string, custom: boolean): string | { custom: string } {
  return custom ? { custom: kind } : kind;
}

const DEVICE_TYPE_KINDS: Record<string, BuiltinKind> = {
  camera: 'camera',
  rgb_camera: 'camera',
  depth_camera: 'camera',
  thermal_camera: 'camera',
  stereo_camera: 'camera',
  gps: 'gps',
  gnss: 'gps',
  rtk_gps: 'gps',
  lidar: 'sensor',
  imu: 'sensor',
  radar: 'sensor',
  sonar: 'sensor',
  ultrasonic: 'sensor',
  encoder: 'sensor',
  temperature: 'sensor',
  humidity: 'sensor',
  pressure: 'sensor',
  gas: 'sensor',
  battery: 'sensor',
  bms: 'sensor',
  motor: 'actuator',
  servo: 'actuator',
  gripper: 'actuator',
  arm: 'actuator',
  pump: 'actuator',
  valve: 'actuator',
  relay: 'actuator',
  motor_controller: 'controller',
  mcu: 'controller',
  ecu: 'controller',
  router: 'gateway',
  modem: 'gateway',
  computer: 'compute',
  sbc: 'compute',
  jetson: 'compute',
};

/** The entity kind of a device from its `device_type` ("lidar" → sensor, "gps" → gps, else device). */
export function kindOfDeviceType(deviceType: string): BuiltinKind {
  const t = deviceType.trim().toLowerCase().replace(/[\s-]+/g, '_');
  if (isBuiltinKind(t)) return t;
  return DEVICE_TYPE_KINDS[t] ?? (t.endsWith('_sensor') ? 'sensor' : t.endsWith('_camera') ? 'camera' : 'device');
}
