/**
 * Threat risk score of a program (docs/operations.md § Reports, "Threat risk"): every exposure the
 * program declares is an assessment weighted low 5, medium 15, high 30, critical 50; the score is
 * their sum capped at 100. Pure.
 */
import type { Program } from '../language/ast.js';
import { auditProgramSecurity } from './security-audit.js';

export type ThreatLevel = 'low' | 'medium' | 'high' | 'critical';

export interface ThreatAssessment {
  level: ThreatLevel;
  threat: string;
}

export interface ThreatRiskReport {
  score: number;
  assessments: ThreatAssessment[];
}

export const THREAT_POINTS: Readonly<Record<ThreatLevel, number>> = { low: 5, medium: 15, high: 30, critical: 50 };

const grants = (text: string): string[] => {
  const list = /\[([^\]]*)\]/.exec(text);
  return (list ? list[1]! : text).split(/[\s,]+/).filter(Boolean);
};

export function threatRisk(program: Program): ThreatRiskReport {
  const assessments: ThreatAssessment[] = [];
  const add = (level: ThreatLevel, threat: string): void => void assessments.push({ level, threat });
  if (program.requiresNetwork !== null) add('medium', 'Program requires a network link');
  for (const policy of program.connectivityPolicies) {
    if (/emergency/i.test(policy.text)) add('low', `Connectivity policy '${policy.name ?? 'connectivity_policy'}' has an emergency channel`);
  }
  for (const name of program.imports) add('medium', `Imports package '${name}'`);
  for (const d of program.deploys) add('high', `Deploys robot '${d.robot}' to ${d.targets.join(', ')}`);
  for (const k of [...program.killSwitches, ...program.robots.flatMap((r) => r.killSwitches)]) {
    if (k.remoteSigned) add('high', `Kill switch '${k.name}' accepts remote (signed) activation`);
  }
  for (const robot of program.robots) {
    for (const decl of robot.generic) {
      if (decl.keyword === 'secure_comm' && /encryption\s*[:=]?\s*"?(none|optional)\b/i.test(decl.text)) {
        add('high', `Robot '${robot.name}' secure_comm allows unencrypted links`);
      }
      if (decl.keyword === 'permissions' && grants(decl.text).some((g) => /actuator|deploy/i.test(g))) {
        add('high', `Robot '${robot.name}' permissions grant actuator or deploy capabilities`);
      }
    }
  }
  for (const f of auditProgramSecurity(program)) {
    add(f.severity === 'error' ? 'high' : f.severity === 'warning' ? 'medium' : 'low', f.message);
  }
  const score = Math.min(100, assessments.reduce((sum, a) => sum + THREAT_POINTS[a.level], 0));
  return { score, assessments };
}
