import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';
import { fromConfig, type DeviceRecord } from '../devices/device-registry.js';
import { isTable } from '../project/deep-merge.js';
import { resolveInsideProject } from '../project/project-paths.js';
import type { ConfiguredDevice, ResolvedConfig } from '../project/resolve-config.js';
import { writeFileDurablySync } from '../state/durable-file.js';
import type { SnapshotDevice } from './snapshot-model.js';

/**
 * Writing a published snapshot's devices back into the project's files (docs/operations.md §
 * Publishing). Publishing snapshot S must leave the live configuration equal to S as drift compares
 * them (the merged tree and the device pool, docs/operations.md § Drift), so a publish writes exactly
 * what S holds and nothing more:
 *
 * - A device is edited where the configuration declares it, in any layer or fragment S was resolved
 *   from (`[[devices]]`, or `[[fleet.robots]]` → `compute.devices` in the fleet fragment), never
 *   copied into another file: a second declaration would change the merged tree.
 * - For each published key, the target is S's decision when it differs from what S's own
 *   declaration implies (the pool's defaults: lifecycle from `robot_id`, assignment = `robot_id`,
 *   `devices/device-registry.ts#fromConfig`); otherwise it is the declaration as S holds it, which
 *   may mean the key is absent. Writing an implied default (`lifecycle_state = "active"`) would add a
 *   key S's tree does not have, which drift reports as a changed `devices` array.
 * - Only a configured device declared in no file is appended, as `[[devices]]` to the first of the
 *   `network_devices` and `devices` fragments, with the table S holds for it.
 *
 * Each changed file is rewritten atomically (temp file, fsync, rename); a file whose values already
 * match is left byte for byte as it was. Edits are made on the text of plain `[[devices]]` and
 * `[[fleet.robots.compute.devices]]` tables (changed key lines replaced, new ones added to the
 * table, removed ones dropped, new devices appended), so comments and layout stay; the result is
 * parsed back and must equal the intended document, or the file is re-serialised from it instead.
 */

export interface FragmentPublishResult {
  devices_persisted: number;
  devices_failed: string[];
  files_written: string[];
}

/** Where a publish looks: every file a device may be declared in (merge order), and the append targets. */
export interface PublishFiles {
  /** Layers then fragments, in the order the resolver merged them (later wins), existing files only. */
  declarations: string[];
  /** The `network_devices` then the `devices` fragment of `[config]`, existing files only. */
  appendTargets: string[];
}

/** Keys a publish sets in (or restores to) an existing declaration. */
const UPDATED_KEYS = [
  'logical_name',
  'lifecycle_state',
  'assigned_robot',
  'trust_level',
  'robot_id',
  'redundant_group',
  'failover_priority',
  'calibration_status',
  'health_status',
  'calibration_expiry_ms',
] as const;

/** Keys of a newly appended `[[devices]]` table when the snapshot holds no declaration for it. */
const APPENDED_KEYS = ['id', 'type', 'logical_name', 'lifecycle_state', 'assigned_robot', 'trust_level', 'robot_id', 'provider', 'capabilities'] as const;

function snapshotValue(device: SnapshotDevice | DeviceRecord, key: string): unknown {
  const d = device as unknown as Record<string, unknown>;
  if (key === 'type') return device.device_type;
  const v = d[key];
  if (v === null || v === undefined) return undefined;
  if (key === 'failover_priority') return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : undefined;
  if (key === 'calibration_expiry_ms') return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  if (key === 'capabilities') return Array.isArray(v) && v.length > 0 ? [...v] : undefined;
  return v;
}

function sameValue(a: unknown, b: unknown): boolean {
  const norm = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x));
  return norm(a) === norm(b);
}

/**
 * What the published declaration of `device` holds for `key`: the snapshot's decision when the
 * snapshot's own declaration does not already imply it, else the declaration's value (undefined =
 * the key is absent).
 */
function targetValue(device: SnapshotDevice, declared: ConfiguredDevice | undefined, key: string): unknown {
  const decided = snapshotValue(device, key);
  if (!declared) return decided;
  const stated = declared.raw[key];
  // Keys the pool does not keep (health, calibration) hold no decision: the declaration stays as written.
  if (!(key in device)) return stated;
  const implied = snapshotValue(fromConfig(declared, 0), key);
  return sameValue(decided, implied) ? stated : decided;
}

