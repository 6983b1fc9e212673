import { JsonStore } from '../state/json-store.js';

/** Default escalation store file in the state directory (`SVC_DECISION_ESCALATION_STORE` overrides it). */
export const ESCALATION_FILE = 'decision-escalations.json';

/** A decision a robot waits on (registered by the robot's run): `esc-<entity>-1`, `esc-<entity>-local`. */
export interface PendingEscalation {
  escalation_id: string;
  entity_id: string;
  action: string;
  reason: string;
  created_at_ms: number;
  /** Where the run met it (absent in records written by older versions). */
  layer?: string;
  tree?: string;
  condition?: string;
  decision_id?: string;
}

/** What a program run hands over for an escalation its decision waits on. */
export interface RaisedEscalation {
  escalation_id: string;
  entity_id: string;
  action: string;
  reason: string;
  layer: string;
  tree: string;
  condition: string;
  decision_id: string;
}

/**
 * Registers an escalation a run waits on, unless the id is already pending (the first registration
 * and its time are kept) or granted (the robot may act). Returns whether the store changed.
 */
export function addPendingEscalation(store: JsonStore<EscalationDoc>, e: RaisedEscalation, nowMs: number): boolean {
  const id = e.escalation_id;
  if (store.data.pending[id] || store.data.granted[id]) return false;
  store.change((d) => {
    d.pending[id] = {
      escalation_id: id,
      entity_id: e.entity_id,
      action: e.action,
      reason: e.reason,
      created_at_ms: nowMs,
      layer: e.layer,
      tree: e.tree,
      condition: e.condition,
      decision_id: e.decision_id,
    };
    d.updated_at_ms = nowMs;
  });
  return true;
}

export interface EscalationGrant {
  escalation_id: string;
  entity_id: string;
  approver: string;
  /** The key (or user) that made the call. */
  approved_by_key_id: string | null;
  approved_at_ms: number;
  reason: string;
  /** True when the id was not pending: granted ahead of the robot's request, for an id its program can raise. */
  direct: boolean;
}

export interface EscalationDoc {
  version: 1;
  pending: Record<string, PendingEscalation>;
  granted: Record<string, EscalationGrant>;
  updated_at_ms: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function openEscalationStore(file: string): Promise<JsonStore<EscalationDoc>> {
  return JsonStore.open<EscalationDoc>(file, {
    defaults: () => ({ version: 1, pending: {}, granted: {}, updated_at_ms: 0 }),
    revive: (raw) => {
      if (!isRecord(raw)) throw new Error('expected an escalation store object');
      return {
        version: 1,
        pending: isRecord(raw['pending']) ? (raw['pending'] as Record<string, PendingEscalation>) : {},
        granted: isRecord(raw['granted']) ? (raw['granted'] as Record<string, EscalationGrant>) : {},
        updated_at_ms: typeof raw['updated_at_ms'] === 'number' ? raw['updated_at_ms'] : 0,
      };
    },
  });
}

export interface MeshVote {
  round_id: string;
  entity_id: string;
  action: string;
  layer: string;
  nonce: string;
  reason: string | null;
  timestamp_ms: number;
  received_at_ms: number;
  recorded_by_key_id: string | null;
}

export interface MeshRound {
  round_id: string;
  fleet_name: string | null;
  created_at_ms: number;
  votes: MeshVote[];
}

export interface UsedNonce {
  entity_id: string | null;
  registered_at_ms: number;
  /** `register` (nonce route) or `vote` (carried by a vote). */
  via: 'register' | 'vote';
}

/** This agent's fleet decision mesh state: voting rounds and every nonce it has accepted. */
export interface MeshDoc {
  version: 1;
  rounds: Record<string, MeshRound>;
  nonces: Record<string, UsedNonce>;
  updated_at_ms: number;
}

export function openMeshStore(file: string): Promise<JsonStore<MeshDoc>> {
  return JsonStore.open<MeshDoc>(file, {
    defaults: () => ({ version: 1, rounds: {}, nonces: {}, updated_at_ms: 0 }),
    revive: (raw) => {
      if (!isRecord(raw)) throw new Error('expected a decision mesh object');
      return {
        version: 1,
        rounds: isRecord(raw['rounds']) ? (raw['rounds'] as Record<string, MeshRound>) : {},
        nonces: isRecord(raw['nonces']) ? (raw['nonces'] as Record<string, UsedNonce>) : {},
        updated_at_ms: typeof raw['updated_at_ms'] === 'number' ? raw['updated_at_ms'] : 0,
      };
    },
  });
}
