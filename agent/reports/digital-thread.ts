/**
 * The digital thread (docs/operations.md § Reports, "Digital thread"): a dependency graph of the
 * program (missions, robots, capabilities, hardware, providers, packages, safety, sensors,
 * actuators) and the configuration, the registry devices linked to it, every node placed in a
 * lifecycle phase (requirement → design → deploy → operate → retire), and the filters
 * (capability, device, node, phase, phase path). Pure.
 */
import type { Program } from '../programs/language/ast.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { traceabilityReport, type CapabilityTraceRow, type HardwareTraceRow } from '../programs/analysis/traceability.js';
import { analyseCapabilities, satisfyingComponents } from '../programs/analysis/capability-inference.js';
import { capabilityMinimum } from '../programs/analysis/capability-registry.js';

export const PHASES = ['requirement', 'design', 'deploy', 'operate', 'retire'] as const;
export type Phase = (typeof PHASES)[number];

const PHASE_ALIASES: Readonly<Record<string, Phase>> = {
  requirement: 'requirement',
  requirements: 'requirement',
  design: 'design',
  deploy: 'deploy',
  deployment: 'deploy',
  operate: 'operate',
  operation: 'operate',
  operations: 'operate',
  retire: 'retire',
  retirement: 'retire',
};

export function parsePhase(raw: string): Phase | null {
  const key = raw.trim().toLowerCase();
  return Object.hasOwn(PHASE_ALIASES, key) ? PHASE_ALIASES[key]! : null;
}

const order = (p: Phase): number => PHASES.indexOf(p);

export interface ThreadNode {
  id: string;
  label: string;
  kind: string;
  metadata?: Record<string, string>;
}
export interface ThreadEdge {
  from: string;
  to: string;
  relation: string;
}
export interface DeviceLink {
  device_id: string;
  device_type: string;
  assigned_robot: string | null;
  lifecycle_state: string;
  related_capabilities: string[];
}
export interface LifecycleRow {
  node_id: string;
  label: string;
  kind: string;
  phase: Phase;
}
export interface LifecycleEdge {
  from: string;
  to: string;
  phase_from: Phase;
  phase_to: Phase;
  relation: string;
}

export interface ThreadQuery {
  capability: string | null;
  device_id: string | null;
  node_id: string | null;
  lifecycle_phase: string | null;
  phase_path: string | null;
}

export interface DigitalThread {
  query: ThreadQuery;
  source: string;
  graph: { source: string; nodes: ThreadNode[]; edges: ThreadEdge[] };
  capability_rows: CapabilityTraceRow[];
  hardware_rows: HardwareTraceRow[];
  device_links: DeviceLink[];
  lifecycle_rows: LifecycleRow[];
  lifecycle_edges: LifecycleEdge[];
  lifecycle_summary: Partial<Record<Phase, number>>;
  phase_path_nodes?: string[];
  chain_summary: string[];
  matched_node_count: number;
  matched_edge_count: number;
}

/** What the thread reads of a registry device. */
export interface ThreadDevice {
  id: string;
  device_type: string;
  assigned_robot: string | null;
  lifecycle_state: string;
}

export interface ThreadInputs {
  program: Program;
  label: string;
  config: ResolvedConfig | null;
  devices: readonly ThreadDevice[];
  query: Partial<Record<keyof ThreadQuery, string | undefined>>;
}

class Graph {
  readonly nodes = new Map<string, ThreadNode>();
  readonly edges: ThreadEdge[] = [];
  private readonly edgeKeys = new Set<string>();

  node(kind: string, key: string, label = key, metadata?: Record<string, string>): string {
    const id = `${kind}:${key}`.toLowerCase();
    if (!this.nodes.has(id)) this.nodes.set(id, { id, label, kind, ...(metadata ? { metadata } : {}) });
    return id;
  }

