/**
 * The plugin manifest `svc.plugin.toml` (docs/plugins.md § Manifest): parsed, checked and normalised
 * into the shape the API shows. Pure apart from reading the one file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';

export const MANIFEST_FILE = 'svc.plugin.toml';

export const PLUGIN_TYPES = [
  'provider',
  'control-center-ui',
  'cli',
  'readiness',
  'assurance',
  'diagnosis',
  'recovery',
  'trust',
  'health',
  'telemetry',
  'device-discovery',
  'report-generator',
  'solution-blueprint',
] as const;
export type PluginType = (typeof PLUGIN_TYPES)[number];

export const TRUST_TIERS = ['official', 'verified', 'community', 'experimental', 'deprecated', 'blocked'] as const;
export type TrustTier = (typeof TRUST_TIERS)[number];

export const HOOKS = [
  'on_install',
  'on_enable',
  'on_disable',
  'on_uninstall',
  'on_entity_event',
  'on_health_changed',
  'on_readiness_completed',
  'on_diagnosis_completed',
  'on_recovery_completed',
  'on_report_requested',
] as const;

/** Capabilities a plugin may ask for; the ones that change the robot or its surroundings need explicit approval. */
export const CAPABILITIES: ReadonlySet<string> = new Set([
  'entity.read',
  'entity.write',
  'device.read',
  'device.write',
  'telemetry.read',
  'readiness.read',
  'readiness.write',
  'recovery.read',
  'recovery.write',
  'health.read',
  'filesystem.read',
  'filesystem.write',
  'network.outbound',
  'ui.panel',
  'report.write',
]);
export const DANGEROUS_CAPABILITIES: ReadonlySet<string> = new Set([
  'entity.write',
  'device.write',
  'filesystem.write',
  'network.outbound',
  'readiness.write',
  'recovery.write',
]);

/** Plugin names become directory names: lower-case letters, digits, `.`, `_`, `-`, no leading dot. */
export const PLUGIN_NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

export interface Panel {
  id: string;
  title: string;
  component: string | null;
}

export interface PluginManifest {
  plugin: { name: string; version: string; publisher: string | null; description: string | null; license: string | null; type: PluginType };
  compatibility: { svc_version: string; api_version: string };
  capabilities: { requires: string[] };
  security: { signed: boolean; sandbox: boolean; network: boolean; filesystem: string };
  hooks: { enabled: string[] };
  control_center: { panels: Panel[]; entity_tabs: unknown[]; routes: { path: string; title: string }[]; bundle: string };
  cli: { commands: { name: string; namespace: string | null; description: string | null }[] };
  recovery: { extensions: Record<string, unknown>[] };
}

export class ManifestError extends Error {}

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);
const table = (v: unknown): Table => (isTable(v) ? v : {});
const s = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);

/** Reads `svc.plugin.toml` of `dir`; a missing file, bad TOML or an invalid field is a `ManifestError`. */
export function loadManifest(dir: string, shownDir: string): PluginManifest {
  const file = path.join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new ManifestError(`missing ${MANIFEST_FILE} in ${shownDir}`);
  }
  let raw: Table;
  try {
    raw = parseToml(text) as Table;
  } catch (err) {
    throw new ManifestError(`invalid ${MANIFEST_FILE}: ${(err as Error).message.split('\n')[0]}`);
  }
  return normaliseManifest(raw);
}

