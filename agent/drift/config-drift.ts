import type { SnapshotDevice, SnapshotResolved } from '../config-control/snapshot-model.js';
import { isTable } from '../project/deep-merge.js';
import { memberLogicalName, namesRobotMember } from '../programs/analysis/member-names.js';
import type { Program } from '../programs/language/ast.js';
import { finding, show, type DriftFinding } from './drift-model.js';

/**
 * Drift between a baseline configuration (a snapshot) and the current one, with the loaded program
 * when there is one (docs/operations.md § Drift, checks 1–16 in order; agent checks are
 * `agent-drift.ts`). Both sides are in snapshot form: the resolved project configuration plus the
 * device pool with its run-time decisions, so a trust change made through the API is drift as much
 * as an edited fragment.
 */

type Tree = Record<string, unknown>;

/** Check 1: key-by-key difference of the merged trees; arrays compare whole. */
export function diffTrees(base: unknown, current: unknown, prefix: string, out: string[]): void {
  if (isTable(base) && isTable(current)) {
    const keys = [...new Set([...Object.keys(base), ...Object.keys(current)])].sort();
    for (const k of keys) {
      const p = prefix ? `${prefix}.${k}` : k;
      if (!(k in current)) out.push(`- ${p}`);
      else if (!(k in base)) out.push(`+ ${p}`);
      else diffTrees(base[k], current[k], p, out);
    }
    return;
  }
  if (JSON.stringify(base) !== JSON.stringify(current)) out.push(`~ ${prefix}: ${show(base)} -> ${show(current)}`);
}

function table(tree: Tree, ...path: string[]): Tree {
  let v: unknown = tree;
  for (const k of path) v = isTable(v) ? v[k] : undefined;
  return isTable(v) ? v : {};
}

function setDiff(base: readonly string[], current: readonly string[]): { removed: string[]; added: string[] } {
  const b = new Set(base);
  const c = new Set(current);
  return { removed: [...b].filter((x) => !c.has(x)).sort(), added: [...c].filter((x) => !b.has(x)).sort() };
}

interface MapEntry {
  device: string | null;
  ip: string | null;
  endpoint: string | null;
  emergency_stop: boolean;
}
export interface LogicalMap {
  sensors: Map<string, MapEntry>;
  actuators: Map<string, MapEntry>;
}

const ACTUATOR_TYPE = /actuator|motor|drive|servo|arm|gripper|estop|e-stop|emergency|brake|wheel/i;
const strOrNull = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

/**
 * The logical map of a configuration: `[mapping.sensors.<name>]` / `[mapping.actuators.<name>]`
 * tables (`device`, `ip`, `endpoint`, `emergency_stop`) when written, completed by every device with a
 * `logical_name` (an actuator when its type says so or it has the `emergency_stop` capability).
 */
export function logicalMap(side: SnapshotResolved): LogicalMap {
  const map: LogicalMap = { sensors: new Map(), actuators: new Map() };
  const tree = side.config.tree;
  for (const kind of ['sensors', 'actuators'] as const) {
    for (const [name, raw] of Object.entries(table(tree, 'mapping', kind))) {
      if (!isTable(raw)) continue;
      map[kind].set(name, {
        device: strOrNull(raw['device'] ?? raw['physical_device']),
        ip: strOrNull(raw['ip'] ?? raw['ip_address']),
        endpoint: strOrNull(raw['endpoint'] ?? raw['endpoint_url']),
        emergency_stop: raw['emergency_stop'] === true,
      });
    }
  }
  for (const d of side.device_pool) {
    if (!d.logical_name) continue;
    const estop = d.capabilities.includes('emergency_stop');
    const kind = estop || ACTUATOR_TYPE.test(d.device_type) ? 'actuators' : 'sensors';
    if (map[kind].has(d.logical_name)) continue;
    map[kind].set(d.logical_name, { device: d.id, ip: d.ip_address, endpoint: d.endpoint_url, emergency_stop: estop });
  }
  return map;
}

