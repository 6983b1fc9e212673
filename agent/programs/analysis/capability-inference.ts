/**
 * Capability inference and capability rows (docs/program-language.md §9.7), and the minimum-capability
 * check (§9.8). A robot's components are its own sensor/actuator types plus those of its
 * `uses hardware H` profiles (program-declared only); connectivity comes only from H.
 */
import type { Program, RobotDecl } from '../language/ast.js';
import { capabilityMinimum, describeMinimum, isOperatorCapability, type CapabilityMinimum } from './capability-registry.js';
import { declaredProfiles, type HardwareProfile } from './hardware-profiles.js';
import { compareCodePoints } from './target.js';

export interface RobotComponents {
  sensors: ReadonlySet<string>;
  actuators: ReadonlySet<string>;
  connectivity: ReadonlySet<string>;
}

export type CapabilitySource = 'declared' | 'inferred' | 'declared+inferred';
export type CapabilityStatus = 'PASS' | 'PARTIAL';

/** One docs/program-language.md §9.7 row (JSON shape). */
export interface CapabilityRow {
  capability: string;
  source: CapabilitySource;
  required_components: string[];
  status: CapabilityStatus;
  notes: string;
}

/** Everything the analyses read about one robot's capabilities. */
export interface RobotCapabilityAnalysis {
  robot: RobotDecl;
  components: RobotComponents;
  /** `exposes capabilities [...]`, de-duplicated, program order. */
  declared: string[];
  /** Inferred capabilities, sorted (docs/program-language.md §1). */
  inferred: string[];
  /** Rows: declared in program order, then inferred-only in sorted order. */
  rows: CapabilityRow[];
  rowByCapability: ReadonlyMap<string, CapabilityRow>;
  /** declared ∪ inferred. */
  present: ReadonlySet<string>;
}

/** docs/program-language.md §14 per-robot entry (JSON shape). */
export interface RobotCapabilityReport {
  robot: string;
  rows: CapabilityRow[];
  declared: string[];
  inferred: string[];
}

export function robotComponents(robot: RobotDecl, profiles: ReadonlyMap<string, HardwareProfile>): RobotComponents {
  const sensors = new Set(robot.sensors.map((s) => s.type));
  const actuators = new Set(robot.actuators.map((a) => a.type));
  const connectivity = new Set<string>();
  for (const name of robot.usesHardware) {
    const profile = profiles.get(name);
    if (profile === undefined) continue;
    for (const s of profile.sensors) sensors.add(s);
    for (const a of profile.actuators) actuators.add(a);
    for (const c of profile.connectivity) connectivity.add(c);
  }
  return { sensors, actuators, connectivity };
}

const PATROL_CAPABILITIES = ['gps_navigation', 'obstacle_avoidance', 'emergency_stop', 'telemetry_streaming'];

function hasAny(set: ReadonlySet<string>, names: readonly string[]): boolean {
  return names.some((n) => set.has(n));
}

/** docs/program-language.md §9.7 inference table, sorted. */
export function inferCapabilities(robot: RobotDecl, components: RobotComponents): string[] {
  const { sensors, actuators, connectivity } = components;
  const out = new Set<string>();
  const diffDrive = actuators.has('DifferentialDrive');
  if (hasAny(sensors, ['GPS', 'GNSS']) && diffDrive) out.add('gps_navigation');
  if (hasAny(sensors, ['Lidar', 'DepthCamera', 'Radar'])) out.add('obstacle_avoidance');
  if (hasAny(sensors, ['Lidar', 'Camera']) && diffDrive) out.add('autonomous_navigation');
  if (hasAny(connectivity, ['WiFi', 'LTE', 'FiveG', 'MQTT'])) out.add('telemetry_streaming');
  if (hasAny(connectivity, ['WiFi', 'LTE', 'FiveG', 'Bluetooth'])) out.add('remote_control');
  if (robot.killSwitches.length > 0 || [...actuators].some((a) => a.includes('Drive'))) out.add('emergency_stop');
  if (sensors.has('Camera')) out.add('vision_processing');
  // A permissions block (§9.7), or a topic declared `secure` (docs/program-language.md §4.1 "Forms added in issue 18").
  if (robot.hasPermissions || robot.topics.some((t) => t.secure === true)) out.add('secure_communication');
  if (robot.missions.some((m) => m.name === 'Patrol')) for (const c of PATROL_CAPABILITIES) out.add(c);
  return [...out].sort(compareCodePoints);
}

/** Registry groups the robot does not meet (empty = minimum met). */
export function unmetGroups(minimum: CapabilityMinimum, components: RobotComponents): string[] {
  const out: string[] = [];
  const check = (names: readonly string[], set: ReadonlySet<string>, group: string): void => {
    if (names.length > 0 && !hasAny(set, names)) out.push(`any_of ${group} [${names.join(', ')}]`);
  };
  check(minimum.sensors, components.sensors, 'sensors');
  check(minimum.actuators, components.actuators, 'actuators');
  check(minimum.connectivity, components.connectivity, 'connectivity');
  return out;
}

/** Components that satisfy the minimum, one per non-empty group (first match in registry order). */
export function satisfyingComponents(minimum: CapabilityMinimum, components: RobotComponents): string[] {
  const out: string[] = [];
  const pick = (names: readonly string[], set: ReadonlySet<string>): void => {
    const hit = names.find((n) => set.has(n));
    if (hit !== undefined) out.push(hit);
  };
  pick(minimum.sensors, components.sensors);
  pick(minimum.actuators, components.actuators);
  pick(minimum.connectivity, components.connectivity);
  return out;
}

