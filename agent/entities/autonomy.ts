import type { AuditRecord } from '../audit/audit-chain.js';
import type { Alert } from '../observability/alerts.js';
import type { EntityGraph } from './graph.js';
import type { Entity } from './model.js';
import type { StatusEvaluator } from './status.js';

const AUTONOMOUS_KINDS: ReadonlySet<string> = new Set(['robot', 'drone', 'vehicle', 'swarm', 'ai_agent', 'fleet']);
const HEALTH_WEIGHT: Record<string, number> = { critical: 100, offline: 80, degraded: 60, warning: 40 };
const READINESS_WEIGHT: Record<string, number> = { not_ready: 50, partial: 25 };

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * The enriched autonomy profile: what the entity may decide on its own (stated in the configuration
 * or by an operator) plus an attention snapshot computed now: which of the things it is made of or
 * affects need attention, ranked, and the alerts that name them.
 */
export function autonomyProfile(graph: EntityGraph, status: StatusEvaluator, e: Entity, alerts: readonly Alert[], now = Date.now()) {
  const stated = e.autonomy ?? null;
  const level = typeof stated?.['level'] === 'string' ? stated['level'] : AUTONOMOUS_KINDS.has(e.kind) ? 'supervised' : 'none';
  const scope = new Set<string>([e.id, ...status.members(e.id).map((m) => m.id), ...status.devicesUnder(e.id).map((d) => d.id), ...graph.impact(e.id)]);
  const items = [...scope]
    .map((id) => {
      const s = status.status(id);
      const health = status.healthReport(id);
      const readiness = status.readinessReport(id);
      const score = (HEALTH_WEIGHT[s.health_status] ?? 0) + (READINESS_WEIGHT[s.readiness_status] ?? 0) + (s.trust_status === 'compromised' ? 90 : s.trust_status === 'untrusted' ? 45 : 0);
      const reason = health.diagnostics[0]?.message ?? readiness.issues[0] ?? `trust is ${s.trust_status}`;
      return { entity_id: id, kind: graph.get(id)!.kind, health_status: s.health_status, readiness_status: s.readiness_status, trust_status: s.trust_status, score, reason };
    })
    .filter((i) => i.score > 0)
    .sort((a, b) => b.score - a.score || a.entity_id.localeCompare(b.entity_id));
  const named = alerts.filter((a) => [...scope].some((id) => a.message.includes(id)));
  return {
    level,
    mode: typeof stated?.['mode'] === 'string' ? stated['mode'] : level === 'none' ? 'manual' : 'nominal',
    source: e.autonomy ? (e.sources.includes('overlay') ? 'overlay' : 'config') : 'default',
    local_decision_authority: strings(stated?.['local_decision_authority']),
    requires_central_approval: strings(stated?.['requires_central_approval']),
    attention: {
      captured_at: new Date(now).toISOString(),
      focus: items[0]?.entity_id ?? null,
      load: items.length,
      scope_size: scope.size,
      items,
      open_alerts: named.length,
      recent_alerts: named.slice(-5).map((a) => ({ id: a.id, alert_type: a.alert_type, severity: a.severity, message: a.message, timestamp_ms: a.timestamp_ms })),
    },
  };
}

function parsePayload(r: AuditRecord): Record<string, unknown> {
  try {
    const v = JSON.parse(r.payload) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function describe(eventType: string, p: Record<string, unknown>, id: string): string {
  switch (eventType) {
    case 'EntityCreated':
      return `registered as ${String(p['entity_type'])}`;
    case 'EntityUpdated':
      return p['entity_id'] ? 'registration updated' : `synced to ${String(p['path'])}`;
    case 'EntityTagged':
      return `tags changed (added: ${strings(p['added']).join(', ') || 'none'}; removed: ${strings(p['removed']).join(', ') || 'none'})`;
    case 'EntityRelated':
      return p['from_id'] === id ? `related: ${id} ${String(p['kind'])} ${String(p['to_id'])}` : `related: ${String(p['from_id'])} ${String(p['kind'])} ${id}`;
    case 'ReadinessChanged': {
      const from = p['from'] as Record<string, unknown> | undefined;
      const to = p['to'] as Record<string, unknown> | undefined;
      return `readiness ${String(from?.['readiness_status'])} -> ${String(to?.['readiness_status'])}`;
    }
    case 'ReadinessGateFailed':
      return 'mission-ready gate failed';
    case 'HealthChanged':
      return `health ${String(p['from'])} -> ${String(p['to'])}`;
    case 'DegradedModeEntered':
      return 'degraded mode entered';
    case 'HealthCheckFailed':
      return `${String(p['failed_checks'])} health checks failed`;
    default:
      return `${String(p['method'])} ${String(p['path'])}`;
  }
}

/**
 * Decisions taken about an entity, oldest first: what the audit chain recorded (registrations, tags,
 * relationships, readiness and health verdicts, API mutations of its routes) and the standing
 * decisions the device pool holds for it (who trusted it, why it is quarantined).
 */
export function entityDecisions(e: Entity, records: Iterable<AuditRecord>) {
  const decisions: Array<{ id: string; timestamp: string; event_type: string; decision: string; actor: string | null; source: string }> = [];
  const routeMark = [`/v1/entities/${e.id}/`, `/v1/entities/${encodeURIComponent(e.id)}/`, `/v1/devices/${e.id}/`, `/v1/devices/${encodeURIComponent(e.id)}/`];
  for (const r of records) {
    const p = parsePayload(r);
    const aboutEntity = p['entity_id'] === e.id || p['from_id'] === e.id || p['to_id'] === e.id;
    const path = typeof p['path'] === 'string' ? `${p['path']}/` : '';
    const aboutRoute = r.event_type === 'control_center.api.mutation' && routeMark.some((m) => path.startsWith(m));
    if (!aboutEntity && !aboutRoute) continue;
    decisions.push({
      id: r.id,
      timestamp: r.timestamp,
      event_type: r.event_type,
      decision: describe(r.event_type, p, e.id),
      actor: typeof p['actor_key_id'] === 'string' ? p['actor_key_id'] : typeof p['actor'] === 'string' ? p['actor'] : null,
      source: typeof p['source'] === 'string' ? p['source'] : 'svc-api',
    });
  }
  const standing: Array<{ decision: string; by: string | null }> = [];
  if (e.metadata['trusted_by']) standing.push({ decision: `trusted (${e.metadata['trust_level'] ?? 'trusted'})`, by: e.metadata['trusted_by'] });
  if (e.metadata['quarantine_reason']) standing.push({ decision: `quarantined: ${e.metadata['quarantine_reason']}`, by: null });
  return { decisions, standing };
}
