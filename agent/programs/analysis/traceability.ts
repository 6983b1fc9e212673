/**
 * Traceability (docs/program-language.md §9.10, §14): hardware rows per robot sensor/actuator, capability
 * rows per (requires_capability × robot), warnings and errors. The warnings reproduce the
 * reference's effectively unconditional gate lookups (see §9.10), and feed the readiness
 * Connectivity factor.
 */
import type { ConfiguredDevice, ResolvedConfig } from '../../project/resolve-config.js';
import type { Loc, Program, RobotDecl } from '../language/ast.js';
import { capabilityMinimum, isKnownCapability } from './capability-registry.js';
import { analyseCapabilities, satisfyingComponents, type RobotCapabilityAnalysis } from './capability-inference.js';
import { declaredProfiles } from './hardware-profiles.js';
import { namesRobotMember } from './member-names.js';
import { renderSafetyRule } from './safety-text.js';
import { compareCodePoints } from './target.js';

export interface HardwareTraceRow {
  hardware_component: string;
  used_by: string;
  source_location: string;
  capability: string;
  provider: string;
  verified: boolean;
  safety_rule: string;
  notes: string;
}

export type TraceStatus = 'PASS' | 'PARTIAL' | 'FAIL';

export interface CapabilityTraceRow {
  capability: string;
  required_by: string;
  provided_by: string;
  hardware: string;
  package: string;
  provider: string;
  safety_rule: string;
  status: TraceStatus;
  notes: string;
}

export interface TraceabilityReport {
  hardware_rows: HardwareTraceRow[];
  capability_rows: CapabilityTraceRow[];
  warnings: string[];
  errors: string[];
}

export function traceabilityReport(
  program: Program,
  config: ResolvedConfig | null,
  analyses: RobotCapabilityAnalysis[] = analyseCapabilities(program),
): TraceabilityReport {
  const profiles = declaredProfiles(program);
  const devicesByRobot = groupDevicesByRobot(config?.devices ?? []);

  const hardwareRows: HardwareTraceRow[] = [];
  for (const a of analyses) {
    const robot = a.robot;
    const listed = listedComponents(robot, profiles);
    const devices = devicesByRobot.get(robot.name.toLowerCase()) ?? [];
    const stopIf = stopIfRules(robot);
    for (const sensor of robot.sensors) {
      hardwareRows.push({
        hardware_component: sensor.type,
        used_by: `${robot.name}.${sensor.name}`,
        source_location: location(program.file, sensor.loc),
        capability: capabilitiesUsing(a, sensor.type),
        provider: providerFor(devices, robot.name, sensor.name, sensor.type),
        verified: listed.sensors.has(sensor.type),
        safety_rule: sensorSafetyRules(stopIf, sensor.name),
        notes: listingNote(robot, listed.sensors.has(sensor.type)),
      });
    }
    for (const actuator of robot.actuators) {
      hardwareRows.push({
        hardware_component: actuator.type,
        used_by: `${robot.name}.${actuator.name}`,
        source_location: location(program.file, actuator.loc),
        capability: capabilitiesUsing(a, actuator.type),
        provider: providerFor(devices, robot.name, actuator.name, actuator.type),
        verified: listed.actuators.has(actuator.type),
        safety_rule: motionLimits(robot),
        notes: listingNote(robot, listed.actuators.has(actuator.type)),
      });
    }
  }

  const capabilityRows: CapabilityTraceRow[] = [];
  for (const req of program.requiresCapabilities) {
    const minimum = capabilityMinimum(req.capability);
    for (const a of analyses) {
      const row = a.rowByCapability.get(req.capability);
      capabilityRows.push({
        capability: req.capability,
        required_by: 'program',
        provided_by: a.robot.name,
        hardware: minimum === null ? '' : satisfyingComponents(minimum, a.components).join('+'),
        package: minimum === null ? '' : minimum.packages.join('+'),
        provider: minimum === null ? '' : minimum.providers.join('+'),
        safety_rule: primarySafetyRule(a.robot),
        status: row === undefined ? 'FAIL' : row.status,
        notes: row === undefined ? `Robot '${a.robot.name}' does not expose or infer ${req.capability}` : row.notes,
      });
    }
  }

  // Warnings: per-actuator first (program order), then the unused-declaration ones sorted.
  const warnings: string[] = [];
  for (const robot of program.robots) {
    for (const actuator of robot.actuators) warnings.push(`Actuator '${actuator.name}' on robot '${robot.name}' has no safety gate`);
  }
  const unused: string[] = [];
  for (const decl of program.hardware) {
    for (const s of decl.sensors) unused.push(`Declared sensor '${decl.name}.${s}' is unused`);
    for (const act of decl.actuators) unused.push(`Declared actuator '${decl.name}.${act}' is unused`);
  }
  warnings.push(...unused.sort(compareCodePoints));

  const errors: string[] = [];
  for (const robot of program.robots) {
    for (const name of robot.usesHardware) {
      if (!profiles.has(name)) errors.push(`Robot '${robot.name}' uses undeclared hardware '${name}'`);
    }
  }
  for (const req of program.requiresCapabilities) {
    if (!isKnownCapability(req.capability)) errors.push(`Unknown capability '${req.capability}'`);
  }

  return { hardware_rows: hardwareRows, capability_rows: capabilityRows, warnings, errors };
}