function mappingFindings(base: LogicalMap, current: LogicalMap, out: DriftFinding[]): void {
  for (const kind of ['sensors', 'actuators'] as const) {
    const word = kind === 'sensors' ? 'sensor' : 'actuator';
    const b = base[kind];
    const c = current[kind];
    for (const k of [...b.keys()].sort()) if (!c.has(k)) out.push(finding('mapping', 'high', `${word} mapping '${k}' removed`, `mapping.${kind}.${k}`));
    for (const k of [...c.keys()].sort()) if (!b.has(k)) out.push(finding('mapping', 'medium', `${word} mapping '${k}' added`, `mapping.${kind}.${k}`));
    for (const k of [...b.keys()].sort()) {
      const x = b.get(k)!;
      const y = c.get(k);
      if (!y) continue;
      if (x.device !== y.device) out.push(finding('mapping', 'high', `${word} '${k}' physical device: ${show(x.device)} -> ${show(y.device)}`, `mapping.${kind}.${k}`));
      if (x.ip !== y.ip) out.push(finding('mapping', 'medium', `${word} '${k}' ip: ${show(x.ip)} -> ${show(y.ip)}`, `mapping.${kind}.${k}.ip`));
      if (x.endpoint !== y.endpoint) out.push(finding('mapping', 'medium', `${word} '${k}' endpoint: ${show(x.endpoint)} -> ${show(y.endpoint)}`, `mapping.${kind}.${k}.endpoint`));
      if (kind === 'actuators' && x.emergency_stop !== y.emergency_stop) {
        out.push(finding('mapping', 'critical', `actuator '${k}' emergency_stop capability: ${x.emergency_stop} -> ${y.emergency_stop}`, `mapping.actuators.${k}.emergency_stop`));
      }
    }
  }
}

/**
 * Check 14 for one program member: null when the logical map of its kind maps it, else the finding's
 * message. A member is mapped by its bare name (a `[mapping.sensors.imu]` table, a device with
 * `logical_name = "imu"`) or by its `robot.member` name (`sentinel.imu` for `imu` of `robot Sentinel`),
 * which is the convention of the demo (demo/README.md § Field devices) and the name traceability finds
 * a member's device by (docs/program-language.md §9.10). The robot part is compared through the same
 * function traceability uses (`programs/analysis/member-names.ts`), so `other.imu` never serves
 * Sentinel's `imu`. The message says what would map it and why a near miss does not.
 */
function unmappedMember(map: LogicalMap, kind: keyof LogicalMap, robot: string, member: string): string | null {
  const serves = (name: string) => name === member || namesRobotMember(name, robot, member);
  if ([...map[kind].keys()].some(serves)) return null;
  const word = kind === 'sensors' ? 'sensor' : 'actuator';
  const other = kind === 'sensors' ? 'actuators' : 'sensors';
  const suffix = `.${member}`.toLowerCase();
  const hints = [
    ...[...map[kind].keys()].filter((name) => name.toLowerCase().endsWith(suffix)).sort().map((name) => `${show(name)} names another robot`),
    ...[...map[other].keys()].filter(serves).sort().map((name) => `${show(name)} is mapped as ${other === 'sensors' ? 'a sensor' : 'an actuator'}`),
  ];
  const expected = `expected a device with logical_name ${show(memberLogicalName(robot, member))} or a [mapping.${kind}.${member}] table`;
  return `robot '${robot}' ${word} '${member}' has no logical mapping in the configuration: ${expected}${hints.length > 0 ? `; ${hints.join('; ')}` : ''}`;
}

const DEVICE_FIELDS: Array<{ field: string; key: keyof SnapshotDevice; dimension: DriftFinding['dimension']; severity: DriftFinding['severity'] }> = [
  { field: 'ip', key: 'ip_address', dimension: 'device', severity: 'medium' },
  { field: 'endpoint', key: 'endpoint_url', dimension: 'device', severity: 'medium' },
  { field: 'provider', key: 'provider', dimension: 'provider', severity: 'medium' },
  { field: 'firmware', key: 'firmware_version', dimension: 'firmware', severity: 'high' },
  { field: 'trust_level', key: 'trust_level', dimension: 'safety', severity: 'high' },
  { field: 'security_identity', key: 'security_identity', dimension: 'safety', severity: 'high' },
];

function minimumScore(side: SnapshotResolved): unknown {
  const v = table(side.config.tree, 'assurance')['minimum_score'];
  return v === undefined ? 70 : v;
}

function requiredCapabilities(side: SnapshotResolved): unknown {
  return table(side.config.tree, 'mission')['required_capabilities'] ?? null;
}

/** Operational policies of a program: `policy …`, geofences, connectivity and tamper policies. */
function declaresOperationalPolicies(p: Program): boolean {
  return p.policies.length + p.geofences.length + p.connectivityPolicies.length + p.tamperPolicies.length > 0;
}