export function capabilityRow(capability: string, source: CapabilitySource, components: RobotComponents): CapabilityRow {
  const minimum = capabilityMinimum(capability);
  if (minimum === null) {
    return { capability, source, required_components: [], status: 'PARTIAL', notes: 'Unknown capability: not in the capability registry' };
  }
  const missing = unmetGroups(minimum, components);
  if (missing.length > 0) {
    return { capability, source, required_components: describeMinimum(minimum), status: 'PARTIAL', notes: `Missing ${missing.join('; ')}` };
  }
  const used = satisfyingComponents(minimum, components);
  const notes = minimum.operator
    ? 'Operator capability: no hardware minimum'
    : used.length === 0
      ? 'No hardware minimum'
      : `Minimum met by ${used.join(', ')}`;
  return { capability, source, required_components: describeMinimum(minimum), status: 'PASS', notes };
}

export function analyseRobotCapabilities(robot: RobotDecl, profiles: ReadonlyMap<string, HardwareProfile>): RobotCapabilityAnalysis {
  const components = robotComponents(robot, profiles);
  const declared = [...new Set(robot.exposes)];
  const inferred = inferCapabilities(robot, components);
  const declaredSet = new Set(declared);
  const inferredSet = new Set(inferred);
  const rows: CapabilityRow[] = [];
  for (const capability of declared) {
    rows.push(capabilityRow(capability, inferredSet.has(capability) ? 'declared+inferred' : 'declared', components));
  }
  for (const capability of inferred) {
    if (!declaredSet.has(capability)) rows.push(capabilityRow(capability, 'inferred', components));
  }
  return {
    robot,
    components,
    declared,
    inferred,
    rows,
    rowByCapability: new Map(rows.map((r) => [r.capability, r])),
    present: new Set([...declared, ...inferred]),
  };
}

/** Capability analysis of every robot, in program order. */
export function analyseCapabilities(program: Program): RobotCapabilityAnalysis[] {
  const profiles = declaredProfiles(program);
  return program.robots.map((robot) => analyseRobotCapabilities(robot, profiles));
}

/** docs/program-language.md §14 `capabilities` array: per robot `{robot, rows, declared, inferred}`. */
export function capabilityReports(program: Program, analyses: RobotCapabilityAnalysis[] = analyseCapabilities(program)): RobotCapabilityReport[] {
  return analyses.map((a) => ({ robot: a.robot.name, rows: a.rows, declared: a.declared, inferred: a.inferred }));
}

// ---------------------------------------------------------------------------
// docs/program-language.md §9.8 minimum capabilities

export interface MinimumCapabilityItem {
  capability: string;
  /** Robot the item is about, or null for a program-level `requires_capability`. */
  robot: string | null;
  severity: 'pass' | 'error';
  message: string;
}

export interface MinimumCapabilitiesResult {
  compatible: boolean;
  /** Error messages in emission order (also the `error` items' messages). */
  errors: string[];
  items: MinimumCapabilityItem[];
}

/** Minimum capabilities every robot with a mission must have (docs/program-language.md §9.8). */
export const MISSION_MINIMUM_CAPABILITIES = ['obstacle_avoidance', 'gps_navigation', 'emergency_stop'] as const;

export function minimumCapabilities(
  program: Program,
  analyses: RobotCapabilityAnalysis[] = analyseCapabilities(program),
): MinimumCapabilitiesResult {
  const items: MinimumCapabilityItem[] = [];
  const pass = (capability: string, robot: string | null, message: string): void =>
    void items.push({ capability, robot, severity: 'pass', message });
  const error = (capability: string, robot: string | null, message: string): void =>
    void items.push({ capability, robot, severity: 'error', message });

  // 1. Program requirements: some robot must have a PASS row.
  for (const req of program.requiresCapabilities) {
    const capability = req.capability;
    if (isOperatorCapability(capability)) continue;
    const provider = analyses.find((a) => a.rowByCapability.get(capability)?.status === 'PASS');
    if (provider !== undefined) {
      pass(capability, null, `Mission requires ${capability}. Provided by robot '${provider.robot.name}'`);
    } else {
      error(capability, null, `Mission requires ${capability}. Missing: ${missingFor(capability, analyses)}`);
    }
  }

  // 2. PARTIAL rows of error-severity capabilities.
  for (const a of analyses) {
    for (const row of a.rows) {
      if (row.status !== 'PARTIAL') continue;
      if (capabilityMinimum(row.capability)?.errorWhenMissing !== true) continue;
      error(row.capability, a.robot.name, `Robot '${a.robot.name}' requires capability '${row.capability}'`);
    }
  }

  // 3. Mission robots need the three minimum capabilities; a robot without a mission is checked
  //    only for those of the three it exposes.
  for (const a of analyses) {
    const hasMission = a.robot.missions.length > 0;
    if (!hasMission && !a.declared.includes('obstacle_avoidance')) continue;
    for (const capability of MISSION_MINIMUM_CAPABILITIES) {
      if (!hasMission && !a.declared.includes(capability)) continue;
      if (a.present.has(capability)) continue;
      error(capability, a.robot.name, `Mission requires ${capability}. Robot '${a.robot.name}' lacks minimum hardware.`);
    }
  }

  const errors = items.filter((i) => i.severity === 'error').map((i) => i.message);
  return { compatible: errors.length === 0, errors, items };
}

/** What is missing for a program requirement nobody passes. */
function missingFor(capability: string, analyses: RobotCapabilityAnalysis[]): string {
  const minimum = capabilityMinimum(capability);
  if (minimum === null) return `${capability} is not in the capability registry`;
  const candidate = analyses.find((a) => a.rowByCapability.has(capability));
  if (candidate !== undefined) {
    const missing = unmetGroups(minimum, candidate.components);
    if (missing.length > 0) return missing.join('; ');
  }
  if (analyses.length === 0) return 'no robot declared';
  return `no robot exposes or infers ${capability}`;
}
