import type { RegistryView } from '../entities/entity-service.js';
import type { Incident } from '../incidents/incidents.js';
import type { Alert } from '../observability/alerts.js';
import type { SuppressionRule } from './set-points.js';
import { byId, cmp } from './order.js';

export type AttentionPriority = 'routine' | 'elevated' | 'important' | 'urgent' | 'critical';
const PRIORITY_RANK: Record<AttentionPriority, number> = { routine: 0, elevated: 1, important: 2, urgent: 3, critical: 4 };
const SEVERITY_BOOST = { info: 0, low: 0.1, medium: 0.25, high: 0.5, critical: 1 } as const;
type Sev = keyof typeof SEVERITY_BOOST;

/** Live health → (priority, severity): the base of an entity's score. */
const HEALTH: Record<string, [AttentionPriority, Sev]> = {
  critical: ['critical', 'critical'],
  offline: ['critical', 'high'],
  degraded: ['urgent', 'high'],
  warning: ['important', 'medium'],
  unknown: ['elevated', 'low'],
  healthy: ['routine', 'info'],
};

/** Alerts younger than this count as open (alerts have no state of their own; incidents do). */
export const ALERT_OPEN_WINDOW_MS = 60 * 60 * 1000;
/** Recency boost: up to 0.5, fading linearly to 0 over ten minutes since the entity's last change. */
const RECENCY_MS = 10 * 60 * 1000;
export const MAX_ITEMS = 50;

export interface AttentionItem {
  event_id: string;
  label: string;
  score: number;
  priority: AttentionPriority;
  suppressed: boolean;
  entity_id: string | null;
  health_status?: string;
  reasons: string[];
  /** When what the item is about last changed (health transition, alert, incident), if known. */
  timestamp: string | null;
}

