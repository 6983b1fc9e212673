import { JsonStore } from '../state/json-store.js';

/** A decision a robot waits on (registered by the robot's run): `esc-<entity>-1`, `esc-<entity>-local`. */
export interface PendingEscalation {
  escalation_id: string;
  entity_id: string;
  action: string;
  reason: string;
  created_at_ms: number;
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
