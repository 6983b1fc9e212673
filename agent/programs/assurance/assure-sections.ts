/**
 * The anomaly, prognostics, resilience, mission and state sub-reports of assure
 * (docs/program-language.md §10). Each is a pure function of the program plus, where stated, readiness or mission results.
 */
import type { Program } from '../language/ast.js';
import type { ReadinessEvaluation } from '../analysis/readiness.js';
import type { MissionReport } from '../analysis/verify-mission.js';
import type { MissionPolicy } from './config-policy.js';

// ---------------------------------------------------------------------------
// Anomalies

export interface Anomaly {
  detector: string;
  metric: string | null;
  expected: string;
  observed: string;
  severity: 'Low' | 'Medium' | 'High' | 'Critical';
}

export interface AnomalyReport {
  detectors: { detector: string; rules: string[] }[];
  handlers: string[];
  anomalies: Anomaly[];
  learned: { detector: string; backend: string }[];
  passed: boolean;
}

export function anomalyReport(program: Program): AnomalyReport {
  const anomalies: Anomaly[] = [];
  for (const detector of program.anomalyDetectors) {
    if (detector.expected.length === 0) {
      anomalies.push({ detector: detector.name, metric: null, expected: 'at least one expected rule', observed: 'no expected rule declared', severity: 'Medium' });
    }
    if (!program.anomalyHandlers.some((h) => h.detector === detector.name)) {
      anomalies.push({ detector: detector.name, metric: null, expected: 'an on anomaly handler', observed: 'no handler declared', severity: 'Low' });
    }
  }
  return {
    detectors: program.anomalyDetectors.map((d) => ({ detector: d.name, rules: d.expected.map((e) => `${e.metric} ${e.operator} ${e.threshold}`) })),
    handlers: program.anomalyHandlers.map((h) => `${h.detector}@${h.severity}: ${h.actions.join(', ')}`),
    anomalies,
    learned: program.anomalyDetectors.filter((d) => d.learnedBackend !== null).map((d) => ({ detector: d.name, backend: d.learnedBackend! })),
    passed: !anomalies.some((a) => a.severity === 'High' || a.severity === 'Critical'),
  };
}

// ---------------------------------------------------------------------------
// Prognostics

export interface PrognosticsReport {
  models: { name: string; target: string | null; rules: string[] }[];
  rul_predictions: { component: string; estimate: string | null; confidence: number }[];
  failure_predictions: unknown[];
  trends: unknown[];
  warnings: string[];
  passed: boolean;
}

/** The threshold of the first `warn_if` rule about a component (`warn_if battery.rul < 30min` → `30min`). */
function warnThreshold(rules: readonly string[], component: string): string | null {
  for (const rule of rules) {
    const match = /^(?:warn_if\s+)?(\S+)\s*(<=|<|>=|>|==)\s*(.+)$/.exec(rule.trim());
    if (match && match[1] === component) return match[3]!.trim();
  }
  return null;
}

export function prognosticsReport(program: Program): PrognosticsReport {
  const models = program.prognostics.map((p) => ({ name: p.name, target: p.predicts[0] ?? null, rules: [...p.warnings] }));
  const rul_predictions = program.prognostics.flatMap((p) =>
    p.predicts.map((component) => ({ component, estimate: warnThreshold(p.warnings, component), confidence: 0.75 })),
  );
  const warnings = program.prognostics.filter((p) => p.warnings.length === 0).map((p) => `Prognostics '${p.name}' has no warn_if rule`);
  return { models, rul_predictions, failure_predictions: [], trends: [], warnings, passed: warnings.length === 0 || models.length > 0 };
}

// ---------------------------------------------------------------------------
// Resilience

export interface ResilienceReport {
  policies: { name: string; strategies: { name: string; description: string }[] }[];
  recovery: { name: string; actions: string[] }[];
  redundancy: unknown[];
  readiness_score: number;
  passed: boolean;
}

export function resilienceReport(program: Program, readiness: ReadinessEvaluation): ResilienceReport {
  const hasPolicy = program.resiliencePolicies.length > 0;
  return {
    policies: program.resiliencePolicies.map((p) => ({ name: p.name, strategies: p.strategies.map((s) => ({ name: s, description: `Strategy: ${s}` })) })),
    recovery: program.mitigations.map((m) => ({ name: m.name, actions: m.rules.flatMap((r) => r.actions) })),
    redundancy: [],
    readiness_score: readiness.report.score.total,
    passed: (readiness.report.mission_ready && hasPolicy) || !hasPolicy,
  };
}

