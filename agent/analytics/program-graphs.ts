/**
 * Trust graph, human teaming and operational-policy checks of docs/analytics.md: structural views of
 * the parsed program. Trust scores come from composite trust (agent/programs/assurance/trust.ts), per
 * device and per package where the agent knows them; policy rules reuse the compliance evaluation
 * (agent/compliance/evaluate.ts) so a policy block and a compliance profile judge a robot alike.
 */
import type { Program } from '../programs/language/ast.js';
import { traceabilityReport } from '../programs/analysis/traceability.js';
import { analyseCapabilities } from '../programs/analysis/capability-inference.js';
import { PACKAGE_TRUST, registryPackageOf, type TrustReport } from '../programs/assurance/trust.js';
import { evaluateCompliance, type ComplianceProfile } from '../compliance/index.js';
import { badRequest } from '../core/errors.js';
import type { AnalyticsInput } from './analyses.js';

export interface GraphNode {
  id: string;
  label: string;
  kind: 'mission' | 'robot' | 'capability' | 'hardware' | 'provider' | 'package' | 'safety' | 'sensor' | 'actuator';
  trust_score: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  relation: string;
  trust_score: number;
}

/** Device-pool trust levels as node scores (docs/analytics.md § Trust graph). */
export const DEVICE_TRUST_SCORES: Readonly<Record<string, number>> = { trusted: 100, verified: 85, unverified: 50, restricted: 30 };

