import { TEXT_FIELDS } from './declaration.js';
import { relationshipKey, type Entity, type Relationship } from './model.js';
import type { Derived } from './sources.js';
import type { TagEdits } from './overlay-store.js';

const SCALARS = [
  ...TEXT_FIELDS,
  'location',
  'security',
  'health_status',
  'readiness_status',
  'trust_status',
  'lifecycle_state',
  'governance',
  'autonomy',
  'audit',
] as const satisfies ReadonlyArray<keyof Entity>;

const union = (a: readonly string[], b: readonly string[]) => [...new Set([...a, ...b])];

/**
 * Folds a later view of the same entity into an earlier one: stated fields of the later source win,
 * lists are united, metadata merged. The kind stays the first source's, except that an operator's
 * overlay may restate it and a specific kind replaces the generic `device`.
 */
function mergeEntity(base: Entity, extra: Entity): void {
  if (extra.sources.includes('overlay') || (base.kind === 'device' && extra.kind !== 'device')) {
    base.kind = extra.kind;
    base.custom = extra.custom;
  }
  for (const f of SCALARS) if (extra[f] !== undefined) (base as unknown as Record<string, unknown>)[f] = extra[f];
  base.labels = union(base.labels, extra.labels);
  base.tags = union(base.tags, extra.tags);
  base.capabilities = union(base.capabilities, extra.capabilities);
  base.metadata = { ...base.metadata, ...extra.metadata };
  base.sources = union(base.sources, extra.sources) as Entity['sources'];
}

/** Relationship kinds along which trouble travels backwards: whoever depends on, consumes, is assigned to or belongs to X is hit when X is. */
const IMPACT_INCOMING: ReadonlySet<string> = new Set(['depends_on', 'consumes', 'assigned_to', 'belongs_to']);
const DEPENDENCY: ReadonlySet<string> = new Set(['depends_on', 'consumes']);

/**
 * The merged registry at one moment: every source's entities folded by id, operator tag edits
 * applied, relationships de-duplicated and indexed. Built per request from live state, so it never
 * goes stale; relationships naming an entity that does not exist are kept aside as `dangling`.
 */
export class EntityGraph {
  readonly entities = new Map<string, Entity>();
  readonly relationships: Relationship[] = [];
  readonly dangling: Relationship[] = [];
  private readonly outgoing = new Map<string, Relationship[]>();
  private readonly incoming = new Map<string, Relationship[]>();
  private readonly childIds = new Map<string, string[]>();

  constructor(layers: readonly Derived[], tagEdits: Readonly<Record<string, TagEdits>> = {}) {
    const edges = new Map<string, Relationship>();
    for (const layer of layers) {
      for (const e of layer.entities) {
        const existing = this.entities.get(e.id);
        if (existing) mergeEntity(existing, e);
        else this.entities.set(e.id, { ...e, labels: [...e.labels], tags: [...e.tags], capabilities: [...e.capabilities], metadata: { ...e.metadata }, sources: [...e.sources] });
      }
      for (const r of layer.relationships) {
        const key = relationshipKey(r);
        const prior = edges.get(key);
        edges.set(key, prior && r.label === undefined ? prior : r);
      }
    }
    for (const [id, edit] of Object.entries(tagEdits)) {
      const e = this.entities.get(id);
      if (!e) continue;
      const removed = new Set(edit.removed);
      e.tags = union(e.tags, edit.added).filter((t) => !removed.has(t));
    }
    for (const e of this.entities.values()) {
      e.tags.sort();
      e.capabilities.sort();
      if (e.parent_id !== undefined && e.parent_id !== e.id && this.entities.has(e.parent_id)) push(this.childIds, e.parent_id, e.id);
    }
    for (const list of this.childIds.values()) list.sort();
    for (const r of [...edges.values()].sort(compareEdges)) {
      if (!this.entities.has(r.from_id) || !this.entities.has(r.to_id)) {
        this.dangling.push(r);
        continue;
      }
      this.relationships.push(r);
      push(this.outgoing, r.from_id, r);
      push(this.incoming, r.to_id, r);
    }
  }

