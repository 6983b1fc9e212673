/**
 * The recovery orchestrator's vocabulary and pure rules (docs/recovery.md): escalation levels,
 * strategies, playbooks, per-entity policies from `[recovery]`, the decision for an (entity,
 * failure) pair and the recovery graph. No I/O: the service feeds them the live registry view.
 */
import type { FailureClassification } from '../programs/assurance/recovery-actions.js';

export const LEVELS = [
  'level0_retry',
  'level1_restart_component',
  'level2_restart_package',
  'level3_recover_device',
  'level4_recover_robot',
  'level5_mission_reassign',
  'level6_fleet_redistribute',
  'level7_human_intervention',
  'level8_emergency_shutdown',
] as const;
export type EscalationLevel = (typeof LEVELS)[number];

export const levelName = (n: number): EscalationLevel => LEVELS[Math.max(0, Math.min(8, Math.trunc(n)))]!;
export const levelRank = (l: string): number => Math.max(0, LEVELS.indexOf(l as EscalationLevel));

export const STRATEGIES = [
  'retry', 'restart_component', 'restart_service', 'restart_package', 'restart_provider', 'restart_device', 'restart_robot',
  'restart_fleet', 'restart_gateway', 'reconnect', 'reinitialize', 'reload_configuration', 'rollback', 'switch_provider',
  'switch_package', 'switch_hardware', 'switch_sensor', 'switch_network', 'switch_gateway', 'switch_fleet', 'transfer_mission',
  'delegate_mission', 'takeover_mission', 'graceful_degradation', 'safe_shutdown', 'emergency_shutdown', 'human_escalation',
] as const;
/** A known strategy name, or `{custom: name}` for anything else. */
export type Strategy = string | { custom: string };

export function strategyOf(name: string): Strategy {
  return (STRATEGIES as readonly string[]).includes(name) ? name : { custom: name };
}
export const strategyName = (s: Strategy): string => (typeof s === 'string' ? s : s.custom);

const LEVEL_OF: Record<string, number> = {
  retry: 0,
  restart_component: 1, restart_service: 1, graceful_degradation: 1,
  restart_package: 2, restart_provider: 2, reload_configuration: 2, switch_provider: 2, switch_package: 2, rollback: 2,
  restart_device: 3, reinitialize: 3, switch_hardware: 3, switch_sensor: 3, reconnect: 3, restart_gateway: 3, switch_network: 3, switch_gateway: 3,
  restart_robot: 4,
  transfer_mission: 5, delegate_mission: 5, takeover_mission: 5,
  restart_fleet: 6, switch_fleet: 6,
  human_escalation: 7,
  safe_shutdown: 8, emergency_shutdown: 8,
};
/** Default escalation level of a strategy (custom strategies: 1). */
export const strategyLevel = (s: Strategy): number => (typeof s === 'string' ? (LEVEL_OF[s] ?? 1) : 1);

const DISRUPTION = [5, 15, 25, 40, 55, 70, 80, 90, 100];
/** The fixed downtime table: used only when the history has no measured duration for the strategy. */
export const DOWNTIME_TABLE_SECS = [5, 30, 60, 120, 180, 300, 600, 1800, 60];

// ---------------------------------------------------------------------------------------------
// Playbooks

export interface PlaybookStep {
  order: number;
  description: string;
  strategy: Strategy;
  escalation_level: EscalationLevel;
  timeout_secs: number;
  requires_validation: boolean;
}

export interface Playbook {
  name: string;
  version: string;
  description: string;
  trigger: string;
  steps: PlaybookStep[];
  entity_kinds: string[];
}

function builtin(name: string, trigger: string, description: string, kinds: string[], steps: Array<[string, number, number, string]>): Playbook {
  return {
    name,
    version: '1.0.0',
    description,
    trigger,
    entity_kinds: kinds,
    steps: steps.map(([strategy, level, timeout, text], i) => ({
      order: i + 1,
      description: text,
      strategy,
      escalation_level: levelName(level),
      timeout_secs: timeout,
      requires_validation: !(i === 0 && name !== 'mission_transfer'),
    })),
  };
}

