import path from 'node:path';
import { PersistentRing } from '../observability/persistent-ring.js';

/** One readiness evaluation of the loaded program, as recorded in a sample (docs/observability.md § Recorded history). */
export interface ReadinessSample {
  /** The program's file name (basename), the label trends are matched on. */
  program: string;
  mission_ready: boolean;
  total_score: number;
  maximum_score: number;
  factors: Array<{ factor: string; score: number; weight: number; weighted: number }>;
}

/** What the agent saw at one instant: the device pool, the alert and incident load, and readiness. */
export interface HealthSample {
  at_ms: number;
  devices: {
    total: number;
    /** `health_status` partition, as `device_pool` of /v1/instance. */
    healthy: number;
    degraded: number;
    offline: number;
    unknown: number;
    /** Lifecycle `failed`. */
    failed: number;
    /** Available devices: lifecycle `active`, `healthy` or `assigned` (the reference's availability rule). */
    up: number;
  };
  /** up / total, 1 for an empty pool. */
  up_ratio: number;
  incidents_open: number;
  /** Fault alerts held in the alert ring at that instant (docs/observability.md § Burn rate). */
  fault_alerts: number;
  /** Null when no program is loaded or its evaluation failed. */
  readiness: ReadinessSample | null;
}

export const HEALTH_SAMPLES_FILE = 'control-center-health-samples.json';

/**
 * The recorded health history: a persisted ring of samples (default 10 080, a week of one-minute
 * samples). Writes are coalesced (one atomic, fsynced rewrite at most every few seconds) because a
 * sample is history, not an acknowledged request; `flush()` forces it. The SRE summary, the burn
 * monitor and readiness trends read from here (issue 16 reads readiness forecasts from the same API).
 */
export class HealthHistory {
  private constructor(private readonly ring: PersistentRing<HealthSample>) {}

  static async open(stateDir: string, capacity: number, coalesceMs = 5000): Promise<HealthHistory> {
    const ring = await PersistentRing.open<HealthSample>(path.join(stateDir, HEALTH_SAMPLES_FILE), capacity, { coalesceMs, durable: true });
    return new HealthHistory(ring);
  }

  /** Appends a sample; samples are kept in time order, so one older than the newest is refused. */
  record(sample: HealthSample): boolean {
    const newest = this.ring.latest(1)[0];
    if (newest && sample.at_ms < newest.at_ms) return false;
    this.ring.append(sample);
    return true;
  }

  /** Samples with `from_ms ≤ at_ms ≤ to_ms`, oldest first. */
  between(fromMs: number, toMs = Number.MAX_SAFE_INTEGER): HealthSample[] {
    return this.ring.all().filter((s) => s.at_ms >= fromMs && s.at_ms <= toMs);
  }

  all(): HealthSample[] {
    return this.ring.all();
  }

  /** Readiness evaluations recorded for a program label (file name), oldest first. */
  readiness(programLabel: string): Array<{ at_ms: number } & ReadinessSample> {
    const out: Array<{ at_ms: number } & ReadinessSample> = [];
    for (const s of this.ring.all()) if (s.readiness && s.readiness.program === programLabel) out.push({ at_ms: s.at_ms, ...s.readiness });
    return out;
  }

  get size(): number {
    return this.ring.size;
  }

  get capacity(): number {
    return this.ring.capacity;
  }

  flush(): Promise<void> {
    return this.ring.flush();
  }

  close(): Promise<void> {
    return this.ring.close();
  }
}
