/**
 * Contract verify (docs/program-language.md §21): mission contracts from mission plans and robot missions,
 * five clause checks, and the issues that make verification fail.
 */
import type { Program } from '../language/ast.js';
import type { AnalysisOptions } from './options.js';
import { verifyMission } from './verify-mission.js';

export interface MissionContract {
  name: string;
  kind: string;
  objectives: string[];
  constraints: string[];
  assumptions: string[];
  invariants: string[];
  guarantees: string[];
  continuity_aligned: boolean;
  recovery_aligned: boolean;
  safety_aligned: boolean;
}

export interface ContractCheck {
  name: string;
  category: string;
  passed: boolean;
  detail: string;
}

export interface ContractResult {
  report: { contracts: MissionContract[]; checks: ContractCheck[]; issues: string[] };
  passed: boolean;
}

export const NO_MISSION_ISSUE = 'No mission_plan or robot mission declarations found';
export const NO_SAFETY_ISSUE = 'No safety rules or zones declared for contract safety clause';

const FALLBACK_KINDS = new Set(['degraded', 'safe', 'emergency', 'recovery']);

export function verifyContract(program: Program, opts: AnalysisOptions): ContractResult {
  const continuityAligned = program.continuityPolicies.length > 0;
  const recoveryAligned = program.recoveryPolicies.length > 0 || program.mitigations.length > 0;
  const safetyRuleCount = program.robots.reduce((n, r) => n + r.safety.length, 0) + program.safetyZones.length;
  const programSafety = safetyRuleCount > 0;

  const assumptions = [
    ...program.healthChecks.map((h) => `health_check:${h.name}`),
    ...program.healthPolicies.map((h) => `health_policy:${h.name}`),
  ];
  const contracts: MissionContract[] = [];
  for (const plan of program.missionPlans) {
    contracts.push({
      name: plan.name,
      kind: 'mission_plan',
      objectives: [...plan.steps],
      constraints: [...plan.constraints],
      assumptions: [...assumptions],
      invariants: plan.constraints.filter((c) => c.includes('invariant') || c.includes('>=') || c.includes('<=')),
      guarantees: ['mission_steps_declared'],
      continuity_aligned: continuityAligned,
      recovery_aligned: recoveryAligned,
      safety_aligned: programSafety,
    });
  }
  let robotMissions = 0;
  for (const robot of program.robots) {
    for (const mission of robot.missions) {
      robotMissions += 1;
      contracts.push({
        name: mission.name ?? `${robot.name}_mission`,
        kind: `robot_mission:${robot.name}`,
        objectives: [...mission.steps],
        constraints: [`duration_hours=${mission.durationHours === null ? 'none' : formatHours(mission.durationHours)}`],
        assumptions: [...mission.requiredCapabilities],
        invariants: mission.approvals.map((a) => `requires_approval:${a.actor}`),
        guarantees: ['capabilities_declared'],
        continuity_aligned: continuityAligned,
        recovery_aligned: recoveryAligned,
        safety_aligned: robot.safety.length > 0 || program.safetyZones.length > 0,
      });
    }
  }

  const checks: ContractCheck[] = [];
  const issues: string[] = [];
  const missionCount = program.missionPlans.length + robotMissions;
  checks.push({
    name: 'mission_declared',
    category: 'structure',
    passed: missionCount > 0,
    detail: `${program.missionPlans.length} mission plan(s), ${robotMissions} robot mission(s)`,
  });
  if (missionCount === 0) issues.push(NO_MISSION_ISSUE);

  checks.push({ name: 'safety_clause', category: 'safety', passed: programSafety, detail: `${safetyRuleCount} safety rule(s) and zone(s)` });
  if (!programSafety) issues.push(NO_SAFETY_ISSUE);

  if (program.robots.length > 0 || program.continuityPolicies.length > 0) {
    const fallbackModes = countFallbackModes(program);
    checks.push({
      name: 'continuity_clause',
      category: 'continuity',
      passed: continuityAligned || fallbackModes > 0,
      detail: `${program.continuityPolicies.length} continuity policy(ies), ${fallbackModes} fallback mode(s)`,
    });
  }

  checks.push({
    name: 'recovery_clause',
    category: 'recovery',
    passed: recoveryAligned,
    detail: `${program.recoveryPolicies.length} recovery policy(ies), ${program.mitigations.length} mitigation(s)`,
  });

  const missions = verifyMission(program, opts);
  const blocked = missions.filter((m) => !m.achievable);
  checks.push({
    name: 'mission_achievable',
    category: 'verify',
    passed: blocked.length === 0,
    detail: `${missions.length - blocked.length} of ${missions.length} mission report(s) achievable`,
  });
  for (const m of blocked) issues.push(...m.issues);

  return { report: { contracts, checks, issues }, passed: issues.length === 0 && checks.every((c) => c.passed) };
}

/** Fallback modes a mission can continue in: degraded/safe operating modes or robot modes so named. */
function countFallbackModes(program: Program): number {
  let n = program.operatingModes.filter((m) => m.kind !== null && FALLBACK_KINDS.has(m.kind.toLowerCase())).length;
  for (const robot of program.robots) {
    n += robot.modes.filter((m) => /degraded|safe|emergency|recovery/i.test(m.name)).length;
  }
  return n;
}

/** Plain hours (docs/program-language.md §28): `0.75`, `1.5`; up to six decimals so minute-based durations stay exact enough. */
function formatHours(hours: number): string {
  return String(Math.round(hours * 1e6) / 1e6);
}
