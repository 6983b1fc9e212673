/**
 * Device readings as the smart-space routes need them: the value of a metric a device reported
 * last, at or before a given time, taken from the live telemetry ring (docs/spaces.md § Where the
 * numbers come from). Built per request over the devices asked about; nothing is cached.
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

export class TelemetryView {
  /** device → metric → readings, oldest first. */
  private readonly series = new Map<string, Map<string, Reading[]>>();

  constructor(events: readonly TelemetryEvent[], devices: ReadonlySet<string>) {
    for (const e of events) {
      if (e.kind !== 'device' || !devices.has(e.device_id)) continue;
      const value = numeric(e.value);
      if (value === null) continue;
      let metrics = this.series.get(e.device_id);
      if (!metrics) this.series.set(e.device_id, (metrics = new Map()));
      let list = metrics.get(e.metric);
      if (!list) metrics.set(e.metric, (list = []));
      list.push({ value, timestamp_ms: e.timestamp_ms });
    }
  }

  /** The newest reading of the first metric name (in the order given) the device reported, at or before `at`. */
  latest(deviceId: string, metrics: readonly string[], at = Number.POSITIVE_INFINITY): (Reading & { metric: string }) | null {
    const byMetric = this.series.get(deviceId);
    if (!byMetric) return null;
    for (const m of metrics) {
      const list = byMetric.get(m);
      if (!list) continue;
      for (let i = list.length - 1; i >= 0; i -= 1) {
        if (list[i]!.timestamp_ms <= at) return { ...list[i]!, metric: m };
      }
    }
    return null;
  }
}
