import path from 'node:path';
import { JsonStore } from '../state/json-store.js';

/** `<state dir>/control-center-report-schedules.json` (docs/operations.md § Reports, "Schedules"). */
export const SCHEDULES_FILE = 'control-center-report-schedules.json';
/** Schedules kept; the oldest is dropped when a new one would exceed it. */
export const MAX_SCHEDULES = 100;

export interface ReportSchedule {
  id: string;
  profile: string;
  format: string;
  destination_url: string;
  interval_hours: number;
  /** Ours: a sub-hour interval that wins over `interval_hours` when present. */
  interval_seconds?: number;
  enabled: boolean;
  created_at_ms: number;
  last_run_ms: number | null;
  /** `delivered`, `delivery_failed` or `export_failed:<http status>`. */
  last_status: string | null;
}

export interface SchedulesFile {
  schedules: ReportSchedule[];
  max_entries: number;
}

/** Milliseconds between two deliveries of a schedule. */
export function scheduleIntervalMs(s: Pick<ReportSchedule, 'interval_hours' | 'interval_seconds'>): number {
  return s.interval_seconds !== undefined ? s.interval_seconds * 1000 : s.interval_hours * 3_600_000;
}

function revive(raw: unknown): SchedulesFile {
  const list = (raw as { schedules?: unknown } | null)?.schedules;
  if (!Array.isArray(list)) throw new Error('schedules is not a list');
  const schedules = list.filter(
    (s): s is ReportSchedule => typeof s === 'object' && s !== null && typeof (s as ReportSchedule).id === 'string' && typeof (s as ReportSchedule).destination_url === 'string',
  );
  return { schedules: schedules.slice(-MAX_SCHEDULES), max_entries: MAX_SCHEDULES };
}

export function openScheduleStore(stateDir: string): Promise<JsonStore<SchedulesFile>> {
  return JsonStore.open<SchedulesFile>(path.join(stateDir, SCHEDULES_FILE), {
    defaults: () => ({ schedules: [], max_entries: MAX_SCHEDULES }),
    revive,
  });
}
