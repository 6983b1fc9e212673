import type { ProgramFacts } from '../entities/program-facts.js';
import type { TelemetryEvent } from '../telemetry/telemetry-events.js';
import { toNumber } from './live-readings.js';
import type { ReflexLimits } from './set-points.js';
import type { ReflexTrace } from './stores.js';

export type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical';

export interface ReflexEntry {
  id: string;
  name: string;
  trigger: string;
  action: string;
  priority: number;
  severity: Severity;
  enabled: boolean;
  source: 'builtin' | 'program';
}

/** The six built-in safety reflexes (docs/autonomy.md § Reflexes). */
export const BUILTIN_REFLEXES: readonly ReflexEntry[] = [
  { id: 'reflex.emergency_stop', name: 'Emergency stop', trigger: 'kill_switch | collision_imminent', action: 'halt_actuators', priority: 255, severity: 'critical', enabled: true, source: 'builtin' },
  { id: 'reflex.obstacle', name: 'Obstacle imminent', trigger: 'lidar.nearest_distance < safety.min_distance', action: 'brake_and_hold', priority: 200, severity: 'critical', enabled: true, source: 'builtin' },
  { id: 'reflex.overcurrent', name: 'Actuator overcurrent', trigger: 'actuator.current > actuator.max_current', action: 'disable_actuator', priority: 190, severity: 'high', enabled: true, source: 'builtin' },
  { id: 'reflex.thermal', name: 'Thermal runaway', trigger: 'temperature > thermal.limit', action: 'reduce_load_and_cool', priority: 180, severity: 'high', enabled: true, source: 'builtin' },
  { id: 'reflex.untrusted_cmd', name: 'Untrusted command rejected', trigger: 'command.trust != trusted', action: 'reject_command', priority: 170, severity: 'high', enabled: true, source: 'builtin' },
  { id: 'reflex.unsafe_actuator', name: 'Unsafe actuator request blocked', trigger: 'safety.validate(proposal) == fail', action: 'block_actuator', priority: 160, severity: 'high', enabled: true, source: 'builtin' },
];

/** Built-ins plus one entry per kill switch and per reflex-layer decision tree of the loaded program. */
export function reflexCatalogue(facts: ProgramFacts | null): ReflexEntry[] {
  const out = [...BUILTIN_REFLEXES];
  for (const k of facts?.killSwitches ?? []) {
    out.push({ id: `reflex.program.${k.name}`, name: `Kill switch ${k.name}${k.robot ? ` (${k.robot})` : ''}`, trigger: k.name, action: k.actions[0] ?? 'halt_actuators', priority: 150, severity: 'critical', enabled: true, source: 'program' });
  }
  for (const t of facts?.decisionTrees ?? []) {
    if ((t.layer ?? '').toLowerCase() !== 'reflex') continue;
    const action = t.rules.find((r) => r.actions.length > 0)?.actions[0] ?? 'none';
    out.push({ id: `reflex.program.${t.name}`, name: `Reflex tree ${t.name}`, trigger: t.rules.map((r) => r.condition).join(' | ') || '(no rules)', action, priority: 150, severity: 'high', enabled: true, source: 'program' });
  }
  return out;
}

const THERMAL = ['temperature', 'temperature_c', 'temp_c'];
const CURRENT = ['current', 'current_a', 'motor_current'];
const DISTANCE = ['nearest_distance', 'nearest_distance_m', 'obstacle_distance', 'range_m'];
const STOP = ['kill_switch', 'collision_imminent', 'emergency_stop', 'estop'];

interface Rule {
  reflex: ReflexEntry;
  metrics: readonly string[];
  /** The limit the value is compared with, or null for a boolean trigger. */
  limit: (l: ReflexLimits) => number | null;
  fires: (v: number, limit: number | null) => boolean;
  describe: (metric: string, v: number, limit: number | null) => string;
}

const byId = (id: string) => BUILTIN_REFLEXES.find((r) => r.id === id)!;

/** The reflexes that telemetry can trigger; the command and actuator-proposal reflexes act on requests, not readings. */
const RULES: readonly Rule[] = [
  { reflex: byId('reflex.emergency_stop'), metrics: STOP, limit: () => null, fires: (v) => v !== 0, describe: (m) => `${m} asserted` },
  { reflex: byId('reflex.obstacle'), metrics: DISTANCE, limit: (l) => l.min_distance_m, fires: (v, l) => v < l!, describe: (m, v, l) => `${m} ${v} < safety.min_distance ${l}` },
  { reflex: byId('reflex.overcurrent'), metrics: CURRENT, limit: (l) => l.max_current_a, fires: (v, l) => v > l!, describe: (m, v, l) => `${m} ${v} > actuator.max_current ${l}` },
  { reflex: byId('reflex.thermal'), metrics: THERMAL, limit: (l) => l.thermal_limit_c, fires: (v, l) => v > l!, describe: (m, v, l) => `${m} ${v} > thermal.limit ${l}` },
];

