import path from 'node:path';
import { JsonStore } from '../state/json-store.js';

export const RECOVERY_FILE = 'control-center-recovery.json';
/** Evidence records kept on disk, oldest dropped first (docs/recovery.md, "History"). */
export const HISTORY_RING = 1000;

export interface TimelinePhase {
  phase: string;
  description: string;
  /** When the phase ended (RFC 3339), taken as it happened. */
  timestamp: string;
  /** Measured time since the previous phase (the first: since the request arrived). */
  duration_ms: number;
}

export interface RecoveryEffect {
  strategy: string;
  /** `device_action`: through the device actions (HAL, firmware bridge, device pool); `mission_command`: a mission pause through the operator service; `fleet_agent_command`: a recorded command for a component this agent does not drive itself. */
  kind: 'device_action' | 'mission_command' | 'fleet_agent_command';
  action: string;
  target: string;
  ok: boolean;
  detail: string;
  started_at: string;
  duration_ms: number;
  backup_id?: string | null;
}

export interface Evidence {
  evidence_id: string;
  plan_id: string;
  entity_id: string;
  root_cause: string;
  strategy: string;
  timeline: TimelinePhase[];
  entities_involved: string[];
  safety_validation: 'PASS' | 'FAIL';
  readiness_result: string;
  trust_result: 'PASS' | 'FAIL';
  operator_actions: string[];
  automatic_decisions: string[];
  mission_impact: string;
  validation_gates: Array<{ gate: string; passed: boolean }>;
  effects: RecoveryEffect[];
  executed: boolean;
  duration_secs: number;
  status: 'Success' | 'PartialSuccess' | 'Failed' | 'Aborted' | 'Unsafe';
  timestamp: string;
}

export interface RecoveryFile {
  history: { evidence: Evidence[] };
}

export async function openRecoveryStore(stateDir: string, warn?: (m: string) => void): Promise<JsonStore<RecoveryFile>> {
  return JsonStore.open<RecoveryFile>(path.join(stateDir, RECOVERY_FILE), {
    defaults: () => ({ history: { evidence: [] } }),
    revive: (raw) => {
      const list = (raw as { history?: { evidence?: unknown } } | null)?.history?.evidence;
      if (!Array.isArray(list)) throw new Error('expected {"history":{"evidence":[…]}}');
      return { history: { evidence: list.filter((e): e is Evidence => typeof e === 'object' && e !== null).slice(-HISTORY_RING) } };
    },
    ...(warn ? { onWarning: warn } : {}),
  });
}