export function normaliseManifest(raw: Table): PluginManifest {
  const problems: string[] = [];
  const p = table(raw['plugin']);
  const name = s(p['name']) ?? '';
  const version = s(p['version']) ?? '';
  if (!PLUGIN_NAME.test(name)) problems.push(`plugin.name '${name}' must be 1–100 of a-z, 0-9, '.', '_', '-' and not start with '.'`);
  if (!SEMVER.test(version)) problems.push(`plugin.version '${version}' is not a semantic version (MAJOR.MINOR.PATCH)`);
  const typeText = (s(p['type']) ?? '').replace(/_/g, '-');
  if (!(PLUGIN_TYPES as readonly string[]).includes(typeText)) problems.push(`unknown plugin.type '${s(p['type']) ?? ''}'`);
  const compat = table(raw['compatibility']);
  const caps = strs(table(raw['capabilities'])['requires']);
  for (const c of caps) if (!CAPABILITIES.has(c)) problems.push(`unknown capability '${c}'`);
  const hooks = strs(table(raw['hooks'])['enabled']);
  for (const h of hooks) if (!(HOOKS as readonly string[]).includes(h)) problems.push(`unknown hook '${h}'`);
  const sec = table(raw['security']);
  const cc = table(raw['control_center']);
  const bundle = s(cc['bundle']) ?? 'index.js';
  if (!isConfinedRelative(bundle)) problems.push(`control_center.bundle '${bundle}' must be a relative path inside the plugin directory`);
  const panels: Panel[] = [];
  for (const panel of Array.isArray(cc['panels']) ? cc['panels'] : []) {
    const t = table(panel);
    const id = s(t['id']);
    if (id === null) {
      problems.push('control_center.panels entry without an id');
      continue;
    }
    panels.push({ id, title: s(t['title']) ?? id, component: s(t['component']) });
  }
  if (problems.length > 0) throw new ManifestError(`invalid ${MANIFEST_FILE}: ${problems.join('; ')}`);
  return {
    plugin: { name, version, publisher: s(p['publisher']), description: s(p['description']), license: s(p['license']), type: typeText as PluginType },
    compatibility: { svc_version: s(compat['svc_version']) ?? '>=0.4.0', api_version: s(compat['api_version']) ?? 'v1' },
    capabilities: { requires: caps },
    security: {
      signed: sec['signed'] === true,
      sandbox: sec['sandbox'] !== false,
      network: sec['network'] === true,
      filesystem: s(sec['filesystem']) ?? 'read-only',
    },
    hooks: { enabled: hooks },
    control_center: {
      panels,
      entity_tabs: Array.isArray(cc['entity_tabs']) ? cc['entity_tabs'] : [],
      routes: (Array.isArray(cc['routes']) ? cc['routes'] : []).map((r) => ({ path: s(table(r)['path']) ?? '', title: s(table(r)['title']) ?? '' })),
      bundle,
    },
    cli: {
      commands: (Array.isArray(table(raw['cli'])['commands']) ? (table(raw['cli'])['commands'] as unknown[]) : []).map((c) => ({
        name: s(table(c)['name']) ?? '',
        namespace: s(table(c)['namespace']),
        description: s(table(c)['description']),
      })),
    },
    recovery: { extensions: (Array.isArray(table(raw['recovery'])['extensions']) ? (table(raw['recovery'])['extensions'] as unknown[]) : []).map(table) },
  };
}

/** A relative path with no `..` segment, no drive or root, no backslash tricks. */
export function isConfinedRelative(p: string): boolean {
  if (p === '' || path.isAbsolute(p) || p.includes('\\') || p.includes('\0')) return false;
  return !p.split('/').some((seg) => seg === '..');
}

// -----------------------------------------------------------------------------------------------
// Versions

function parseVersion(v: string): [number, number, number] | null {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : null;
}

export function compareVersions(a: string, b: string): number {
  const x = parseVersion(a) ?? [0, 0, 0];
  const y = parseVersion(b) ?? [0, 0, 0];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return 0;
}

/**
 * Whether `version` satisfies `range`: space-separated comparators (`>=0.4.0 <2`), `^1.2.3`, `~1.2.3`,
 * `=1.2.3`, a bare version, or `*`; `||` alternatives. An unreadable comparator fails the check.
 */
export function satisfies(version: string, range: string): boolean {
  return range.split('||').some((alt) =>
    alt
      .trim()
      .split(/\s+/)
      .filter((c) => c !== '')
      .every((c) => comparator(version, c)),
  );
}

function comparator(version: string, c: string): boolean {
  if (c === '*' || c === 'x') return true;
  const m = /^(>=|<=|>|<|=|\^|~)?\s*(v?\d+(?:\.\d+){0,2})$/.exec(c);
  if (!m) return false;
  const op = m[1] ?? '=';
  const target = m[2]!;
  const cmp = compareVersions(version, target);
  const [maj, min] = parseVersion(target)!;
  switch (op) {
    case '>=':
      return cmp >= 0;
    case '<=':
      return cmp <= 0;
    case '>':
      return cmp > 0;
    case '<':
      return cmp < 0;
    case '^':
      return cmp >= 0 && (maj > 0 ? compareVersions(version, `${maj + 1}.0.0`) < 0 : compareVersions(version, `0.${min + 1}.0`) < 0);
    case '~':
      return cmp >= 0 && compareVersions(version, `${maj}.${min + 1}.0`) < 0;
    default:
      return cmp === 0;
  }
}
