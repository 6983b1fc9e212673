/**
 * The program analytics of docs/analytics.md, as pure functions of a parsed program and what the
 * service gathered around it (recorded readiness trends, failure frequencies, the device pool). Every
 * figure comes from an analysis the rest of the agent already runs — readiness, scenario and recovery
 * coverage, heal, contract verification, composite trust — so analytics never disagree with
 * `/v1/programs/*` or the executive scorecard.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Program } from '../programs/language/ast.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { evaluateReadiness, type ReadinessReport } from '../programs/analysis/readiness.js';
import { resolveTargets, reportedTarget } from '../programs/analysis/target.js';
import { runHardwareVerification } from '../programs/analysis/verify-hardware.js';
import { verifyMission } from '../programs/analysis/verify-mission.js';
import { verifyContract } from '../programs/analysis/contract.js';
import { scenarioCoverage } from '../programs/assurance/scenario-coverage.js';
import { recoveryCoverage, KNOWN_FAILURES } from '../programs/assurance/recovery-coverage.js';
import { healProgram } from '../programs/assurance/heal.js';
import { classifyFailure, diagnoseFailure } from '../programs/assurance/recovery-actions.js';
import { programTrust, type TrustReport } from '../programs/assurance/trust.js';
import { safetyRuleTexts } from '../programs/assurance/safety-coverage.js';
import type { ReadinessTrendReport } from '../sre/readiness-trends.js';

export const MINIMUM_SCORE = 80;

/** What every analysis needs: the program, where it lives and the target policy's answer. */
export interface AnalyticsInput {
  program: Program;
  /** File name of the program (the label analytics report under). */
  label: string;
  /** Absolute path of the loaded program. */
  file: string;
  config: ResolvedConfig | null;
  projectRoot: string;
  stateDir: string;
  knowledgePath: string;
}

/** Readiness trend of the loaded program over the recorded samples, for a horizon (the SRE service's). */
export type TrendSource = (horizonDays: number) => ReadinessTrendReport | null;

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The PL §1 target policy (first deploy target, then the configured default), so analytics agree with program readiness. */
export function analyticsTarget(input: AnalyticsInput): string | null {
  return reportedTarget(resolveTargets(input.program, input.config));
}

/** Static readiness (docs/analytics.md): no configuration, the program's simulate_compatibility faults applied. */
export function staticReadiness(input: AnalyticsInput, options: { target?: string | null; simulateFaults?: string[] } = {}): ReadinessReport {
  const target = options.target === undefined ? analyticsTarget(input) : options.target;
  return evaluateReadiness(input.program, { config: null, target, ...(options.simulateFaults ? { simulateFaults: options.simulateFaults } : {}) });
}

const SCENARIO_STATUS = { covered: 'covered', partial: 'partially_covered', uncovered: 'uncovered' } as const;

/** Seven failure scenarios (agent/programs/assurance/scenario-coverage.ts) in the analytics shape. */
export function safetyCoverageReport(input: AnalyticsInput) {
  const r = scenarioCoverage(input.program, { config: null });
  const rules = safetyRuleTexts(input.program);
  return {
    program: input.label,
    overall_coverage_pct: r.percent,
    scenarios: r.scenarios.map((s) => ({
      name: s.scenario,
      status: SCENARIO_STATUS[s.status],
      evidence: s.status === 'uncovered' ? [] : [`${s.scenario} ${SCENARIO_STATUS[s.status]} (${rules.length} safety rule(s), ${input.program.recoveryPolicies.length} recovery polic(ies))`],
      gaps: s.status === 'covered' ? [] : [`${s.scenario} is ${SCENARIO_STATUS[s.status]}`],
    })),
    recommendations: r.recommendations,
  };
}

const failureContext = (issue: string) => {
  const classification = classifyFailure(issue);
  return { issue, classification, diagnosis: diagnoseFailure(issue, classification), level: 'Level3AutomaticWithValidation' };
};

