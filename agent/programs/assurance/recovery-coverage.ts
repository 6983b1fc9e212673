/**
 * Recovery coverage of a program (docs/operations.md § Reports, "Recovery coverage"): eleven known
 * failures, each covered when the text of the recovery policies names one of its keywords, partial
 * when only the continuity policies do. Percentage = (100 × covered + 50 × partial) / 11, truncated.
 */
import type { Program, TriggerPolicyDecl } from '../language/ast.js';

export const KNOWN_FAILURES: ReadonlyArray<{ failure: string; keywords: readonly string[] }> = [
  { failure: 'gps_loss', keywords: ['gps', 'navigation'] },
  { failure: 'battery_critical', keywords: ['battery', 'power'] },
  { failure: 'connectivity_loss', keywords: ['connect', 'network', 'wifi'] },
  { failure: 'sensor_failure', keywords: ['sensor', 'lidar', 'camera'] },
  { failure: 'actuator_failure', keywords: ['actuator', 'drive', 'motor'] },
  { failure: 'provider_timeout', keywords: ['provider', 'timeout'] },
  { failure: 'fleet_peer_loss', keywords: ['fleet', 'peer'] },
  { failure: 'swarm_member_loss', keywords: ['swarm', 'member'] },
  { failure: 'package_unavailable', keywords: ['package', 'provider'] },
  { failure: 'human_approval_timeout', keywords: ['approval', 'operator'] },
  { failure: 'robot_failed', keywords: ['robot', 'failed'] },
];

export type RecoveryCoverageStatus = 'covered' | 'partial' | 'uncovered';

export interface RecoveryCoverageReport {
  percent: number;
  failures: { failure: string; status: RecoveryCoverageStatus }[];
}

/** Name, triggers and actions of the policies as one lower-case text. */
export function policyText(policies: readonly TriggerPolicyDecl[]): string {
  return policies
    .map((p) => [p.name, ...p.triggers.flatMap((t) => [t.condition, ...t.actions])].join(' '))
    .join('\n')
    .toLowerCase();
}

export function recoveryCoverage(program: Program): RecoveryCoverageReport {
  const recovery = policyText(program.recoveryPolicies);
  const continuity = policyText(program.continuityPolicies);
  const failures = KNOWN_FAILURES.map(({ failure, keywords }) => {
    const status: RecoveryCoverageStatus = keywords.some((k) => recovery.includes(k))
      ? 'covered'
      : keywords.some((k) => continuity.includes(k))
        ? 'partial'
        : 'uncovered';
    return { failure, status };
  });
  const covered = failures.filter((f) => f.status === 'covered').length;
  const partial = failures.filter((f) => f.status === 'partial').length;
  return { percent: Math.floor((100 * covered + 50 * partial) / KNOWN_FAILURES.length), failures };
}
