/**
 * Capability registry (docs/program-language.md §9.7): the minimum hardware of each known capability
 * (any_of per group), whether a robot missing it is an error (§9.8), and — our own data — the
 * packages and providers that implement it (traceability rows, §9.10).
 */

export interface CapabilityMinimum {
  /** Any one of these sensor types (empty = no sensor needed). */
  sensors: readonly string[];
  actuators: readonly string[];
  connectivity: readonly string[];
  /** A PARTIAL row for this capability is a minimum-capability error (docs/program-language.md §9.8). */
  errorWhenMissing: boolean;
  /** Operator capabilities describe people, not hardware: empty minima, never required of robots. */
  operator: boolean;
  /** Packages and providers that implement the capability (our registry data). */
  packages: readonly string[];
  providers: readonly string[];
}

function hardware(
  sensors: readonly string[],
  actuators: readonly string[],
  connectivity: readonly string[],
  errorWhenMissing: boolean,
  packages: readonly string[],
  providers: readonly string[],
): CapabilityMinimum {
  return { sensors, actuators, connectivity, errorWhenMissing, operator: false, packages, providers };
}

function operatorCapability(): CapabilityMinimum {
  return { sensors: [], actuators: [], connectivity: [], errorWhenMissing: false, operator: true, packages: [], providers: [] };
}

/** The 11 operator capabilities (people-side skills a mission may require). */
export const OPERATOR_CAPABILITIES = [
  'emergency_response',
  'human_approval',
  'incident_acknowledgement',
  'manual_override',
  'mission_supervision',
  'operator_alerting',
  'remote_supervision',
  'safety_inspection',
  'shift_handover',
  'takeover_control',
  'teleoperation',
] as const;

const REGISTRY: ReadonlyMap<string, CapabilityMinimum> = new Map<string, CapabilityMinimum>([
  [
    'autonomous_navigation',
    hardware(['Lidar', 'Camera', 'DepthCamera'], ['DifferentialDrive', 'AckermannDrive'], [], true, ['svc-fusion-sensor'], ['lidar_serial']),
  ],
  ['gps_navigation', hardware(['GPS', 'GNSS'], ['DifferentialDrive'], ['WiFi', 'LTE', 'FiveG'], true, ['svc-positioning-gps'], ['gps_nmea'])],
  ['obstacle_avoidance', hardware(['Lidar', 'DepthCamera', 'Radar'], ['DifferentialDrive'], [], true, ['svc-fusion-sensor'], ['lidar_serial'])],
  ['remote_control', hardware([], ['DifferentialDrive'], ['WiFi', 'LTE', 'FiveG', 'Bluetooth'], true, ['svc-net-cellular'], ['modem_lte'])],
  ['telemetry_streaming', hardware([], [], ['WiFi', 'LTE', 'FiveG', 'MQTT'], false, ['svc-mqtt-bridge'], ['mqtt_bridge'])],
  ['emergency_stop', hardware([], ['DifferentialDrive'], [], true, ['svc-can-motion'], ['can_motion'])],
  ['vision_processing', hardware(['Camera'], [], [], false, ['svc-camera'], ['camera_rtsp'])],
  ['local_ai_inference', hardware(['Camera'], [], [], false, ['svc-ai-inference'], ['onnx_runtime'])],
  ['manipulation', hardware(['Camera'], ['Arm', 'Gripper'], [], true, ['svc-can-motion'], ['can_motion'])],
  ['fleet_coordination', hardware([], [], ['WiFi', 'LTE'], false, ['svc-fleet-mesh'], ['fleet_mesh'])],
  ['ota_update', hardware([], [], ['WiFi', 'LTE'], false, ['svc-ota'], ['ota_agent'])],
  ['secure_communication', hardware([], [], ['WiFi', 'LTE'], true, ['svc-secure-comm'], ['secure_channel'])],
  ...OPERATOR_CAPABILITIES.map((name): [string, CapabilityMinimum] => [name, operatorCapability()]),
]);

export function capabilityMinimum(capability: string): CapabilityMinimum | null {
  return REGISTRY.get(capability) ?? null;
}

export function isKnownCapability(capability: string): boolean {
  return REGISTRY.has(capability);
}

export function isOperatorCapability(capability: string): boolean {
  return REGISTRY.get(capability)?.operator === true;
}

/** `any_of sensors [Lidar, Camera]`, one string per non-empty group (the row's required_components). */
export function describeMinimum(minimum: CapabilityMinimum): string[] {
  const out: string[] = [];
  if (minimum.sensors.length > 0) out.push(`any_of sensors [${minimum.sensors.join(', ')}]`);
  if (minimum.actuators.length > 0) out.push(`any_of actuators [${minimum.actuators.join(', ')}]`);
  if (minimum.connectivity.length > 0) out.push(`any_of connectivity [${minimum.connectivity.join(', ')}]`);
  return out;
}