  edge(from: string, to: string, relation: string): void {
    if (from === to) return;
    const key = `${from}\u0000${to}\u0000${relation}`;
    if (this.edgeKeys.has(key)) return;
    this.edgeKeys.add(key);
    this.edges.push({ from, to, relation });
  }
}

const splitPlus = (v: string): string[] => v.split('+').map((s) => s.trim()).filter(Boolean);

function buildGraph(program: Program, config: ResolvedConfig | null, rows: readonly CapabilityTraceRow[]): Graph {
  const g = new Graph();
  for (const hw of program.hardware) g.node('hardware', hw.name);
  for (const name of program.imports) {
    const provider = g.node('provider', name.split('.')[0]!);
    g.edge(g.node('package', name), provider, 'provided_by');
  }
  for (const p of config?.providers ?? []) g.node('provider', p);
  for (const p of config?.packages ?? []) g.node('package', p);
  for (const d of config?.devices ?? []) {
    if (!d.provider) continue;
    g.edge(g.node('hardware', d.id), g.node('provider', d.provider), 'uses_provider');
  }
  const killSwitch = program.killSwitches.length > 0 || program.robots.some((r) => r.killSwitches.length > 0);
  const killId = killSwitch ? g.node('safety', 'kill_switch', 'kill switch') : null;
  for (const robot of program.robots) {
    const r = g.node('robot', robot.name);
    g.edge(r, g.node('safety', robot.name, `safety:${robot.name}`), 'protected_by');
    for (const h of robot.usesHardware) g.edge(r, g.node('hardware', h), 'uses_hardware');
    for (const c of robot.exposes) g.edge(r, g.node('capability', c), 'exposes');
    for (const m of robot.missions) {
      const mission = g.node('mission', m.name ?? 'mission');
      g.edge(r, mission, 'runs');
      for (const c of m.requiredCapabilities) g.edge(mission, g.node('capability', c), 'requires');
    }
    for (const s of robot.sensors) {
      const id = g.node('sensor', s.name);
      g.edge(r, id, 'has_sensor');
      g.edge(id, g.node('hardware', s.type), 'device_type');
    }
    for (const a of robot.actuators) {
      const id = g.node('actuator', a.name);
      g.edge(r, id, 'has_actuator');
      g.edge(id, g.node('hardware', a.type), 'device_type');
    }
    if (killId) g.edge(r, killId, 'kill_switch');
  }
  for (const row of rows) {
    if (!row.capability) continue;
    const c = g.node('capability', row.capability);
    for (const h of splitPlus(row.hardware)) g.edge(c, g.node('hardware', h), 'requires_hardware');
    for (const p of splitPlus(row.package)) g.edge(c, g.node('package', p), 'requires_package');
    for (const p of splitPlus(row.provider)) g.edge(c, g.node('provider', p), 'requires_provider');
  }
  for (const analysis of analyseCapabilities(program)) {
    for (const row of analysis.rows) {
      if (!row.source.includes('inferred')) continue;
      const c = g.node('capability', row.capability);
      // The robot's components that meet the capability's minimum (one per sensor/actuator/link group).
      const minimum = capabilityMinimum(row.capability);
      for (const comp of minimum ? satisfyingComponents(minimum, analysis.components) : []) g.edge(c, g.node('hardware', comp), 'requires_component');
    }
  }
  for (const d of program.deploys) {
    const r = g.node('robot', d.robot);
    for (const t of d.targets) g.edge(r, g.node('hardware', t), 'deploy_to');
  }
  return g;
}

const KIND_PHASE: Readonly<Record<string, Phase>> = {
  mission: 'requirement',
  capability: 'design',
  safety: 'design',
  robot: 'deploy',
  hardware: 'deploy',
  sensor: 'deploy',
  actuator: 'deploy',
  provider: 'operate',
  package: 'operate',
};

