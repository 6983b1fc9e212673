import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ConfiguredDevice, ResolvedConfig } from '../project/resolve-config.js';
import { fsyncDir, writeFileDurably } from '../state/durable-file.js';

/**
 * Configuration files carried by a rollout bundle (docs/operations.md § Rollouts, "Configuration in a
 * bundle"): written into the receiving agent's project root (the directory of its `--config`), with
 * what they replace kept first so a failed resolution or a rollback can put it back.
 *
 * A backup is `<state dir>/ota/config/<id>/before.json`: `{files:[{path, content|null}]}`, `null`
 * for a file that did not exist (a restore deletes it). Each install that changed files names its
 * backup (`config_backup`); backups no install names any more are removed.
 */
export interface ConfigFileBefore {
  path: string;
  content: string | null;
}

export interface InstalledConfigFile {
  path: string;
  sha256: string;
}

const backupRoot = (stateDir: string) => path.join(stateDir, 'ota', 'config');
const backupFile = (stateDir: string, id: string) => path.join(backupRoot(stateDir), id, 'before.json');

/** The current content of each file (null when absent), before anything is written. */
export function readCurrent(root: string, paths: readonly string[]): ConfigFileBefore[] {
  return paths.map((p) => {
    try {
      return { path: p, content: fs.readFileSync(path.join(root, p), 'utf8') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path: p, content: null };
      throw err;
    }
  });
}

/** Keeps `files` durably as backup `id` (on disk before the first project file is replaced). */
export async function saveBackup(stateDir: string, id: string, files: ConfigFileBefore[]): Promise<void> {
  const file = backupFile(stateDir, id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await writeFileDurably(file, JSON.stringify({ files }));
}

export function loadBackup(stateDir: string, id: string): ConfigFileBefore[] | null {
  try {
    const v = JSON.parse(fs.readFileSync(backupFile(stateDir, id), 'utf8')) as { files?: ConfigFileBefore[] };
    return Array.isArray(v.files) ? v.files : null;
  } catch {
    return null;
  }
}

/** Removes every backup whose id is not in `keep` (best effort: a leftover directory is harmless). */
export function pruneBackups(stateDir: string, keep: readonly (string | null | undefined)[]): void {
  const kept = new Set(keep.filter((k): k is string => typeof k === 'string'));
  let names: string[];
  try {
    names = fs.readdirSync(backupRoot(stateDir));
  } catch {
    return;
  }
  for (const name of names) if (!kept.has(name)) fs.rmSync(path.join(backupRoot(stateDir), name), { recursive: true, force: true });
}

/** A project file keeps its permissions when replaced; a new one is readable like the rest of the project. */
function modeOf(file: string): number {
  try {
    return fs.statSync(file).mode & 0o777;
  } catch {
    return 0o644;
  }
}

/** Writes each file atomically and durably; a `null` content deletes the file (restoring its absence). */
export async function writeFiles(root: string, files: readonly ConfigFileBefore[]): Promise<void> {
  let removed = false;
  for (const f of files) {
    const full = path.join(root, f.path);
    if (f.content === null) {
      fs.rmSync(full, { force: true });
      removed = true;
    } else {
      await writeFileDurably(full, f.content, modeOf(full));
    }
  }
  if (removed) fsyncDir(root);
}

/**
 * The installed files after an install: the ones earlier installs delivered, with this install's
 * replacing those of the same name, sorted by path.
 */
export function mergeInstalled(before: readonly InstalledConfigFile[], added: readonly InstalledConfigFile[]): InstalledConfigFile[] {
  const byPath = new Map(before.map((f) => [f.path, f.sha256]));
  for (const f of added) byPath.set(f.path, f.sha256);
  return [...byPath].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([p, sha256]) => ({ path: p, sha256 }));
}

/** `config_hash` of `GET /v1/status`: SHA-256 over `<sha256>  <path>\n` lines sorted by path, or null. */
export function configHash(files: readonly InstalledConfigFile[] | undefined): string | null {
  if (!files || files.length === 0) return null;
  const lines = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((f) => `${f.sha256}  ${f.path}\n`);
  return createHash('sha256').update(lines.join('')).digest('hex');
}

/** Configured device fields a bundle's configuration may change on the live device pool. */
export interface DeviceConfigChange {
  id: string;
  changes: Record<string, unknown>;
}

function configuredFields(d: ConfiguredDevice): Record<string, unknown> {
  const priority = Number(d.raw['failover_priority']);
  const group = d.raw['redundant_group'];
  return {
    logical_name: d.logical_name,
    trust_level: d.trust_level,
    provider: d.provider,
    robot_id: d.robot_id,
    assigned_robot: d.robot_id,
    redundant_group: typeof group === 'string' && group.trim() !== '' ? group : null,
    failover_priority: Number.isFinite(priority) ? priority : null,
  };
}

/**
 * What the configuration change from `before` to `after` changes on devices configured in both:
 * only the fields whose configured value changed, so what happened to a device at run time (a trust
 * decision, an assignment) on the other fields stays as it is. The device pool keeps its run-time
 * values over the configured ones across restarts (agent/devices/device-registry.ts), so a new
 * configured value must be put there for it to take effect at all.
 */
export function deviceConfigChanges(before: ResolvedConfig | null, after: ResolvedConfig | null): DeviceConfigChange[] {
  const old = new Map((before?.devices ?? []).map((d) => [d.id, configuredFields(d)]));
  const out: DeviceConfigChange[] = [];
  for (const d of after?.devices ?? []) {
    const prev = old.get(d.id);
    if (!prev) continue;
    const next = configuredFields(d);
    const changes = Object.fromEntries(Object.entries(next).filter(([k, v]) => prev[k] !== v));
    if (Object.keys(changes).length > 0) out.push({ id: d.id, changes });
  }
  return out;
}
