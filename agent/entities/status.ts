/**
 * Effective health, readiness and trust of every entity. A device speaks for itself (the device pool
 * knows its lifecycle and health); everything else is as good as its members: children, what it
 * contains, devices assigned to it, robots taking part in a mission. An operator's stated status wins.
 */
import type { EntityGraph } from './graph.js';
import type { HealthStatus, ReadinessStatus, TrustStatus } from './kinds.js';
import type { Entity, EntityStatus } from './model.js';

export interface Diagnostic {
  category: string;
  severity: 'critical' | 'error' | 'warning' | 'info';
  message: string;
}

export interface HealthReport {
  entity_id: string;
  entity_type: string;
  health_status: HealthStatus;
  lifecycle_state: string;
  diagnostics: Diagnostic[];
  metrics: { blocked_devices: number; total_devices: number; health_checks_passed: number; health_checks_failed: number };
  children_checked: number;
  sources: string[];
}

export interface ReadinessReport {
  entity_id: string;
  entity_type: string;
  readiness_status: ReadinessStatus;
  mission_ready: boolean;
  score: number | null;
  issues: string[];
  members_checked: number;
  sources: string[];
}

export interface TrustReport {
  entity_id: string;
  entity_type: string;
  trust_status: TrustStatus;
  score: number | null;
  factors: Array<{ factor: string; passed: boolean; weight: number }>;
  issues: string[];
  members_checked: number;
}

/** Device lifecycles that keep a device from doing its job (same rule as POST /v1/readiness/run). */
const BLOCKING_DEVICE_STATES: ReadonlySet<string> = new Set(['quarantined', 'failed', 'offline', 'degraded', 'retired', 'discovered']);

const HEALTH_RANK: Record<HealthStatus, number> = { unknown: 0, healthy: 1, warning: 2, degraded: 3, offline: 4, critical: 5 };
const TRUST_RANK: Record<TrustStatus, number> = { unknown: 0, verified: 1, trusted: 2, untrusted: 3, compromised: 4 };

export const isDevice = (e: Entity) => e.sources.includes('device_pool');

/**
 * Something the configuration declares that is not a device (an organisation, a building, a zone, a
 * provider, an instance of a declared kind). Nothing reports on it directly, so when nothing live
 * says otherwise — no stated status and no member with a known one — it is presumed healthy and ready.
 * A device never heard from stays unknown (docs/entities.md § Kinds and statuses).
 */
export const isConfigured = (e: Entity) => !isDevice(e) && e.sources.includes('config');

function deviceBlocker(e: Entity): string | null {
  const lifecycle = e.metadata['device_lifecycle'] ?? '';
  if (e.metadata['device_health'] === 'offline') return `device ${e.id} is offline`;
  if (BLOCKING_DEVICE_STATES.has(lifecycle)) {
    const why = lifecycle === 'quarantined' && e.metadata['quarantine_reason'] ? `: ${e.metadata['quarantine_reason']}` : '';
    return `device ${e.id} is ${lifecycle}${why}`;
  }
  return null;
}

export class StatusEvaluator {
  private readonly health = new Map<string, HealthReport>();
  private readonly readiness = new Map<string, ReadinessReport>();
  private readonly trust = new Map<string, TrustReport>();
  private readonly visiting = new Set<string>();
  private readonly memberCache = new Map<string, Entity[]>();

  constructor(private readonly graph: EntityGraph) {}

  /** Members an entity's status is made of (cycle-safe: an entity is never its own member). */
  members(id: string): Entity[] {
    const known = this.memberCache.get(id);
    if (known) return known;
    const e = this.graph.get(id);
    if (!e) return [];
    const ids = new Set<string>(this.graph.children(id));
    for (const r of this.graph.out(id)) if (r.kind === 'contains') ids.add(r.to_id);
    for (const r of this.graph.in(id)) if (r.kind === 'assigned_to' || (r.kind === 'participates_in' && e.kind === 'mission')) ids.add(r.from_id);
    ids.delete(id);
    const members = [...ids].sort().map((m) => this.graph.get(m)!);
    this.memberCache.set(id, members);
    return members;
  }

  status(id: string): EntityStatus {
    const e = this.graph.get(id)!;
    return {
      health_status: this.healthReport(id).health_status,
      readiness_status: this.readinessReport(id).readiness_status,
      trust_status: this.trustReport(id).trust_status,
      lifecycle_state: e.lifecycle_state ?? 'unknown',
    };
  }

  /** Devices at or under an entity (the entity itself when it is a device). */
  devicesUnder(id: string): Entity[] {
    const found = new Map<string, Entity>();
    const seen = new Set<string>();
    const walk = (at: string) => {
      if (seen.has(at)) return;
      seen.add(at);
      const e = this.graph.get(at);
      if (!e) return;
      if (isDevice(e)) found.set(e.id, e);
      for (const m of this.members(at)) walk(m.id);
    };
    walk(id);
    return [...found.values()];
  }