/**
 * Evaluates the reflex rules on each incoming device reading. A rule fires on the reading that
 * crosses its limit and re-arms when a reading is back inside, so a device sitting above its limit
 * records one trace per excursion, not one per sample.
 */
export class ReflexEvaluator {
  private readonly tripped = new Set<string>();

  constructor(
    private readonly limits: () => ReflexLimits,
    private readonly record: (t: ReflexTrace) => void,
  ) {}

  onTelemetry(e: TelemetryEvent): void {
    if (e.kind !== 'device') return;
    const rule = RULES.find((r) => r.metrics.includes(e.metric));
    if (!rule) return;
    const v = toNumber(e.value);
    if (v === null) return;
    const limit = rule.limit(this.limits());
    const key = `${rule.reflex.id}\u0000${e.device_id}\u0000${e.metric}`;
    if (!rule.fires(v, limit)) {
      this.tripped.delete(key);
      return;
    }
    if (this.tripped.has(key)) return;
    this.tripped.add(key);
    this.record({
      reflex_id: rule.reflex.id,
      entity_id: e.device_id,
      trigger: rule.describe(e.metric, v, limit),
      action_taken: rule.reflex.action,
      timestamp: new Date(e.timestamp_ms).toISOString(),
      priority: rule.reflex.priority,
      source: 'telemetry',
      device_id: e.device_id,
      metric: e.metric,
      value: typeof e.value === 'boolean' ? e.value : v,
      limit,
    });
  }
}

/**
 * The illustrations `GET /v1/autonomy/reflex/traces` shows while nothing has fired (digest F8): built
 * from the catalogue for the hints emergency, obstacle and thermal, stamped now, never stored.
 */
export function catalogExamples(entityId: string, now: number): Array<Pick<ReflexTrace, 'reflex_id' | 'entity_id' | 'trigger' | 'action_taken' | 'timestamp' | 'priority'> & { example: true }> {
  return ['reflex.emergency_stop', 'reflex.obstacle', 'reflex.thermal'].map((id) => {
    const r = byId(id);
    return { reflex_id: r.id, entity_id: entityId, trigger: r.trigger, action_taken: r.action, timestamp: new Date(now).toISOString(), priority: r.priority, example: true as const };
  });
}

/**
 * The reflexes a recorded simulation trace shows firing: `kill_switch_triggered` frames (the program's
 * kill switch, ending in the emergency stop) and `decision_tree_eval` frames of the `reflex` layer
 * (the matched condition and its first action). Timestamps are the recording's wall-clock time; the
 * frame's simulated time is kept as `sim_time_ms`.
 */
export function reflexesFromTrace(frames: unknown, catalogue: readonly ReflexEntry[], tracePath: string, recordedAt: number): ReflexTrace[] {
  if (!Array.isArray(frames)) return [];
  const priority = (id: string, fallback: number) => catalogue.find((r) => r.id === id)?.priority ?? fallback;
  const out: ReflexTrace[] = [];
  for (const f of frames as Array<Record<string, unknown>>) {
    const p = (f?.['payload'] ?? {}) as Record<string, unknown>;
    const sim = typeof f?.['sim_time_ms'] === 'number' ? (f['sim_time_ms'] as number) : undefined;
    const base = { timestamp: new Date(recordedAt).toISOString(), source: 'simulation' as const, trace_path: tracePath, ...(sim !== undefined ? { sim_time_ms: sim } : {}) };
    if (f?.['event'] === 'kill_switch_triggered' && typeof p['name'] === 'string') {
      const own = `reflex.program.${p['name']}`;
      const id = catalogue.some((r) => r.id === own) ? own : 'reflex.emergency_stop';
      out.push({ ...base, reflex_id: id, entity_id: String(p['robot'] ?? 'platform'), trigger: `kill_switch '${p['name']}'${typeof p['fault'] === 'string' ? ` (${p['fault']})` : ''}`, action_taken: 'halt_actuators', priority: priority(id, 255) });
    } else if (f?.['event'] === 'decision_tree_eval' && p['layer'] === 'reflex') {
      const ev = (p['evidence'] ?? {}) as Record<string, unknown>;
      const tree = typeof ev['tree'] === 'string' ? ev['tree'] : null;
      const actions = Array.isArray(ev['actions']) ? (ev['actions'] as unknown[]).map(String) : [];
      const id = tree ? `reflex.program.${tree}` : 'reflex.program';
      out.push({ ...base, reflex_id: id, entity_id: String(p['entity_id'] ?? 'platform'), trigger: String(ev['condition'] ?? p['reason'] ?? ''), action_taken: actions[0] ?? String(p['action'] ?? ''), priority: priority(id, 150) });
    }
  }
  return out;
}
