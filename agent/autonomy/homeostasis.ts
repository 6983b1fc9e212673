import os from 'node:os';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { DeviceRecord } from '../devices/device-registry.js';
import type { RegistryView } from '../entities/entity-service.js';
import type { LiveReadings } from './live-readings.js';
import type { SetPoint } from './set-points.js';
import { byId } from './order.js';

export interface MetricValue {
  name: string;
  value: number;
  unit: string;
  /** Where the value comes from: `process`, `host`, `telemetry:<device>/<metric>`, `link:<target>`, `heartbeat:<device>`, `metadata`. */
  source: string;
}

export interface DriftSignal {
  metric: string;
  direction: 'above_max' | 'below_min' | 'approaching_limit' | 'offline';
  severity: 'low' | 'medium' | 'high';
  value?: number;
  device_id?: string;
}

export interface Correction {
  metric: string;
  action: string;
  rationale: string;
}

export interface HomeostasisReport {
  entity_id: string;
  kind: string;
  stable: boolean;
  metrics: MetricValue[];
  drift_signals: DriftSignal[];
  corrections: Correction[];
}

/**
 * The agent's own vital figures: CPU share of this process since the previous sample
 * (`process.cpuUsage` delta over wall time, one core = 100), resident memory against the host's
 * memory, host memory in use (`os.freemem`), 1-minute load per CPU (`os.loadavg`) and the event
 * loop's p99 delay.
 */
export class ProcessSampler {
  private last = { cpu: process.cpuUsage(), at: process.hrtime.bigint() };
  private cpuPct = 0;
  private readonly loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 50 });

  constructor() {
    this.loop.enable();
  }

  sample(): MetricValue[] {
    const now = process.hrtime.bigint();
    const elapsedUs = Number(now - this.last.at) / 1000;
    // A sample closer than 100 ms to the previous one keeps the previous figure (too short to mean anything).
    if (elapsedUs >= 100_000) {
      const d = process.cpuUsage(this.last.cpu);
      this.cpuPct = ((d.user + d.system) / elapsedUs) * 100;
      this.last = { cpu: process.cpuUsage(), at: now };
    }
    const total = os.totalmem();
    const mem = process.memoryUsage();
    const round = (v: number, p = 2) => Math.round(v * 10 ** p) / 10 ** p;
    const lagMs = this.loop.count > 0 ? this.loop.percentile(99) / 1e6 : 0;
    return [
      { name: 'cpu_pct', value: round(this.cpuPct), unit: 'pct', source: 'process' },
      { name: 'memory_pct', value: round((mem.rss / total) * 100, 3), unit: 'pct', source: 'process' },
      { name: 'heap_used_mb', value: round(mem.heapUsed / 1048576), unit: 'MiB', source: 'process' },
      { name: 'event_loop_lag_ms', value: round(lagMs), unit: 'ms', source: 'process' },
      { name: 'host_memory_pct', value: round(((total - os.freemem()) / total) * 100), unit: 'pct', source: 'host' },
      { name: 'load_per_cpu', value: round(os.loadavg()[0]! / Math.max(1, os.cpus().length), 3), unit: 'ratio', source: 'host' },
    ];
  }

  close(): void {
    this.loop.disable();
  }
}

const THERMAL = ['temperature_c', 'temperature', 'temp_c'];
const BATTERY = ['battery_pct', 'battery', 'soc_pct'];
const LATENCY = ['latency_ms', 'rtt_ms'];