  private guard<T>(id: string, memo: Map<string, T>, fallback: () => T, compute: () => T): T {
    const hit = memo.get(id);
    if (hit) return hit;
    if (this.visiting.has(id)) return fallback();
    this.visiting.add(id);
    try {
      const r = compute();
      memo.set(id, r);
      return r;
    } finally {
      this.visiting.delete(id);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Health

  private ownHealth(e: Entity): { status: HealthStatus; reason: string } | null {
    if (e.health_status) return { status: e.health_status, reason: `stated ${e.health_status} by ${e.sources.includes('overlay') ? 'an operator' : 'the configuration'}` };
    if (!isDevice(e)) return null;
    const lifecycle = e.metadata['device_lifecycle'] ?? '';
    const health = e.metadata['device_health'] ?? 'unknown';
    if (lifecycle === 'failed') return { status: 'critical', reason: `device ${e.id} has failed` };
    if (health === 'offline' || lifecycle === 'offline') return { status: 'offline', reason: `device ${e.id} is offline` };
    if (health === 'degraded' || lifecycle === 'degraded') return { status: 'degraded', reason: `device ${e.id} is degraded` };
    if (lifecycle === 'quarantined') return { status: 'warning', reason: `device ${e.id} is quarantined${e.metadata['quarantine_reason'] ? `: ${e.metadata['quarantine_reason']}` : ''}` };
    if (health === 'healthy') return { status: 'healthy', reason: `device ${e.id} is healthy` };
    return { status: 'unknown', reason: `device ${e.id} has not been heard from` };
  }

  healthReport(id: string): HealthReport {
    const e = this.graph.get(id)!;
    return this.guard(
      id,
      this.health,
      () => ({ entity_id: id, entity_type: e.kind, health_status: 'unknown', lifecycle_state: e.lifecycle_state ?? 'unknown', diagnostics: [], metrics: { blocked_devices: 0, total_devices: 0, health_checks_passed: 0, health_checks_failed: 0 }, children_checked: 0, sources: [...e.sources] }),
      () => {
        const diagnostics: Diagnostic[] = [];
        let passed = 0;
        let failed = 0;
        let worst: HealthStatus = 'unknown';
        const consider = (s: HealthStatus) => {
          if (HEALTH_RANK[s] > HEALTH_RANK[worst]) worst = s;
        };
        const own = this.ownHealth(e);
        if (own) {
          consider(own.status);
          if (own.status === 'healthy' || own.status === 'unknown') passed++;
          else {
            failed++;
            diagnostics.push({ category: 'status', severity: own.status === 'critical' ? 'critical' : own.status === 'offline' ? 'error' : 'warning', message: own.reason });
          }
        }
        const members = e.health_status ? [] : this.members(id);
        const sources = new Set<string>(e.sources);
        for (const m of members) {
          const r = this.healthReport(m.id);
          m.sources.forEach((s) => sources.add(s));
          // A dead member leaves the whole degraded; a critical one makes it critical.
          consider(r.health_status === 'offline' ? 'degraded' : r.health_status);
          if (r.health_status === 'healthy' || r.health_status === 'unknown') {
            passed++;
            continue;
          }
          failed++;
          const severity = r.health_status === 'critical' ? 'critical' : r.health_status === 'offline' ? 'error' : 'warning';
          const detail = r.diagnostics[0]?.message;
          const message = detail?.startsWith(`device ${m.id} `) ? detail : `${m.kind} ${m.id} is ${r.health_status}${detail ? ` (${detail})` : ''}`;
          diagnostics.push({ category: m.kind, severity, message });
        }
        const devices = this.devicesUnder(id);
        if (worst === 'unknown' && isConfigured(e)) worst = 'healthy';
        return {
          entity_id: id,
          entity_type: e.kind,
          health_status: worst,
          lifecycle_state: e.lifecycle_state ?? 'unknown',
          diagnostics,
          metrics: { blocked_devices: devices.filter((d) => deviceBlocker(d) !== null).length, total_devices: devices.length, health_checks_passed: passed, health_checks_failed: failed },
          children_checked: members.length,
          sources: [...sources].sort(),
        };
      },
    );
  }

  // -------------------------------------------------------------------------------------------
  // Readiness

  readinessReport(id: string): ReadinessReport {
    const e = this.graph.get(id)!;
    return this.guard(
      id,
      this.readiness,
      () => ({ entity_id: id, entity_type: e.kind, readiness_status: 'unknown', mission_ready: false, score: null, issues: [], members_checked: 0, sources: [...e.sources] }),
      () => {
        const base = { entity_id: id, entity_type: e.kind, sources: [...e.sources].sort() };
        if (e.readiness_status) {
          const s = e.readiness_status;
          const score = s === 'ready' ? 100 : s === 'partial' ? 50 : s === 'not_ready' ? 0 : null;
          return { ...base, readiness_status: s, mission_ready: s === 'ready', score, issues: s === 'ready' ? [] : [`stated ${s}`], members_checked: 0 };
        }
        if (isDevice(e)) {
          const blocker = deviceBlocker(e);
          return { ...base, readiness_status: blocker ? 'not_ready' : 'ready', mission_ready: !blocker, score: blocker ? 0 : 100, issues: blocker ? [blocker] : [], members_checked: 0 };
        }
        const members = this.members(id);
        const issues: string[] = [];
        const sources = new Set<string>(e.sources);
        let ready = 0;
        let partial = 0;
        let known = 0;
        for (const m of members) {
          const r = this.readinessReport(m.id);
          m.sources.forEach((s) => sources.add(s));
          if (r.readiness_status === 'unknown') continue;
          known++;
          if (r.readiness_status === 'ready') ready++;
          else if (r.readiness_status === 'partial') partial++;
          if (r.readiness_status !== 'ready') issues.push(isDevice(m) ? r.issues[0] ?? `device ${m.id} is not ready` : `${m.kind} ${m.id} is ${r.readiness_status}${r.issues[0] ? ` (${r.issues[0]})` : ''}`);
        }
        if (known === 0 && isConfigured(e)) {
          return { ...base, readiness_status: 'ready', mission_ready: true, score: 100, issues: [], members_checked: members.length, sources: [...sources].sort() };
        }
        const status: ReadinessStatus = known === 0 ? 'unknown' : ready === known ? 'ready' : ready === 0 && partial === 0 ? 'not_ready' : 'partial';
        if (known === 0) issues.push(members.length === 0 ? 'nothing to assess: no devices, members or stated readiness' : 'no member has a known readiness');
        return {
          ...base,
          readiness_status: status,
          mission_ready: status === 'ready',
          score: known === 0 ? null : Math.round((100 * (ready + partial / 2)) / known),
          issues,
          members_checked: members.length,
          sources: [...sources].sort(),
        };
      },
    );
  }

  // -------------------------------------------------------------------------------------------
  // Trust

  trustReport(id: string): TrustReport {
    const e = this.graph.get(id)!;
    return this.guard(
      id,
      this.trust,
      () => ({ entity_id: id, entity_type: e.kind, trust_status: 'unknown', score: null, factors: [], issues: [], members_checked: 0 }),
      () => {
        const base = { entity_id: id, entity_type: e.kind };
        if (isDevice(e) || e.security) {
          const lifecycle = e.metadata['device_lifecycle'];
          const level = (e.metadata['trust_level'] ?? '').toLowerCase();
          const factors = [
            { factor: 'identity_declared', passed: Boolean(e.security?.identity), weight: 30 },
            { factor: 'certificate_pinned', passed: (e.security?.certificates.length ?? 0) > 0, weight: 25 },
            { factor: 'operator_trust', passed: ['trusted', 'verified'].includes(level) || Boolean(e.metadata['trusted_by']), weight: 25 },
            { factor: 'not_quarantined', passed: lifecycle !== 'quarantined', weight: 20 },
          ];
          const issues = factors.filter((f) => !f.passed).map((f) => `${f.factor.replace(/_/g, ' ')} check failed`);
          let status: TrustStatus;
          if (e.trust_status) status = e.trust_status;
          else if (lifecycle === 'quarantined') status = 'untrusted';
          else if (level === 'compromised' || level === 'untrusted') status = level;
          else if (level === 'verified' || (factors[0]!.passed && factors[1]!.passed)) status = 'verified';
          else if (level === 'trusted' || e.metadata['trusted_by']) status = 'trusted';
          else status = 'unknown';
          return { ...base, trust_status: status, score: factors.reduce((n, f) => n + (f.passed ? f.weight : 0), 0), factors, issues, members_checked: 0 };
        }
        if (e.trust_status) return { ...base, trust_status: e.trust_status, score: null, factors: [], issues: [], members_checked: 0 };
        const members = this.members(id);
        let worst: TrustStatus = 'unknown';
        const scores: number[] = [];
        const issues: string[] = [];
        for (const m of members) {
          const r = this.trustReport(m.id);
          if (TRUST_RANK[r.trust_status] > TRUST_RANK[worst]) worst = r.trust_status;
          if (r.score !== null) scores.push(r.score);
          if (r.trust_status === 'untrusted' || r.trust_status === 'compromised') issues.push(`${m.kind} ${m.id} is ${r.trust_status}`);
        }
        return {
          ...base,
          trust_status: worst,
          score: scores.length ? Math.round(scores.reduce((a, b) => a + b, 0) / scores.length) : null,
          factors: [],
          issues,
          members_checked: members.length,
        };
      },
    );
  }
}
