/**
 * The readings the smart-space routes answer from (docs/spaces.md § Where the numbers come from):
 * per device and metric, the value changes of the last hour and the time it last reported. Fed
 * from the telemetry ring as events arrive (and seeded from it at start, which the telemetry
 * history rebuilds), so a people counter that reports once a minute is not pushed out of view by
 * a busy IMU the way it would be from the bounded ring. Only the smart-space devices the
 * configuration names are indexed; memory is bounded per series.
 */
import type { TelemetryEvent } from '../telemetry/telemetry-events.js';

export interface Reading {
  value: number;
  timestamp_ms: number;
}

/** A number from a telemetry value: numbers, numeric strings, booleans (true = 1). */
export function numeric(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

interface Series {
  /** Value changes, oldest first: the value at time t is the last change at or before t. */
  changes: Reading[];
  lastSeenMs: number;
}

/** Enough for the occupancy timeline (an hour) and its first bucket's five-minute look-back. */
const WINDOW_MS = 65 * 60_000;
const MAX_CHANGES = 512;

export class ReadingsIndex {
  private readonly series = new Map<string, Map<string, Series>>();

  constructor(private readonly devices: ReadonlySet<string>) {}

  get watched(): ReadonlySet<string> {
    return this.devices;
  }

  add(e: TelemetryEvent): void {
    if (e.kind !== 'device' || !this.devices.has(e.device_id)) return;
    const value = numeric(e.value);
    if (value === null) return;
    let metrics = this.series.get(e.device_id);
    if (!metrics) this.series.set(e.device_id, (metrics = new Map()));
    let s = metrics.get(e.metric);
    if (!s) metrics.set(e.metric, (s = { changes: [], lastSeenMs: 0 }));
    const ts = e.timestamp_ms;
    const last = s.changes.at(-1);
    if (!last || last.value !== value || ts < last.timestamp_ms) {
      s.changes.push({ value, timestamp_ms: ts });
      if (last && ts < last.timestamp_ms) s.changes.sort((a, b) => a.timestamp_ms - b.timestamp_ms);
    }
    s.lastSeenMs = Math.max(s.lastSeenMs, ts);
    // Keep the window plus the one change before it (the value in force when the window opens).
    const cutoff = s.lastSeenMs - WINDOW_MS;
    let drop = 0;
    while (drop + 1 < s.changes.length && s.changes[drop + 1]!.timestamp_ms <= cutoff) drop += 1;
    if (s.changes.length - drop > MAX_CHANGES) drop = s.changes.length - MAX_CHANGES;
    if (drop > 0) s.changes.splice(0, drop);
  }

  /**
   * The reading in force at `at` (default: now) of the first metric name, in the order given, the
   * device reported; its time is the last report when that value is still current, and
   * `changed_at_ms` when the device first reported that value.
   */
  latest(deviceId: string, metrics: readonly string[], at = Number.POSITIVE_INFINITY): (Reading & { metric: string; changed_at_ms: number }) | null {
    const byMetric = this.series.get(deviceId);
    if (!byMetric) return null;
    for (const metric of metrics) {
      const s = byMetric.get(metric);
      if (!s) continue;
      for (let i = s.changes.length - 1; i >= 0; i -= 1) {
        const c = s.changes[i]!;
        if (c.timestamp_ms > at) continue;
        const current = i === s.changes.length - 1 && s.lastSeenMs <= at;
        return { value: c.value, timestamp_ms: current ? s.lastSeenMs : c.timestamp_ms, changed_at_ms: c.timestamp_ms, metric };
      }
    }
    return null;
  }
}