function location(file: string, loc: Loc): string {
  return `${file}:${loc.line}:${loc.column}`;
}

function listedComponents(robot: RobotDecl, profiles: ReturnType<typeof declaredProfiles>): { sensors: Set<string>; actuators: Set<string> } {
  const sensors = new Set<string>();
  const actuators = new Set<string>();
  for (const name of robot.usesHardware) {
    const profile = profiles.get(name);
    if (profile === undefined) continue;
    for (const s of profile.sensors) sensors.add(s);
    for (const act of profile.actuators) actuators.add(act);
  }
  return { sensors, actuators };
}

function listingNote(robot: RobotDecl, listed: boolean): string {
  if (robot.usesHardware.length === 0) return 'Robot uses no declared hardware profile';
  const names = robot.usesHardware.join(', ');
  return listed ? `Listed in hardware ${names}` : `Not listed in hardware ${names}`;
}

/** Capabilities of the robot whose registry minimum names this component type, joined by `+`. */
function capabilitiesUsing(a: RobotCapabilityAnalysis, type: string): string {
  const out: string[] = [];
  for (const row of a.rows) {
    const minimum = capabilityMinimum(row.capability);
    if (minimum === null) continue;
    if (minimum.sensors.includes(type) || minimum.actuators.includes(type)) out.push(row.capability);
  }
  return out.join('+');
}

function groupDevicesByRobot(devices: readonly ConfiguredDevice[]): Map<string, ConfiguredDevice[]> {
  const out = new Map<string, ConfiguredDevice[]>();
  for (const d of devices) {
    if (d.robot_id === null) continue;
    const key = d.robot_id.toLowerCase();
    const list = out.get(key);
    if (list === undefined) out.set(key, [d]);
    else list.push(d);
  }
  return out;
}

/**
 * The configured provider behind a robot member: by logical name `robot.member` (member-names.ts,
 * shared with drift check 14), else by device type.
 */
function providerFor(devices: readonly ConfiguredDevice[], robot: string, member: string, type: string): string {
  const byName = devices.find((d) => d.logical_name !== null && namesRobotMember(d.logical_name, robot, member));
  const byType = byName ?? devices.find((d) => d.device_type.toLowerCase() === type.toLowerCase());
  return byType?.provider ?? '';
}

/** A robot's `stop_if` rules with the identifiers each mentions (built once per robot). */
function stopIfRules(robot: RobotDecl): Array<{ words: Set<string>; text: string }> {
  const out: Array<{ words: Set<string>; text: string }> = [];
  for (const rule of robot.safety) {
    if (rule.kind !== 'stop_if') continue;
    out.push({ words: new Set(rule.text.split(/[^A-Za-z0-9_]+/)), text: renderSafetyRule(rule) });
  }
  return out;
}

/** `stop_if` rules that mention the sensor by name. */
function sensorSafetyRules(rules: Array<{ words: Set<string>; text: string }>, sensor: string): string {
  return rules
    .filter((r) => r.words.has(sensor))
    .map((r) => r.text)
    .join('; ');
}

function motionLimits(robot: RobotDecl): string {
  return robot.safety
    .filter((r) => r.kind === 'max_speed' || r.kind === 'max_angular')
    .map(renderSafetyRule)
    .join('; ');
}

/** First `stop_if` rule, else the first rule of any kind, else empty. */
function primarySafetyRule(robot: RobotDecl): string {
  const rule = robot.safety.find((r) => r.kind === 'stop_if') ?? robot.safety[0];
  return rule === undefined ? '' : renderSafetyRule(rule);
}
