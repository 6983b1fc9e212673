import { JsonStore } from '../state/json-store.js';
import type { EntityDeclaration } from './declaration.js';
import { isRelationshipKind } from './kinds.js';
import { relationshipKey, type Relationship } from './model.js';

export interface OverlayEntity extends EntityDeclaration {
  registered_at: string;
  updated_at: string;
  registered_by: string;
}

export interface OverlayRelationship extends Relationship {
  created_at: string;
  created_by: string;
}

/** Tag edits of one entity, applied over whatever tags its sources give it. */
export interface TagEdits {
  added: string[];
  removed: string[];
}

export interface OverlayFile {
  /** Bumped on every change: clients compare it to know whether their copy is current. */
  overlay_version: number;
  entities: Record<string, OverlayEntity>;
  tags: Record<string, TagEdits>;
  relationships: OverlayRelationship[];
}

const empty = (): OverlayFile => ({ overlay_version: 0, entities: {}, tags: {}, relationships: [] });

function revive(raw: unknown): OverlayFile {
  const r = raw as Partial<OverlayFile>;
  if (!r || typeof r !== 'object' || Array.isArray(r)) throw new Error('expected an object');
  const entities = r.entities && typeof r.entities === 'object' && !Array.isArray(r.entities) ? r.entities : {};
  const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const tags: Record<string, TagEdits> = {};
  if (r.tags && typeof r.tags === 'object' && !Array.isArray(r.tags)) {
    for (const [id, edit] of Object.entries(r.tags as Record<string, Partial<TagEdits> | null>)) tags[id] = { added: strs(edit?.added), removed: strs(edit?.removed) };
  }
  const relationships = Array.isArray(r.relationships) ? r.relationships.filter((x) => x && typeof x.from_id === 'string' && typeof x.to_id === 'string' && typeof x.kind === 'string' && isRelationshipKind(x.kind)) : [];
  return { overlay_version: Number.isSafeInteger(r.overlay_version) ? r.overlay_version! : 0, entities, tags, relationships };
}

/**
 * The operator's part of the registry: registered entities, tag edits and relationships, persisted
 * atomically (JsonStore: temp file + rename) in `entity-overlays.json` of the state directory.
 */
export class OverlayStore {
  private constructor(private readonly store: JsonStore<OverlayFile>) {}

  static async open(file: string, onWarning?: (m: string) => void): Promise<OverlayStore> {
    return new OverlayStore(await JsonStore.open<OverlayFile>(file, { defaults: empty, revive, ...(onWarning ? { onWarning } : {}) }));
  }

  get file(): string {
    return this.store.file;
  }

  get data(): Readonly<OverlayFile> {
    return this.store.data;
  }

  get version(): number {
    return this.store.data.overlay_version;
  }

  upsertEntity(decl: EntityDeclaration, actor: string, now = new Date().toISOString()): { created: boolean; version: number } {
    return this.store.change((d) => {
      const previous = d.entities[decl.id];
      d.entities[decl.id] = { ...decl, registered_at: previous?.registered_at ?? now, updated_at: now, registered_by: previous?.registered_by ?? actor };
      return { created: !previous, version: ++d.overlay_version };
    });
  }

  editTags(id: string, add: readonly string[], remove: readonly string[]): number {
    return this.store.change((d) => {
      const edits = d.tags[id] ?? { added: [], removed: [] };
      const added = new Set(edits.added);
      const removed = new Set(edits.removed);
      for (const t of add) {
        added.add(t);
        removed.delete(t);
      }
      for (const t of remove) {
        removed.add(t);
        added.delete(t);
      }
      d.tags[id] = { added: [...added].sort(), removed: [...removed].sort() };
      return ++d.overlay_version;
    });
  }

  /** Adds the relationship, or updates its label when the same edge exists. */
  relate(r: Relationship, actor: string, now = new Date().toISOString()): { created: boolean; version: number } {
    return this.store.change((d) => {
      const key = relationshipKey(r);
      const existing = d.relationships.find((x) => relationshipKey(x) === key);
      if (existing) {
        if (r.label !== undefined) existing.label = r.label;
      } else {
        d.relationships.push({ ...r, created_at: now, created_by: actor });
      }
      return { created: !existing, version: ++d.overlay_version };
    });
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
