/**
 * The mission-twin report of a program (docs/twins.md § Snapshots): what the program plans (robots,
 * missions, plan steps, whether every mission verifies), its static readiness, the risks a list
 * summary reads (`risks.mission_ready`, `risks.readiness_score`) and a readiness forecast at 7 and
 * 14 days. Every part is an existing analysis (readiness, mission verification, failure-scenario
 * coverage, readiness trends over the recorded history); nothing here re-implements one. When a
 * recorded trace is given, what the run did is added as `replay`.
 */
import type { Program } from '../programs/language/ast.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { evaluateReadinessDetailed, type ReadinessReport } from '../programs/analysis/readiness.js';
import { missionReports } from '../programs/analysis/verify-mission.js';
import { scenarioCoverage } from '../programs/assurance/scenario-coverage.js';
import type { TraceFile } from '../programs/runtime/trace-file.js';
import { readinessTrendReport, type ReadinessEntry } from '../sre/readiness-trends.js';

const MINIMUM_SCORE = 80;
const HORIZONS = [7, 14] as const;

export interface MissionTwinInputs {
  config: ResolvedConfig | null;
  /** Readiness history of this program label: the agent's recorded samples and the CLI history file. */
  history: { recorded: ReadinessEntry[]; file: ReadinessEntry[] };
  /** A recorded run of this program (project-relative path for display). */
  trace?: { path: string; trace: TraceFile } | null;
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Heuristic decay per day (0–5) from the current state, as the analytics forecast defines it
 * (docs/twins.md: not a measurement; every input is computed from the program).
 */
function decayPerDay(report: ReadinessReport, coverage: number): number {
  let d = report.mission_ready ? 0 : 1.5;
  for (const i of report.issues) d += i.severity === 'Critical' ? 2 : i.severity === 'High' ? 1 : i.severity === 'Medium' ? 0.5 : 0.1;
  if (coverage < MINIMUM_SCORE) d += (MINIMUM_SCORE - coverage) / 20;
  d += 0.3 * report.score.factors.filter((f) => f.score < 70).length;
  return clamp(d, 0, 5);
}

function forecast(label: string, report: ReadinessReport, coverage: number, history: MissionTwinInputs['history']) {
  const samples = history.recorded.length + history.file.length;
  const decay = decayPerDay(report, coverage);
  const current = report.score.total;
  const trend = (days: number) => readinessTrendReport(label, history, { horizonDays: days, minimumScore: MINIMUM_SCORE, sampleIntervalSecs: 0 });
  const first = trend(HORIZONS[0]);
  const slope = first.overall_trend?.slope_per_day ?? 0;
  let degradation: number;
  if (report.mission_ready && current >= MINIMUM_SCORE) degradation = slope < 0 ? slope : -Math.min(decay, 0.5);
  else degradation = slope < 0 ? Math.min(slope, -decay) : -decay;
  degradation = round2(degradation);
  const predictions = HORIZONS.map((days) => {
    const t = samples > 0 ? trend(days) : null;
    const predicted = t?.forecast ? t.forecast.predicted_score : clamp(Math.round(current + degradation * days), 0, 100);
    const risk = predicted < MINIMUM_SCORE;
    const projected: string[] = [];
    if (!report.mission_ready) projected.push('mission not ready at current evaluation');
    if (coverage < 100) projected.push(`safety coverage ${coverage}% may degrade under field stress`);
    for (const i of report.issues.slice(0, 3)) projected.push(`${i.severity}: ${i.message}`);
    if (t?.forecast) projected.push(t.forecast.message);
    if (risk) projected.push(`predicted score ${predicted} below minimum ${MINIMUM_SCORE} at ${days}d`);
    return { horizon_days: days, current_score: current, predicted_score: predicted, degradation_per_day: degradation, projected_risks: projected, risk_warning: risk };
  });
  const warnings = samples > 0 ? first.warnings.filter((w) => !w.startsWith('forecast ')) : ['no readiness history; forecast uses heuristic degradation only — run `svc readiness --record`'];
  return {
    program: label,
    mission_ready: report.mission_ready,
    current_score: current,
    maximum_score: report.score.maximum,
    history_samples: samples,
    degradation_per_day: degradation,
    predictions,
    warnings,
  };
}

/** What a recorded run did: frames, duration, events by name, emergency stops and the final state. */
export function replaySummary(path: string, trace: TraceFile) {
  const events: Record<string, number> = {};
  for (const f of trace.frames) events[f.event] = (events[f.event] ?? 0) + 1;
  const withState = trace.frames.filter((f) => f.state !== null);
  const last = trace.frames[trace.frames.length - 1];
  return {
    trace: path,
    trace_version: trace.version,
    deterministic: trace.deterministic,
    frame_count: trace.frames.length,
    duration_ms: last ? last.sim_time_ms : 0,
    events: Object.fromEntries(Object.entries(events).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    emergency_stop_frames: withState.filter((f) => f.state!.emergency_stop).length,
    final_state: withState.length > 0 ? withState[withState.length - 1]!.state : null,
  };
}

export function missionTwinReport(label: string, program: Program, inputs: MissionTwinInputs) {
  const evaluation = evaluateReadinessDetailed(program, { config: inputs.config });
  const report = evaluation.report;
  const missions = missionReports(program, { hardware: evaluation.hardware, capabilities: evaluation.capabilities, minimum: evaluation.minimum });
  const withMission = program.robots.filter((r) => r.missions.length > 0);
  const coverage = scenarioCoverage(program, { config: inputs.config, hardwareItems: evaluation.hardware.items }).percent;
  return {
    program: label,
    state: {
      mission_count: withMission.length,
      mission_plan_steps: program.missionPlans.reduce((n, p) => n + p.steps.length, 0),
      robots: program.robots.map((r) => r.name),
      // Robot names, as the reference reports them; `mission_names` names the missions themselves.
      missions: withMission.map((r) => r.name),
      mission_names: withMission.flatMap((r) => r.missions.map((m) => m.name ?? `${r.name}_mission`)),
      verification_passed: missions.every((m) => m.achievable),
    },
    readiness: report,
    risks: {
      open_issues: report.issues.length,
      critical_issues: report.issues.filter((i) => i.severity === 'Critical' || i.severity === 'High').length,
      readiness_score: report.score.total,
      mission_ready: report.mission_ready,
    },
    forecast: forecast(label, report, coverage, inputs.history),
    ...(inputs.trace ? { replay: replaySummary(inputs.trace.path, inputs.trace.trace) } : {}),
  };
}
