import type { DeviceRecord } from '../devices/device-registry.js';
import { toNumber, type LiveReadings } from './live-readings.js';
import { cmp } from './order.js';

/** A reading's confidence falls linearly from its base to 0 over this staleness. */
export const STALENESS_HORIZON_S = 60;
export const CONFLICT_RATIO = 0.25;
export const POLICY_MIN_SCORE = 0.6;

export interface FusedReading {
  source: string;
  value: number;
  age_s: number;
  base_confidence: number;
  confidence: number;
}

export interface Quantity {
  metric: string;
  fused_value: number | null;
  score: number;
  readings: FusedReading[];
  conflicts: Array<{ a: string; b: string; relative_difference: number }>;
}

export interface FusionEntry {
  entity_id: string;
  group: string;
  group_kind: 'redundant_group' | 'device_type' | 'sensor_type';
  score: number;
  meets_policy: boolean;
  conflicts: number;
  sources: number;
  source_labels: string[];
  quantities: Quantity[];
}

const r3 = (v: number) => Math.round(v * 1000) / 1000;

function fuse(metric: string, readings: FusedReading[]): Quantity {
  const live = readings.filter((r) => r.confidence > 0);
  const weight = (r: FusedReading) => Math.max(0.01, r.confidence);
  const wsum = live.reduce((s, r) => s + weight(r), 0);
  const conflicts: Quantity['conflicts'] = [];
  for (let i = 0; i < live.length; i++)
    for (let j = i + 1; j < live.length; j++) {
      const a = live[i]!;
      const b = live[j]!;
      const rel = Math.abs(a.value - b.value) / Math.max(Math.abs(a.value), Math.abs(b.value), 1);
      if (rel > CONFLICT_RATIO) conflicts.push({ a: a.source, b: b.source, relative_difference: r3(rel) });
    }
  return {
    metric,
    fused_value: live.length > 0 ? r3(live.reduce((s, r) => s + weight(r) * r.value, 0) / wsum) : null,
    score: r3(readings.reduce((s, r) => s + r.confidence, 0) / Math.max(1, readings.length)),
    readings,
    conflicts,
  };
}

function entry(entity: string, group: string, kind: FusionEntry['group_kind'], members: string[], quantities: Quantity[]): FusionEntry {
  const score = quantities.length > 0 ? r3(quantities.reduce((s, q) => s + q.score, 0) / quantities.length) : 0;
  const conflicts = quantities.reduce((s, q) => s + q.conflicts.length, 0);
  const sources = new Set(quantities.flatMap((q) => q.readings.map((r) => r.source)));
  return { entity_id: entity, group, group_kind: kind, score, meets_policy: quantities.length > 0 && score >= POLICY_MIN_SCORE && conflicts === 0, conflicts, sources: sources.size, source_labels: members, quantities };
}

/**
 * Fusion (docs/autonomy.md § Fusion): devices that measure the same thing (a shared `redundant_group`,
 * or the same device type on one robot) and program sensors of one type are compared metric by metric
 * on their newest telemetry (program sensors only with `SVC_LIVE_FUSION_SENSORS`). Each reading's confidence is 0.9 when its device is trusted or verified
 * (0.6 otherwise), decayed over 60 s of staleness; the fused value is the confidence-weighted mean,
 * conflicts are live readings more than 25 % apart.
 */
export function fusion(devices: readonly DeviceRecord[], readings: LiveReadings, trusted: (d: DeviceRecord) => boolean, now: number, includeSensors: boolean): FusionEntry[] {
  const groups = new Map<string, { entity: string; group: string; kind: FusionEntry['group_kind']; members: DeviceRecord[] }>();
  for (const d of devices) {
    const robot = d.assigned_robot ?? d.robot_id;
    const key = d.redundant_group ? `g\u0000${robot ?? ''}\u0000${d.redundant_group}` : robot ? `t\u0000${robot}\u0000${d.device_type}` : null;
    if (!key) continue;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { entity: robot ?? d.redundant_group!, group: d.redundant_group ?? d.device_type, kind: d.redundant_group ? 'redundant_group' : 'device_type', members: [] }));
    g.members.push(d);
  }
  const out: FusionEntry[] = [];
  for (const g of groups.values()) {
    if (g.members.length < 2) continue;
    const members = g.members.map((d) => d.id).sort();
    const metrics = new Set(g.members.flatMap((d) => [...(readings.devices.get(d.id)?.keys() ?? [])]));
    const quantities: Quantity[] = [];
    for (const metric of [...metrics].sort()) {
      const rs: FusedReading[] = [];
      for (const d of g.members) {
        const r = readings.devices.get(d.id)?.get(metric);
        const v = toNumber(r?.value);
        if (!r || v === null) continue;
        const age = Math.max(0, (now - r.timestamp_ms) / 1000);
        const base = trusted(d) ? 0.9 : 0.6;
        rs.push({ source: d.id, value: v, age_s: r3(age), base_confidence: base, confidence: r3(base * Math.max(0, 1 - age / STALENESS_HORIZON_S)) });
      }
      if (rs.length >= 2) quantities.push(fuse(metric, rs.sort((a, b) => cmp(a.source, b.source))));
    }
    out.push(entry(g.entity, g.group, g.kind, members, quantities));
  }
  const byType = new Map<string, string[]>();
  for (const [id, s] of includeSensors ? readings.sensors : []) byType.set(s.sensor_type, [...(byType.get(s.sensor_type) ?? []), id]);
  for (const [type, ids] of byType) {
    if (ids.length < 2) continue;
    const rs = ids.flatMap((id) => {
      const s = readings.sensors.get(id)!;
      const v = toNumber(s.value);
      if (v === null) return [];
      const age = Math.max(0, (now - s.timestamp_ms) / 1000);
      return [{ source: id, value: v, age_s: r3(age), base_confidence: 0.6, confidence: r3(0.6 * Math.max(0, 1 - age / STALENESS_HORIZON_S)) }];
    });
    out.push(entry(`sensor_type:${type}`, type, 'sensor_type', ids.sort(), rs.length >= 2 ? [fuse(type, rs)] : []));
  }
  return out.sort((a, b) => cmp(a.entity_id, b.entity_id) || cmp(a.group, b.group));
}
