import fs from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';
import { isTable } from '../project/deep-merge.js';
import { resolveInsideProject } from '../project/project-paths.js';
import { writeFileDurablySync } from '../state/durable-file.js';
import type { SnapshotDevice } from './snapshot-model.js';

/**
 * Writing a published snapshot's devices back into the project's device fragments
 * (docs/operations.md § Publishing). The candidate files are the `network_devices` fragment, then the
 * `devices` fragment named in `[config]` of the manifest; missing files are skipped. A device is
 * updated where it is declared (`[[devices]]`, else `[[fleet.robots]]` → `compute.devices`); a
 * configured device declared in neither file is appended as `[[devices]]` to the first one. Each
 * changed file is rewritten atomically (temp file, fsync, rename); a file whose values already match
 * is left byte for byte as it was. Edits are made on the text where the declaration is a plain
 * `[[devices]]` table (changed key lines replaced, new ones added to the table, new devices appended),
 * so comments and layout stay; the result is parsed back and must equal the intended document, or
 * the file is re-serialised from that document instead.
 */

export interface FragmentPublishResult {
  devices_persisted: number;
  devices_failed: string[];
  files_written: string[];
}

/** Keys a publish overwrites in an existing declaration, when the snapshot has a value for them. */
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

/** Keys of a newly appended `[[devices]]` table. */
const APPENDED_KEYS = ['id', 'type', 'logical_name', 'lifecycle_state', 'assigned_robot', 'trust_level', 'robot_id', 'provider', 'capabilities'] as const;

function snapshotValue(device: SnapshotDevice, key: string): unknown {
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
  if (typeof a === 'bigint') a = Number(a);
  if (typeof b === 'bigint') b = Number(b);
  return JSON.stringify(a) === JSON.stringify(b);
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

/** The candidate fragment files of a manifest's `[config]`, absolute, existing ones only. */
export function deviceFragmentFiles(projectRoot: string, manifest: Record<string, unknown>): string[] {
  const config = manifest['config'];
  if (!isTable(config)) return [];
  const out: string[] = [];
  for (const key of ['network_devices', 'devices']) {
    const rel = config[key];
    if (typeof rel !== 'string' || rel.trim() === '') continue;
    let file: string;
    try {
      // A snapshot file edited on disk must not steer a publish outside the project.
      file = resolveInsideProject(projectRoot, rel);
    } catch {
      continue;
    }
    if (!out.includes(file) && fs.existsSync(file)) out.push(file);
  }
  return out;
}

export function writeDevicesToFragments(files: readonly string[], devices: readonly SnapshotDevice[]): FragmentPublishResult {
  const result: FragmentPublishResult = { devices_persisted: 0, devices_failed: [], files_written: [] };
  const docs = new Map<string, { doc: Record<string, unknown>; changed: boolean; text: string | null }>();
  for (const file of files) {
    try {
      const text = fs.readFileSync(file, 'utf8');
      docs.set(file, { doc: parse(text) as Record<string, unknown>, changed: false, text });
    } catch (err) {
      for (const d of devices) result.devices_failed.push(`${d.id}: ${path.basename(file)}: ${(err as Error).message.split('\n')[0]}`);
      return result;
    }
  }
  const touched = new Set<string>();
  for (const device of devices) {
    let placed = false;
    for (const [file, entry] of docs) {
      const decl = findDeclaration(entry.doc, device.id);
      if (!decl) continue;
      const updates: Record<string, unknown> = {};
      for (const key of UPDATED_KEYS) {
        const v = snapshotValue(device, key);
        if (v !== undefined && !sameValue(decl[key], v)) {
          decl[key] = v;
          updates[key] = v;
          entry.changed = true;
        }
      }
      if (Object.keys(updates).length > 0 && entry.text !== null) entry.text = editDeviceTable(entry.text, device.id, updates);
      touched.add(file);
      placed = true;
      break;
    }
    if (!placed) {
      const first = files[0];
      if (first === undefined) {
        result.devices_failed.push(`${device.id}: invalid manifest: device '${device.id}' not found in any fragment`);
        continue;
      }
      const entry = docs.get(first)!;
      const table: Record<string, unknown> = {};
      for (const key of APPENDED_KEYS) {
        const v = snapshotValue(device, key);
        if (v !== undefined) table[key] = v;
      }
      const list = Array.isArray(entry.doc['devices']) ? (entry.doc['devices'] as unknown[]) : [];
      list.push(table);
      entry.doc['devices'] = list;
      if (entry.text !== null) entry.text = `${entry.text.replace(/\n*$/, '')}\n\n[[devices]]\n${stringify(table)}\n`;
      entry.changed = true;
      touched.add(first);
    }
    result.devices_persisted++;
  }
  for (const [file, entry] of docs) {
    if (!entry.changed) continue;
    try {
      writeFileDurablySync(file, edited(entry.text, entry.doc) ?? `${stringify(entry.doc)}\n`, 0o644);
      result.files_written.push(file);
    } catch (err) {
      // Nothing of this file reached the disk: its devices are failures, not persisted.
      for (const device of devices) {
        if (findDeclaration(entry.doc, device.id)) {
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

/**
 * Sets `updates` in the `[[devices]]` table whose `id` is `id`, on the text: a key line that exists is
 * replaced, a missing one is added after the table's last key line. Null when no such plain table
 * is found (e.g. a fleet compute device or an inline table), so the caller falls back.
 */
function editDeviceTable(text: string, id: string, updates: Record<string, unknown>): string | null {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '[[devices]]') continue;
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
      const rendered = stringify({ [key]: value }).trim();
      let at = -1;
      let lastKey = i;
      for (let j = i + 1; j < end; j++) {
        const k = KEY_LINE.exec(lines[j]!)?.[1];
        if (k !== undefined) lastKey = j;
        if (k === key) at = j;
      }
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
