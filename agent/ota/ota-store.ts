import path from 'node:path';
import { JsonStore } from '../state/json-store.js';
import type { ActiveRollout, RolloutResult, RolloutStep } from '../../api/domains/ota.js';

export type { ActiveRollout, RolloutResult, RolloutStep };

/**
 * The rollout state on disk (docs/operations.md § Rollouts, "State"):
 * - `<state dir>/deploy-state.json` `{current_version, previous_version, history}` — the versions each
 *   target runs, changed only by a rollout that succeeded; history keeps the last 200 results;
 * - `<state dir>/ota/rollout.json` `{rollout}` — the running rollout, rewritten after every step, then
 *   the last one finished. A `running` rollout found when the service opens was cut short by a restart:
 *   it is reported as `interrupted` (steps that completed keep their status; `updated` = took the update,
 *   readiness not measured yet; the rest become `interrupted`) and is not resumed, because a target
 *   caught mid-update needs an operator's look before anything is sent again.
 */

export interface DeployState {
  current_version: Record<string, string>;
  previous_version: Record<string, string>;
  history: unknown[];
}

export const HISTORY_LIMIT = 200;

const record = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
};

export async function openDeployState(stateDir: string, warn: (m: string) => void): Promise<JsonStore<DeployState>> {
  return JsonStore.open<DeployState>(path.join(stateDir, 'deploy-state.json'), {
    defaults: () => ({ current_version: {}, previous_version: {}, history: [] }),
    // A corrupt file reads as empty maps and history (kept aside by the store).
    revive: (raw) => {
      const r = (raw ?? {}) as Partial<DeployState>;
      return { current_version: record(r.current_version), previous_version: record(r.previous_version), history: Array.isArray(r.history) ? r.history.slice(-HISTORY_LIMIT) : [] };
    },
    onWarning: warn,
  });
}

export async function openRolloutStore(stateDir: string, warn: (m: string) => void): Promise<JsonStore<{ rollout: ActiveRollout | null }>> {
  return JsonStore.open<{ rollout: ActiveRollout | null }>(path.join(stateDir, 'ota', 'rollout.json'), {
    defaults: () => ({ rollout: null }),
    revive: (raw) => {
      const r = (raw ?? {}) as { rollout?: ActiveRollout | null };
      return { rollout: r.rollout && typeof r.rollout === 'object' && Array.isArray(r.rollout.rollout?.steps) ? r.rollout : null };
    },
    onWarning: warn,
  });
}
