/**
 * Smart spaces (docs/spaces.md): facilities, zones, energy systems and emergency status. Every
 * answer is computed on request from the configuration's smart-space model, the device pool
 * (device readiness, agent/devices/device-readiness.ts), live device telemetry, the alert ring and
 * the incident store, and a bounded TCP probe of each gateway. Nothing is stored. No transport imports.
 */
import { API_VERSION } from '../../api/versions.js';
import { badRequest, notFound } from '../core/errors.js';
import { deviceReadiness, devicePoolSummary, type DeviceReadinessStatus } from '../devices/device-readiness.js';
import type { DeviceRecord, DeviceRegistry } from '../devices/device-registry.js';
import type { IncidentService } from '../incidents/incidents.js';
import type { Alert, AlertService } from '../observability/alerts.js';
import type { ProjectContext } from '../project/project-context.js';
import type { TelemetryStore } from '../telemetry/telemetry-store.js';
import { probeGateway, type ProbeResult } from './gateway-probe.js';
import { belongsTo, ESTOP_TYPE, spacesModel, type EnergyEntry, type FacilityEntry, type GatewayEntry, type SpacesModel, type ZoneDevice, type ZoneEntry } from './spaces-config.js';
import { numeric, type ReadingsIndex } from './readings-index.js';

export interface SpacesDeps {
  project: ProjectContext;
  devices: DeviceRegistry;
  telemetry: TelemetryStore;
  /** Latest readings of the smart-space devices (agent/spaces/readings-index.ts). */
  readings: ReadingsIndex;
  alerts: AlertService;
  incidents: IncidentService;
  gatewayProbeTimeoutMs: number;
  now?: () => number;
}

type Json = Record<string, unknown>;

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const DEFAULT_WEIGHTS: Record<string, number> = {
  gateway_availability: 20,
  network_connectivity: 10,
  device_health: 15,
  battery_levels: 10,
  calibration: 5,
  security_status: 15,
  critical_sensors: 15,
  emergency_systems: 10,
};
const COUNT_METRICS = ['people_count', 'occupancy_count'];
const PRESENCE_METRICS = ['presence'];
const ENV_METRICS: Record<string, string[]> = {
  co2_ppm: ['co2_ppm', 'co2'],
  temperature_c: ['temperature_c', 'temperature'],
  humidity_pct: ['humidity_pct', 'humidity'],
  aq_index: ['aq_index', 'aqi'],
};
const DEFAULT_BASELINES = { co2_ppm: 600, temperature_c: 22.0, humidity_pct: 45, aq_index: 50 };
const BATTERY_METRICS = ['battery_percent', 'battery_pct'];
const ESTOP_METRICS = ['estop_engaged', 'estop', 'emergency_stop'];
const WIRELESS = /Zigbee|Z-Wave|Thread|BLE/;
/** Fire, smoke, CO (not CO2), leak: the zone devices that are life-safety devices. */
const LIFE_SAFETY = /Fire|Smoke|CO(?!2)|Leak/;
const ESTOP = ESTOP_TYPE;
const EMERGENCY_WORDS = /\b(fire|smoke|co|leak\w*|evacuat\w*|lockdown)\b/i;

const round2 = (n: number) => Math.round(n * 100) / 100;
const pct = (ok: number, n: number) => (n === 0 ? 100 : Math.round((100 * ok) / n));

