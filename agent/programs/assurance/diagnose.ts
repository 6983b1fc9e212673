/**
 * Diagnose (docs/program-language.md §11): static fault analysis of a program, or root-cause analysis of a
 * recorded trace. Pure functions; the caller loads the program or trace and wraps the report.
 */
import type { Program } from '../language/ast.js';
import type { TraceFile, TraceFrame } from '../runtime/trace-file.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import { diagnosisRequirements, lacksEndpoint, networkedDevices } from './config-policy.js';

export interface RootCause {
  description: string;
  confidence: number;
  contributing: string[];
}

export interface StaticDiagnosis {
  subject: string;
  root_causes: RootCause[];
  fault_tree: { top_event: string; gates: string[] };
}

export interface CausalGraph {
  nodes: string[];
  /** Two-element arrays `[from, to]`. */
  edges: [string, string][];
}

export interface TimelineEntry {
  sim_time_ms: number;
  event: string;
  /** The frame payload as a JSON string. */
  detail: string;
}

export interface TraceDiagnosis {
  root_cause: string;
  contributing_factors: string[];
  timeline: TimelineEntry[];
  recommended_actions: string[];
}

export interface DiagnoseReport {
  static_diagnoses: StaticDiagnosis[];
  causal_graph: CausalGraph;
  trace_diagnosis: TraceDiagnosis | null;
  passed: boolean;
}

export interface DiagnoseOptions {
  config?: ResolvedConfig | null;
}

const MITIGATION_CONFIDENCE = 0.7;
const CONFIG_CONFIDENCE = 0.9;
export const MISSING_ENDPOINT_DIAGNOSIS = 'network device missing endpoint or IP in configuration';
export const DETERMINISTIC_REPLAY_ACTION = 'Replay mission with --deterministic for confirmation';

// ---------------------------------------------------------------------------
// Program input

/** One diagnosis per mitigation: each `if` clause is a root cause, every action a fault-tree gate. */
function mitigationDiagnoses(program: Program): StaticDiagnosis[] {
  return program.mitigations.map((mitigation) => ({
    subject: mitigation.name,
    root_causes: mitigation.rules.map((rule) => ({
      description: rule.condition,
      confidence: MITIGATION_CONFIDENCE,
      contributing: [...rule.actions],
    })),
    fault_tree: { top_event: mitigation.name, gates: mitigation.rules.flatMap((rule) => rule.actions) },
  }));
}

/**
 * system → each anomaly detector → each action of its `on anomaly` handlers. Nodes: "system", the
 * detectors in declaration order, then the handler actions (each once) in handler order.
 */
export function causalGraph(program: Program): CausalGraph {
  const detectors = program.anomalyDetectors.map((detector) => detector.name);
  const nodes: string[] = ['system'];
  const seen = new Set(nodes);
  const addNode = (name: string): void => {
    if (!seen.has(name)) {
      seen.add(name);
      nodes.push(name);
    }
  };
  detectors.forEach(addNode);
  for (const handler of program.anomalyHandlers) handler.actions.forEach(addNode);

  const edges: [string, string][] = [];
  const handlersOf = (detector: string) => program.anomalyHandlers.filter((handler) => handler.detector === detector);
  for (const detector of detectors) {
    edges.push(['system', detector]);
    for (const handler of handlersOf(detector)) for (const action of handler.actions) edges.push([detector, action]);
  }
  // Handlers naming an undeclared detector still show their actions, hanging off that name.
  for (const handler of program.anomalyHandlers) {
    if (detectors.includes(handler.detector)) continue;
    for (const action of handler.actions) edges.push([handler.detector, action]);
  }
  return { nodes, edges };
}

function everyDetectorHandled(program: Program): boolean {
  if (program.anomalyHandlers.length === 0) return false;
  return program.anomalyDetectors.every((detector) =>
    program.anomalyHandlers.some((handler) => handler.detector === detector.name),
  );
}

/**
 * `.sd` input. Passes when the program declares mitigations or anomaly detectors. With a
 * configuration, `require_mitigations` needs at least one mitigation, `require_anomaly_handlers`
 * needs an `on anomaly` handler for every detector (and at least one handler), and every networked
 * device without endpoint or IP becomes a diagnosis that fails the report.
 */