export interface AttentionInputs {
  view: RegistryView;
  alerts: readonly Alert[];
  incidents: readonly Incident[];
  /** Last health transition per entity id (telemetry `health` events). */
  healthChanged: ReadonlyMap<string, { status: string; timestamp_ms: number }>;
  rules: readonly SuppressionRule[];
  /** Equal scores: critical priority first (else newest first). */
  criticalFirst: boolean;
  now: number;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Whether `text` names `id` as a whole word (so `imu-3` does not match `imu-30`). */
export function names(text: string, id: string): boolean {
  return new RegExp(`(^|[^\\w.-])${escape(id)}($|[^\\w-])`).test(text);
}

const round = (v: number) => Math.round(v * 1000) / 1000;

/**
 * Attention (docs/autonomy.md § Attention): every entity is an item scored by its live health, the
 * open alerts and incidents that name it and how recently any of that changed; alerts and incidents
 * that name no entity are items of their own. Items are ranked (score, then priority, then newest),
 * suppression rules are applied, and the first 50 are returned.
 */
export function attention(inp: AttentionInputs) {
  const { view, now } = inp;
  const openAlerts = inp.alerts.filter((a) => a.severity !== 'info' && now - a.timestamp_ms <= ALERT_OPEN_WINDOW_MS);
  const openIncidents = inp.incidents.filter((i) => i.status !== 'resolved');
  const claimedAlerts = new Set<string>();
  const claimedIncidents = new Set<string>();
  const items: Array<AttentionItem & { ts: number }> = [];

  for (const e of [...view.graph.list()].sort(byId)) {
    const s = view.status.status(e.id);
    const [priority, severity] = HEALTH[s.health_status] ?? HEALTH['unknown']!;
    const reasons: string[] = [`health ${s.health_status}`];
    let ts = inp.healthChanged.get(e.id)?.timestamp_ms ?? 0;
    let mentions = 0;
    for (const a of openAlerts) {
      if (!names(a.message, e.id)) continue;
      claimedAlerts.add(a.id);
      mentions++;
      ts = Math.max(ts, a.timestamp_ms);
      reasons.push(`${a.severity} alert ${a.alert_type}: ${a.message}`);
    }
    for (const i of openIncidents) {
      if (!names(`${i.title} ${i.description}`, e.id)) continue;
      claimedIncidents.add(i.id);
      mentions++;
      ts = Math.max(ts, i.created_at_ms);
      reasons.push(`${i.status} incident ${i.id}: ${i.title}`);
    }
    if (s.trust_status === 'compromised' || s.trust_status === 'untrusted') reasons.push(`trust ${s.trust_status}`);
    const recency = ts > 0 ? 0.5 * Math.max(0, 1 - (now - ts) / RECENCY_MS) : 0;
    const score = PRIORITY_RANK[priority] + SEVERITY_BOOST[severity] + Math.min(1, 0.25 * mentions) + recency;
    items.push({
      event_id: e.id,
      label: `health_${s.health_status}:${e.id}`,
      score: round(score),
      priority,
      suppressed: false,
      entity_id: e.id,
      health_status: s.health_status,
      reasons,
      timestamp: ts > 0 ? new Date(ts).toISOString() : null,
      ts,
    });
  }
  for (const a of openAlerts) {
    if (claimedAlerts.has(a.id)) continue;
    const priority: AttentionPriority = a.severity === 'critical' ? 'critical' : 'urgent';
    const sev: Sev = a.severity === 'critical' ? 'critical' : 'medium';
    const recency = 0.5 * Math.max(0, 1 - (now - a.timestamp_ms) / RECENCY_MS);
    items.push({ event_id: a.id, label: `alert:${a.alert_type}`, score: round(PRIORITY_RANK[priority] + SEVERITY_BOOST[sev] + recency), priority, suppressed: false, entity_id: null, reasons: [a.message], timestamp: new Date(a.timestamp_ms).toISOString(), ts: a.timestamp_ms });
  }
  for (const i of openIncidents) {
    if (claimedIncidents.has(i.id)) continue;
    const priority: AttentionPriority = i.severity === 'critical' ? 'critical' : i.severity === 'warning' ? 'urgent' : 'important';
    const sev: Sev = i.severity === 'critical' ? 'critical' : i.severity === 'warning' ? 'medium' : 'low';
    const recency = 0.5 * Math.max(0, 1 - (now - i.created_at_ms) / RECENCY_MS);
    items.push({ event_id: i.id, label: `incident:${i.title}`, score: round(PRIORITY_RANK[priority] + SEVERITY_BOOST[sev] + recency), priority, suppressed: false, entity_id: null, reasons: [`${i.status}: ${i.description || i.title}`], timestamp: new Date(i.created_at_ms).toISOString(), ts: i.created_at_ms });
  }
  // Always present: the platform's own routine telemetry, the baseline everything else is ranked against.
  items.push({ event_id: 'platform', label: 'routine_telemetry', score: 0, priority: 'routine', suppressed: false, entity_id: null, reasons: ['routine telemetry'], timestamp: null, ts: 0 });

  items.sort((a, b) => b.score - a.score || (inp.criticalFirst ? PRIORITY_RANK[b.priority] - PRIORITY_RANK[a.priority] : 0) || b.ts - a.ts || cmp(a.event_id, b.event_id));

  const anyCritical = items.some((i) => i.priority === 'critical');
  for (const rule of inp.rules) {
    const matches = (i: AttentionItem) => (rule.pattern === 'routine' ? i.priority === 'routine' : i.label.includes(rule.pattern));
    const seen = new Map<string, number>();
    for (const i of items) {
      if (!matches(i)) continue;
      if (rule.pattern === 'routine' && anyCritical) {
        i.suppressed = true;
        continue;
      }
      // Repeats of one label within the window beyond max_repeats are suppressed (ranked order: the strongest stay).
      if (i.ts > 0 && now - i.ts > rule.window_secs * 1000) continue;
      const n = (seen.get(i.label) ?? 0) + 1;
      seen.set(i.label, n);
      if (n > rule.max_repeats) i.suppressed = true;
    }
  }
  const total = items.length;
  return {
    max_items: MAX_ITEMS,
    total,
    truncated: total > MAX_ITEMS,
    items: items.slice(0, MAX_ITEMS).map(({ ts: _ts, ...rest }) => rest),
  };
}