  get(id: string): Entity | undefined {
    return this.entities.get(id);
  }

  /** Entities sorted by id. */
  list(): Entity[] {
    return [...this.entities.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  children(id: string): string[] {
    return this.childIds.get(id) ?? [];
  }

  out(id: string): readonly Relationship[] {
    return this.outgoing.get(id) ?? [];
  }

  in(id: string): readonly Relationship[] {
    return this.incoming.get(id) ?? [];
  }

  /** Edges where the entity is either end. */
  relationshipsOf(id: string): Relationship[] {
    return [...this.out(id), ...this.in(id)].sort(compareEdges);
  }

  /**
   * What is hit when this entity fails: breadth-first over its outgoing edges, plus incoming edges of
   * kind depends_on, consumes, assigned_to and belongs_to. Self excluded; sorted.
   */
  impact(id: string): string[] {
    const seen = new Set<string>([id]);
    const queue = [id];
    while (queue.length > 0) {
      const at = queue.shift()!;
      const next = [...this.out(at).map((r) => r.to_id), ...this.in(at).filter((r) => IMPACT_INCOMING.has(r.kind)).map((r) => r.from_id)];
      for (const n of next) {
        if (seen.has(n)) continue;
        seen.add(n);
        queue.push(n);
      }
    }
    seen.delete(id);
    return [...seen].sort();
  }

  /** Follows the first outgoing depends_on/consumes edge from entity to entity, stopping at a cycle. */
  dependencyChain(id: string): string[] {
    const chain: string[] = [];
    const seen = new Set<string>([id]);
    let at = id;
    for (;;) {
      const edge = this.out(at).find((r) => DEPENDENCY.has(r.kind));
      if (!edge || seen.has(edge.to_id)) return chain;
      chain.push(edge.to_id);
      seen.add(edge.to_id);
      at = edge.to_id;
    }
  }

  /**
   * Why a dangling relationship was not drawn: the ids that name no entity, and one line saying so
   * with a likely meant id when there is one (`provider:ublox` → `ublox`, a different case, or an
   * entity of that name), e.g. `crane-3 depends_on provider:liebherr: no entity 'provider:liebherr'
   * (did you mean 'liebherr'?)`.
   */
  unresolved(r: Relationship): { missing: string[]; diagnostic: string } {
    const missing = [r.from_id, r.to_id].filter((id) => !this.entities.has(id));
    const notes = missing.map((id) => {
      const guess = this.likelyMeant(id);
      return `no entity '${id}'${guess ? ` (did you mean '${guess}'?)` : ''}`;
    });
    return { missing, diagnostic: `${r.from_id} ${r.kind} ${r.to_id}: ${notes.join('; ')}` };
  }

  private likelyMeant(id: string): string | null {
    const lower = id.toLowerCase();
    const bare = lower.includes(':') ? lower.slice(lower.indexOf(':') + 1) : null;
    const squash = (x: string) => x.toLowerCase().replace(/[^a-z0-9:]+/g, '');
    for (const e of this.list()) {
      const candidate = e.id.toLowerCase();
      if (candidate === lower || candidate === bare || squash(e.id) === squash(id) || e.name?.toLowerCase() === lower || (bare !== null && e.name?.toLowerCase() === bare)) return e.id;
    }
    return null;
  }

  /** Ids related to `id` by an edge of `kind` pointing from them to it (e.g. devices assigned_to a robot). */
  sourcesOf(id: string, kind: string): string[] {
    return this.in(id).filter((r) => r.kind === kind).map((r) => r.from_id);
  }

  targetsOf(id: string, kind: string): string[] {
    return this.out(id).filter((r) => r.kind === kind).map((r) => r.to_id);
  }
}

function push<T>(index: Map<string, T[]>, key: string, value: T): void {
  const list = index.get(key);
  if (list) list.push(value);
  else index.set(key, [value]);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function compareEdges(a: Relationship, b: Relationship): number {
  return cmp(a.from_id, b.from_id) || cmp(a.kind, b.kind) || cmp(a.to_id, b.to_id);
}
