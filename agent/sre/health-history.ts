import path from 'node:path';
import { Ring } from '../observability/ring.js';
import { JsonlLog, readJsonl } from '../state/jsonl-log.js';
import { writeFileDurablySync } from '../state/durable-file.js';

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

export const HEALTH_SAMPLES_FILE = 'control-center-health-samples.jsonl';

/**
 * The recorded health history: the newest samples in memory (a ring of `capacity`, default 10 080 =
 * a week of one-minute samples) over an append-only JSON Lines file. A sample is one line, appended
 * and fsynced when it is recorded, so the file grows by a few hundred bytes a minute instead of being
 * rewritten whole (flash storage on a gateway wears with every rewrite); once it holds twice the ring
 * it is compacted to the ring's content by one atomic rewrite (temp file, fsync, rename). A line torn
 * by a crash is skipped on reading. The SRE summary, the burn monitor and readiness trends read from
 * here (docs/observability.md § Recorded history).
 */
export class HealthHistory {
  private linesInFile: number;
  private closed = false;

  private constructor(
    private readonly file: string,
    private readonly ring: Ring<HealthSample>,
    private readonly log: JsonlLog<HealthSample>,
    linesInFile: number,
  ) {
    this.linesInFile = linesInFile;
  }

  static open(stateDir: string, capacity: number): HealthHistory {
    const file = path.join(stateDir, HEALTH_SAMPLES_FILE);
    const { records } = readJsonl<HealthSample>(file);
    const valid = records.filter((r) => r !== null && typeof r === 'object' && typeof r.at_ms === 'number' && typeof r.up_ratio === 'number');
    const ring = new Ring<HealthSample>(capacity);
    ring.restore(valid, 0);
    return new HealthHistory(file, ring, new JsonlLog<HealthSample>(file, { fsync: true }), records.length);
  }

  /** Appends a sample; samples are kept in time order, so one older than the newest is refused. */
  record(sample: HealthSample): boolean {
    // A sample still being taken when the agent closes is dropped, not written to a closed log.
    if (this.closed) return false;
    const newest = this.ring.latest(1)[0];
    if (newest && sample.at_ms < newest.at_ms) return false;
    this.ring.append(sample);
    this.log.append(sample);
    this.linesInFile++;
    if (this.linesInFile >= 2 * this.ring.capacity) this.compact();
    return true;
  }

  private compact(): void {
    this.log.release();
    const items = this.ring.all();
    writeFileDurablySync(this.file, items.map((s) => JSON.stringify(s)).join('\n') + (items.length > 0 ? '\n' : ''));
    this.linesInFile = items.length;
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

  close(): void {
    this.closed = true;
    this.log.close();
  }
}