/** Malformed frames as a share of the frames an attachment received (serial, CAN, MQTT counters). */
export function linkErrorPct(stats: Record<string, unknown>): number | null {
  const n = (o: unknown, k: string): number | null => {
    const v = o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined;
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  for (const part of [stats['frames'], stats['reassembler'], stats]) {
    const bad = n(part, 'malformed');
    if (bad === null) continue;
    const ok = n(part, 'frames_ok') ?? n(part, 'messages_ok');
    const total = ok !== null ? ok + bad : n(stats['link'], 'frames_in');
    if (total === null || total === 0) return null;
    return Math.round((bad / total) * 10000) / 100;
  }
  return null;
}

function correctionAction(metric: string, direction: 'above_max' | 'below_min'): string {
  if (metric === 'memory_pct' || metric === 'heap_used_mb') return 'restart_low_risk_provider';
  if (metric === 'temperature_c' && direction === 'above_max') return 'reduce_workload';
  if (metric === 'battery_pct' && direction === 'below_min') return 'replan_mission';
  if (metric === 'latency_ms' || metric === 'link_error_pct') return 'switch_transport';
  if (metric === 'telemetry_age_s') return 'reconnect_device';
  if (metric === 'cpu_pct' || metric === 'load_per_cpu' || metric === 'event_loop_lag_ms') return 'reduce_workload';
  return 'investigate';
}

/** Drift signals and corrections of a set of metrics against the set points (metrics without one are reported, not judged). */
export function evaluate(metrics: readonly MetricValue[], setPoints: Readonly<Record<string, SetPoint>>) {
  const drift: DriftSignal[] = [];
  const corrections: Correction[] = [];
  for (const m of metrics) {
    const sp = setPoints[m.name];
    if (!sp) continue;
    if (m.value > sp.max) {
      drift.push({ metric: m.name, direction: 'above_max', severity: 'high', value: m.value });
      corrections.push({ metric: m.name, action: correctionAction(m.name, 'above_max'), rationale: `${m.name} = ${m.value} exceeds max ${sp.max}` });
    } else if (m.value < sp.min) {
      drift.push({ metric: m.name, direction: 'below_min', severity: 'medium', value: m.value });
      corrections.push({ metric: m.name, action: correctionAction(m.name, 'below_min'), rationale: `${m.name} = ${m.value} below min ${sp.min}` });
    } else if (sp.warn !== null && m.value >= sp.min + (sp.max - sp.min) * sp.warn) {
      drift.push({ metric: m.name, direction: 'approaching_limit', severity: 'low', value: m.value });
    }
  }
  return { drift, corrections };
}

export interface HomeostasisInputs {
  view: RegistryView;
  devices: ReadonlyMap<string, DeviceRecord>;
  readings: LiveReadings;
  /** Link error share per device id (from the attachment that carries it). */
  linkErrors: ReadonlyMap<string, { pct: number; target: string }>;
  setPoints: Readonly<Record<string, SetPoint>>;
  now: number;
}

type Pick = 'max' | 'min';

/**
 * One report per entity (id order): the metrics of the devices at or under it (newest telemetry,
 * link counters, time since last heard), the entity's metadata for a metric no device reports, the
 * drift against the set points, and the devices under it that are offline.
 */
export function entityReports(inp: HomeostasisInputs): HomeostasisReport[] {
  const { view, readings, setPoints, now } = inp;
  const reports: HomeostasisReport[] = [];
  for (const e of [...view.graph.list()].sort(byId)) {
    const under = view.status.devicesUnder(e.id).map((d) => d.id).sort();
    const metrics: MetricValue[] = [];
    const add = (name: string, pick: Pick, values: Array<{ value: number; source: string }>) => {
      if (values.length > 0) {
        const best = values.reduce((a, b) => (pick === 'max' ? (b.value > a.value ? b : a) : b.value < a.value ? b : a));
        metrics.push({ name, value: Math.round(best.value * 1000) / 1000, unit: setPoints[name]?.unit ?? '', source: best.source });
        return;
      }
      const meta = Number(e.metadata[name]);
      if (e.metadata[name] !== undefined && e.metadata[name] !== '' && Number.isFinite(meta)) metrics.push({ name, value: meta, unit: setPoints[name]?.unit ?? '', source: 'metadata' });
    };
    const tel = (names: readonly string[]) =>
      under.flatMap((id) => {
        const r = readings.numeric(id, names);
        return r ? [{ value: r.value, source: `telemetry:${id}/${r.metric}` }] : [];
      });
    add('temperature_c', 'max', tel(THERMAL));
    add('battery_pct', 'min', tel(BATTERY));
    add('latency_ms', 'max', tel(LATENCY));
    add('cpu_pct', 'max', tel(['cpu_pct']));
    add('memory_pct', 'max', tel(['memory_pct']));
    add(
      'link_error_pct',
      'max',
      under.flatMap((id) => {
        const l = inp.linkErrors.get(id);
        return l ? [{ value: l.pct, source: `link:${l.target}` }] : [];
      }),
    );
    add(
      'telemetry_age_s',
      'max',
      under.flatMap((id) => {
        const heard = readings.lastHeard.get(id) ?? inp.devices.get(id)?.last_seen_ms ?? null;
        return heard !== null ? [{ value: Math.max(0, (now - heard) / 1000), source: `heartbeat:${id}` }] : [];
      }),
    );
    const { drift, corrections } = evaluate(metrics, setPoints);
    for (const id of under) {
      if (inp.devices.get(id)?.health_status !== 'offline') continue;
      drift.push({ metric: 'device_health', direction: 'offline', severity: 'high', device_id: id });
      corrections.push({ metric: 'device_health', action: 'reconnect_device', rationale: `device ${id} is offline${readings.health.get(id)?.reason ? `: ${readings.health.get(id)!.reason}` : ''}` });
    }
    const s = view.status.status(e.id);
    const stable = drift.length === 0 && s.health_status !== 'critical' && s.health_status !== 'offline' && s.readiness_status !== 'not_ready';
    reports.push({ entity_id: e.id, kind: e.kind, stable, metrics, drift_signals: drift, corrections });
  }
  return reports;
}
