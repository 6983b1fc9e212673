import path from 'node:path';
import { JsonStore } from '../state/json-store.js';

export const HRI_SESSIONS_FILE = 'control-center-hri-sessions.json';

export interface HriAnnotation {
  layer: string;
  text: string;
  author_human_id: string | null;
  created_at_ms: number;
}

/** An active (started) session as stored; configured ones live in the configuration only. */
export interface StoredHriSession {
  id: string;
  session_type: string;
  field_human_id: string | null;
  expert_human_id: string | null;
  robot_id: string | null;
  ar_device_id: string | null;
  camera_device_id: string | null;
  capabilities: string[];
  annotations: HriAnnotation[];
  started_at_ms: number;
}

export interface HriFile {
  sessions: StoredHriSession[];
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function revive(raw: unknown): HriFile {
  const list = (raw as { sessions?: unknown } | null)?.sessions;
  if (!Array.isArray(list)) throw new Error('expected {sessions: [...]}');
  const sessions: StoredHriSession[] = [];
  for (const s of list as Array<Record<string, unknown>>) {
    if (typeof s?.['id'] !== 'string' || s['id'] === '' || sessions.some((x) => x.id === s['id'])) continue;
    sessions.push({
      id: s['id'],
      session_type: str(s['session_type']) ?? 'remote_expert',
      field_human_id: str(s['field_human_id']),
      expert_human_id: str(s['expert_human_id']),
      robot_id: str(s['robot_id']),
      ar_device_id: str(s['ar_device_id']),
      camera_device_id: str(s['camera_device_id']),
      capabilities: Array.isArray(s['capabilities']) ? s['capabilities'].filter((c): c is string => typeof c === 'string') : [],
      annotations: Array.isArray(s['annotations'])
        ? (s['annotations'] as Array<Record<string, unknown>>)
            .filter((a) => typeof a?.['layer'] === 'string' && typeof a['text'] === 'string' && typeof a['created_at_ms'] === 'number')
            .map((a) => ({ layer: a['layer'] as string, text: a['text'] as string, author_human_id: str(a['author_human_id']), created_at_ms: a['created_at_ms'] as number }))
        : [],
      started_at_ms: typeof s['started_at_ms'] === 'number' ? s['started_at_ms'] : 0,
    });
  }
  return { sessions };
}

export function openHriStore(stateDir: string, onWarning?: (m: string) => void): Promise<JsonStore<HriFile>> {
  return JsonStore.open<HriFile>(path.join(stateDir, HRI_SESSIONS_FILE), {
    defaults: () => ({ sessions: [] }),
    revive,
    ...(onWarning ? { onWarning } : {}),
  });
}
