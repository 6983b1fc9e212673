/**
 * Failure-scenario safety coverage (docs/operations.md § Reports, "Safety coverage"): seven
 * scenarios, each covered (100), partial (50) or uncovered (0); the percentage is their integer
 * mean. Unlike `safety-coverage.ts` (keywords in the safety rules, used by assure and trust) this
 * looks across safety rules, recovery and continuity policies, mitigations, mission-plan
 * constraints and the hardware verification. Pure.
 */
import type { Program } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import { verifyHardware, type HardwareItem } from '../analysis/verify-hardware.js';
import { safetyRuleTexts } from './safety-coverage.js';
import { policyText } from './recovery-coverage.js';

export type ScenarioStatus = 'covered' | 'partial' | 'uncovered';

export interface ScenarioCoverage {
  scenario: string;
  status: ScenarioStatus;
  score: number;
}

export interface ScenarioCoverageReport {
  percent: number;
  scenarios: ScenarioCoverage[];
  recommendations: string[];
}

export interface ScenarioCoverageOptions {
  config?: ResolvedConfig | null;
  /** Hardware items already computed by the caller (verify hardware with the same config). */
  hardwareItems?: readonly HardwareItem[];
}

const SCORE: Readonly<Record<ScenarioStatus, number>> = { covered: 100, partial: 50, uncovered: 0 };

export function scenarioCoverage(program: Program, options: ScenarioCoverageOptions = {}): ScenarioCoverageReport {
  const rules = safetyRuleTexts(program).join('\n').toLowerCase();
  const recovery = policyText(program.recoveryPolicies);
  const items = options.hardwareItems ?? verifyHardware(program, { config: options.config ?? null }).items;
  const hardwareText = items.map((i) => `${i.category} ${i.message}`).join('\n').toLowerCase();
  const gpsRecovery = recovery.includes('gps') || recovery.includes('connect');
  const hardwareGps = hardwareText.includes('gps');
  const connectivityMissing = items.some((i) => /connectivity/i.test(`${i.category} ${i.message}`) && /missing/i.test(i.message));
  const batteryConstraint = program.missionPlans.some((p) => p.constraints.some((c) => /battery/i.test(c))) || rules.includes('battery');
  const pick = (full: boolean, half: boolean): ScenarioStatus => (full ? 'covered' : half ? 'partial' : 'uncovered');

  const statuses: Array<[string, ScenarioStatus]> = [
    ['obstacle_avoidance', pick(['stop_if', 'lidar', 'obstacle', 'nearest_distance'].some((k) => rules.includes(k)), false)],
    ['gps_failure', pick(gpsRecovery && hardwareGps, gpsRecovery || hardwareGps)],
    ['battery_failure', pick(batteryConstraint, true)],
    ['connectivity_failure', pick(!connectivityMissing && gpsRecovery, !connectivityMissing || gpsRecovery)],
    ['provider_failure', pick(program.mitigations.length > 0, true)],
    ['takeover_failure', pick(program.continuityPolicies.length > 0, false)],
    ['recovery_failure', pick(program.recoveryPolicies.length > 0, false)],
  ];
  const scenarios = statuses.map(([scenario, status]) => ({ scenario, status, score: SCORE[status] }));
  const recommendations: string[] = [];
  if (scenarios[0]!.status === 'uncovered') recommendations.push('Add safety { stop_if ... } or lidar proximity rule for obstacle_avoidance');
  if (!recovery.includes('gps')) recommendations.push('Add recovery_policy on gps_loss with degraded navigation fallback');
  if (scenarios[5]!.status === 'uncovered') recommendations.push('Add continuity_policy with auto_takeover for takeover_failure');
  const percent = Math.floor(scenarios.reduce((s, c) => s + c.score, 0) / scenarios.length);
  return { percent, scenarios, recommendations };
}
