import type { EntityGraph } from './graph.js';
import type { Entity } from './model.js';
import type { StatusEvaluator } from './status.js';

/**
 * One normalised set of criteria behind both the inventory query string and the structured query
 * body. Lists mean "any of" for single-valued fields and "all of" for tags, labels and capabilities.
 */
export interface Criteria {
  kinds?: string[];
  health?: string[];
  readiness?: string[];
  trust?: string[];
  lifecycle?: string[];
  tags?: string[];
  anyTags?: string[];
  labels?: string[];
  capabilities?: string[];
  provider?: string[];
  package?: string[];
  firmware?: string[];
  parentId?: string[];
  assignedTo?: string[];
  dependsOn?: string[];
  participatesIn?: string[];
  relatedTo?: { id: string; kind?: string; direction: 'out' | 'in' | 'any' };
  impactedBy?: string;
  metadata?: Record<string, string>;
  search?: string;
}

const lower = (s: string) => s.trim().toLowerCase();
const anyOf = (wanted: string[] | undefined, value: string | undefined) => !wanted || wanted.length === 0 || (value !== undefined && wanted.some((w) => lower(w) === lower(value)));
const allOf = (wanted: string[] | undefined, values: readonly string[]) => !wanted || wanted.every((w) => values.some((v) => lower(v) === lower(w)));

/** `"a,b"` → [a, b]; absent → undefined. */
export function list(v: string | string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const items = (Array.isArray(v) ? v : v.split(',')).map((x) => x.trim()).filter((x) => x !== '');
  return items.length ? items : undefined;
}

/** The entities matching every given criterion, sorted by id. */
export function select(graph: EntityGraph, status: StatusEvaluator, c: Criteria): Entity[] {
  const impacted = c.impactedBy !== undefined ? new Set(graph.impact(c.impactedBy)) : null;
  return graph.list().filter((e) => {
    const s = status.status(e.id);
    if (c.kinds && !c.kinds.some((k) => lower(k.replace(/^custom:/i, '')) === e.kind)) return false;
    if (!anyOf(c.health, s.health_status) || !anyOf(c.readiness, s.readiness_status) || !anyOf(c.trust, s.trust_status) || !anyOf(c.lifecycle, s.lifecycle_state)) return false;
    if (!allOf(c.tags, e.tags) || !allOf(c.labels, e.labels) || !allOf(c.capabilities, e.capabilities)) return false;
    if (c.anyTags && !c.anyTags.some((t) => e.tags.includes(t))) return false;
    if (!anyOf(c.provider, e.provider) || !anyOf(c.package, e.package) || !anyOf(c.firmware, e.firmware_version)) return false;
    if (c.parentId && !c.parentId.includes(e.parent_id ?? '\u0000')) return false;
    const linked = (kind: string, targets: string[] | undefined) => !targets || graph.targetsOf(e.id, kind).some((t) => targets.includes(t));
    if (!linked('assigned_to', c.assignedTo) || !linked('depends_on', c.dependsOn) || !linked('participates_in', c.participatesIn)) return false;
    if (c.relatedTo) {
      const { id, kind, direction } = c.relatedTo;
      const edges = [...(direction !== 'in' ? graph.out(e.id).filter((r) => r.to_id === id) : []), ...(direction !== 'out' ? graph.in(e.id).filter((r) => r.from_id === id) : [])];
      if (!edges.some((r) => kind === undefined || r.kind === kind)) return false;
    }
    if (impacted && !impacted.has(e.id)) return false;
    if (c.metadata && !Object.entries(c.metadata).every(([k, v]) => e.metadata[k] === v)) return false;
    if (c.search) {
      const q = lower(c.search);
      if (![e.id, e.display_name ?? '', e.name ?? '', e.kind].some((x) => x.toLowerCase().includes(q))) return false;
    }
    return true;
  });
}