function findDeclaration(doc: Record<string, unknown>, id: string): Record<string, unknown> | null {
  const devices = doc['devices'];
  if (Array.isArray(devices)) {
    for (const d of devices) if (isTable(d) && d['id'] === id) return d;
  }
  const fleet = doc['fleet'];
  const robots = isTable(fleet) ? fleet['robots'] : undefined;
  if (Array.isArray(robots)) {
    for (const r of robots) {
      const compute = isTable(r) ? r['compute'] : undefined;
      const list = isTable(compute) ? compute['devices'] : undefined;
      if (!Array.isArray(list)) continue;
      for (const d of list) if (isTable(d) && d['id'] === id) return d;
    }
  }
  return null;
}

function insideProject(projectRoot: string, rel: string): string | null {
  try {
    // A snapshot file edited on disk must not steer a publish outside the project.
    const file = resolveInsideProject(projectRoot, rel);
    return fs.existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

/** The files of a snapshot's configuration a publish reads and writes, absolute, existing ones only. */
export function publishFiles(config: Pick<ResolvedConfig, 'projectRoot' | 'manifest' | 'layersApplied' | 'fragmentsLoaded'>, projectRoot = config.projectRoot): PublishFiles {
  const declarations: string[] = [];
  for (const rel of [...(config.layersApplied ?? []), ...(config.fragmentsLoaded ?? [])]) {
    const file = insideProject(projectRoot, rel);
    if (file && !declarations.includes(file)) declarations.push(file);
  }
  const appendTargets = deviceFragmentFiles(projectRoot, config.manifest);
  for (const file of appendTargets) if (!declarations.includes(file)) declarations.push(file);
  return { declarations, appendTargets };
}

/** The candidate append files of a manifest's `[config]`, absolute, existing ones only. */
export function deviceFragmentFiles(projectRoot: string, manifest: Record<string, unknown>): string[] {
  const config = manifest['config'];
  if (!isTable(config)) return [];
  const out: string[] = [];
  for (const key of ['network_devices', 'devices']) {
    const rel = config[key];
    if (typeof rel !== 'string' || rel.trim() === '') continue;
    const file = insideProject(projectRoot, rel);
    if (file && !out.includes(file)) out.push(file);
  }
  return out;
}

interface FileEntry {
  doc: Record<string, unknown>;
  changed: boolean;
  text: string | null;
}

/**
 * Writes the configured devices of a snapshot (`devices`, with `declared`: the snapshot's resolved
 * configuration devices, whose `raw` is each declaration as the snapshot holds it).
 */
export function writeDevicesToFragments(files: PublishFiles, devices: readonly SnapshotDevice[], declared: readonly ConfiguredDevice[] = []): FragmentPublishResult {
  const result: FragmentPublishResult = { devices_persisted: 0, devices_failed: [], files_written: [] };
  const docs = new Map<string, FileEntry>();
  for (const file of files.declarations) {
    try {
      const text = fs.readFileSync(file, 'utf8');
      docs.set(file, { doc: parse(text) as Record<string, unknown>, changed: false, text });
    } catch (err) {
      for (const d of devices) result.devices_failed.push(`${d.id}: ${path.basename(file)}: ${(err as Error).message.split('\n')[0]}`);
      return result;
    }
  }
  const declaredById = new Map(declared.map((d) => [d.id, d]));
  for (const device of devices) {
    const own = declaredById.get(device.id);
    // Every file declaring the device, in merge order: a key's live value is the last one stating it.
    const places = [...docs].flatMap(([file, entry]) => {
      const decl = findDeclaration(entry.doc, device.id);
      return decl ? [{ file, entry, decl }] : [];
    });
    if (places.length > 0) {
      const updates = new Map<FileEntry, Record<string, unknown>>();
      const change = (entry: FileEntry, key: string, value: unknown) => {
        const u = updates.get(entry) ?? {};
        u[key] = value;
        updates.set(entry, u);
        entry.changed = true;
      };
      for (const key of UPDATED_KEYS) {
        const target = targetValue(device, own, key);
        const stating = places.filter((p) => p.decl[key] !== undefined);
        const live = stating.at(-1)?.decl[key];
        if (sameValue(live, target)) continue;
        if (target === undefined) {
          for (const p of stating) {
            delete p.decl[key];
            change(p.entry, key, undefined);
          }
        } else {
          const p = places.at(-1)!;
          p.decl[key] = target;
          change(p.entry, key, target);
        }
      }
      for (const [entry, u] of updates) if (entry.text !== null) entry.text = editDeviceTable(entry.text, device.id, u);
      result.devices_persisted++;
      continue;
    }
    const first = files.appendTargets[0];
    const entry = first === undefined ? undefined : docs.get(first);
    if (first === undefined || !entry) {
      result.devices_failed.push(`${device.id}: invalid manifest: device '${device.id}' not found in any fragment`);
      continue;
    }
    const table: Record<string, unknown> = {};
    if (own) {
      // The declaration as the snapshot holds it, with the decisions it does not already imply.
      Object.assign(table, own.raw);
      for (const key of UPDATED_KEYS) {
        const v = targetValue(device, own, key);
        if (v === undefined) delete table[key];
        else table[key] = v;
      }
    } else {
      for (const key of APPENDED_KEYS) {
        const v = snapshotValue(device, key);
        if (v !== undefined) table[key] = v;
      }
    }
    const list = Array.isArray(entry.doc['devices']) ? (entry.doc['devices'] as unknown[]) : [];
    list.push(table);
    entry.doc['devices'] = list;
    if (entry.text !== null) entry.text = `${entry.text.replace(/\n*$/, '')}\n\n[[devices]]\n${stringify(table)}\n`;
    entry.changed = true;
    result.devices_persisted++;
  }
  const failedIds = new Set<string>();
  for (const [file, entry] of docs) {
    if (!entry.changed) continue;
    try {
      writeFileDurablySync(file, edited(entry.text, entry.doc) ?? `${stringify(entry.doc)}\n`, 0o644);
      result.files_written.push(file);
    } catch (err) {
      // Nothing of this file reached the disk: its devices are failures, not persisted.
      for (const device of devices) {
        if (findDeclaration(entry.doc, device.id) && !failedIds.has(device.id)) {
          failedIds.add(device.id);
          result.devices_failed.push(`${device.id}: ${(err as Error).message}`);
          result.devices_persisted--;
        }
      }
    }
  }
  return result;
}

const KEY_LINE = /^\s*([A-Za-z0-9_-]+)\s*=/;

/** The text when it parses to exactly `doc`, else null (the caller re-serialises). */
function edited(text: string | null, doc: Record<string, unknown>): string | null {
  if (text === null) return null;
  try {
    const norm = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x));
    return norm(parse(text)) === norm(doc) ? text : null;
  } catch {
    return null;
  }
}

