import path from 'node:path';
import { PersistentRing } from './persistent-ring.js';

/** One served request (every REST request, including health and 404s; never WebSocket). */
export interface TraceRecord {
  correlation_id: string;
  method: string;
  path: string;
  status: number;
  timestamp_ms: number;
  duration_ms: number;
}

export const TRACES_FILE = 'control-center-traces.json';

/**
 * The request trace ring; high churn, so its file is rewritten at most once a second (docs/wire-decisions.md D10). Traces
 * are diagnostics, not acknowledged state: a crash may lose the last second of them, and no request
 * waits for them to reach the disk.
 */
export function openTraceRing(stateDir: string, capacity: number): Promise<PersistentRing<TraceRecord>> {
  return PersistentRing.open<TraceRecord>(path.join(stateDir, TRACES_FILE), capacity, { coalesceMs: 1000, durable: false });
}