export interface TrustGraph {
  source: string;
  composite_score: number;
  composite_tier: string;
  nodes: GraphNode[];
  dependencies: GraphEdge[];
  paths: Array<{ start: string; end: string; nodes: string[]; min_trust: number }>;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const isBlank = (s: string) => s.trim() === '' || s.trim() === '-' || /^(none|n\/a|unknown)$/i.test(s.trim());

export function trustGraph(input: AnalyticsInput, trust: TrustReport, devices: ReadonlyArray<{ id: string; trust_level: string | null }>): TrustGraph {
  const p = input.program;
  const category = (name: string) => trust.categories.find((c) => c.name === name)?.score ?? trust.score;
  const deviceTrust = new Map(devices.map((d) => [d.id.toLowerCase(), d.trust_level ? DEVICE_TRUST_SCORES[d.trust_level.toLowerCase()] : undefined]));
  const nodes = new Map<string, GraphNode>();
  const edges = new Map<string, GraphEdge>();
  const scoreOf = (kind: GraphNode['kind'], key: string): number => {
    if (kind === 'hardware') return deviceTrust.get(key.toLowerCase()) ?? category('device_integrity');
    if (kind === 'package') {
      const pkg = registryPackageOf(key);
      return pkg && pkg in PACKAGE_TRUST ? PACKAGE_TRUST[pkg]! : category('package_trust');
    }
    if (kind === 'provider') return category('package_trust');
    if (kind === 'capability' || kind === 'safety') return category('safety_integrity');
    return trust.score;
  };
  const node = (kind: GraphNode['kind'], key: string, label = key): string => {
    const id = `${kind}:${key}`.toLowerCase();
    if (!nodes.has(id)) nodes.set(id, { id, label, kind, trust_score: scoreOf(kind, key) });
    return id;
  };
  const edge = (from: string, to: string, relation: string) => {
    if (from === to) return;
    const key = `${from}\u0000${to}\u0000${relation}`;
    if (!edges.has(key)) edges.set(key, { from, to, relation, trust_score: nodes.get(to)?.trust_score ?? trust.score });
  };

  for (const h of p.hardware) node('hardware', h.name);
  for (const imp of p.imports) edge(node('package', imp), node('provider', imp.split('.')[0]!), 'provided_by');
  if (input.config) {
    for (const provider of input.config.providers) node('provider', provider);
    for (const pkg of input.config.packages) node('package', pkg);
    for (const d of input.config.devices) if (d.provider) edge(node('hardware', d.id), node('provider', d.provider), 'uses_provider');
  }
  const killSwitch = p.killSwitches.length > 0 || p.robots.some((r) => r.killSwitches.length > 0);
  for (const r of p.robots) {
    const robot = node('robot', r.name);
    for (const h of r.usesHardware) edge(robot, node('hardware', h), 'uses_hardware');
    for (const c of r.exposes) edge(robot, node('capability', c), 'exposes');
    for (const m of r.missions) {
      const mission = node('mission', m.name ?? 'mission');
      edge(robot, mission, 'runs');
      for (const c of m.requiredCapabilities) edge(mission, node('capability', c), 'requires');
    }
    for (const s of r.sensors) {
      const sensor = node('sensor', s.name);
      edge(robot, sensor, 'has_sensor');
      edge(sensor, node('hardware', s.type), 'device_type');
    }
    for (const a of r.actuators) {
      const actuator = node('actuator', a.name);
      edge(robot, actuator, 'has_actuator');
      edge(actuator, node('hardware', a.type), 'device_type');
    }
    if (r.safety.length > 0) edge(robot, node('safety', r.name, `safety:${r.name}`), 'protected_by');
    if (killSwitch) edge(robot, node('safety', 'kill_switch'), 'kill_switch');
  }
  for (const row of traceabilityReport(p, input.config).capability_rows) {
    const cap = node('capability', row.capability);
    for (const hw of row.hardware.split('+')) if (!isBlank(hw)) edge(cap, node('hardware', hw.trim()), 'requires_hardware');
    for (const pkg of row.package.split('+')) if (!isBlank(pkg)) edge(cap, node('package', pkg.trim()), 'requires_package');
    for (const prov of row.provider.split('+')) if (!isBlank(prov)) edge(cap, node('provider', prov.trim()), 'requires_provider');
  }
  // Capabilities the analysis infers from a robot's components: the components they rest on.
  for (const a of analyseCapabilities(p)) {
    for (const cap of a.inferred) {
      for (const component of a.rowByCapability.get(cap)?.required_components ?? []) edge(node('capability', cap), node('hardware', component), 'requires_component');
    }
  }
  for (const d of p.deploys) for (const t of d.targets) edge(node('robot', d.robot), node('hardware', t), 'deploy_to');

  const sortedNodes = [...nodes.values()].sort((a, b) => compare(a.id, b.id));
  const dependencies = [...edges.values()];
  const adjacency = new Map<string, string[]>();
  for (const e of dependencies) adjacency.set(e.from, [...(adjacency.get(e.from) ?? []), e.to]);
  const paths: TrustGraph['paths'] = [];
  const ends = sortedNodes.filter((n) => n.kind === 'package' || n.kind === 'provider').map((n) => n.id);
  for (const start of sortedNodes.filter((n) => n.kind === 'mission')) {
    for (const end of ends) {
      const path = shortestPath(adjacency, start.id, end);
      if (path) paths.push({ start: start.id, end, nodes: path, min_trust: Math.min(...path.map((id) => nodes.get(id)!.trust_score)) });
    }
  }
  return { source: input.label, composite_score: trust.score, composite_tier: trust.tier, nodes: sortedNodes, dependencies, paths };
}

function shortestPath(adjacency: Map<string, string[]>, from: string, to: string): string[] | null {
  const previous = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    if (at === to) {
      const out: string[] = [];
      for (let n: string | null = at; n !== null; n = previous.get(n) ?? null) out.unshift(n);
      return out;
    }
    for (const next of adjacency.get(at) ?? []) {
      if (!previous.has(next)) {
        previous.set(next, at);
        queue.push(next);
      }
    }
  }
  return null;
}

export type GraphFormat = 'json' | 'mermaid' | 'dot' | 'text';

/** `json` for an absent or unknown format (the reference's rule); `graphviz` and `txt` are aliases. */
export function graphFormat(raw: string | undefined): GraphFormat {
  const f = (raw ?? 'json').trim().toLowerCase();
  if (f === 'mermaid') return 'mermaid';
  if (f === 'dot' || f === 'graphviz') return 'dot';
  if (f === 'text' || f === 'txt') return 'text';
  return 'json';
}

const mermaidId = (id: string) => id.replace(/[^A-Za-z0-9]/g, '_');
const quote = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');

