/**
 * Escalations at run time (docs/decisions.md § Escalations, docs/program-language.md §25): which
 * decision-tree actions a robot may not take on its own, and the port through which a run asks
 * whether an escalation is granted and registers the ones it waits on. The runtime knows no store:
 * the program engine hands it a port (the agent's escalation store, or the CLI's file over the same
 * store), so `agent/programs/runtime` never imports `agent/decisions`.
 */
import type { RobotDecl } from '../language/ast.js';
import type { DecisionLayer } from './decision-trees.js';

/** Safety boundaries that always need control-center approval. */
export const SAFETY_BOUNDARIES = ['disable_kill_switch', 'override_safety_policy', 'accept_unknown_device', 'update_firmware'] as const;

/** `esc-<robot>-1`: safety boundary or `requires_central_approval` (approval by the control center). */
export const centralEscalationId = (robot: string): string => `esc-${robot}-1`;
/** `esc-<robot>-local`: an action outside the robot's `local_decision_authority`. */
export const localEscalationId = (robot: string): string => `esc-${robot}-local`;

/** The action's name: its first word (`slow_to 0.2 m/s` → `slow_to`). */
export function actionName(action: string): string {
  return action.trim().split(/\s+/)[0] ?? '';
}

export function isSafetyBoundary(action: string): boolean {
  return (SAFETY_BOUNDARIES as readonly string[]).includes(actionName(action));
}

/** What a robot declares about its own authority (the `authorities()` record of docs/decisions.md). */
export type RobotAuthority = Pick<RobotDecl, 'name' | 'localDecisionAuthority' | 'requiresCentralApproval'>;

export interface EscalationNeed {
  escalation_id: string;
  entity_id: string;
  action: string;
  reason: string;
}

/**
 * Whether the robot needs approval before taking `action`, decided by a tree of `layer`:
 * a safety boundary or an action listed in `requires_central_approval` → `esc-<robot>-1`; for a
 * local-entity tree, an action missing from a non-empty `local_decision_authority` → `esc-<robot>-local`.
 * Reflex, fleet and control-center trees are not the robot's own authority, so only the first rule
 * applies to them.
 */
export function escalationNeed(robot: RobotAuthority, action: string, layer: DecisionLayer): EscalationNeed | null {
  const name = actionName(action);
  if (isSafetyBoundary(action)) {
    return { escalation_id: centralEscalationId(robot.name), entity_id: robot.name, action, reason: `'${name}' is a safety boundary that needs control-center approval` };
  }
  if (robot.requiresCentralApproval.includes(name)) {
    return { escalation_id: centralEscalationId(robot.name), entity_id: robot.name, action, reason: `'${name}' is listed in requires_central_approval [${robot.requiresCentralApproval.join(', ')}]` };
  }
  if (layer === 'local_entity' && robot.localDecisionAuthority.length > 0 && !robot.localDecisionAuthority.includes(name)) {
    return { escalation_id: localEscalationId(robot.name), entity_id: robot.name, action, reason: `'${name}' is outside local_decision_authority [${robot.localDecisionAuthority.join(', ')}]` };
  }
  return null;
}

/** One escalation a run met: the decision waits on it (`pending`) or it was granted before the run. */
export interface EscalationRecord extends EscalationNeed {
  layer: DecisionLayer;
  tree: string;
  condition: string;
  decision_id: string;
  sim_time_ms: number;
  status: 'pending' | 'granted';
}

/** What a run may ask of the escalation store. */
export interface EscalationPort {
  isGranted(escalationId: string): boolean;
  /** A decision waits on this escalation (status `pending`); the port decides whether to keep it. */
  registerPending(record: EscalationRecord): void;
}