/** Eleven known failure modes against the recovery and continuity policies, with a heal plan for each covered one. */
export function recoveryCoverageReport(input: AnalyticsInput) {
  const r = recoveryCoverage(input.program);
  const covered = r.failures.filter((f) => f.status === 'covered');
  const heal = covered.length > 0 ? healProgram(input.program, { config: null, devices: [], knowledgePath: input.knowledgePath, contexts: covered.map((f) => failureContext(f.failure)) }) : null;
  return {
    program: input.label,
    coverage_pct: r.percent,
    known_failures: KNOWN_FAILURES.length,
    covered: covered.length,
    partially_covered: r.failures.filter((f) => f.status === 'partial').length,
    uncovered: r.failures.filter((f) => f.status === 'uncovered').length,
    recovery_plans: covered.map((f, i) => {
      const plan = heal?.plans[i];
      return { failure: f.failure, policy: plan?.name ?? null, actions: plan?.actions.map((a) => a.description) ?? [] };
    }),
    missing_paths: r.failures.filter((f) => f.status === 'uncovered').map((f) => ({ failure: f.failure, recommendation: `Add recovery_policy or continuity_policy for ${f.failure}` })),
  };
}

// ---------------------------------------------------------------------------------------------
// Readiness trends and forecast (docs/analytics.md § Readiness)

/** `GET /v1/analytics/readiness`: the recorded trend, with the linear forecast only when asked. */
export function readinessAnalytics(label: string, trend: ReadinessTrendReport, forecastDays: number | null) {
  const warnings = forecastDays === null ? trend.warnings.filter((w) => !w.startsWith('forecast ')) : trend.warnings;
  const forecast = forecastDays !== null && trend.forecast
    ? { horizon_days: trend.forecast.horizon_days, predicted_score: trend.forecast.predicted_score, risk_warning: trend.forecast.risk_warning, message: trend.forecast.message }
    : null;
  return {
    program: label,
    sample_count: trend.sample_count,
    overall_trend: trend.overall_trend,
    factor_trends: trend.factor_trends,
    forecast,
    warnings,
    sources: trend.sources,
  };
}

/**
 * The readiness forecast per horizon: the recorded trend's linear forecast when samples exist, else
 * the current score degraded by a per-day decay derived from the program's own state (issues,
 * coverage, weak factors). The decay constants are heuristics; their inputs are real.
 */