export function renderGraph(graph: TrustGraph, format: Exclude<GraphFormat, 'json'>): string {
  if (format === 'mermaid') {
    return [
      'flowchart TD',
      ...graph.nodes.map((n) => `  ${mermaidId(n.id)}["${n.label.replace(/"/g, "'")} (${n.trust_score}/100)"]`),
      ...graph.dependencies.map((e) => `  ${mermaidId(e.from)} -->|${e.relation} ${e.trust_score}| ${mermaidId(e.to)}`),
    ].join('\n');
  }
  if (format === 'dot') {
    return [
      'digraph trust {',
      '  rankdir=TB;',
      ...graph.nodes.map((n) => `  "${quote(n.id)}" [label="${quote(n.label)} (${n.trust_score}/100)"];`),
      ...graph.dependencies.map((e) => `  "${quote(e.from)}" -> "${quote(e.to)}" [label="${quote(e.relation)} ${e.trust_score}"];`),
      '}',
    ].join('\n');
  }
  return [
    `trust graph ${graph.source}: composite trust ${graph.composite_score}/100 (${graph.composite_tier})`,
    'paths:',
    ...graph.paths.map((p) => `  ${p.nodes.join(' -> ')} (min trust ${p.min_trust})`),
    'dependencies:',
    ...graph.dependencies.map((e) => `  ${e.from} -[${e.relation} ${e.trust_score}]-> ${e.to}`),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Human teaming

export function humanTeaming(input: AnalyticsInput) {
  const p = input.program;
  const robotNames = new Set(p.robots.map((r) => r.name));
  const rows: Array<{ robot: string; actor: string; action: string; approval_path_exists: boolean; actor_exists: boolean; fallback_exists: boolean; status: 'PASS' | 'FAIL' }> = [];
  for (const r of p.robots) {
    const approvalTopic = r.topics.some((t) => t.type === 'Approval');
    for (const m of r.missions) {
      for (const clause of m.approvals) {
        const isOperator = clause.actor.toLowerCase() === 'operator';
        for (const action of clause.actions) {
          const actorExists = robotNames.has(clause.actor) || isOperator || approvalTopic;
          const path = isOperator || approvalTopic || r.topics.some((t) => t.name.toLowerCase().includes('approval') || t.name.toLowerCase().includes(action.toLowerCase()));
          const fallback = r.modes.length > 0;
          rows.push({ robot: r.name, actor: clause.actor, action, approval_path_exists: path, actor_exists: actorExists, fallback_exists: fallback, status: path && actorExists && fallback ? 'PASS' : 'FAIL' });
        }
      }
    }
  }
  const compatible = rows.every((r) => r.status === 'PASS');
  const escalations = [...p.recoveryPolicies, ...p.continuityPolicies].flatMap((policy) =>
    policy.triggers.map((t) => ({ policy: policy.name, trigger: t.condition, actions: [...t.actions] })),
  );
  const fallbackActions = [
    ...p.healthPolicies.flatMap((h) => h.handlers.map((x) => `health:${x.status} -> ${x.actions.length} statements`)),
    ...p.recoveryPolicies.flatMap((policy) =>
      policy.triggers.flatMap((t) => t.actions.filter((a) => /safe|degraded|mode/i.test(a)).map((a) => `recovery:${t.condition} -> ${a}`)),
    ),
  ];
  return { program: input.label, approvals: { compatible, rows }, escalations, fallback_actions: fallbackActions, passed: compatible };
}

// ---------------------------------------------------------------------------------------------
// Operational policy blocks (`policy Name { … }`)

export const POLICY_RULES = ['max_speed', 'requires_kill_switch', 'requires_capability', 'min_readiness_score', 'operation_hours'] as const;
type PolicyRule = (typeof POLICY_RULES)[number];

export interface OperationalPolicy {
  name: string;
  rules: PolicyRule[];
  maxSpeedMps: number | null;
  capabilities: string[];
  minReadiness: number;
  operationHours: string | null;
}

const SPEED_FACTORS: Record<string, number> = { 'm/s': 1, mps: 1, 'km/h': 1 / 3.6, kph: 1 / 3.6, kmh: 1 / 3.6, mph: 0.44704 };

/** The `policy` blocks of a program, parsed from their kept text; a statement outside the five rules is a 400. */
export function operationalPolicies(program: Program): OperationalPolicy[] {
  return program.policies
    .filter((d) => d.keyword === 'policy' && d.name)
    .map((d) => {
      const open = d.text.indexOf('{');
      const close = d.text.lastIndexOf('}');
      const body = open >= 0 && close > open ? d.text.slice(open + 1, close) : '';
      const policy: OperationalPolicy = { name: d.name!, rules: [], maxSpeedMps: null, capabilities: [], minReadiness: 0, operationHours: null };
      for (const raw of body.split(';')) {
        const stmt = raw.trim();
        if (stmt === '') continue;
        const bad = () => badRequest(`policy '${d.name}': cannot parse '${stmt}'; allowed rules: ${POLICY_RULES.join(', ')}`);
        const m = /^([a-z_]+)\s*(.*)$/s.exec(stmt);
        const rule = m?.[1] as PolicyRule | undefined;
        const rest = (m?.[2] ?? '').trim();
        if (!rule || !POLICY_RULES.includes(rule)) throw bad();
        if (rule === 'max_speed') {
          const v = /^=\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z/]+)?$/.exec(rest.replace(/\s*\/\s*/g, '/'));
          const factor = SPEED_FACTORS[(v?.[2] ?? 'm/s').toLowerCase()];
          if (!v || factor === undefined) throw bad();
          policy.maxSpeedMps = Number(v[1]) * factor;
        } else if (rule === 'requires_kill_switch') {
          if (rest !== '') throw bad();
        } else if (rule === 'requires_capability') {
          const list = rest.replace(/^\[|\]$/g, '').split(',').map((s) => s.trim()).filter((s) => s !== '');
          if (list.length === 0 || list.some((c) => !/^[A-Za-z_][\w.]*$/.test(c))) throw bad();
          policy.capabilities.push(...list);
        } else if (rule === 'min_readiness_score') {
          const v = /^=\s*([0-9]+)$/.exec(rest);
          if (!v) throw bad();
          policy.minReadiness = Number(v[1]);
        } else {
          // The kept declaration text renders string literals without their quotes.
          const v = /^=\s*"?([^"]+?)"?$/.exec(rest);
          if (!v) throw bad();
          policy.operationHours = v[1]!.replace(/\s+/g, '');
        }
        if (!policy.rules.includes(rule)) policy.rules.push(rule);
      }
      return policy;
    });
}

