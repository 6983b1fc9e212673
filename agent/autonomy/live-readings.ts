import type { TelemetryEvent } from '../telemetry/telemetry-events.js';

export interface Reading {
  value: unknown;
  unit: string | null;
  timestamp_ms: number;
}

/**
 * The newest value of every (device, metric) and (sensor) seen by the telemetry store, plus when each
 * device was last heard and its last health transition. Filled from the store's ring at start (which
 * the store rehydrates from its history) and then from every appended event.
 */
export class LiveReadings {
  readonly devices = new Map<string, Map<string, Reading>>();
  readonly sensors = new Map<string, Reading & { sensor_type: string }>();
  readonly lastHeard = new Map<string, number>();
  readonly health = new Map<string, { status: string; timestamp_ms: number; reason: string | null }>();

  ingest(e: TelemetryEvent): void {
    switch (e.kind) {
      case 'device': {
        let m = this.devices.get(e.device_id);
        if (!m) this.devices.set(e.device_id, (m = new Map()));
        m.set(e.metric, { value: e.value, unit: e.unit ?? null, timestamp_ms: e.timestamp_ms });
        this.heard(e.device_id, e.timestamp_ms);
        break;
      }
      case 'device_heartbeat':
        this.heard(e.device_id, e.timestamp_ms);
        break;
      case 'sensor':
        this.sensors.set(e.sensor_id, { value: e.value, unit: null, timestamp_ms: e.timestamp_ms, sensor_type: e.sensor_type });
        break;
      case 'health':
        this.health.set(e.target, { status: e.status, timestamp_ms: e.timestamp_ms, reason: e.reason ?? null });
        break;
      default:
        break;
    }
  }

  private heard(id: string, ts: number): void {
    if ((this.lastHeard.get(id) ?? 0) < ts) this.lastHeard.set(id, ts);
  }

  /** The newest numeric value among `names` for a device (first name that has one). */
  numeric(deviceId: string, names: readonly string[]): (Reading & { value: number; metric: string }) | null {
    const m = this.devices.get(deviceId);
    if (!m) return null;
    for (const name of names) {
      const r = m.get(name);
      const v = toNumber(r?.value);
      if (r && v !== null) return { ...r, value: v, metric: name };
    }
    return null;
  }
}

export function toNumber(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}
