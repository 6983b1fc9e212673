/**
 * A mission's runtime state (metadata `mission_state`) and the entity statuses it stands for
 * (docs/operator.md § Mission lifecycle). Shared by the registry (seed missions) and the operator
 * service (pause/resume/cancel, approvals), which writes the state into the entity overlay.
 */
import type { HealthStatus, LifecycleState, ReadinessStatus } from './kinds.js';

/** `Pending`/`PendingApproval`/`Failed` keep the interpreter's and the approval queue's spelling. */
export type MissionState = 'Pending' | 'PendingApproval' | 'running' | 'paused' | 'cancelled' | 'completed' | 'Failed' | 'unknown';

export interface MissionStatuses {
  health_status: HealthStatus;
  readiness_status: ReadinessStatus;
  lifecycle_state: LifecycleState;
}

/** Reads a stated `mission_state`, folding its aliases (`active`/`resumed` are running, `canceled` is cancelled). */
export function parseMissionState(raw: string | undefined): MissionState {
  switch ((raw ?? '').trim()) {
    case 'running':
    case 'active':
    case 'resumed':
    case 'Running':
      return 'running';
    case 'paused':
    case 'Paused':
      return 'paused';
    case 'cancelled':
    case 'canceled':
      return 'cancelled';
    case 'completed':
    case 'Completed':
      return 'completed';
    case 'Failed':
    case 'failed':
      return 'Failed';
    case 'PendingApproval':
      return 'PendingApproval';
    case 'Pending':
    case 'pending':
      return 'Pending';
    default:
      return 'unknown';
  }
}

const STATUSES: Record<MissionState, MissionStatuses> = {
  running: { health_status: 'healthy', readiness_status: 'ready', lifecycle_state: 'active' },
  paused: { health_status: 'warning', readiness_status: 'partial', lifecycle_state: 'suspended' },
  cancelled: { health_status: 'critical', readiness_status: 'not_ready', lifecycle_state: 'degraded' },
  completed: { health_status: 'healthy', readiness_status: 'ready', lifecycle_state: 'archived' },
  Failed: { health_status: 'critical', readiness_status: 'not_ready', lifecycle_state: 'degraded' },
  PendingApproval: { health_status: 'warning', readiness_status: 'not_ready', lifecycle_state: 'assigned' },
  Pending: { health_status: 'healthy', readiness_status: 'partial', lifecycle_state: 'assigned' },
  unknown: { health_status: 'unknown', readiness_status: 'unknown', lifecycle_state: 'unknown' },
};

export function missionStatuses(state: MissionState): MissionStatuses {
  return STATUSES[state];
}

export type MissionMove = 'resume' | 'pause' | 'cancel';

/**
 * The mission lifecycle table: which state each operator move leaves from, and where it goes.
 * Cancelled, completed and failed missions accept no move; a mission awaiting approval can only be
 * cancelled (approval moves it to Pending, from where it can start or be held).
 */
export const MISSION_MOVES: Record<MissionMove, { from: readonly MissionState[]; to: MissionState }> = {
  resume: { from: ['Pending', 'paused'], to: 'running' },
  // A mission that has not started yet may be held before it runs (acceptance check 21 pauses a fresh program mission).
  pause: { from: ['Pending', 'running'], to: 'paused' },
  cancel: { from: ['Pending', 'PendingApproval', 'running', 'paused'], to: 'cancelled' },
};

export function moveAllowed(move: MissionMove, from: MissionState): boolean {
  return MISSION_MOVES[move].from.includes(from);
}