const BUILTIN_PLAYBOOKS: readonly Playbook[] = [
  builtin('battery_low', 'battery', 'Low battery: degrade, hand the mission over, restart', ['robot', 'drone', 'vehicle'], [
    ['graceful_degradation', 0, 120, 'Navigate to the charger in degraded mode'],
    ['delegate_mission', 5, 60, 'Delegate the mission to a backup robot'],
    ['transfer_mission', 5, 90, 'Transfer the mission to a backup robot'],
    ['restart_robot', 4, 30, 'Restart the robot'],
  ]),
  builtin('connectivity_loss', 'connectivity', 'Connectivity loss: retry, reconnect, switch gateway', ['gateway', 'device', 'robot'], [
    ['retry', 0, 15, 'Retry the link'],
    ['reconnect', 3, 30, 'Reconnect the link'],
    ['switch_gateway', 3, 45, 'Switch to another gateway'],
  ]),
  builtin('fleet_member_loss', 'fleet', 'Fleet member lost: retry, restart the fleet, move its mission', ['fleet', 'swarm', 'robot'], [
    ['retry', 0, 10, 'Retry contact with the member'],
    ['restart_fleet', 6, 60, 'Restart the fleet coordination'],
    ['transfer_mission', 5, 90, "Transfer the member's mission"],
  ]),
  builtin('mission_transfer', 'mission', 'Mission failure: degrade, delegate, take over', ['mission', 'robot'], [
    ['graceful_degradation', 1, 15, 'Degrade the mission'],
    ['delegate_mission', 5, 30, 'Delegate the mission'],
    ['takeover_mission', 5, 60, 'Take over the mission'],
  ]),
  builtin('sensor_failure', 'sensor', 'Sensor failure: retry, reinitialise, switch sensor, degrade', ['sensor', 'camera', 'gps'], [
    ['retry', 0, 10, 'Retry the sensor read'],
    ['reinitialize', 3, 30, 'Reinitialise the sensor'],
    ['switch_sensor', 3, 15, 'Switch to the redundant sensor'],
    ['graceful_degradation', 1, 5, 'Continue in degraded mode'],
  ]),
];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, d: string) => (typeof v === 'string' ? v : d);
const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const bool = (v: unknown, d: boolean) => (typeof v === 'boolean' ? v : d);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Built-ins, replaced or extended by `[[recovery.playbooks]]`; sorted by name. */
export function playbooks(tree: Record<string, unknown> | null): Playbook[] {
  const byName = new Map(BUILTIN_PLAYBOOKS.map((p) => [p.name, p]));
  const recovery = tree && isObj(tree['recovery']) ? tree['recovery'] : null;
  const configured = recovery && Array.isArray(recovery['playbooks']) ? recovery['playbooks'] : [];
  for (const raw of configured) {
    if (!isObj(raw) || typeof raw['name'] !== 'string' || raw['name'] === '') continue;
    const steps = (Array.isArray(raw['steps']) ? raw['steps'] : []).filter(isObj).map((s, i): PlaybookStep => {
      const strategy = strategyOf(str(s['strategy'], 'retry'));
      return {
        order: num(s['order'], i + 1),
        description: str(s['description'], 'recovery step'),
        strategy,
        escalation_level: levelName(num(s['escalation_level'], strategyLevel(strategy))),
        timeout_secs: num(s['timeout_secs'], 30),
        requires_validation: bool(s['requires_validation'], true),
      };
    });
    byName.set(raw['name'], {
      name: raw['name'],
      version: str(raw['version'], '1.0.0'),
      description: str(raw['description'], ''),
      trigger: str(raw['trigger'], ''),
      steps,
      entity_kinds: strs(raw['entity_kinds']),
    });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The playbook for a failure: the named one (exact), else the first (name order) whose trigger and the failure contain one another. */
export function selectPlaybook(all: readonly Playbook[], failure: string, named?: string): Playbook | null {
  if (named !== undefined) return all.find((p) => p.name === named) ?? null;
  const f = failure.toLowerCase();
  return all.find((p) => {
    const t = p.trigger.toLowerCase();
    return t === '' || t.includes(f) || f.includes(t);
  }) ?? null;
}

// ---------------------------------------------------------------------------------------------
// Policies

export interface EscalationRule {
  from_level: EscalationLevel;
  to_level: EscalationLevel;
  after_retries: number;
  strategy: Strategy;
}

export interface RecoveryPolicy {
  entity_id: string;
  entity_kind: string | null;
  priority: number;
  timeout_secs: number;
  retry_limit: number;
  max_escalation_level: EscalationLevel;
  escalation_rules: EscalationRule[];
  dependencies: string[];
  validation_rules: string[];
  requires_approval: boolean;
  safety_constraints: string[];
  trust_requirements: string[];
  readiness_requirements: string[];
  /** Where the policy comes from: an explicit table, `[recovery.default]`, or the platform default. */
  source: 'explicit' | 'default_table' | 'platform_default';
}

function policyFrom(t: Record<string, unknown>, entityId: string, entityKind: string | null, source: RecoveryPolicy['source']): RecoveryPolicy {
  return {
    entity_id: entityId,
    entity_kind: typeof t['entity_kind'] === 'string' ? t['entity_kind'] : entityKind,
    priority: num(t['priority'], 50),
    timeout_secs: num(t['timeout_secs'], 300),
    retry_limit: num(t['retry_limit'], 3),
    max_escalation_level: levelName(num(t['max_escalation_level'], 4)),
    escalation_rules: (Array.isArray(t['escalation_rules']) ? t['escalation_rules'] : [])
      .filter(isObj)
      .filter((r) => typeof r['from_level'] === 'number' && typeof r['to_level'] === 'number')
      .map((r) => ({
        from_level: levelName(r['from_level'] as number),
        to_level: levelName(r['to_level'] as number),
        after_retries: num(r['after_retries'], 1),
        strategy: strategyOf(str(r['strategy'], 'retry')),
      })),
    dependencies: strs(t['dependencies']),
    validation_rules: strs(t['validation_rules']),
    requires_approval: bool(t['requires_approval'], false),
    safety_constraints: strs(t['safety_constraints']),
    trust_requirements: strs(t['trust_requirements']),
    readiness_requirements: strs(t['readiness_requirements']),
    source,
  };
}

export const recoverableKind = (kind: string) => kind !== 'incident' && kind !== 'hazard';

/**
 * Policies of `[recovery]` (explicit `policies.<name>`, `default` for every other eligible entity,
 * else the platform default with validation rules health/readiness/trust); none without a
 * configuration. Sorted by entity id.
 */
export function recoveryPolicies(tree: Record<string, unknown> | null, entities: ReadonlyArray<{ id: string; kind: string }>): RecoveryPolicy[] {
  if (!tree) return [];
  const recovery = isObj(tree['recovery']) ? tree['recovery'] : {};
  const out = new Map<string, RecoveryPolicy>();
  const explicit = isObj(recovery['policies']) ? recovery['policies'] : {};
  const kindOf = new Map(entities.map((e) => [e.id, e.kind]));
  for (const [name, raw] of Object.entries(explicit)) {
    if (!isObj(raw)) continue;
    const id = str(raw['entity_id'], name);
    out.set(id, policyFrom(raw, id, kindOf.get(id) ?? null, 'explicit'));
  }
  const dflt = isObj(recovery['default']) ? recovery['default'] : null;
  for (const e of entities) {
    if (out.has(e.id) || !recoverableKind(e.kind)) continue;
    out.set(
      e.id,
      dflt ? policyFrom(dflt, e.id, e.kind, 'default_table') : { ...policyFrom({}, e.id, e.kind, 'platform_default'), validation_rules: ['health', 'readiness', 'trust'] },
    );
  }
  return [...out.values()].sort((a, b) => (a.entity_id < b.entity_id ? -1 : a.entity_id > b.entity_id ? 1 : 0));
}

export function evaluatePolicy(policy: RecoveryPolicy, strategy: Strategy, level: number): { passed: boolean; explanations: string[] } {
  const name = strategyName(strategy);
  const max = levelRank(policy.max_escalation_level);
  const explanations: string[] = [];
  let passed = true;
  if (level > max || strategyLevel(strategy) > max) {
    passed = false;
    explanations.push(`Policy for '${policy.entity_id}' caps escalation at ${policy.max_escalation_level}; ${name} needs ${levelName(Math.max(level, strategyLevel(strategy)))}`);
  }
  const hit = policy.safety_constraints.find((c) => c !== '' && name.includes(c.toLowerCase()));
  if (hit !== undefined) {
    passed = false;
    explanations.push(`Safety constraint '${hit}' of '${policy.entity_id}' forbids ${name}`);
  }
  if (passed) explanations.push(`Policy for '${policy.entity_id}' allows ${name} at ${levelName(level)}`);
  return { passed, explanations };
}

// ---------------------------------------------------------------------------------------------
// Decision

const RECOMMENDED: Record<FailureClassification, [string, string]> = {
  SensorFailure: ['switch_sensor', 'retry'],
  ActuatorFailure: ['reinitialize', 'graceful_degradation'],
  ConnectivityFailure: ['reconnect', 'retry'],
  ProviderFailure: ['switch_provider', 'graceful_degradation'],
  PackageFailure: ['restart_package', 'graceful_degradation'],
  MissionFailure: ['transfer_mission', 'graceful_degradation'],
  HealthDegradation: ['graceful_degradation', 'graceful_degradation'],
  FleetFailure: ['restart_fleet', 'graceful_degradation'],
  SwarmFailure: ['restart_fleet', 'graceful_degradation'],
  SafetyFailure: ['human_escalation', 'human_escalation'],
  Unknown: ['retry', 'graceful_degradation'],
};

export interface DecisionEntity {
  id: string;
  kind: string;
  health: string;
  trust: string;
}

export interface RecoveryDecision {
  can_recover: boolean;
  should_recover: boolean;
  is_safe: boolean;
  is_authorized: boolean;
  automatic: boolean;
  recommended_strategy: Strategy;
  recommended_level: EscalationLevel;
  lowest_risk_strategy: Strategy;
  mission_disruption_score: number;
  estimated_downtime_secs: number;
  /** `history` when the downtime is the mean measured duration of the strategy's recorded recoveries, `table` otherwise. */
  downtime_source: 'history' | 'table';
  backup_entity_id: string | null;
  explanations: string[];
}

export function decide(
  entity: DecisionEntity,
  failure: string,
  classification: FailureClassification,
  policy: RecoveryPolicy | null,
  registry: readonly DecisionEntity[],
  measuredDowntime: (strategy: string) => number | null,
): RecoveryDecision {
  const [rec, lowest] = RECOMMENDED[classification];
  const recommended = strategyOf(classification === 'Unknown' && entity.kind.includes('robot') ? 'restart_robot' : rec);
  const level = strategyLevel(recommended);
  const f = failure.toLowerCase();
  const can_recover = entity.health !== 'offline' || f.includes('offline') || f.includes('failed');
  const should_recover = failure !== '' && can_recover;
  const explanations: string[] = [
    can_recover ? `Entity '${entity.id}' (${entity.kind}, health ${entity.health}) is eligible for recovery` : `Entity '${entity.id}' is offline and the failure does not say it failed: not recoverable`,
  ];
  if (should_recover) explanations.push(`Failure '${failure}' warrants recovery action`);
  let policyPassed = true;
  if (policy) {
    const p = evaluatePolicy(policy, recommended, level);
    policyPassed = p.passed;
    explanations.push(...p.explanations);
  } else {
    explanations.push('No specific policy — using platform defaults');
  }
  const is_safe = policyPassed && classification !== 'SafetyFailure' && level < 8;
  explanations.push(is_safe ? `${strategyName(recommended)} at ${levelName(level)} is safe` : `${strategyName(recommended)} at ${levelName(level)} is not safe to run automatically`);
  const approval = (policy?.requires_approval ?? false) || level >= 7 || classification === 'SafetyFailure';
  const is_authorized = !approval || level <= 2;
  explanations.push(approval ? (is_authorized ? 'Approval required but waived at a low escalation level' : 'Operator approval required') : 'No approval required');
  const automatic = is_authorized && is_safe && should_recover && policyPassed;
  const healthy = (e: DecisionEntity) => e.health !== 'critical' && e.health !== 'offline';
  let backup = registry.find((e) => e.id !== entity.id && e.kind === entity.kind && healthy(e)) ?? null;
  if (!backup && (classification === 'FleetFailure' || classification === 'MissionFailure')) backup = registry.find((e) => e.id !== entity.id && e.kind === 'robot' && e.health !== 'critical') ?? null;
  if (backup) explanations.push(`Backup entity: ${backup.id}`);
  const measured = measuredDowntime(strategyName(recommended));
  explanations.push(`Lowest-risk alternative: ${strategyName(strategyOf(lowest))} (mission disruption score ${DISRUPTION[level]})`);
  return {
    can_recover,
    should_recover,
    is_safe,
    is_authorized,
    automatic,
    recommended_strategy: recommended,
    recommended_level: levelName(level),
    lowest_risk_strategy: strategyOf(lowest),
    mission_disruption_score: DISRUPTION[level]!,
    estimated_downtime_secs: measured ?? DOWNTIME_TABLE_SECS[level]!,
    downtime_source: measured === null ? 'table' : 'history',
    backup_entity_id: backup?.id ?? null,
    explanations,
  };
}

// ---------------------------------------------------------------------------------------------
// Graph

export interface GraphInput {
  entities: ReadonlyArray<{ id: string; kind: string; display_name?: string | undefined; name?: string | undefined; parent_id?: string | undefined; health: string }>;
  relationships: ReadonlyArray<{ from_id: string; to_id: string; kind: string }>;
}

export interface GraphEdge {
  from: string;
  to: string;
  relationship: string;
  critical: boolean;
}

export interface RecoveryGraph {
  nodes: Array<{ id: string; kind: string; display_name: string; recoverable: boolean; health_status: string; depth: number }>;
  dependency_edges: GraphEdge[];
  impact_edges: GraphEdge[];
  recovery_edges: GraphEdge[];
  root_entity_id: string | null;
}

const pascal = (s: string) => (s === '' ? 'Unknown' : s.charAt(0).toUpperCase() + s.slice(1));

export function recoveryGraph(input: GraphInput, root: string | null): RecoveryGraph {
  const byId = new Map(input.entities.map((e) => [e.id, e]));
  const neighbours = new Map<string, Set<string>>();
  const link = (a: string, b: string) => {
    if (!neighbours.has(a)) neighbours.set(a, new Set());
    neighbours.get(a)!.add(b);
  };
  for (const r of input.relationships) {
    link(r.from_id, r.to_id);
    link(r.to_id, r.from_id);
  }
  for (const e of input.entities) {
    if (e.parent_id !== undefined && byId.has(e.parent_id)) {
      link(e.id, e.parent_id);
      link(e.parent_id, e.id);
    }
  }
  const depth = new Map<string, number>();
  if (root === null) for (const e of input.entities) depth.set(e.id, 0);
  else if (byId.has(root)) {
    depth.set(root, 0);
    const queue = [root];
    while (queue.length > 0) {
      const at = queue.shift()!;
      for (const n of [...(neighbours.get(at) ?? [])].sort()) {
        if (depth.has(n) || !byId.has(n)) continue;
        depth.set(n, depth.get(at)! + 1);
        queue.push(n);
      }
    }
  }
  const nodes = [...depth.entries()]
    .map(([id, d]) => {
      const e = byId.get(id)!;
      return { id, kind: e.kind, display_name: e.display_name ?? e.name ?? id, recoverable: recoverableKind(e.kind), health_status: pascal(e.health), depth: d };
    })
    .sort((a, b) => a.depth - b.depth || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const dependency_edges: GraphEdge[] = [];
  const impact_edges: GraphEdge[] = [];
  const recovery_edges: GraphEdge[] = [];
  for (const r of input.relationships) {
    if (!depth.has(r.from_id) || !depth.has(r.to_id)) continue;
    const critical = r.kind === 'depends_on' || r.kind === 'controls';
    const edge = { from: r.from_id, to: r.to_id, relationship: r.kind, critical };
    dependency_edges.push(edge);
    impact_edges.push({ from: r.to_id, to: r.from_id, relationship: `impacts_${r.kind}`, critical });
    if (r.kind === 'depends_on' || r.kind === 'consumes' || r.kind === 'controls') recovery_edges.push(edge);
  }
  for (const n of nodes) {
    const parent = byId.get(n.id)!.parent_id;
    if (parent === undefined || !depth.has(parent)) continue;
    dependency_edges.push({ from: n.id, to: parent, relationship: 'child_of', critical: false });
    impact_edges.push({ from: parent, to: n.id, relationship: 'parent_impact', critical: true });
  }
  return { nodes, dependency_edges, impact_edges, recovery_edges, root_entity_id: root };
}

/** Upstream (what the entity depends on) and downstream (what depends on it), over dependency edges; self excluded, sorted. */
export function impactOf(graph: RecoveryGraph, id: string): { upstream: string[]; downstream: string[] } {
  const walk = (forward: boolean) => {
    const seen = new Set<string>([id]);
    const queue = [id];
    while (queue.length > 0) {
      const at = queue.shift()!;
      for (const e of graph.dependency_edges) {
        const [a, b] = forward ? [e.from, e.to] : [e.to, e.from];
        if (a === at && !seen.has(b)) {
          seen.add(b);
          queue.push(b);
        }
      }
    }
    seen.delete(id);
    return [...seen].sort();
  };
  return { upstream: walk(true), downstream: walk(false) };
}

// ---------------------------------------------------------------------------------------------
// Predictive

export interface Indicator {
  indicator: string;
  entity_id: string;
  severity: 'warning' | 'critical';
  confidence: number;
  recommended_action: string;
  preventative: boolean;
  /** Where the signal came from: posted telemetry, the telemetry store, or the entity registry. */
  source: 'request' | 'telemetry_store' | 'registry';
  /** The dotted telemetry path that matched (telemetry indicators only). */
  path?: string;
  value?: unknown;
}

const PATTERNS: ReadonlyArray<[string, 'warning' | 'critical', string]> = [
  ['memory_leak', 'warning', 'restart_component'],
  ['cpu_spike', 'warning', 'restart_component'],
  ['repeated_retries', 'warning', 'restart_component'],
  ['increasing_latency', 'warning', 'graceful_degradation'],
  ['battery_degradation', 'warning', 'graceful_degradation'],
  ['temperature_increase', 'critical', 'safe_shutdown'],
  ['connectivity_instability', 'warning', 'reconnect'],
  ['packet_loss', 'warning', 'switch_network'],
  ['sensor_drift', 'warning', 'reinitialize'],
  ['crash_frequency', 'critical', 'restart_robot'],
];

function confidenceOf(value: unknown): number {
  if (typeof value === 'number') return value > 90 ? 0.9 : value > 70 ? 0.75 : 0.6;
  if (typeof value === 'boolean') return value ? 0.8 : 0.3;
  if (typeof value === 'string') {
    const v = value.toLowerCase();
    if (v.includes('critical') || v.includes('fail')) return 0.85;
    if (v.includes('warn') || v.includes('degrad')) return 0.7;
    return 0.5;
  }
  return 0.5;
}

/**
 * Indicators from a telemetry object: every nested key path matching a pattern (case-insensitive)
 * whose value's confidence reaches 0.5. `entityOf` names the entity of a path: for posted telemetry
 * the first segment mentioning robot/device/sensor/fleet; for store telemetry the device itself.
 */
export function telemetryIndicators(telemetry: Record<string, unknown>, source: 'request' | 'telemetry_store', entityOf: (segments: string[]) => string): Indicator[] {
  const out: Indicator[] = [];
  const visit = (value: unknown, segments: string[]) => {
    if (segments.length > 0) {
      const p = segments.join('.').toLowerCase();
      for (const [pattern, severity, action] of PATTERNS) {
        if (!p.includes(pattern)) continue;
        const confidence = confidenceOf(value);
        if (confidence < 0.5) continue;
        out.push({
          indicator: pattern,
          entity_id: entityOf(segments),
          severity,
          confidence,
          recommended_action: action,
          preventative: confidence < 0.85,
          source,
          path: segments.join('.'),
          ...(isObj(value) || Array.isArray(value) ? {} : { value }),
        });
      }
    }
    if (isObj(value)) for (const [k, v] of Object.entries(value)) visit(v, [...segments, k]);
  };
  visit(telemetry, []);
  return out;
}

export const keywordEntity = (segments: string[]) => segments.find((s) => /robot|device|sensor|fleet/i.test(s)) ?? 'unknown';

export function registryIndicators(entities: ReadonlyArray<{ id: string; health: string }>): Indicator[] {
  const out: Indicator[] = [];
  for (const e of entities) {
    if (e.health === 'degraded' || e.health === 'warning')
      out.push({ indicator: 'health_degradation', entity_id: e.id, severity: 'warning', confidence: 0.7, recommended_action: 'graceful_degradation', preventative: true, source: 'registry' });
    else if (e.health === 'critical')
      out.push({ indicator: 'health_critical', entity_id: e.id, severity: 'critical', confidence: 0.9, recommended_action: 'restart_robot', preventative: false, source: 'registry' });
  }
  return out;
}

export const sortIndicators = (xs: Indicator[]) => xs.sort((a, b) => b.confidence - a.confidence);
export const shouldTriggerPreventative = (xs: readonly Indicator[]) => xs.some((i) => i.preventative && i.confidence >= 0.75);

/** Failure text → the heal policy key of its legacy report (docs/recovery.md, "Reports"). */
export function failurePolicyKey(failure: string): string {
  const f = failure.toLowerCase();
  if (f.includes('gps')) return 'gps.failed';
  if (f.includes('lidar')) return 'lidar.failed';
  if (f.includes('camera')) return 'camera.failed';
  if (f.includes('connectivity') || f.includes('comm') || f.includes('network')) return 'connectivity.lost';
  if (f.includes('battery')) return 'battery.critical';
  if (f.includes('robothealthcritical') || f.includes('robot.failed')) return 'robot.failed';
  if (f.includes('degraded')) return 'robot.degraded';
  if (f.endsWith('failure')) return `${f.slice(0, -'failure'.length)}.failed`;
  if (f.includes('failed') || f.includes('fault')) return f.replace(/_/g, '.');
  return `${f}.failed`;
}