export function readinessForecast(input: AnalyticsInput, horizons: number[], trends: TrendSource, options: { target?: string | null } = {}) {
  const readiness = staticReadiness(input, options);
  const coverage = safetyCoverageReport(input).overall_coverage_pct;
  const first = trends(horizons[0]!);
  const hasHistory = (first?.sample_count ?? 0) > 0;
  const slope = first?.overall_trend?.slope_per_day ?? 0;
  let decay = readiness.mission_ready ? 0 : 1.5;
  for (const issue of readiness.issues) decay += issue.severity === 'Critical' ? 2 : issue.severity === 'High' ? 1 : issue.severity === 'Medium' ? 0.5 : 0.1;
  if (coverage < 80) decay += (80 - coverage) / 20;
  decay += 0.3 * readiness.score.factors.filter((f) => f.score < 70).length;
  decay = clamp(decay, 0, 5);
  const degradation = readiness.mission_ready && readiness.score.total >= MINIMUM_SCORE
    ? (hasHistory && slope < 0 ? slope : -Math.min(decay, 0.5))
    : (hasHistory && slope < 0 ? Math.min(slope, -decay) : -decay);
  const current = readiness.score.total;
  const predictions = horizons.map((days) => {
    const trend = days === horizons[0] ? first : trends(days);
    const historyForecast = hasHistory ? trend?.forecast ?? null : null;
    const predicted = historyForecast ? historyForecast.predicted_score : clamp(Math.round(current + degradation * days), 0, 100);
    const risk = predicted < MINIMUM_SCORE;
    const risks: string[] = [];
    if (!readiness.mission_ready) risks.push('mission not ready at current evaluation');
    if (coverage < 100) risks.push(`safety coverage ${coverage}% may degrade under field stress`);
    for (const issue of readiness.issues.slice(0, 3)) risks.push(`${issue.severity}: ${issue.message}`);
    if (historyForecast) risks.push(historyForecast.message);
    if (risk) risks.push(`predicted score ${predicted} below minimum ${MINIMUM_SCORE} at ${days}d`);
    return { horizon_days: days, current_score: current, predicted_score: predicted, degradation_per_day: round(degradation), projected_risks: risks, risk_warning: risk };
  });
  const warnings = [...(first?.warnings ?? [])];
  if (!hasHistory) warnings.push('no readiness history; forecast uses heuristic degradation only — the agent records readiness samples every SVC_SRE_SAMPLE_INTERVAL_SECS');
  return {
    program: input.label,
    mission_ready: readiness.mission_ready,
    current_score: current,
    maximum_score: readiness.score.maximum,
    history_samples: first?.sample_count ?? 0,
    degradation_per_day: round(degradation),
    predictions,
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// What-if (docs/analytics.md § What-if)

export type ScenarioKind = 'gps' | 'camera' | 'lidar' | 'connectivity' | 'provider' | 'package' | 'battery';

const KIND_ALIASES: Record<string, ScenarioKind> = {
  gps: 'gps', 'gps-failure': 'gps', 'robot-failure': 'gps',
  camera: 'camera', 'camera-failure': 'camera',
  lidar: 'lidar', 'lidar-failure': 'lidar',
  connectivity: 'connectivity', network: 'connectivity', 'connectivity-failure': 'connectivity', 'network-failure': 'connectivity',
  'connectivity-loss': 'connectivity', 'fleet-failure': 'connectivity', 'swarm-failure': 'connectivity',
  provider: 'provider', 'provider-failure': 'provider',
  package: 'package', 'package-failure': 'package',
  battery: 'battery', 'battery-failure': 'battery',
};

export function scenarioKind(label: string): ScenarioKind | null {
  const key = label.trim().toLowerCase().replace(/_/g, '-');
  return Object.prototype.hasOwnProperty.call(KIND_ALIASES, key) ? KIND_ALIASES[key]! : null;
}

const IMPACT: Record<ScenarioKind, string> = {
  gps: 'navigation_degraded',
  camera: 'perception_degraded',
  lidar: 'obstacle_sensing_degraded',
  battery: 'mission_duration_at_risk',
  connectivity: 'central_link_lost',
  provider: 'provider_dispatch_degraded',
  package: 'dependency_integrity_at_risk',
};

/** The constant priors, used until enough failures are on record (SCENARIO_PRIOR_MIN_RECORDS). */
export const BASE_PRIORS: Record<ScenarioKind, number> = { gps: 0.15, camera: 0.12, lidar: 0.14, battery: 0.18, connectivity: 0.22, provider: 0.1, package: 0.08 };
export const SCENARIO_PRIOR_MIN_RECORDS = 5;

/** The hardware fault that removes the failed component for the scenario's readiness half (PL §9.2). */
const SCENARIO_FAULTS: Record<ScenarioKind, string[]> = {
  gps: ['GpsFailure'],
  camera: ['CameraFailure'],
  lidar: ['LidarFailure'],
  connectivity: ['NetworkOutage', 'LteOutage'],
  battery: ['BatteryDegradation'],
  provider: [],
  package: [],
};

/** Words that name each kind in a failure record (alert text, recovery root cause). */
export const KIND_WORDS: Record<ScenarioKind, string[]> = {
  gps: ['gps', 'gnss'],
  camera: ['camera'],
  lidar: ['lidar'],
  connectivity: ['connect', 'network', 'link'],
  provider: ['provider'],
  package: ['package'],
  battery: ['battery'],
};

/** Failure records of the last 30 days (critical alerts and recovery history), as lower-case texts. */
export type FailureRecords = string[];

/** Scenario labels the program suggests when none is asked for. */
export function defaultScenarios(program: Program): string[] {
  const text = JSON.stringify({
    robots: program.robots.map((r) => ({ s: r.sensors, m: r.missions, safety: safetyRuleTexts(program) })),
    r: program.recoveryPolicies,
    c: program.continuityPolicies,
    m: program.mitigations,
    i: program.imports,
    h: program.hardware,
    p: program.missionPlans,
  }).toLowerCase();
  const sensorTypes = program.robots.flatMap((r) => r.sensors.map((s) => s.type.toLowerCase()));
  const out: string[] = [];
  if (sensorTypes.includes('gps') || text.includes('gps')) out.push('gps_failure');
  if (sensorTypes.includes('camera') || text.includes('camera')) out.push('camera_failure');
  if (sensorTypes.includes('lidar') || text.includes('lidar')) out.push('lidar_failure');
  if (program.requiresConnectivity || program.hardware.some((h) => h.connectivity.length > 0) || text.includes('connect')) out.push('connectivity_failure');
  if (text.includes('provider')) out.push('provider_failure');
  if (text.includes('package')) out.push('package_failure');
  if (text.includes('battery')) out.push('battery_failure');
  return out.length > 0 ? out : ['gps_failure'];
}

export function whatIf(input: AnalyticsInput, labels: string[], records: FailureRecords) {
  const baseline = staticReadiness(input);
  const scenarios = labels.map((label) => {
    const kind = scenarioKind(label);
    if (!kind) {
      return {
        scenario: label, impact: 'unknown', risk: 'high', recovery_plan: 'none', probability: 0.5,
        mission_completion_likely: false, recovery_passed: false, readiness_passed: false,
        details: [`unknown scenario: ${label}`], prior_source: 'none',
      };
    }
    const heal = healProgram(input.program, { config: null, devices: [], knowledgePath: input.knowledgePath, contexts: [failureContext(`${kind}.failed`)] });
    const readiness = SCENARIO_FAULTS[kind].length > 0 ? staticReadiness(input, { simulateFaults: SCENARIO_FAULTS[kind] }) : baseline;
    const severe = readiness.issues.some((i) => i.severity === 'Critical' || i.severity === 'High');
    const recoveryPassed = heal.passed;
    const readinessPassed = readiness.mission_ready || heal.readiness.recovery_ready || !severe;
    const likely = recoveryPassed && readinessPassed && !heal.results.some((r) => r.status === 'Unsafe');
    const risk = !recoveryPassed ? 'critical' : !likely ? 'high' : severe || heal.readiness.risk === 'High' ? 'medium' : kind === 'battery' || kind === 'connectivity' ? 'medium' : 'low';
    const plan = heal.plans[0];
    const knowledge = heal.knowledge.entries[0];
    const recoveryPlan = plan
      ? `${plan.name} → ${plan.actions[0]?.description ?? 'evaluate'}`
      : knowledge ? `${knowledge.failure} → ${knowledge.actions[0] ?? 'evaluate'}` : 'no_recovery_plan';
    // Ours: the prior is the observed share of this failure among recent failure records once there are enough of them.
    const matching = records.filter((r) => KIND_WORDS[kind].some((w) => r.includes(w))).length;
    const observed = records.length >= SCENARIO_PRIOR_MIN_RECORDS;
    const base = observed ? matching / records.length : BASE_PRIORS[kind];
    const successRate = heal.assurance.success_rate;
    const probability = round(clamp(base + (1 - successRate) * 0.35 + (readiness.mission_ready ? 0 : 0.12) + (likely ? -0.05 : 0.15), 0.05, 0.95), 4);
    return {
      scenario: label,
      impact: IMPACT[kind],
      risk,
      recovery_plan: recoveryPlan,
      probability,
      mission_completion_likely: likely,
      recovery_passed: recoveryPassed,
      readiness_passed: readinessPassed,
      details: [
        `recovery: ${recoveryPassed ? 'pass' : 'fail'} (plans=${heal.plans.length}, success_rate=${Math.round(successRate * 100)}%)`,
        `readiness: mission_ready=${readiness.mission_ready}, score ${readiness.score.total}/${readiness.score.maximum}`,
      ],
      prior_source: observed ? `observed (${matching} of ${records.length} failure records in 30 days)` : 'constant',
    };
  });
  return {
    program: input.label,
    scenarios,
    summary: {
      total: scenarios.length,
      mission_completion_likely: scenarios.filter((s) => s.mission_completion_likely).length,
      high_risk: scenarios.filter((s) => s.risk === 'high' || s.risk === 'critical').length,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Mission risk (docs/analytics.md § Mission risk)

export function compositeTrust(input: AnalyticsInput): TrustReport {
  // Never records an integrity baseline: reading analytics writes nothing.
  return programTrust(input.program, { file: input.file, projectRoot: input.projectRoot, stateDir: input.stateDir, config: input.config, recordBaseline: false });
}

export function riskTier(total: number): 'low' | 'medium' | 'high' | 'critical' {
  return total <= 25 ? 'low' : total <= 50 ? 'medium' : total <= 75 ? 'high' : 'critical';
}

export function missionRisk(input: AnalyticsInput, records: FailureRecords) {
  const target = analyticsTarget(input);
  const readiness = staticReadiness(input, { target });
  const safety = safetyCoverageReport(input);
  const recovery = recoveryCoverageReport(input);
  const contract = verifyContract(input.program, { config: null, target });
  const trust = compositeTrust(input);
  const hardware = runHardwareVerification(input.program, { config: null, target });
  const deployItems = hardware.results.filter((r) => input.program.deploys.some((d) => d.robot === r.robot.name));
  const hardwareErrors = deployItems.flatMap((r) => r.items.filter((i) => i.severity === 'error')).length;
  const compatible = input.program.deploys.length === 0 || deployItems.every((r) => r.compatible);
  const scenarios = whatIf(input, defaultScenarios(input.program), records);
  const pct = Math.round((readiness.score.total / Math.max(readiness.score.maximum, 1)) * 100);
  const cap = (n: number) => clamp(Math.round(n), 0, 100);
  const failedChecks = contract.report.checks.filter((c) => !c.passed).length;
  const factors = [
    { name: 'readiness', weight: 25, score: cap(readiness.mission_ready ? (100 - pct) / 2 : 100 - pct), detail: `mission_ready=${readiness.mission_ready}, score ${readiness.score.total}/${readiness.score.maximum}` },
    { name: 'safety_coverage', weight: 20, score: cap(100 - safety.overall_coverage_pct), detail: `coverage ${safety.overall_coverage_pct}%, ${safety.scenarios.length} scenarios` },
    { name: 'recovery_coverage', weight: 20, score: cap(100 - recovery.coverage_pct), detail: `coverage ${recovery.coverage_pct}%, ${recovery.uncovered} uncovered` },
    { name: 'trust', weight: 15, score: cap(100 - trust.score), detail: `composite trust ${trust.score}/100 tier=${trust.tier}` },
    { name: 'mission_contract', weight: 10, score: cap(contract.passed ? 20 * failedChecks : 85), detail: `passed=${contract.passed}, ${contract.report.checks.length} checks` },
    {
      name: 'what_if_scenarios', weight: 10,
      score: scenarios.summary.total === 0 ? 0 : cap((scenarios.summary.high_risk / scenarios.summary.total) * 100),
      detail: `${scenarios.summary.high_risk} high-risk of ${scenarios.summary.total} scenarios`,
    },
  ];
  if (!compatible) factors.push({ name: 'hardware_margin', weight: 0, score: cap(12 * hardwareErrors), detail: `${hardwareErrors} compatibility issue(s)` });
  if (input.program.fleets.length > 0) {
    factors.push({ name: 'fleet_dependency', weight: 0, score: recovery.uncovered > 0 ? 40 : 15, detail: 'fleet declared: coordinated recovery depends on peer availability' });
  }
  const weighted = factors.filter((f) => f.weight > 0);
  const total = Math.min(100, Math.floor(weighted.reduce((s, f) => s + f.score * f.weight, 0) / weighted.reduce((s, f) => s + f.weight, 0)));
  const mitigations = new Set<string>([...safety.recommendations, ...recovery.missing_paths.map((m) => m.recommendation), ...contract.report.issues]);
  if (!readiness.mission_ready) mitigations.add('Improve readiness score before deployment');
  if (100 - trust.score > 40) mitigations.add(`Review trust posture (tier=${trust.tier}) before field rollout`);
  return { program: input.label, score: { total, tier: riskTier(total) }, factors, mitigations: [...mitigations].sort() };
}

// ---------------------------------------------------------------------------------------------
// Mission twin and certification pack

export function missionTwin(input: AnalyticsInput, trends: TrendSource) {
  const p = input.program;
  // Ours: the same target policy as every analytics readiness (docs/analytics.md), not "no target".
  const target = analyticsTarget(input);
  const readiness = staticReadiness(input, { target });
  const verification = verifyMission(p, { config: null, target });
  const withMission = p.robots.filter((r) => r.missions.length > 0);
  return {
    program: input.label,
    state: {
      mission_count: withMission.length,
      mission_plan_steps: p.missionPlans.reduce((n, m) => n + m.steps.length, 0),
      robots: p.robots.map((r) => r.name),
      missions: withMission.map((r) => r.name),
      mission_names: withMission.flatMap((r) => r.missions.map((m) => m.name ?? `${r.name}_mission`)),
      verification_passed: verification.every((m) => m.achievable),
    },
    readiness,
    risks: {
      open_issues: readiness.issues.length,
      critical_issues: readiness.issues.filter((i) => i.severity === 'Critical' || i.severity === 'High').length,
      readiness_score: readiness.score.total,
      mission_ready: readiness.mission_ready,
    },
    forecast: readinessForecast(input, [7, 14], trends, { target }),
  };
}

export function certificationPack(input: AnalyticsInput, strict: boolean) {
  const p = input.program;
  const checklist: Array<{ category: 'certify'; message: string; severity: 'pass' | 'warning' | 'error'; line: number; column: number }> = [];
  const add = (severity: 'pass' | 'warning' | 'error', message: string, loc?: { line: number; column: number }) =>
    checklist.push({ category: 'certify', message, severity, line: loc?.line ?? 0, column: loc?.column ?? 0 });
  const hasDeploys = p.deploys.length > 0;
  if (hasDeploys && p.certifications.length === 0) add(strict ? 'error' : 'warning', 'Deploy targets declared without a certify block');
  if (!hasDeploys && p.certifications.length > 0) add('pass', 'certify declared; no deploy targets to check');
  if (strict) {
    for (const c of p.certifications) {
      const std = c.standard.toUpperCase().replace(/[^A-Z0-9]/g, '');
      if (std === 'ISO13849' && !c.level) add('error', 'ISO13849 certification needs a performance level (level PLa…PLe)', c.loc);
      if (std === 'ISO26262' && !c.level) add('warning', 'ISO26262 certification without an ASIL level', c.loc);
    }
  }
  const sev = (s: boolean): 'warning' | 'error' => (s ? 'error' : 'warning');
  const deployTargets: Array<{ robot_name: string; hardware: string }> = [];
  for (const d of p.deploys) {
    const robot = p.robots.find((r) => r.name === d.robot);
    if (!robot) {
      if (strict) add('error', `deploy names unknown robot '${d.robot}'`, d.loc);
    } else {
      if (robot.missions.length === 0) add(sev(strict), `Robot '${robot.name}' is deployed without a mission`, d.loc);
      if (robot.safety.length === 0) add(sev(strict), `Robot '${robot.name}' is deployed without a safety block`, d.loc);
    }
    for (const t of d.targets) {
      deployTargets.push({ robot_name: d.robot, hardware: t });
      add('pass', `deploy ${d.robot} to ${t}`, d.loc);
    }
  }
  if (strict && hasDeploys && p.safetyZones.length === 0) add('warning', 'No program-level safety_zone declared');
  const errors = checklist.filter((c) => c.severity === 'error').length;
  const warnings = checklist.filter((c) => c.severity === 'warning').length;
  let hash: string | null = null;
  try {
    hash = crypto.createHash('sha256').update(fs.readFileSync(input.file)).digest('hex');
  } catch {
    hash = null;
  }
  const proof = {
    program: input.label,
    program_hash: hash,
    strict,
    passed: errors === 0,
    certifications: p.certifications.map((c) => ({ standard: c.standard, level: c.level })),
    deploy_targets: deployTargets,
    checklist,
    summary: errors === 0
      ? `Certification proof passed (${deployTargets.length} deploy targets, ${p.certifications.length} certify blocks)`
      : `Certification proof failed with ${errors} error(s) and ${warnings} warning(s)`,
  };
  const readiness = staticReadiness(input);
  const safety = safetyCoverageReport(input);
  const recovery = recoveryCoverageReport(input);
  const trust = compositeTrust(input);
  const evidence = [
    { kind: 'verification', passed: proof.passed, payload: proof },
    { kind: 'readiness', passed: readiness.mission_ready, payload: readiness },
    { kind: 'safety', passed: safety.overall_coverage_pct >= 80, payload: safety },
    { kind: 'recovery', passed: recovery.coverage_pct >= 80, payload: recovery },
    { kind: 'trust', passed: trust.score >= 70, payload: trust },
  ];
  return { program: input.label, passed: proof.passed && evidence.every((e) => e.passed), proof, evidence };
}
