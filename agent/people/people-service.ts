/**
 * People (docs/people.md): humans and wearables of the configuration, the wearables' live link state
 * and readings from device telemetry, the human-health gate, and human (team) readiness. Nothing is
 * stored: every answer is computed from the configuration, the device pool and the telemetry ring.
 */
import { API_VERSION } from '../../api/versions.js';
import { badRequest, notFound } from '../core/errors.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { ProjectContext } from '../project/project-context.js';
import type { TelemetryStore } from '../telemetry/telemetry-store.js';
import { isAvailable, isTable, certificationsValid, readRegistry, type PeopleRegistry, type Table, type Wearable } from './people-registry.js';
import { evaluateTeam, type TeamReadiness } from './team-readiness.js';

/** A wearable heard within this window is `connected`; heard before it, `stale`. */
export const WEARABLE_STALE_MS = 5 * 60_000;

/**
 * Metrics that describe a person's body: shown only while the human-health gate is active
 * (`[security.human_health] enabled = true` and `SVC_HUMAN_HEALTH_ENABLED=1`).
 */
const HEALTH_METRICS: ReadonlySet<string> = new Set([
  'heart_rate',
  'heart_rate_bpm',
  'hrv_ms',
  'spo2',
  'spo2_pct',
  'skin_temperature_c',
  'body_temperature_c',
  'respiration_rate',
  'stress_index',
  'fatigue_index',
  'fall_detected',
  'health_status',
]);
/** Device metrics of a wearable itself, always shown. */
const DEVICE_METRICS: ReadonlySet<string> = new Set(['battery_percent', 'battery_pct', 'rssi_dbm', 'signal_strength']);

export interface HealthGate {
  config_enabled: boolean;
  env_enabled: boolean;
  active: boolean;
  require_consent: boolean;
  audit_health_reads: boolean;
  retention_days: number;
}

interface WearableLive {
  last_seen_ms: number | null;
  link: 'connected' | 'stale' | 'offline' | 'unknown';
  device: Record<string, unknown>;
  health: Record<string, unknown>;
}

export interface PeopleDeps {
  project: ProjectContext;
  humanHealthEnabled: boolean;
  telemetry: TelemetryStore;
  devices: DeviceRegistry;
  now?: () => number;
}

export class PeopleService {
  constructor(private readonly deps: PeopleDeps) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private tree(): Table {
    const tree = this.deps.project.config?.tree;
    if (!tree) throw badRequest('no resolved configuration loaded');
    return tree;
  }

  /** `[security.human_health]`; with no such table every switch is off (docs/people.md § Human-health gate). */
  gate(tree: Table = this.tree()): HealthGate {
    const security = isTable(tree['security']) ? tree['security'] : {};
    const hh = security['human_health'];
    const envEnabled = this.deps.humanHealthEnabled;
    if (!isTable(hh)) {
      return { config_enabled: false, env_enabled: envEnabled, active: false, require_consent: false, audit_health_reads: false, retention_days: 0 };
    }
    const configEnabled = hh['enabled'] === true;
    const days = hh['retention_days'];
    return {
      config_enabled: configEnabled,
      env_enabled: envEnabled,
      active: configEnabled && envEnabled,
      require_consent: hh['require_consent'] !== false,
      audit_health_reads: hh['audit_health_reads'] !== false,
      retention_days: typeof days === 'number' && Number.isFinite(days) && days >= 0 ? Math.floor(days) : typeof days === 'bigint' ? Number(days) : 0,
    };
  }

  /**
   * The wearables' live state from one pass over the telemetry ring (newest value per metric wins)
   * and the device pool (a wearable attached as a device may be offline or critical there).
   */
  private live(wearables: readonly Wearable[]): Map<string, WearableLive> {
    const out = new Map<string, WearableLive>();
    for (const w of wearables) out.set(w.id, { last_seen_ms: null, link: 'unknown', device: {}, health: {} });
    if (out.size === 0) return out;
    for (const e of this.deps.telemetry.ring.all()) {
      if (e.kind !== 'device' && e.kind !== 'device_heartbeat') continue;
      const live = out.get(e.device_id);
      if (!live) continue;
      if (live.last_seen_ms === null || e.timestamp_ms >= live.last_seen_ms) live.last_seen_ms = e.timestamp_ms;
      if (e.kind !== 'device') continue;
      if (HEALTH_METRICS.has(e.metric)) live.health[e.metric] = e.value;
      else if (DEVICE_METRICS.has(e.metric)) live.device[e.metric] = e.value;
    }
    const now = this.now();
    for (const [id, live] of out) {
      const pooled = this.deps.devices.get(id);
      const poolDown = pooled !== undefined && (pooled.health_status === 'offline' || ['offline', 'failed'].includes(pooled.lifecycle_state));
      if (pooled?.last_seen_ms != null && (live.last_seen_ms === null || pooled.last_seen_ms > live.last_seen_ms)) live.last_seen_ms = pooled.last_seen_ms;
      if (poolDown) live.link = 'offline';
      else if (live.last_seen_ms !== null) live.link = now - live.last_seen_ms <= WEARABLE_STALE_MS ? 'connected' : 'stale';
    }
    return out;
  }