// ---------------------------------------------------------------------------
// Mission

export interface MissionAssuranceReport {
  plans: { name: string; steps: string[]; constraints: string[] }[];
  execution: { plan: string | null; current_step: string | null; status: 'ready' | 'replan' | 'blocked' };
  verification: MissionReport;
  abort_reasons: { reason: string; severity: 'High' | 'Medium' }[];
  passed: boolean;
}

const ALL_TRUE_VERIFICATION: MissionReport = {
  achievable: true,
  mission_name: null,
  robot: null,
  required_capabilities: [],
  hardware_satisfied: true,
  capabilities_satisfied: true,
  connectivity_satisfied: true,
  battery_sufficient: true,
  compute_sufficient: true,
  safety_satisfied: true,
  issues: [],
};

/**
 * Mission assurance. `ready` when every mission is achievable; `blocked` when hardware or safety
 * requirements fail (re-planning cannot fix those); otherwise `replan`. The configuration's
 * `[mission] require_plans` and `required_capabilities` add abort reasons and can fail it.
 */
export function missionAssuranceReport(
  program: Program,
  missions: readonly MissionReport[],
  readiness: ReadinessEvaluation,
  policy: MissionPolicy | null,
): MissionAssuranceReport {
  const achievable = missions.every((m) => m.achievable);
  const abort_reasons: MissionAssuranceReport['abort_reasons'] = [];
  for (const mission of missions) for (const issue of mission.issues) abort_reasons.push({ reason: issue, severity: 'High' });

  let configOk = true;
  if (policy) {
    if (policy.require_plans && program.missionPlans.length === 0) {
      abort_reasons.push({ reason: 'Mission plans are required by configuration but none is declared', severity: 'High' });
      configOk = false;
    }
    const present = new Set(readiness.capabilities.flatMap((a) => [...a.present]));
    for (const capability of policy.required_capabilities) {
      if (present.has(capability)) continue;
      abort_reasons.push({ reason: `Required capability '${capability}' is not provided by any robot`, severity: 'High' });
      configOk = false;
    }
  }

  const blocked = missions.some((m) => !m.hardware_satisfied || !m.safety_satisfied);
  const firstPlan = program.missionPlans[0] ?? null;
  const planPassed = (achievable && program.missionPlans.length > 0) || program.missionPlans.length === 0;
  return {
    plans: program.missionPlans.map((p) => ({ name: p.name, steps: [...p.steps], constraints: [...p.constraints] })),
    execution: {
      plan: firstPlan?.name ?? null,
      current_step: firstPlan?.steps[0] ?? null,
      status: achievable && configOk ? 'ready' : blocked ? 'blocked' : 'replan',
    },
    verification: missions[0] ?? { ...ALL_TRUE_VERIFICATION },
    abort_reasons,
    passed: planPassed && configOk,
  };
}

// ---------------------------------------------------------------------------
// State estimation

export interface StateReport {
  estimators: { estimator: string; inputs: string[]; fused: { name: string; value: null; confidence: number; sources: string[] } }[];
  belief: { estimates: Record<string, { confidence: number; sources: string[] }> };
  issues: string[];
  passed: boolean;
}

/** Static fusion confidence: 0.5 for one input, +0.15 per further independent input, capped at 0.95. */
function fusionConfidence(inputs: number): number {
  if (inputs === 0) return 0;
  return Math.round(Math.min(0.95, 0.5 + 0.15 * (inputs - 1)) * 100) / 100;
}

export function stateReport(program: Program): StateReport {
  const estimators = program.stateEstimators.map((e) => ({
    estimator: e.name,
    inputs: [...e.inputs],
    fused: { name: e.output ?? `${e.name}Estimate`, value: null, confidence: fusionConfidence(e.inputs.length), sources: [...e.inputs] },
  }));
  const estimates: StateReport['belief']['estimates'] = {};
  for (const e of [...estimators].sort((a, b) => (a.fused.name < b.fused.name ? -1 : a.fused.name > b.fused.name ? 1 : 0))) {
    estimates[e.fused.name] = { confidence: e.fused.confidence, sources: e.fused.sources };
  }
  const issues = program.stateEstimators.filter((e) => e.inputs.length === 0).map((e) => `State estimator '${e.name}' has no inputs`);
  return { estimators, belief: { estimates }, issues, passed: issues.length === 0 };
}