const REQUIREMENT_RULE: Record<string, PolicyRule> = {
  max_speed: 'max_speed',
  requires_kill_switch: 'requires_kill_switch',
  required_capabilities: 'requires_capability',
  min_readiness_score: 'min_readiness_score',
  operation_hours: 'operation_hours',
};

export function governanceCheck(input: AnalyticsInput, requested: string | undefined) {
  const policies = operationalPolicies(input.program);
  if (policies.length === 0) throw badRequest('no operational policy blocks declared in loaded program');
  const name = requested?.trim() || policies[0]!.name;
  const policy = policies.find((p) => p.name === name);
  if (!policy) throw badRequest(`Policy '${name}' not found in program`);
  const profile: ComplianceProfile = {
    name: policy.name,
    description: `operational policy ${policy.name}`,
    requiresKillSwitch: policy.rules.includes('requires_kill_switch'),
    minReadinessScore: policy.minReadiness,
    requiredCapabilities: policy.capabilities,
    minHealthChecks: 0,
    requiresAssuranceCase: false,
    maxSpeedMps: policy.maxSpeedMps,
    operationHours: policy.operationHours,
    requiresSecureComm: false,
    requiresTamperPolicy: false,
    requiresSecureBoot: false,
    warnOnly: false,
  };
  const evaluation = evaluateCompliance(input.program, profile, input.label);
  const violations = evaluation.violations
    .map((v) => ({ policy: policy.name, rule: REQUIREMENT_RULE[v.requirement] ?? v.requirement, severity: v.severity, message: v.message }))
    // Rules are reported in the order the block declares them.
    .sort((a, b) => policy.rules.indexOf(a.rule as PolicyRule) - policy.rules.indexOf(b.rule as PolicyRule));
  return { policy: policy.name, program: input.label, passed: !violations.some((v) => v.severity === 'error'), violations };
}