  listHumans() {
    const reg = readRegistry(this.tree());
    const humans = reg.humans.map((h) => ({
      id: h.id,
      role: h.role,
      display_name: h.display_name,
      capabilities: h.capabilities,
      availability: h.availability,
      trust_level: h.trust_level,
      certification_count: h.certifications.length,
      wearable_count: reg.wearables.filter((w) => w.human_id === h.id).length,
    }));
    return { version: API_VERSION, humans, count: humans.length };
  }

  listWearables() {
    const tree = this.tree();
    const reg = readRegistry(tree);
    const gate = this.gate(tree);
    const live = this.live(reg.wearables);
    const wearables = reg.wearables.map((w) => {
      const l = live.get(w.id)!;
      return {
        id: w.id,
        type: w.type,
        provider: w.provider,
        human_id: w.human_id,
        capabilities: w.capabilities,
        trust_level: w.trust_level,
        health_telemetry_allowed: gate.active,
        link: l.link,
        last_seen_ms: l.last_seen_ms,
        device_readings: l.device,
        // Body readings leave the agent only through the gate; otherwise not even whether any exist.
        health_readings: gate.active ? l.health : null,
      };
    });
    return { version: API_VERSION, wearables, count: wearables.length, human_health: gate };
  }

  healthPolicy() {
    return {
      version: API_VERSION,
      policy: this.gate(),
      hint: 'health telemetry is readable only when [security.human_health] enabled = true is configured and the agent runs with SVC_HUMAN_HEALTH_ENABLED=1',
    };
  }

  listHumanTwins() {
    const tree = this.tree();
    const gate = this.gate(tree);
    const twins = readRegistry(tree)
      .twins.filter((t) => (t.entity_type ?? '').toLowerCase() === 'human')
      .map((t) => ({ ...t, mirror: gate.active ? t.mirror : t.mirror.filter((m) => m !== 'health_status') }));
    return { version: API_VERSION, twins, count: twins.length, health_mirror_gated: !gate.active };
  }

  async humansReadiness() {
    const tree = this.tree();
    const reg = readRegistry(tree);
    const now = this.now();
    const operators = reg.humans.map((h) => ({
      id: h.id,
      role: h.role,
      display_name: h.display_name,
      available: isAvailable(h),
      certifications_valid: certificationsValid(h, now),
      trust_level: h.trust_level,
      wearable_count: reg.wearables.filter((w) => w.human_id === h.id).length,
    }));
    const team = await this.team(tree, reg);
    return { version: API_VERSION, operator_count: operators.length, operators, ...(team ? { team_readiness: team } : {}) };
  }

  async humanReadiness(id: string) {
    const tree = this.tree();
    const reg = readRegistry(tree);
    const h = reg.humans.find((x) => x.id === id);
    if (!h) throw notFound('human not found');
    const team = await this.team(tree, reg);
    const live = this.live(reg.wearables);
    return {
      version: API_VERSION,
      human_id: h.id,
      role: h.role,
      display_name: h.display_name,
      available: isAvailable(h),
      capabilities: h.capabilities,
      certifications_valid: certificationsValid(h, this.now()),
      certifications: h.certifications,
      wearables: reg.wearables
        .filter((w) => w.human_id === h.id)
        .map((w) => ({ id: w.id, type: w.type, provider: w.provider, capabilities: w.capabilities, link: live.get(w.id)!.link })),
      trust_level: h.trust_level,
      ...(team
        ? {
            team_readiness: {
              profile: team.profile,
              operator_ready: team.operator_ready,
              team_ready: team.team_ready,
              mission_ready: team.mission_ready,
              total_score: team.total_score,
              minimum_score: team.minimum_score,
              operator_score: team.operators.find((o) => o.human_id === h.id)?.score ?? null,
            },
          }
        : {}),
    };
  }

  /** The team report, only with a loaded program that parses (a broken program leaves it out). */
  private async team(tree: Table, reg: PeopleRegistry): Promise<TeamReadiness | null> {
    const file = this.deps.project.programPath;
    if (!file) return null;
    let capabilities: string[];
    try {
      // The parser loads on the first request that needs it, not at the agent's start.
      const { loadProgram } = await import('../programs/program-files.js');
      capabilities = loadProgram(file).requiresCapabilities.map((r) => r.capability);
    } catch {
      return null;
    }
    const live = this.live(reg.wearables);
    return evaluateTeam(reg, tree, capabilities, (wid) => {
      const link = live.get(wid)?.link;
      return link !== 'stale' && link !== 'offline';
    }, this.now());
  }
}
