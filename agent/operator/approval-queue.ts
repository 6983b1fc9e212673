import path from 'node:path';
import type { MissionApprovalSeed } from '../entities/sources.js';
import { JsonStore } from '../state/json-store.js';

export type ApprovalStatus = 'pending' | 'approved' | 'rejected';

/** One mission sign-off request and, once resolved, who resolved it. */
export interface ApprovalRecord {
  id: string;
  mission_id: string;
  requested_by: string | null;
  status: ApprovalStatus;
  created_at_ms: number;
  resolved_at_ms?: number;
  /** The key id of the principal who resolved it. */
  resolver?: string;
  /** The signed-in user behind that key (sessions, local CLI), when there is one. */
  resolver_user?: string | null;
  resolver_role?: string;
  note?: string | null;
  /** `config` when the request came from a `[[mission_approvals]]` seed, `operator` when an approval created it. */
  origin?: 'config' | 'operator';
}

interface QueueFile {
  requests: ApprovalRecord[];
}

export const MISSION_APPROVALS_FILE = 'mission-approvals.json';

function revive(raw: unknown): QueueFile {
  const r = raw as Partial<QueueFile> | null;
  if (!r || typeof r !== 'object' || !Array.isArray(r.requests)) throw new Error('expected {requests: [...]}');
  const requests = r.requests.filter(
    (x): x is ApprovalRecord => !!x && typeof x.id === 'string' && typeof x.mission_id === 'string' && ['pending', 'approved', 'rejected'].includes(x.status as string),
  );
  return { requests };
}

/** The mission approval queue, persisted in `mission-approvals.json` of the state directory (unbounded, queue order). */
export class ApprovalQueue {
  private constructor(private readonly store: JsonStore<QueueFile>) {}

  static async open(stateDir: string, onWarning?: (m: string) => void): Promise<ApprovalQueue> {
    const store = await JsonStore.open<QueueFile>(path.join(stateDir, MISSION_APPROVALS_FILE), {
      defaults: () => ({ requests: [] }),
      revive,
      ...(onWarning ? { onWarning } : {}),
    });
    return new ApprovalQueue(store);
  }

  list(): ApprovalRecord[] {
    return this.store.data.requests.slice();
  }

  pendingCount(): number {
    return this.store.data.requests.filter((r) => r.status === 'pending').length;
  }

  /** The first record whose id or mission id is `key`. */
  find(key: string): ApprovalRecord | undefined {
    return this.store.data.requests.find((r) => r.id === key || r.mission_id === key);
  }

  /** Adds the configuration seeds whose id the queue does not hold yet (at load; the GET stays pure). */
  mergeSeeds(seeds: readonly MissionApprovalSeed[], now = Date.now()): number {
    const known = new Set(this.store.data.requests.map((r) => r.id));
    const fresh = seeds.filter((s) => !known.has(s.id));
    if (fresh.length === 0) return 0;
    this.store.change((d) => {
      for (const s of fresh) {
        d.requests.push({ id: s.id, mission_id: s.mission_id, requested_by: s.requested_by, status: s.status, created_at_ms: now, ...(s.note !== null ? { note: s.note } : {}), origin: 'config' });
      }
    });
    return fresh.length;
  }

  append(record: ApprovalRecord): ApprovalRecord {
    this.store.change((d) => {
      d.requests.push(record);
    });
    return record;
  }

  resolve(record: ApprovalRecord, changes: Pick<ApprovalRecord, 'status' | 'resolved_at_ms' | 'resolver' | 'resolver_user' | 'resolver_role' | 'note'>): ApprovalRecord {
    this.store.change(() => {
      Object.assign(record, changes);
    });
    return record;
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
