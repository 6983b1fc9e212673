/**
 * Operator check for readiness (docs/program-language.md §9.3 factor 13): present only when the
 * configuration lists humans. Our rule: every approver named by a robot mission
 * (`requires approval ACTOR for: …`) must match a configured human by id or role
 * (case-insensitive). Score 100 when all resolve, minus 30 per unresolved approver (floor 0).
 */
import type { ConfiguredHuman } from '../../project/resolve-config.js';
import type { Program } from '../language/ast.js';

export const OPERATOR_FACTOR = 'Operator';
export const OPERATOR_WEIGHT_CAP = 15;
const PENALTY_PER_UNRESOLVED = 30;

export interface UnresolvedApprover {
  robot: string;
  mission: string;
  actor: string;
}

export interface OperatorCheck {
  score: number;
  ok: boolean;
  unresolved: UnresolvedApprover[];
}

export function checkOperators(program: Program, humans: readonly ConfiguredHuman[]): OperatorCheck {
  const known = new Set<string>();
  for (const h of humans) {
    known.add(h.id.toLowerCase());
    if (h.role !== null) known.add(h.role.toLowerCase());
  }
  const unresolved: UnresolvedApprover[] = [];
  const seen = new Set<string>();
  for (const robot of program.robots) {
    for (const mission of robot.missions) {
      const missionName = mission.name ?? `${robot.name}_mission`;
      for (const approval of mission.approvals) {
        if (known.has(approval.actor.toLowerCase())) continue;
        const key = `${robot.name}\u0000${missionName}\u0000${approval.actor}`;
        if (seen.has(key)) continue;
        seen.add(key);
        unresolved.push({ robot: robot.name, mission: missionName, actor: approval.actor });
      }
    }
  }
  return {
    score: Math.max(0, 100 - PENALTY_PER_UNRESOLVED * unresolved.length),
    ok: unresolved.length === 0,
    unresolved,
  };
}
