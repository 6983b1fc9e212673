/**
 * Project configuration resolver for `svc.toml` (docs/configuration.md § The project manifest).
 *
 * The root manifest contributes only `[project]` (fallback `[package]`), `[config]`
 * (fragment files), `[extends]` (layer files) and `[merge]` (array strategies).
 * Its own data tables are NOT merged. The resolved tree is built from, in order:
 *   1. layers base → environment → deployment → robot (each may `[extends]` further,
 *      paths relative to the naming file; a cycle is an error),
 *   2. fragments in the fixed order of FRAGMENT_ORDER (a missing file is an error),
 *   3. `svc.governance.toml` beside the manifest when present,
 *   4. a synthetic `[project]` table.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ConfigError } from './config-error.js';
import { deepMerge, isMergeStrategy, isTable, type MergeStrategy, type Table } from './deep-merge.js';
import {
  collectDeviceEntries,
  collectHumans,
  collectRobots,
  dedupeDevices,
  fleetOf,
  str,
  type ConfiguredDevice,
  type ConfiguredHuman,
  type DeviceEntry,
  type FleetRobot,
} from './devices.js';
import { loadConfigFile } from './load-file.js';

export { ConfigError } from './config-error.js';
export type { ConfigErrorCode } from './config-error.js';
export type { ConfiguredDevice, ConfiguredHuman, FleetRobot } from './devices.js';
export type { MergeStrategy } from './deep-merge.js';

export const MANIFEST_FILE = 'svc.toml';
export const GOVERNANCE_FILE = 'svc.governance.toml';

/** `[extends]` keys, in application order. */
export const LAYER_ORDER = ['base', 'environment', 'deployment', 'robot'] as const;

/** `[config]` fragment keys, in load order. */
export const FRAGMENT_ORDER = [
  'hardware',
  'devices',
  'facilities',
  'network_devices',
  'providers',
  'fleet',
  'security',
  'health',
  'readiness',
  'assurance',
  'recovery',
  'mission',
  'governance',
] as const;

export interface ResolvedConfig {
  /** Absolute directory containing the root manifest. */
  projectRoot: string;
  /** Absolute path of the root manifest. */
  manifestPath: string;
  /** Root manifest as parsed (not merged into `tree`; docs/configuration.md § The project manifest). */
  manifest: Record<string, unknown>;
  projectName: string | null;
  projectVersion: string | null;
  projectLanguage: string | null;
  /** Merged tree: layers, fragments, svc.governance.toml, synthetic [project]. */
  tree: Record<string, unknown>;
  /** Layer files relative to projectRoot, in application order. */
  layersApplied: string[];
  /** Fragment files relative to projectRoot, in load order. */
  fragmentsLoaded: string[];
  fleetId: string | null;
  robots: FleetRobot[];
  /** `[[devices]]` then fleet compute devices, de-duplicated by id (first wins). */
  devices: ConfiguredDevice[];
  humans: ConfiguredHuman[];
  /** Sorted keys of `[providers]`. */
  providers: string[];
  /** Sorted keys of `[dependencies]` in the merged tree. */
  packages: string[];
}

export interface ValidationFinding {
  severity: 'error' | 'warning';
  message: string;
  path: string;
}

export interface ValidationResult {
  passed: boolean;
  findings: ValidationFinding[];
}

// ---------------------------------------------------------------------------
// Manifest discovery

/**
 * Walk up from a file or directory to the first directory containing `svc.toml`.
 * Returns the absolute path of that `svc.toml`, or null.
 */
