/**
 * Verify mission (docs/program-language.md §15): one report per robot mission, checked against the target
 * of §1; a single synthetic report when no robot has a mission.
 */
import type { MissionDecl, Program, RobotDecl } from '../language/ast.js';
import type { AnalysisOptions } from './options.js';
import { analyseCapabilities, minimumCapabilities, type MinimumCapabilitiesResult, type RobotCapabilityAnalysis } from './capability-inference.js';
import { isKnownCapability } from './capability-registry.js';
import type { HardwareItem } from './hardware-checks.js';
import { robotHardwareItems, runHardwareVerification, type HardwareVerification } from './verify-hardware.js';

export interface MissionReport {
  achievable: boolean;
  mission_name: string | null;
  robot: string | null;
  required_capabilities: string[];
  hardware_satisfied: boolean;
  capabilities_satisfied: boolean;
  connectivity_satisfied: boolean;
  battery_sufficient: boolean;
  compute_sufficient: boolean;
  safety_satisfied: boolean;
  issues: string[];
}

export const MISSION_ISSUES = {
  battery: 'Insufficient battery for mission duration',
  connectivity: 'Required connectivity not available',
  safety: 'Safety capability requirements not satisfied',
  hardware: 'Hardware compatibility check failed',
} as const;

export interface MissionInputs {
  hardware: HardwareVerification;
  capabilities: RobotCapabilityAnalysis[];
  minimum: MinimumCapabilitiesResult;
}

export function verifyMission(program: Program, opts: AnalysisOptions): MissionReport[] {
  const capabilities = analyseCapabilities(program);
  return missionReports(program, {
    hardware: runHardwareVerification(program, opts),
    capabilities,
    minimum: minimumCapabilities(program, capabilities),
  });
}

/** Mission reports from already computed verification results (readiness/assure reuse them). */
export function missionReports(program: Program, inputs: MissionInputs): MissionReport[] {
  const reports: MissionReport[] = [];
  program.robots.forEach((robot, index) => {
    if (robot.missions.length === 0) return;
    const analysis = inputs.capabilities[index];
    const items = robotHardwareItems(inputs.hardware, robot.name);
    for (const mission of robot.missions) reports.push(missionReport(robot, mission, analysis, items, inputs.minimum));
  });
  if (reports.length === 0) reports.push(syntheticReport(inputs));
  return reports;
}

function missionReport(
  robot: RobotDecl,
  mission: MissionDecl,
  analysis: RobotCapabilityAnalysis | undefined,
  items: HardwareItem[],
  minimum: MinimumCapabilitiesResult,
): MissionReport {
  const present = analysis?.present ?? new Set(robot.exposes);
  const capabilityIssues: string[] = [];
  for (const capability of mission.requiredCapabilities) {
    if (!present.has(capability) && !robot.exposes.includes(capability)) capabilityIssues.push(`Missing required capability: ${capability}`);
    if (!isKnownCapability(capability)) capabilityIssues.push(`Unknown capability in mission: ${capability}`);
  }
  const errors = items.filter((i) => i.severity === 'error');
  const batteryFails = errors.some((i) => i.category === 'battery' && i.line === mission.loc.line && i.column === mission.loc.column);
  const connectivityFails = errors.some((i) => i.category === 'connectivity' || i.category === 'network');

  const flags = {
    hardware_satisfied: errors.length === 0,
    capabilities_satisfied: capabilityIssues.length === 0,
    connectivity_satisfied: !connectivityFails,
    battery_sufficient: !batteryFails,
    compute_sufficient: true,
    safety_satisfied: minimum.compatible,
  };
  const issues = [...capabilityIssues];
  if (!flags.battery_sufficient) issues.push(MISSION_ISSUES.battery);
  if (!flags.connectivity_satisfied) issues.push(MISSION_ISSUES.connectivity);
  if (!flags.safety_satisfied) issues.push(MISSION_ISSUES.safety);
  if (!flags.hardware_satisfied) issues.push(MISSION_ISSUES.hardware);
  return {
    achievable: Object.values(flags).every(Boolean) && issues.length === 0,
    mission_name: mission.name,
    robot: robot.name,
    required_capabilities: [...mission.requiredCapabilities],
    ...flags,
    issues,
  };
}

function syntheticReport(inputs: MissionInputs): MissionReport {
  const flags = {
    hardware_satisfied: inputs.hardware.compatible,
    capabilities_satisfied: inputs.minimum.compatible,
    connectivity_satisfied: true,
    battery_sufficient: true,
    compute_sufficient: true,
    safety_satisfied: inputs.minimum.compatible,
  };
  const issues = [...inputs.minimum.errors];
  return {
    achievable: Object.values(flags).every(Boolean) && issues.length === 0,
    mission_name: null,
    robot: null,
    required_capabilities: [],
    ...flags,
    issues,
  };
}