/** Checks 1–16 of docs/operations.md § Drift. */
export function configDrift(base: SnapshotResolved, current: SnapshotResolved, program: Program | null): DriftFinding[] {
  const out: DriftFinding[] = [];
  // 1. raw trees
  const lines: string[] = [];
  diffTrees(base.config.tree, current.config.tree, '', lines);
  for (const l of lines) out.push(finding('configuration', 'medium', l));
  // 2. fleet id
  if ((base.config.fleetId ?? null) !== (current.config.fleetId ?? null)) {
    out.push(finding('fleet', 'high', `fleet.id changed: ${show(base.config.fleetId)} -> ${show(current.config.fleetId)}`, 'fleet.id'));
  }
  // 3–5. robots, providers, packages
  const robots = setDiff(base.config.robots.map((r) => r.id), current.config.robots.map((r) => r.id));
  for (const id of robots.removed) out.push(finding('fleet', 'high', `removed robot '${id}'`, id));
  for (const id of robots.added) out.push(finding('fleet', 'medium', `added robot '${id}'`, id));
  const providers = setDiff(base.config.providers, current.config.providers);
  for (const p of providers.removed) out.push(finding('provider', 'high', `removed provider '${p}'`, p));
  for (const p of providers.added) out.push(finding('provider', 'medium', `added provider '${p}'`, p));
  const packages = setDiff(base.config.packages, current.config.packages);
  for (const p of packages.removed) out.push(finding('package', 'high', `removed package '${p}'`, p));
  for (const p of packages.added) out.push(finding('package', 'medium', `added package '${p}'`, p));
  // 6–9. devices
  const b = new Map(base.device_pool.map((d) => [d.id, d]));
  const c = new Map(current.device_pool.map((d) => [d.id, d]));
  for (const id of [...b.keys()].sort()) if (!c.has(id)) out.push(finding('device', 'critical', `device '${id}' removed`, `devices.${id}`));
  for (const id of [...c.keys()].sort()) if (!b.has(id)) out.push(finding('device', 'high', `device '${id}' added`, `devices.${id}`));
  for (const id of [...b.keys()].sort()) {
    const x = b.get(id)!;
    const y = c.get(id);
    if (!y) continue;
    for (const f of DEVICE_FIELDS) {
      const old = x[f.key] ?? null;
      const now = y[f.key] ?? null;
      if (JSON.stringify(old) !== JSON.stringify(now)) out.push(finding(f.dimension, f.severity, `device '${id}' ${f.field}: ${show(old)} -> ${show(now)}`, `devices.${id}.${f.field}`));
    }
    if (JSON.stringify(x.capabilities ?? []) !== JSON.stringify(y.capabilities ?? [])) {
      out.push(finding('device', 'medium', `device '${id}' capabilities changed: ${JSON.stringify(x.capabilities ?? [])} -> ${JSON.stringify(y.capabilities ?? [])}`, `devices.${id}.capabilities`));
    }
  }
  // 10–11. logical mappings
  const currentMap = logicalMap(current);
  mappingFindings(logicalMap(base), currentMap, out);
  // 12–13. policy
  const scoreChanged = JSON.stringify(minimumScore(base)) !== JSON.stringify(minimumScore(current));
  if (scoreChanged) out.push(finding('policy', 'high', `assurance.minimum_score changed: ${show(minimumScore(base))} -> ${show(minimumScore(current))}`, 'assurance.minimum_score'));
  const capsChanged = JSON.stringify(requiredCapabilities(base)) !== JSON.stringify(requiredCapabilities(current));
  if (capsChanged) out.push(finding('policy', 'medium', 'mission required_capabilities changed', 'mission.required_capabilities'));
  if (program) {
    // 14. the program against the current logical map (only when the configuration maps anything)
    if (currentMap.sensors.size + currentMap.actuators.size > 0) {
      for (const robot of program.robots) {
        for (const s of robot.sensors) {
          const missing = unmappedMember(currentMap, 'sensors', robot.name, s.name);
          if (missing !== null) out.push(finding('program', 'high', missing));
        }
        for (const a of robot.actuators) {
          const missing = unmappedMember(currentMap, 'actuators', robot.name, a.name);
          if (missing !== null) out.push(finding('program', 'high', missing));
        }
      }
    }
    // 15–16. policy drift against the program's operational policies
    if (declaresOperationalPolicies(program)) {
      if (scoreChanged) {
        out.push(finding('policy', 'medium', `assurance.minimum_score drift ${show(minimumScore(base))} -> ${show(minimumScore(current))} conflicts with operational policies`, 'policy.readiness_threshold'));
      }
      if (capsChanged) out.push(finding('safety', 'high', 'mission capability drift vs operational policy safety posture', 'policy.safety_capabilities'));
    }
  }
  return out;
}