/** `design->operate` → design, deploy, operate; `a,b,c` as listed; null when any part is unknown. */
export function parsePhasePath(raw: string): Phase[] | null {
  const parts = raw.split(/->|→|,/).map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === '')) return null;
  const phases = parts.map(parsePhase);
  if (phases.some((p) => p === null)) return null;
  const list = phases as Phase[];
  if (list.length === 2 && order(list[0]!) < order(list[1]!)) return PHASES.slice(order(list[0]!), order(list[1]!) + 1);
  return list;
}

export function digitalThread(inputs: ThreadInputs): DigitalThread {
  const { program, config } = inputs;
  const raw = (k: keyof ThreadQuery): string | null => inputs.query[k] ?? null;
  const query: ThreadQuery = {
    capability: raw('capability'),
    device_id: raw('device_id'),
    node_id: raw('node_id'),
    lifecycle_phase: raw('lifecycle_phase'),
    phase_path: raw('phase_path'),
  };
  const trace = traceabilityReport(program, config);
  const graph = buildGraph(program, config, trace.capability_rows);
  const ci = (a: string | null, b: string | null): boolean => a !== null && b !== null && a.toLowerCase() === b.toLowerCase();

  // 2. Device links. A capability is related to a device when one of its trace row's hardware parts
  // is the device type, or the row's robot (required_by or provided_by) is the device's robot.
  const deviceLinks: DeviceLink[] = inputs.devices.map((d) => ({
    device_id: d.id,
    device_type: d.device_type,
    assigned_robot: d.assigned_robot,
    lifecycle_state: d.lifecycle_state,
    related_capabilities: [
      ...new Set(
        trace.capability_rows
          .filter((r) => r.capability && (splitPlus(r.hardware).some((h) => ci(h, d.device_type)) || ci(r.required_by, d.assigned_robot) || ci(r.provided_by, d.assigned_robot)))
          .map((r) => r.capability),
      ),
    ],
  }));
  const deviceNodeId = (id: string): string => `device:${id}`;
  const devicePhase = (l: DeviceLink): Phase => (l.lifecycle_state.toLowerCase() === 'retired' ? 'retire' : 'operate');

  // 3. Lifecycle rows: by kind; retired devices retire only their own robot's nodes.
  const rows = new Map<string, LifecycleRow>();
  for (const n of [...graph.nodes.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    rows.set(n.id, { node_id: n.id, label: n.label, kind: n.kind.toLowerCase(), phase: KIND_PHASE[n.kind] ?? 'operate' });
  }
  for (const link of deviceLinks) {
    if (devicePhase(link) !== 'retire' || !link.assigned_robot) continue;
    const robot = link.assigned_robot.toLowerCase();
    for (const row of rows.values()) if (row.node_id.includes(robot)) row.phase = 'retire';
  }
  for (const link of deviceLinks) {
    const id = deviceNodeId(link.device_id);
    if (!rows.has(id)) rows.set(id, { node_id: id, label: link.device_id, kind: 'device', phase: devicePhase(link) });
  }

  // 4. Lifecycle edges.
  const lifecycleAll: LifecycleEdge[] = [];
  const lcKeys = new Set<string>();
  const addLc = (from: string, to: string, relation: string): void => {
    const a = rows.get(from);
    const b = rows.get(to);
    if (!a || !b) return;
    const key = `${from}\u0000${to}\u0000${a.phase}\u0000${b.phase}`;
    if (lcKeys.has(key)) return;
    lcKeys.add(key);
    lifecycleAll.push({ from, to, phase_from: a.phase, phase_to: b.phase, relation });
  };
  for (const e of graph.edges) {
    const a = rows.get(e.from)!;
    const b = rows.get(e.to)!;
    if (a.phase === b.phase) continue;
    if (order(a.phase) < order(b.phase)) addLc(e.from, e.to, `lifecycle:${e.relation}`);
    else addLc(e.to, e.from, `lifecycle:${e.relation}`);
  }
  for (const link of deviceLinks) {
    const device = deviceNodeId(link.device_id);
    if (link.assigned_robot) {
      const robot = `robot:${link.assigned_robot}`.toLowerCase();
      const rr = rows.get(robot);
      if (rr && order(rr.phase) < order(devicePhase(link))) addLc(robot, device, 'device_overlay');
    }
    for (const c of link.related_capabilities) addLc(`capability:${c}`.toLowerCase(), device, 'device_overlay');
  }
  const present = PHASES.filter((p) => [...rows.values()].some((r) => r.phase === p));
  for (let i = 0; i + 1 < present.length; i++) {
    const first = (p: Phase) => [...rows.values()].find((r) => r.phase === p)!;
    addLc(first(present[i]!).node_id, first(present[i + 1]!).node_id, 'lifecycle_chain');
  }
  lifecycleAll.sort((a, b) => order(a.phase_from) - order(b.phase_from) || cmp(a.from, b.from) || cmp(a.to, b.to));

  // 6. Filtering.
  let nodes = [...graph.nodes.values()].sort((a, b) => cmp(a.id, b.id));
  let edges = [...graph.edges];
  const filtered = query.capability !== null || query.device_id !== null || query.node_id !== null || query.lifecycle_phase !== null;
  const phaseFilter = query.lifecycle_phase !== null ? parsePhase(query.lifecycle_phase) : null;
  const knownDevice = query.device_id !== null ? deviceLinks.find((l) => l.device_id === query.device_id) ?? null : null;
  if (filtered) {
    const seeds = new Set<string>();
    if (query.node_id !== null) seeds.add(query.node_id);
    if (query.capability !== null) {
      seeds.add(`capability:${query.capability}`.toLowerCase());
      for (const r of trace.capability_rows) {
        if (!ci(r.capability, query.capability)) continue;
        for (const h of splitPlus(r.hardware)) seeds.add(`hardware:${h}`.toLowerCase());
        // Our trace rows name the robot that provides the capability in provided_by (required_by may be `program`).
        for (const robot of [r.required_by, r.provided_by]) if (robot) seeds.add(`robot:${robot}`.toLowerCase());
      }
    }
    if (knownDevice) {
      seeds.add(deviceNodeId(knownDevice.device_id));
      if (knownDevice.assigned_robot) seeds.add(`robot:${knownDevice.assigned_robot}`.toLowerCase());
      for (const c of knownDevice.related_capabilities) seeds.add(`capability:${c}`.toLowerCase());
    }
    if (phaseFilter) for (const r of rows.values()) if (r.phase === phaseFilter) seeds.add(r.node_id);
    const adjacency = new Map<string, string[]>();
    for (const e of graph.edges) {
      adjacency.set(e.from, [...(adjacency.get(e.from) ?? []), e.to]);
      adjacency.set(e.to, [...(adjacency.get(e.to) ?? []), e.from]);
    }
    const closure = new Set(seeds);
    const queue = [...seeds];
    while (queue.length > 0) {
      for (const next of adjacency.get(queue.shift()!) ?? []) {
        if (!closure.has(next)) {
          closure.add(next);
          queue.push(next);
        }
      }
    }
    nodes = nodes.filter((n) => closure.has(n.id) && (!phaseFilter || rows.get(n.id)?.phase === phaseFilter));
    const kept = new Set(nodes.map((n) => n.id));
    edges = edges.filter((e) => kept.has(e.from) && kept.has(e.to));
  }

  // 7. Device injection.
  const nodeIds = new Set(nodes.map((n) => n.id));
  for (const link of deviceLinks) {
    if (query.device_id !== null && link.device_id !== query.device_id) continue;
    if (query.lifecycle_phase !== null && devicePhase(link) !== phaseFilter) continue;
    const id = deviceNodeId(link.device_id);
    if (nodeIds.has(id)) continue;
    const metadata: Record<string, string> = { device_type: link.device_type };
    if (link.lifecycle_state) metadata['lifecycle_state'] = link.lifecycle_state;
    const overlaySources = [
      ...(link.assigned_robot ? [`robot:${link.assigned_robot}`.toLowerCase()] : []),
      ...link.related_capabilities.map((c) => `capability:${c}`.toLowerCase()),
    ].filter((s) => nodeIds.has(s));
    nodes.push({ id, label: link.device_id, kind: 'hardware', metadata });
    nodeIds.add(id);
    for (const s of overlaySources) edges.push({ from: s, to: id, relation: 'device_overlay' });
  }

  // 8. Phase path.
  const path = query.phase_path !== null ? parsePhasePath(query.phase_path) : null;
  let lifecycleEdges = lifecycleAll;
  let lifecycleRows = [...rows.values()];
  let phasePathNodes: string[] | undefined;
  if (path) {
    const inPath = new Set<Phase>(path);
    nodes = nodes.filter((n) => inPath.has(rows.get(n.id)?.phase ?? 'operate'));
    const kept = new Set(nodes.map((n) => n.id));
    edges = edges.filter((e) => kept.has(e.from) && kept.has(e.to));
    lifecycleEdges = lifecycleEdges.filter((e) => inPath.has(e.phase_from) && inPath.has(e.phase_to) && path.indexOf(e.phase_from) <= path.indexOf(e.phase_to));
    phasePathNodes = lifecycleRows.filter((r) => inPath.has(r.phase)).map((r) => r.node_id);
  }
  // 9. Restrict the lifecycle view to the matched nodes.
  if (filtered || path) {
    const kept = new Set(nodes.map((n) => n.id));
    lifecycleRows = lifecycleRows.filter((r) => kept.has(r.node_id));
    lifecycleEdges = lifecycleEdges.filter((e) => kept.has(e.from) && kept.has(e.to));
  }
  const summary: Partial<Record<Phase, number>> = {};
  for (const p of PHASES) {
    const n = lifecycleRows.filter((r) => r.phase === p).length;
    if (n > 0) summary[p] = n;
  }

  // 10. Chain summary.
  const chain = [`Digital thread query: ${JSON.stringify(query)}`, `Matched ${nodes.length} nodes, ${edges.length} edges, ${lifecycleEdges.length} lifecycle edges`];
  if (query.lifecycle_phase !== null) chain.push(`Lifecycle phase filter: ${query.lifecycle_phase}`);
  if (path) chain.push(`Phase path: ${path.join(' → ')}`);
  for (const e of lifecycleEdges.slice(0, 12)) chain.push(`${e.from} [${e.phase_from}] --${e.relation}--> ${e.to} [${e.phase_to}]`);
  for (const e of edges.slice(0, 8)) chain.push(`${e.from} --${e.relation}--> ${e.to}`);
  if (knownDevice) chain.push(`Device ${knownDevice.device_id} (${knownDevice.device_type}) → capabilities: ${knownDevice.related_capabilities.join(', ')}`);

  // 11. Trace rows.
  const capabilityRows = query.capability !== null ? trace.capability_rows.filter((r) => ci(r.capability, query.capability)) : trace.capability_rows;
  const hardwareRows =
    capabilityRows.length === 0 ? trace.hardware_rows : trace.hardware_rows.filter((h) => capabilityRows.some((r) => ci(h.hardware_component, r.hardware)));

  return {
    query,
    source: inputs.label,
    graph: { source: inputs.label, nodes, edges },
    capability_rows: capabilityRows,
    hardware_rows: hardwareRows,
    device_links: deviceLinks,
    lifecycle_rows: lifecycleRows,
    lifecycle_edges: lifecycleEdges,
    lifecycle_summary: summary,
    ...(phasePathNodes ? { phase_path_nodes: phasePathNodes } : {}),
    chain_summary: chain,
    matched_node_count: nodes.length,
    matched_edge_count: edges.length,
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