/** Whether a text names a device id as a whole word (`gw-1` is not named by `gw-10`). */
export function names(text: string, id: string): boolean {
  const escaped = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9._-])${escaped}($|[^A-Za-z0-9._-]|\\.(?![A-Za-z0-9]))`).test(text);
}

/**
 * A device is faulted by alerts when the newest alert of the given types that names it, raised in
 * the last 24 hours, is not informational: a "device … is back" notice (info) after an "offline"
 * warning clears it (docs/spaces.md § Facility readiness).
 */
function faultAlerted(alerts: readonly Alert[], id: string, types: readonly string[], now: number): boolean {
  let newest: Alert | null = null;
  for (const a of alerts) {
    if (!types.includes(a.alert_type) || a.timestamp_ms < now - DAY) continue;
    if (!names(a.source, id) && !names(a.message, id)) continue;
    if (!newest || a.timestamp_ms >= newest.timestamp_ms) newest = a;
  }
  return newest !== null && newest.severity !== 'info';
}

interface Reach {
  reachable: boolean;
  probe: ProbeResult;
  pool_state: string | null;
}
type Probes = Map<string, Promise<Reach>>;

interface Factor {
  dimension: string;
  score: number;
  weight: number;
  blockers: string[];
}

export class SpacesService {
  constructor(private readonly deps: SpacesDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private model(): SpacesModel {
    const config = this.deps.project.config;
    if (!config) throw badRequest('no resolved configuration loaded');
    return spacesModel(config);
  }

  private facility(m: SpacesModel, id: string): FacilityEntry {
    const f = m.facilities.find((x) => x.id === id);
    if (!f) throw notFound('facility not found');
    return f;
  }

  private zone(m: SpacesModel, id: string): ZoneEntry {
    const z = m.zones.find((x) => x.id === id);
    if (!z) throw notFound('zone not found');
    return z;
  }

  // ----- device pool -----

  private pool(id: string): DeviceRecord | undefined {
    return this.deps.devices.get(id);
  }

  /** §1.2 readiness of a pool device; configured calibration / firmware floor from `[[devices]]` or the facility entry. */
  private readiness(m: SpacesModel, id: string, now: number): DeviceReadinessStatus | null {
    const record = this.pool(id);
    if (!record) return null;
    const configured = this.deps.project.config?.devices.find((d) => d.id === id)?.raw ?? {};
    const entry = [...m.zoneDevices, ...m.gateways, ...m.robots, ...m.energy].find((e) => e.id === id)?.raw ?? {};
    return deviceReadiness(record, { ...entry, ...configured }, now);
  }

  private facilityDeviceIds(m: SpacesModel, fid: string): string[] {
    const ids = new Set<string>();
    for (const list of [m.gateways, m.robots, m.energy, m.zoneDevices]) for (const e of list) if (belongsTo(e, fid)) ids.add(e.id);
    return [...ids].sort();
  }

  // ----- gateways -----

  /** Reachability: the TCP probe when the gateway names an endpoint, and the pool's word on it (offline / failed / critical). */
  private async reachability(g: GatewayEntry): Promise<Reach> {
    const probe = await probeGateway(g.raw, this.deps.gatewayProbeTimeoutMs);
    const record = this.pool(g.id);
    const poolDown = record ? ['offline', 'failed'].includes(record.lifecycle_state) || ['critical', 'offline'].includes(record.health_status) : false;
    return { reachable: probe.reachable !== false && !poolDown, probe, pool_state: record ? `${record.lifecycle_state}/${record.health_status}` : null };
  }

  /** Probes the gateways in parallel; `probes` shares one probe per gateway across a request (the summary). */
  private async reachabilityOf(gateways: GatewayEntry[], probes: Probes = new Map()): Promise<Map<string, Reach>> {
    const results = await Promise.all(
      gateways.map(async (g) => {
        let p = probes.get(g.id);
        if (!p) probes.set(g.id, (p = this.reachability(g)));
        return [g.id, await p] as const;
      }),
    );
    return new Map(results);
  }

  // ----- summaries -----

  private gatewaySummary(g: GatewayEntry): Json {
    return { id: g.id, type: g.type, provider: g.provider, role: g.role, failover_from: g.failover_from, capabilities: g.capabilities };
  }
  private zoneSummary(z: ZoneEntry): Json {
    return { id: z.id, name: z.name, facility: z.facility, parent: z.parent, type: z.type, health_zone: z.health_zone };
  }
  private energySummary(e: EnergyEntry): Json {
    return { id: e.id, type: e.type, facility: e.facility, provider: e.provider, capabilities: e.capabilities };
  }
  private plainSummary(e: { id: string; facility: string | null; type: string | null; provider: string | null; capabilities: string[] }): Json {
    return { id: e.id, facility: e.facility, type: e.type, provider: e.provider, capabilities: e.capabilities };
  }
  private deviceSummary(m: SpacesModel, d: { id: string; facility: string | null; type: string | null; provider: string | null; capabilities: string[]; zone?: string | null; battery_ok?: boolean | null }, now: number): Json {
    const r = this.readiness(m, d.id, now);
    return {
      id: d.id,
      type: d.type,
      facility: d.facility,
      zone: d.zone ?? null,
      provider: d.provider,
      capabilities: d.capabilities,
      health_status: r ? r.health_status : null,
      readiness_blocked: r ? r.readiness_blocked : false,
      trust_level: this.pool(d.id)?.trust_level ?? null,
      battery_ok: d.battery_ok ?? null,
    };
  }
  private trustEntry(id: string): Json {
    const r = this.pool(id);
    return { id, trust_level: r?.trust_level ?? 'unknown', health_status: r?.health_status ?? 'configured', provider: r?.provider ?? null };
  }

  // ----- routes -----

  facilities(): Json {
    const m = this.model();
    return this.facilitiesBody(m);
  }

  private facilitiesBody(m: SpacesModel): Json {
    return {
      version: API_VERSION,
      facilities: m.facilities.map((f) => ({ id: f.id, name: f.name, facility_type: f.facility_type, compliance_profile: f.compliance_profile, source: 'facilities' })),
      count: m.facilities.length,
      gateways: m.gateways.map((g) => this.gatewaySummary(g)),
      zones: m.zones.map((z) => this.zoneSummary(z)),
      readiness_profile: m.profile.name,
    };
  }

  /** The eight readiness dimensions of a facility (docs/spaces.md § Facility readiness). */
  private async evaluate(m: SpacesModel, f: FacilityEntry, now: number, probes: Probes = new Map()): Promise<{ score: number; status: string; mission_ready: boolean; factors: Factor[]; blocking_dimensions: string[] }> {
    const gateways = m.gateways.filter((g) => belongsTo(g, f.id));
    const ids = this.facilityDeviceIds(m, f.id);
    const zoneDevices = m.zoneDevices.filter((d) => belongsTo(d, f.id));
    const reach = await this.reachabilityOf(gateways, probes);
    const weight = (dim: string) => (m.profile.weights ? (m.profile.weights[dim] ?? 0) : DEFAULT_WEIGHTS[dim]!);
    const factors: Factor[] = [];
    const push = (dimension: string, score: number, blockers: string[]) => factors.push({ dimension, score: Math.max(0, Math.min(100, score)), weight: weight(dimension), blockers });

    // gateway_availability
    {
      const blockers: string[] = [];
      let score = 100;
      if (gateways.length === 0) {
        score = 0;
        blockers.push('no_gateway');
      } else {
        for (const g of gateways.filter((x) => x.role === 'primary')) {
          if (!reach.get(g.id)!.reachable) {
            score -= 40;
            blockers.push(`gateway_unreachable:${g.id}`);
          }
          if (m.profile.gatewayFailoverRequired) {
            const backed = m.continuityPairs.some((p) => p.primary === g.id && p.backup) || m.gateways.some((x) => x.failover_from === g.id);
            if (!backed) {
              score -= 35;
              blockers.push(`gateway_backup_missing:${g.id}`);
            }
          }
        }
      }
      push('gateway_availability', score, blockers);
    }
    // network_connectivity
    {
      const withProvider = gateways.filter((g) => g.provider).length;
      const score = Math.round((100 * withProvider) / Math.max(1, gateways.length));
      push('network_connectivity', score, score < 100 ? ['gateway_provider_missing'] : []);
    }
    const ready = new Map(ids.map((id) => [id, this.readiness(m, id, now)]));
    // device_health
    {
      const blockers: string[] = [];
      let healthy = 0;
      for (const id of ids) {
        const r = ready.get(id);
        if (!r) healthy += 1;
        else if (r.readiness_blocked) blockers.push(...r.blockers.map((b) => `${id}:${b}`));
        else if (['healthy', 'ok', 'degraded', 'unknown'].includes(r.health_status)) healthy += 1;
      }
      push('device_health', pct(healthy, ids.length), blockers);
    }
    // battery_levels: battery telemetry of wireless gateways and robots, else their configuration and pool health.
    {
      const wireless = [...gateways, ...m.robots.filter((r) => belongsTo(r, f.id))].filter((d) => d.type !== null && WIRELESS.test(d.type));
      const view = this.deps.readings;
      const blockers: string[] = [];
      let ok = 0;
      for (const d of wireless) {
        const reading = view.latest(d.id, BATTERY_METRICS);
        const good = reading ? reading.value >= 20 : d.raw['battery_ok'] !== false && !['critical', 'offline'].includes(this.pool(d.id)?.health_status ?? 'unknown');
        if (good) ok += 1;
        else blockers.push(`battery_low:${d.id}`);
      }
      push('battery_levels', pct(ok, wireless.length), blockers);
    }
    // calibration
    {
      const blockers: string[] = [];
      let ok = 0;
      for (const id of ids) {
        const r = ready.get(id);
        if (!r || !r.calibration_expired) ok += 1;
        else blockers.push(`calibration_expired:${id}`);
      }
      push('calibration', pct(ok, ids.length), blockers);
    }
    // security_status and emergency_systems: pool readiness and open alerts naming the device.
    const alerts = this.deps.alerts.list();
    const named = (id: string, types: string[]) => faultAlerted(alerts, id, types, now);
    {
      const devices = zoneDevices.filter((d) => (d.type !== null && /Lock|Camera/.test(d.type)) || d.capabilities.includes('access_control') || d.capabilities.includes('security'));
      const blockers: string[] = [];
      let ok = 0;
      for (const d of devices) {
        if (!ready.get(d.id)?.readiness_blocked && !named(d.id, ['tamper', 'security'])) ok += 1;
        else blockers.push(`security_fault:${d.id}`);
      }
      push('security_status', devices.length === 0 ? 70 : pct(ok, devices.length), blockers);
    }
    // critical_sensors: required devices present in the configuration.
    {
      const segment = /commercial|tower/i.test(f.kind ?? '') ? 'commercial' : 'residential';
      const required = m.profile.requiredDevices[segment];
      const missing = required.filter((id) => !ids.includes(id));
      push('critical_sensors', required.length === 0 ? 100 : pct(required.length - missing.length, required.length), missing.map((id) => `required_device_missing:${id}`));
    }
    {
      const devices = zoneDevices.filter((d) => d.type !== null && LIFE_SAFETY.test(d.type));
      const blockers: string[] = [];
      let ok = 0;
      for (const d of devices) {
        const r = ready.get(d.id);
        if (!r?.readiness_blocked && r?.health_status !== 'offline' && !named(d.id, ['health_critical', 'custom'])) ok += 1;
        else blockers.push(`emergency_offline:${d.id}`);
      }
      push('emergency_systems', devices.length === 0 ? 60 : pct(ok, devices.length), blockers);
    }

    const totalWeight = factors.reduce((s, x) => s + x.weight, 0);
    const score = totalWeight === 0 ? 0 : Math.round(factors.reduce((s, x) => s + x.score * x.weight, 0) / totalWeight);
    const blocking_dimensions = factors.filter((x) => x.score < 70).map((x) => x.dimension);
    const min = m.profile.minScore;
    const status = score >= min && blocking_dimensions.length === 0 ? 'ready' : score >= min - 10 ? 'degraded' : 'not_ready';
    return { score, status, mission_ready: status === 'ready', factors, blocking_dimensions };
  }

  async facilityReadiness(id: string): Promise<Json> {
    const m = this.model();
    const f = this.facility(m, id);
    const now = this.now();
    const result = await this.evaluate(m, f, now);
    const mine = <T extends { facility: string | null }>(list: T[]) => list.filter((e) => belongsTo(e, f.id));
    return {
      version: API_VERSION,
      facility_id: f.id,
      readiness_profile: m.profile.name,
      minimum_score: m.profile.minScore,
      gateways: mine(m.gateways).map((g) => this.gatewaySummary(g)),
      zones: m.zones.filter((z) => z.facility === f.id).map((z) => this.zoneSummary(z)),
      robots: mine(m.robots).map((r) => this.plainSummary(r)),
      wearables: mine(m.wearables).map((w) => ({ ...this.plainSummary(w), human_id: w.human_id })),
      humans: mine(m.humans),
      continuity_pairs: m.continuityPairs,
      trust_entries: this.facilityDeviceIds(m, f.id).map((d) => this.trustEntry(d)),
      score: result.score,
      status: result.status,
      mission_ready: result.mission_ready,
      factors: result.factors,
      factor_chart: result.factors,
      blocking_dimensions: result.blocking_dimensions,
    };
  }

  facilityHealth(id: string): Json {
    const m = this.model();
    const f = this.facility(m, id);
    const now = this.now();
    const degraded: Json[] = [];
    const critical: Json[] = [];
    const inPool: DeviceRecord[] = [];
    for (const d of this.facilityDeviceIds(m, f.id)) {
      const record = this.pool(d);
      if (!record) continue;
      inPool.push(record);
      const r = this.readiness(m, d, now)!;
      if (r.readiness_blocked) critical.push({ device_id: d, blockers: r.blockers });
      else if (r.health_status === 'degraded') degraded.push({ device_id: d, health_status: r.health_status });
    }
    return {
      version: API_VERSION,
      facility_id: f.id,
      device_pool: devicePoolSummary(this.deps.devices.list()),
      facility_device_pool: devicePoolSummary(inPool),
      degraded_devices: degraded,
      critical_devices: critical,
      overall_status: critical.length > 0 ? 'critical' : degraded.length > 0 ? 'degraded' : 'healthy',
    };
  }

  facilitySecurity(id: string): Json {
    const m = this.model();
    const f = this.facility(m, id);
    const now = this.now();
    const ids = this.facilityDeviceIds(m, f.id);
    const alerts = this.deps.alerts.list();
    const locks = m.zoneDevices.filter((d) => belongsTo(d, f.id) && d.type !== null && /Lock|Camera/.test(d.type));
    const lockIds = new Set(locks.filter((d) => /Lock/.test(d.type!)).map((d) => d.id));
    const tamper = alerts
      .filter((a) => (a.alert_type === 'tamper' || a.alert_type === 'security') && ids.some((d) => names(a.source, d) || names(a.message, d)))
      .sort((a, b) => b.timestamp_ms - a.timestamp_ms)
      .slice(0, 50);
    const audit = this.deps.telemetry.ring
      .all()
      .filter((e) => e.kind === 'device' && lockIds.has(e.device_id))
      .slice(-50)
      .reverse()
      .map((e) => (e.kind === 'device' ? { device_id: e.device_id, metric: e.metric, value: e.value, timestamp_ms: e.timestamp_ms } : null));
    const sec = m.security;
    const trust = sec['trust'];
    const minTrust = trust && typeof trust === 'object' && !Array.isArray(trust) ? (trust as Json)['min_package_trust'] : undefined;
    return {
      version: API_VERSION,
      facility_id: f.id,
      lockdown_active: alerts.some((a) => /lockdown/i.test(a.message)),
      profile: sec['profile'] ?? null,
      access_policy: sec['access'] ?? null,
      trust_policy: sec['trust'] ?? null,
      privacy_policy: sec['privacy'] ?? null,
      locks_and_cameras: locks.map((d) => this.deviceSummary(m, d, now)),
      tamper_alerts: tamper,
      access_audit_recent: audit,
      package_trust_min: typeof minTrust === 'number' && Number.isInteger(minTrust) ? minTrust : null,
    };
  }

  floorMap(id: string): Json {
    const m = this.model();
    const f = this.facility(m, id);
    const zones = m.zones.filter((z) => belongsTo(z, f.id)).map((z) => ({ zone: this.zoneSummary(z), device_count: m.zoneDevices.filter((d) => d.zone === z.id).length }));
    const roots = zones.filter((z) => !z.zone['parent']);
    return { version: API_VERSION, facility_id: f.id, zones, roots, floor_map: { layout: 'zone_tree', node_count: zones.length } };
  }

  private twinOf(m: SpacesModel, zoneId: string) {
    return m.twins.find((t) => t.entity_id === zoneId) ?? null;
  }

  /** Why a zone has no readings of a kind: no devices at all, or devices that never reported those metrics. */
  private explain(zone: string, devices: ZoneDevice[], metrics: string[]): string {
    if (devices.length === 0) return `zone ${zone} has no devices in the configuration; place one with zone = "${zone}" in [[devices]] or under the zone's devices`;
    return `none of the zone's devices (${devices.map((d) => d.id).join(', ')}) has reported ${metrics.join(', ')} telemetry`;
  }

  zoneOccupancy(id: string): Json {
    const m = this.model();
    const z = this.zone(m, id);
    const now = this.now();
    const devices = m.zoneDevices.filter((d) => d.zone === z.id);
    const view = this.deps.readings;
    const countAt = (at: number): { count: number; any: boolean } => {
      let count = 0;
      let any = false;
      for (const d of devices) {
        const c = view.latest(d.id, COUNT_METRICS, at);
        if (c) {
          any = true;
          count += Math.max(0, Math.round(c.value));
          continue;
        }
        const p = view.latest(d.id, PRESENCE_METRICS, at);
        if (p) {
          any = true;
          if (p.value >= 1) count += 1;
        }
      }
      return { count, any };
    };
    const flowAt = (at: number, count: number) => {
      const before = countAt(at - 5 * MINUTE).count;
      return count > before ? 'inbound' : count < before ? 'outbound' : 'steady';
    };
    const current = countAt(now);
    const twin = this.twinOf(m, z.id);
    const timeline = Array.from({ length: 12 }, (_, i) => {
      const offset = -55 + i * 5;
      const at = now + offset * MINUTE;
      const { count, any } = countAt(at);
      return { offset_minutes: offset, count, flow: any ? flowAt(at, count) : 'steady' };
    });
    const metrics = [...COUNT_METRICS, ...PRESENCE_METRICS];
    return {
      version: API_VERSION,
      zone_id: z.id,
      zone: this.zoneSummary(z),
      occupancy: current.any
        ? { present: current.count > 0, count: current.count, flow: flowAt(now, current.count), source: 'telemetry' }
        : { present: false, count: 0, flow: 'steady', source: 'none' },
      ...(current.any ? {} : { explanation: this.explain(z.id, devices, metrics) }),
      sensors: devices.flatMap((d) => {
        const r = view.latest(d.id, metrics, now);
        return r ? [{ device_id: d.id, metric: r.metric, value: r.value, timestamp_ms: r.timestamp_ms }] : [];
      }),
      timeline,
      twin: twin ? { id: twin.id, mirror: twin.mirror, replay: twin.replay } : null,
    };
  }

  zoneEnvironment(id: string): Json {
    const m = this.model();
    const z = this.zone(m, id);
    const now = this.now();
    const devices = m.zoneDevices.filter((d) => d.zone === z.id);
    const view = this.deps.readings;
    const readings: Record<string, number | null> = {};
    const sensors: Json[] = [];
    for (const [key, names] of Object.entries(ENV_METRICS)) {
      const values: number[] = [];
      for (const d of devices) {
        const r = view.latest(d.id, names, now);
        if (!r) continue;
        values.push(r.value);
        sensors.push({ device_id: d.id, reading: key, metric: r.metric, value: r.value, timestamp_ms: r.timestamp_ms });
      }
      readings[key] = values.length ? round2(values.reduce((s, v) => s + v, 0) / values.length) : null;
    }
    const own = z.raw['baselines'];
    const baselines: Record<string, number> = { ...DEFAULT_BASELINES };
    if (own && typeof own === 'object' && !Array.isArray(own)) {
      for (const k of Object.keys(DEFAULT_BASELINES)) {
        const v = numeric((own as Json)[k]);
        if (v !== null && typeof (own as Json)[k] === 'number') baselines[k] = v;
      }
    }
    const co2 = readings['co2_ppm'] ?? null;
    const aq = readings['aq_index'] ?? null;
    const any = sensors.length > 0;
    const twin = this.twinOf(m, z.id);
    return {
      version: API_VERSION,
      zone_id: z.id,
      zone: this.zoneSummary(z),
      source: any ? 'telemetry' : 'none',
      readings,
      baselines,
      within_baseline: co2 === null && aq === null ? null : (co2 === null || co2 < 800) && (aq === null || aq < 75),
      ...(any ? {} : { explanation: this.explain(z.id, devices, Object.values(ENV_METRICS).flat()) }),
      sensors,
      twin: twin ? { id: twin.id, mirror: twin.mirror } : null,
    };
  }

  energySystems(): Json {
    const m = this.model();
    return this.energyBody(m);
  }

  private energyBody(m: SpacesModel): Json {
    return { version: API_VERSION, systems: m.energy.map((e) => this.energySummary(e)), count: m.energy.length };
  }

  energySystem(id: string): Json {
    const m = this.model();
    const e = m.energy.find((x) => x.id === id);
    if (!e) throw notFound('energy system not found');
    const view = this.deps.readings;
    let latestTs: number | null = null;
    const num = (...names: string[]) => {
      const r = view.latest(e.id, names);
      if (!r) return null;
      latestTs = Math.max(latestTs ?? 0, r.timestamp_ms);
      return r.value;
    };
    const flag = (...names: string[]) => {
      const v = num(...names);
      return v === null ? null : v !== 0;
    };
    const type = e.type ?? '';
    let detail: Json;
    if (/Battery/i.test(type)) detail = { soc_percent: num('soc_percent', 'battery_percent', 'battery_pct', 'soc'), mode: typeof e.raw['mode'] === 'string' ? e.raw['mode'] : null, backup_power: flag('backup_power') };
    else if (/Solar/i.test(type)) detail = { generation_kw: num('generation_kw'), curtailment: flag('curtailment') };
    else if (/Charger|EV/i.test(type)) detail = { session_active: flag('session_active'), load_kw: num('load_kw', 'power_kw') };
    else if (/Meter/i.test(type)) detail = { grid_import_kw: num('grid_import_kw'), demand_response_event: flag('demand_response_event') };
    else {
      const r = this.pool(e.id);
      detail = { status: r ? `${r.lifecycle_state}/${r.health_status}` : 'unknown' };
    }
    const any = latestTs !== null;
    return {
      version: API_VERSION,
      system: this.energySummary(e),
      source: any ? 'telemetry' : 'none',
      detail,
      updated_at_ms: latestTs,
      ...(any ? {} : { explanation: `energy system ${e.id} has reported no telemetry` }),
    };
  }

  private async emergencyBody(m: SpacesModel, now: number, probes: Probes = new Map()): Promise<Json> {
    const lifeSafety = m.zoneDevices.filter((d) => d.type !== null && LIFE_SAFETY.test(d.type)).map((d) => d.id);
    const estops = [...new Set([...m.zoneDevices.filter((d) => d.type !== null && ESTOP.test(d.type)).map((d) => d.id), ...(this.deps.project.config?.devices ?? []).filter((d) => ESTOP.test(d.device_type)).map((d) => d.id)])].sort();
    const mentions = (...texts: string[]) => texts.some((t) => EMERGENCY_WORDS.test(t) || lifeSafety.some((id) => names(t, id)));
    const active: Json[] = [];
    for (const a of this.deps.alerts.list()) {
      if (a.severity === 'critical' && a.timestamp_ms >= now - DAY && mentions(a.message, a.alert_type, a.source)) active.push({ id: a.id, kind: 'alert', severity: a.severity, message: a.message, created_at_ms: a.timestamp_ms });
    }
    // A critical alert opens an incident (docs/operations.md § Alerting): one emergency, not two.
    const listed = new Set(active.map((x) => x['id']));
    for (const i of this.deps.incidents.list()) {
      if (i.source_alert_id !== undefined && listed.has(i.source_alert_id)) continue;
      if (i.status !== 'resolved' && i.severity === 'critical' && mentions(i.title, i.description)) active.push({ id: i.id, kind: 'incident', severity: i.severity, message: i.title, created_at_ms: i.created_at_ms });
    }
    const view = this.deps.readings;
    for (const id of estops) {
      const r = view.latest(id, ESTOP_METRICS, now);
      if (r && r.value !== 0) active.push({ id, kind: 'estop', severity: 'critical', message: `emergency stop ${id} engaged`, created_at_ms: r.changed_at_ms });
    }
    active.sort((a, b) => (b['created_at_ms'] as number) - (a['created_at_ms'] as number));
    const blockers: string[] = [];
    for (const id of lifeSafety) {
      const r = this.readiness(m, id, now);
      if (r?.readiness_blocked) blockers.push(`${id}:${r.blockers.join(',')}`);
      else if (r?.health_status === 'offline') blockers.push(`${id}:offline`);
    }
    const reach = await this.reachabilityOf(m.gateways, probes);
    for (const [id, r] of reach) if (!r.reachable) blockers.push(`gateway_unreachable:${id}`);
    const evacuation_ready = blockers.length === 0;
    return {
      version: API_VERSION,
      active_emergencies: active,
      life_safety_devices: lifeSafety,
      estop_devices: estops,
      continuity_pairs: m.continuityPairs.map((p) => ({ primary: p.primary, backup: p.backup, on_failure: p.on_failure })),
      evacuation_ready,
      evacuation_blockers: blockers,
      status: active.length > 0 ? 'emergency' : !evacuation_ready ? 'degraded' : 'normal',
    };
  }

  async emergencyStatus(): Promise<Json> {
    return this.emergencyBody(this.model(), this.now());
  }

  async summary(): Promise<Json> {
    const m = this.model();
    const now = this.now();
    const probes: Probes = new Map();
    const rollups = await Promise.all(
      m.facilities.map(async (f) => {
        const r = await this.evaluate(m, f, now, probes);
        return { facility_id: f.id, score: r.score, status: r.status, mission_ready: r.mission_ready, factors: r.factors, blocking_dimensions: r.blocking_dimensions };
      }),
    );
    return {
      version: API_VERSION,
      blueprint: 'smart_spaces',
      readiness_profile: m.profile.name,
      facilities: this.facilitiesBody(m),
      energy: this.energyBody(m),
      emergency: await this.emergencyBody(m, now, probes),
      robots: m.robots.map((r) => this.plainSummary(r)),
      wearables: m.wearables.map((w) => ({ ...this.plainSummary(w), human_id: w.human_id })),
      humans: m.humans,
      readiness_rollups: rollups,
      trust_entries: m.facilities.flatMap((f) => this.facilityDeviceIds(m, f.id).map((d) => this.trustEntry(d))),
    };
  }

  devices(facilityId: string | undefined): Json {
    const m = this.model();
    const now = this.now();
    const keep = <T extends { facility: string | null }>(list: T[]) => (facilityId ? list.filter((e) => belongsTo(e, facilityId)) : list);
    const devices = [...keep(m.zoneDevices), ...keep(m.gateways), ...keep(m.robots), ...keep(m.energy)].map((d) => this.deviceSummary(m, d, now));
    return { version: API_VERSION, facility_id: facilityId ? facilityId : null, devices, count: devices.length };
  }

  async gateways(facilityId: string | undefined): Promise<Json> {
    const m = this.model();
    const list = facilityId ? m.gateways.filter((g) => belongsTo(g, facilityId)) : m.gateways;
    const reach = await this.reachabilityOf(list);
    return {
      version: API_VERSION,
      facility_id: facilityId ? facilityId : null,
      gateways: list.map((g) => {
        const r = reach.get(g.id)!;
        return { gateway: this.gatewaySummary(g), reachable: r.reachable, live_probe: r.probe.probe === 'tcp', probe: r.probe, pool_state: r.pool_state };
      }),
    };
  }
}