export function findManifest(startPath: string): string | null {
  const start = path.resolve(startPath);
  let dir = isDirectory(start) ? start : path.dirname(start);
  for (;;) {
    const candidate = path.join(dir, MANIFEST_FILE);
    if (isFile(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

export function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function canonical(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

// ---------------------------------------------------------------------------
// Resolution

interface Context {
  projectRoot: string;
  strategies: Record<string, MergeStrategy>;
  tree: Table;
  layersApplied: string[];
  fragmentsLoaded: string[];
  /** Canonical paths of layers already merged (a layer reached twice is applied once). */
  appliedLayers: Set<string>;
  loadedFragments: Set<string>;
}

/**
 * Resolve the project configuration. `configPath` is the manifest (any file name,
 * as with `--config`) or a directory containing `svc.toml`. Throws ConfigError.
 */
export function resolveProjectConfig(configPath: string): ResolvedConfig {
  let manifestPath = path.resolve(configPath);
  if (isDirectory(manifestPath)) manifestPath = path.join(manifestPath, MANIFEST_FILE);
  const manifest = loadConfigFile(manifestPath, { missingCode: 'config_not_found', role: 'manifest' });
  const projectRoot = path.dirname(manifestPath);

  const ctx: Context = {
    projectRoot,
    strategies: readStrategies(manifest['merge'], manifestPath),
    tree: {},
    layersApplied: [],
    fragmentsLoaded: [],
    appliedLayers: new Set(),
    loadedFragments: new Set(),
  };

  // 1. Layers (recursive). The manifest itself sits on the stack so a layer that
  //    extends the root manifest is reported as a cycle.
  const stack = [canonical(manifestPath)];
  for (const layer of readExtends(manifest['extends'], manifestPath)) applyLayer(layer, ctx, stack);

  // 2. Fragments in the fixed order.
  for (const fragment of readFragments(manifest['config'], manifestPath)) {
    const data = loadConfigFile(fragment.file, { missingCode: 'config_fragment_missing', role: `fragment "${fragment.key}"` });
    merge(ctx, data);
    ctx.fragmentsLoaded.push(relative(projectRoot, fragment.file));
    ctx.loadedFragments.add(canonical(fragment.file));
  }

  // 3. svc.governance.toml, when present and not already loaded as a fragment.
  const governance = path.join(projectRoot, GOVERNANCE_FILE);
  if (isFile(governance) && !ctx.loadedFragments.has(canonical(governance))) {
    merge(ctx, loadConfigFile(governance, { role: 'governance file' }));
    ctx.fragmentsLoaded.push(relative(projectRoot, governance));
  }

  // 4. Synthetic [project].
  const projectTable = isTable(manifest['project']) ? manifest['project'] : {};
  const packageTable = isTable(manifest['package']) ? manifest['package'] : {};
  const projectName = str(projectTable['name']) ?? str(packageTable['name']);
  const projectVersion = str(projectTable['version']) ?? str(packageTable['version']);
  const projectLanguage = str(projectTable['language']);
  const synthetic: Table = {};
  if (projectName !== null) synthetic['name'] = projectName;
  if (projectVersion !== null) synthetic['version'] = projectVersion;
  if (projectLanguage !== null) synthetic['language'] = projectLanguage;
  merge(ctx, { project: synthetic });

  const tree = ctx.tree;
  const robots = collectRobots(tree).map((entry) => entry.robot);
  const devices = dedupeDevices(collectDeviceEntries(tree)).map((entry) => entry.device);
  const fleet = fleetOf(tree);

  return {
    projectRoot,
    manifestPath,
    manifest,
    projectName,
    projectVersion,
    projectLanguage,
    tree,
    layersApplied: ctx.layersApplied,
    fragmentsLoaded: ctx.fragmentsLoaded,
    fleetId: fleet ? str(fleet['id']) : null,
    robots,
    devices,
    humans: collectHumans(tree),
    providers: sortedKeys(tree['providers']),
    packages: sortedKeys(tree['dependencies']),
  };
}

function merge(ctx: Context, data: Table): void {
  ctx.tree = deepMerge(ctx.tree, data, { strategies: ctx.strategies });
}

function applyLayer(file: string, ctx: Context, stack: string[]): void {
  const id = canonical(file);
  const at = stack.indexOf(id);
  if (at !== -1) {
    const chain = [...stack.slice(at), id].map((p) => relative(ctx.projectRoot, p)).join(' -> ');
    throw new ConfigError('config_layer_cycle', `circular configuration layers: ${chain}`, file);
  }
  if (ctx.appliedLayers.has(id)) return;

  const data = loadConfigFile(file, { missingCode: 'config_not_found', role: 'layer' });
  stack.push(id);
  for (const parent of readExtends(data['extends'], file)) applyLayer(parent, ctx, stack);
  stack.pop();

  const own: Table = { ...data };
  delete own['extends'];
  merge(ctx, own);
  ctx.appliedLayers.add(id);
  ctx.layersApplied.push(relative(ctx.projectRoot, file));
}

/** `[extends]` → absolute layer paths in application order, relative to `file`'s directory. */
function readExtends(value: unknown, file: string): string[] {
  if (value === undefined) return [];
  const dir = path.dirname(file);
  if (typeof value === 'string' || Array.isArray(value)) {
    return pathList(value, 'extends', file).map((p) => path.resolve(dir, p));
  }
  if (!isTable(value)) {
    throw new ConfigError('config_invalid', `[extends] in ${file} must be a table of layer files`, file);
  }
  const out: string[] = [];
  for (const key of LAYER_ORDER) {
    if (value[key] === undefined) continue;
    for (const p of pathList(value[key], `extends.${key}`, file)) out.push(path.resolve(dir, p));
  }
  return out;
}

function readFragments(value: unknown, manifestPath: string): Array<{ key: string; file: string }> {
  if (value === undefined) return [];
  if (!isTable(value)) {
    throw new ConfigError('config_invalid', `[config] in ${manifestPath} must be a table of fragment files`, manifestPath);
  }
  const dir = path.dirname(manifestPath);
  const out: Array<{ key: string; file: string }> = [];
  for (const key of FRAGMENT_ORDER) {
    if (value[key] === undefined) continue;
    for (const p of pathList(value[key], `config.${key}`, manifestPath)) out.push({ key, file: path.resolve(dir, p) });
  }
  return out;
}

/** A path entry: a non-empty string or an array of them. */
function pathList(value: unknown, key: string, file: string): string[] {
  const items = Array.isArray(value) ? value : [value];
  for (const item of items) {
    if (typeof item !== 'string' || item.trim() === '') {
      throw new ConfigError(
        'config_invalid',
        `${key} in ${file} must be a file path string (or an array of them), got ${describe(item)}`,
        file,
      );
    }
  }
  return items as string[];
}

/** `[merge]` → strategies by key; nested tables become dotted keys (`fleet.robots`). */
function readStrategies(value: unknown, manifestPath: string): Record<string, MergeStrategy> {
  const out: Record<string, MergeStrategy> = Object.create(null) as Record<string, MergeStrategy>;
  if (value === undefined) return out;
  if (!isTable(value)) {
    throw new ConfigError('config_invalid', `[merge] in ${manifestPath} must be a table`, manifestPath);
  }
  const walk = (table: Table, prefix: string): void => {
    for (const [key, item] of Object.entries(table)) {
      const name = prefix === '' ? key : `${prefix}.${key}`;
      if (isTable(item)) {
        walk(item, name);
      } else if (isMergeStrategy(item)) {
        out[name] = item;
      } else {
        throw new ConfigError(
          'config_invalid',
          `merge.${name} in ${manifestPath} must be "replace", "append" or "merge_by_id", got ${describe(item)}`,
          manifestPath,
        );
      }
    }
  };
  walk(value, '');
  return out;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (isTable(value)) return 'a table';
  return `${typeof value} ${String(value)}`;
}

function relative(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

function sortedKeys(value: unknown): string[] {
  return isTable(value) ? Object.keys(value).sort() : [];
}

// ---------------------------------------------------------------------------
// Validation (requested by the CLI loader only, docs/program-language.md §7.3)

/**
 * Identity checks over the resolved devices: missing or duplicate ids, and
 * duplicate ports, bus + CAN id pairs and serial numbers.
 *
 * - Device ids: the same id twice within `[[devices]]`, or twice among fleet
 *   compute devices, is an error. A `[[devices]]` entry and a compute device that
 *   share an id describe one device (the registry keeps the first); a warning is
 *   given only when their types disagree.
 * - Ports are compared per host for networked devices with an ip/hostname, else
 *   per robot (`robot_id`; devices without one share a scope).
 * - Bus + CAN id pairs are compared per robot.
 * - Serial numbers (devices and robot compute units) must be globally unique.
 */
export function validateResolvedConfig(cfg: ResolvedConfig): ValidationResult {
  const findings: ValidationFinding[] = [];
  const error = (message: string, at: string): void => void findings.push({ severity: 'error', message, path: at });
  const warning = (message: string, at: string): void => void findings.push({ severity: 'warning', message, path: at });

  // Robots.
  const robots = collectRobots(cfg.tree);
  const robotIds = new Map<string, string>();
  for (const { robot, path: at } of robots) {
    if (robot.id === '') {
      error('fleet robot has no id', `${at}.id`);
      continue;
    }
    const first = robotIds.get(robot.id);
    if (first !== undefined) error(`duplicate robot id "${robot.id}" (first declared at ${first})`, `${at}.id`);
    else robotIds.set(robot.id, at);
  }

  // Device ids.
  const entries = collectDeviceEntries(cfg.tree);
  const bySource = new Map<string, DeviceEntry>();
  for (const entry of entries) {
    const { device } = entry;
    if (device.id === '') {
      error('device has no id', `${entry.path}.id`);
      continue;
    }
    const key = `${device.source}\u0000${device.id}`;
    const first = bySource.get(key);
    if (first !== undefined) {
      error(`duplicate device id "${device.id}" (first declared at ${first.path})`, `${entry.path}.id`);
    } else {
      bySource.set(key, entry);
    }
  }
  for (const entry of entries) {
    const { device } = entry;
    if (device.source !== 'fleet_compute' || device.id === '') continue;
    const declared = bySource.get(`devices\u0000${device.id}`);
    if (
      declared !== undefined &&
      declared.device.device_type !== 'unknown' &&
      device.device_type !== 'unknown' &&
      declared.device.device_type !== device.device_type
    ) {
      warning(
        `device "${device.id}" is declared as "${declared.device.device_type}" at ${declared.path} but as "${device.device_type}" here; the first declaration is used`,
        `${entry.path}.type`,
      );
    }
  }

  // Ports, buses and serials over the registry (one entry per device id).
  const registry = dedupeDevices(entries);
  const robotScope = (d: ConfiguredDevice): string => d.robot_id ?? '';
  const ports = new Map<string, DeviceEntry>();
  const canIds = new Map<string, DeviceEntry>();
  const serials = new Map<string, string>();

  for (const { robot, path: at } of robots) {
    const serial = robot.compute?.serial ?? null;
    if (serial === null) continue;
    const first = serials.get(serial);
    if (first !== undefined) error(`duplicate serial "${serial}" (also at ${first})`, `${at}.compute.serial`);
    else serials.set(serial, `${at}.compute.serial`);
  }

  for (const entry of registry) {
    const d = entry.device;
    const label = d.id === '' ? entry.path : `"${d.id}"`;
    if (d.port !== null) {
      const host = d.networked ? (d.ip_address ?? d.hostname) : null;
      const key = host !== null ? `host\u0000${host}\u0000${d.port}` : `robot\u0000${robotScope(d)}\u0000${d.port}`;
      const first = ports.get(key);
      if (first !== undefined) {
        error(`duplicate port "${d.port}": device ${label} and device "${first.device.id}" (${first.path})`, `${entry.path}.port`);
      } else {
        ports.set(key, entry);
      }
    }
    if (d.bus !== null && d.can_id !== null) {
      const key = `${robotScope(d)}\u0000${d.bus}\u0000${d.can_id}`;
      const first = canIds.get(key);
      if (first !== undefined) {
        error(
          `duplicate bus/CAN id ${d.bus}/0x${d.can_id.toString(16)}: device ${label} and device "${first.device.id}" (${first.path})`,
          `${entry.path}.can_id`,
        );
      } else {
        canIds.set(key, entry);
      }
    }
    if (d.serial !== null) {
      const first = serials.get(d.serial);
      if (first !== undefined) error(`duplicate serial "${d.serial}": device ${label} (also at ${first})`, `${entry.path}.serial`);
      else serials.set(d.serial, `${entry.path}.serial`);
    }
  }

  return { passed: !findings.some((f) => f.severity === 'error'), findings };
}
