import path from 'node:path';
import { JsonStore } from '../state/json-store.js';

export const TWINS_FILE = 'control-center-twins.json';
/** Snapshots kept per twin (oldest dropped), docs/twins.md. */
export const TWIN_HISTORY_MAX = 50;

/** One stored snapshot; `mission_twin` is kept as computed or as pushed. */
export interface TwinSnapshot {
  version: string;
  twin_id: string;
  tenant_id: string;
  program: string;
  captured_at_ms: number;
  mission_twin: Record<string, unknown> & { risks: { mission_ready: boolean; readiness_score: number } & Record<string, unknown> };
}

/**
 * `<state dir>/control-center-twins.json`: `{snapshots: [], latest: [snapshot], history: {<twin id>: [snapshot]}}`.
 * `snapshots` is the older layout (latest snapshots only), read when `latest` is empty and written empty.
 */
export interface TwinFile {
  snapshots: TwinSnapshot[];
  latest: TwinSnapshot[];
  history: Record<string, TwinSnapshot[]>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function isSnapshot(v: unknown): v is TwinSnapshot {
  if (!isObject(v)) return false;
  const risks = isObject(v['mission_twin']) ? v['mission_twin']['risks'] : undefined;
  return (
    typeof v['twin_id'] === 'string' &&
    v['twin_id'] !== '' &&
    typeof v['tenant_id'] === 'string' &&
    typeof v['program'] === 'string' &&
    typeof v['captured_at_ms'] === 'number' &&
    isObject(risks) &&
    typeof risks['mission_ready'] === 'boolean' &&
    typeof risks['readiness_score'] === 'number'
  );
}

/** Keeps what is a snapshot and drops the rest (a hand-edited file loses a bad entry, not the store). */
function revive(raw: unknown): TwinFile {
  if (!isObject(raw)) throw new Error('expected {latest, history}');
  const list = (v: unknown) => (Array.isArray(v) ? v.filter(isSnapshot).map((s) => ({ ...s, version: typeof s.version === 'string' ? s.version : 'v1' })) : []);
  let latest = list(raw['latest']);
  if (latest.length === 0) latest = list(raw['snapshots']);
  const history: Record<string, TwinSnapshot[]> = Object.create(null);
  if (isObject(raw['history'])) {
    for (const [id, ring] of Object.entries(raw['history'])) {
      const kept = list(ring).filter((s) => s.twin_id === id);
      if (kept.length > 0) history[id] = kept.slice(-TWIN_HISTORY_MAX);
    }
  }
  // One latest per id (the last one listed wins), every latest also in its ring.
  const byId = new Map<string, TwinSnapshot>();
  for (const s of latest) byId.set(s.twin_id, s);
  for (const [id, s] of byId) history[id] ??= [s];
  return { snapshots: [], latest: [...byId.values()], history };
}

export function openTwinStore(stateDir: string, onWarning?: (m: string) => void): Promise<JsonStore<TwinFile>> {
  return JsonStore.open<TwinFile>(path.join(stateDir, TWINS_FILE), {
    defaults: () => ({ snapshots: [], latest: [], history: Object.create(null) }),
    revive,
    ...(onWarning ? { onWarning } : {}),
  });
}
