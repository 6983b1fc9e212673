import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';
import { isTable } from '../project/deep-merge.js';
import type { OverlayFile, TagEdits } from './overlay-store.js';
import { fromDeclarations, type Derived } from './sources.js';
import { writeFileDurablySync } from '../state/durable-file.js';

/** The configuration fragment a sync writes, beside the project's `svc.toml`. */
export const ENTITY_FRAGMENT_FILE = 'svc.entities.toml';

export interface SyncResult {
  path: string;
  entities_written: number;
  relationships_written: number;
  tag_edits_written: number;
  created_fragment: boolean;
  overlay_version: number;
}

/** TOML has no null: drop null and undefined values (and empty tables), recursively. */
function tomlValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(tomlValue).filter((x) => x !== undefined);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const t = tomlValue(x);
      if (t !== undefined) out[k] = t;
    }
    return out;
  }
  return v === null ? undefined : v;
}

/** Renders the overlay as `[[entities]]`, `[entity_tags.<id>]` and `[[relationships]]` and writes it atomically. */
export function writeEntityFragment(projectRoot: string, overlay: Readonly<OverlayFile>, now = new Date()): SyncResult {
  const file = path.join(projectRoot, ENTITY_FRAGMENT_FILE);
  const existed = fs.existsSync(file);
  const entities = Object.values(overlay.entities)
    .sort((a, b) => a.id.localeCompare(b.id))
    .map(({ registered_at: _r, updated_at: _u, registered_by: _b, ...decl }) => tomlValue(decl));
  const relationships = [...overlay.relationships]
    .sort((a, b) => a.from_id.localeCompare(b.from_id) || a.kind.localeCompare(b.kind) || a.to_id.localeCompare(b.to_id))
    .map(({ created_at: _c, created_by: _b, ...r }) => tomlValue(r));
  const tags = Object.fromEntries(Object.entries(overlay.tags).sort(([a], [b]) => a.localeCompare(b)));
  const doc: Record<string, unknown> = { entity_sync: { overlay_version: overlay.overlay_version, synced_at: now.toISOString() } };
  if (entities.length) doc['entities'] = entities;
  if (relationships.length) doc['relationships'] = relationships;
  if (Object.keys(tags).length) doc['entity_tags'] = tags;
  const header = `# Entity registry overlay, written by POST /v1/entities/sync (svc entities sync).\n# The agent reads this file at start as part of the project configuration; edits are kept.\n\n`;
  writeFileDurablySync(file, header + stringify(doc) + '\n', 0o644);
  return {
    path: file,
    entities_written: entities.length,
    relationships_written: relationships.length,
    tag_edits_written: Object.keys(tags).length,
    created_fragment: !existed,
    overlay_version: overlay.overlay_version,
  };
}

/** Reads a fragment written by a sync (or by hand); a missing file is empty, an unreadable one is reported. */
export function readEntityFragment(projectRoot: string, warn: (m: string) => void): Derived & { tagEdits: Record<string, TagEdits> } {
  const file = path.join(projectRoot, ENTITY_FRAGMENT_FILE);
  if (!fs.existsSync(file)) return { entities: [], relationships: [], tagEdits: {} };
  try {
    const doc = parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    const derived = fromDeclarations(doc['entities'], doc['relationships']);
    const tagEdits: Record<string, TagEdits> = {};
    const tags = doc['entity_tags'];
    if (isTable(tags)) {
      for (const [id, t] of Object.entries(tags)) {
        if (!isTable(t)) continue;
        const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
        tagEdits[id] = { added: strs(t['added']), removed: strs(t['removed']) };
      }
    }
    return { ...derived, tagEdits };
  } catch (err) {
    warn(`entity fragment ${file} could not be read (${(err as Error).message}); ignored`);
    return { entities: [], relationships: [], tagEdits: {} };
  }
}