export function diagnoseProgram(program: Program, options: DiagnoseOptions = {}): DiagnoseReport {
  const config = options.config ?? null;
  const static_diagnoses = mitigationDiagnoses(program);
  let passed = program.mitigations.length > 0 || program.anomalyDetectors.length > 0;

  if (config) {
    const required = diagnosisRequirements(config);
    if (required.require_mitigations && program.mitigations.length === 0) passed = false;
    if (required.require_anomaly_handlers && !everyDetectorHandled(program)) passed = false;
    for (const device of networkedDevices(config)) {
      if (!lacksEndpoint(device)) continue;
      static_diagnoses.push({
        subject: device.id,
        root_causes: [{ description: MISSING_ENDPOINT_DIAGNOSIS, confidence: CONFIG_CONFIDENCE, contributing: [device.id] }],
        fault_tree: { top_event: device.id, gates: [] },
      });
      passed = false;
    }
  }

  return { static_diagnoses, causal_graph: causalGraph(program), trace_diagnosis: null, passed };
}

// ---------------------------------------------------------------------------
// Trace input

const json = (value: unknown): string => JSON.stringify(value);

function isFailureFrame(frame: TraceFrame): boolean {
  return frame.event.includes('fail') || frame.payload['failed'] === true;
}

/** `failed` set to anything but false/null/absent: `true`, an error string, a count. */
function providerFailed(frame: TraceFrame): boolean {
  const failed = frame.payload['failed'];
  return frame.event === 'provider_call' && failed !== undefined && failed !== null && failed !== false && failed !== 0 && failed !== '';
}

function isSafetyFrame(frame: TraceFrame): boolean {
  return frame.event.includes('safety') || frame.event.includes('kill') || frame.event === 'emergency_stop';
}

/** `<module>.<function>` of a provider call (or its provider key), with the failure text when it is one. */
function providerLabel(frame: TraceFrame): string {
  const text = (key: string): string | null => {
    const value = frame.payload[key];
    return typeof value === 'string' && value !== '' ? value : null;
  };
  const owner = text('provider_key') ?? text('module') ?? 'provider';
  const fn = text('function');
  const label = fn ? `${owner}.${fn}` : owner;
  const failed = text('failed');
  return failed ? `${label} (${failed})` : label;
}

/** Frames worth a second look: failures, provider failures, safety events, misses and timeouts. */
function isNotable(frame: TraceFrame): boolean {
  return (
    isFailureFrame(frame) ||
    providerFailed(frame) ||
    isSafetyFrame(frame) ||
    /timeout|deadline_miss|fallback|degrad|error/.test(frame.event)
  );
}

interface RootCauseFinding {
  root_cause: string;
  frame: TraceFrame | null;
  action: string;
}

/** The four rules of docs/program-language.md §11, first match wins. */
function findRootCause(frames: readonly TraceFrame[]): RootCauseFinding {
  const failure = frames.find(isFailureFrame);
  if (failure) {
    return {
      root_cause: `${failure.event}: ${json(failure.payload)}`,
      frame: failure,
      action: `Investigate '${failure.event}' at T+${failure.sim_time_ms}ms and the handler that should have absorbed it`,
    };
  }
  const provider = frames.find(providerFailed);
  if (provider) {
    const label = providerLabel(provider);
    return {
      root_cause: `Provider failure: ${label}`,
      frame: provider,
      action: `Check provider ${label}: configuration, credentials and connectivity`,
    };
  }
  const safety = frames.find(isSafetyFrame);
  if (safety) {
    return {
      root_cause: `Safety intervention: ${safety.event} at T+${safety.sim_time_ms}ms`,
      frame: safety,
      action: `Review the safety rule or kill switch that triggered '${safety.event}'`,
    };
  }
  if (frames.length === 0) {
    return {
      root_cause: 'Empty trace — no runtime events recorded',
      frame: null,
      action: 'Record a new trace (simulation with record_trace, or svc sim --record)',
    };
  }
  return {
    root_cause: 'No explicit failure event; inspect timeline for anomalies',
    frame: null,
    action: 'Inspect the timeline for unexpected mode changes or timing gaps',
  };
}

/**
 * `.trace` input: root cause, other notable frames as contributing factors (`<event> at T+<t>ms`,
 * timeline order, the root-cause frame excluded), the full timeline, and recommended actions that
 * always end with the deterministic-replay advice.
 */
export function diagnoseTrace(trace: Pick<TraceFile, 'frames'>): DiagnoseReport {
  const frames = trace.frames;
  const finding = findRootCause(frames);
  const contributing_factors = frames
    .filter((frame) => frame !== finding.frame && isNotable(frame))
    .map((frame) => `${frame.event} at T+${frame.sim_time_ms}ms`);
  const timeline = frames.map((frame) => ({ sim_time_ms: frame.sim_time_ms, event: frame.event, detail: json(frame.payload ?? {}) }));
  return {
    static_diagnoses: [],
    causal_graph: { nodes: [], edges: [] },
    trace_diagnosis: {
      root_cause: finding.root_cause,
      contributing_factors,
      timeline,
      recommended_actions: [finding.action, DETERMINISTIC_REPLAY_ACTION],
    },
    passed: true,
  };
}