/** Array-of-tables headers a text edit can reach: top-level devices and fleet compute devices. */
const DEVICE_HEADERS = new Set(['[[devices]]', '[[fleet.robots.compute.devices]]']);

/**
 * Sets `updates` in the device table whose `id` is `id`, on the text: a key line that exists is
 * replaced (or dropped when the update is undefined), a missing one is added after the table's last
 * key line. Null when no such plain table is found (e.g. an inline table), so the caller falls back;
 * a multi-line value the line edit breaks is caught by the parse-back check in `edited`.
 */
function editDeviceTable(text: string, id: string, updates: Record<string, unknown>): string | null {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!DEVICE_HEADERS.has(lines[i]!.trim())) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end++;
    const idLine = lines.slice(i + 1, end).find((l) => KEY_LINE.exec(l)?.[1] === 'id');
    let declared: unknown;
    try {
      declared = idLine ? (parse(idLine) as Record<string, unknown>)['id'] : undefined;
    } catch {
      declared = undefined;
    }
    if (declared !== id) {
      i = end - 1;
      continue;
    }
    for (const [key, value] of Object.entries(updates)) {
      let at = -1;
      let lastKey = i;
      for (let j = i + 1; j < end; j++) {
        const k = KEY_LINE.exec(lines[j]!)?.[1];
        if (k !== undefined) lastKey = j;
        if (k === key) at = j;
      }
      if (value === undefined) {
        if (at >= 0) {
          lines.splice(at, 1);
          end--;
        }
        continue;
      }
      const rendered = stringify({ [key]: value }).trim();
      if (at >= 0) lines[at] = rendered;
      else {
        lines.splice(lastKey + 1, 0, rendered);
        end++;
      }
    }
    return lines.join('\n');
  }
  return null;
}
