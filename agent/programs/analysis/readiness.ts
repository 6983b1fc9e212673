/**
 * Program readiness (docs/program-language.md §9): twelve weighted factors (thirteen with configured human
 * operators), issues in the §9.5 emission order, and the §9.6 verdict.
 */
import type { ResolvedConfig, ValidationResult } from '../../project/resolve-config.js';
import type { Program } from '../language/ast.js';
import type { AnalysisOptions, RuntimeHealth } from './options.js';
import { analyseCapabilities, minimumCapabilities, type MinimumCapabilitiesResult, type RobotCapabilityAnalysis } from './capability-inference.js';
import type { HardwareItem } from './hardware-checks.js';
import { staticHealth, type StaticHealthReport } from './health.js';
import { checkOperators, OPERATOR_FACTOR, OPERATOR_WEIGHT_CAP, type OperatorCheck } from './operators.js';
import { readinessPolicy, type ReadinessWeights, type WeightKey } from './readiness-policy.js';
import { reportedTarget } from './target.js';
import { traceabilityReport, type TraceabilityReport } from './traceability.js';
import { runHardwareVerification, type HardwareVerification } from './verify-hardware.js';

export { DEFAULT_WEIGHTS, DEFAULT_MINIMUM_SCORE, readinessPolicy, WEIGHT_KEYS } from './readiness-policy.js';
export type { ReadinessPolicy, ReadinessWeights } from './readiness-policy.js';

export type IssueSeverity = 'Critical' | 'High' | 'Medium' | 'Low' | 'Info';
export type ReadinessStatus = 'Ready' | 'Degraded' | 'NotReady' | 'Unknown';

export interface ReadinessFactor {
  factor: string;
  score: number;
  weight: number;
  /** score × weight / 100, not rounded. */
  weighted: number;
}

export interface ReadinessIssue {
  factor: string;
  severity: IssueSeverity;
  message: string;
  suggested_action: string | null;
}

export interface ReadinessReport {
  status: ReadinessStatus;
  mission_ready: boolean;
  score: { total: number; maximum: 100; factors: ReadinessFactor[] };
  issues: ReadinessIssue[];
  policy: { minimum_score: number; weights: ReadinessWeights };
  target: string | null;
  robots: string[];
  /** Only with a runtime run (CLI `--runtime`): the health outcome folded into the Health factor. */
  runtime?: RuntimeHealth;
}

/** Intermediate results, exposed so assurance and explain can reuse one evaluation. */
export interface ReadinessEvaluation {
  report: ReadinessReport;
  hardware: HardwareVerification;
  capabilities: RobotCapabilityAnalysis[];
  minimum: MinimumCapabilitiesResult;
  health: StaticHealthReport;
  traceability: TraceabilityReport;
  operators: OperatorCheck | null;
}

/** docs/program-language.md §9.4 `sfc(compatible, errors)`. */
export function sfc(compatible: boolean, errors: number): number {
  if (compatible && errors === 0) return 100;
  if (compatible) return 85;
  if (errors === 1) return 60;
  return 30;
}

const HEALTH_SCORES: Record<string, number> = {
  Healthy: 100,
  Degraded: 70,
  Warning: 70,
  Critical: 30,
  Failed: 30,
  Unsafe: 0,
};

export function evaluateReadiness(program: Program, opts: AnalysisOptions): ReadinessReport {
  return evaluateReadinessDetailed(program, opts).report;
}

export function evaluateReadinessDetailed(program: Program, opts: AnalysisOptions): ReadinessEvaluation {
  const config = opts.config;
  const policy = opts.readinessPolicy ?? readinessPolicy(config);
  const hardware = runHardwareVerification(program, opts);
  const capabilities = analyseCapabilities(program);
  const minimum = minimumCapabilities(program, capabilities);
  const health = withRuntimeHealth(staticHealth(program), opts.runtimeHealth ?? null);
  const traceability = traceabilityReport(program, config, capabilities);
  const operators = config !== null && config.humans.length > 0 ? checkOperators(program, config.humans) : null;

  const hwErrors = hardware.items.filter((i) => i.severity === 'error');
  const batteryItem = hardware.items.find((i) => mentionsBattery(i.message));
  const batteryScore = batteryItem === undefined ? 90 : batteryItem.severity === 'error' ? 30 : batteryItem.severity === 'warning' ? 65 : 90;
  const assurance = assuranceDeductions(program);

  const scores: Array<[string, WeightKey, number]> = [
    ['Hardware', 'hardware', sfc(hardware.compatible, hwErrors.length)],
    ['Capabilities', 'capabilities', sfc(minimum.compatible, minimum.errors.length)],
    ['Health', 'health', HEALTH_SCORES[health.overall] ?? 85],
    ['Connectivity', 'connectivity', Math.max(20, 100 - 25 * traceability.errors.length - 5 * traceability.warnings.length)],
    ['Safety', 'safety', minimum.compatible ? 95 : 40],
    ['Battery', 'battery', batteryScore],
    ['Storage', 'storage', 90],
    ['Compute', 'compute', 88],
    ['Packages', 'packages', countScore(traceability.capability_rows.filter((r) => r.package === '' && r.status === 'FAIL').length)],
    ['Providers', 'providers', countScore(traceability.capability_rows.filter((r) => r.provider === '' && r.capability !== '').length)],
    ['Mission Requirements', 'mission', missionScore(capabilities)],
    ['Assurance', 'assurance', assurance.score],
  ];
  const factors: ReadinessFactor[] = scores.map(([factor, key, score]) => factorRow(factor, score, policy.weights[key]));
  if (operators !== null) {
    factors.push(factorRow(OPERATOR_FACTOR, operators.score, Math.min(policy.weights.mission, OPERATOR_WEIGHT_CAP)));
  }
  const weightSum = factors.reduce((sum, f) => sum + f.weight, 0);
  const weightedSum = factors.reduce((sum, f) => sum + f.weighted, 0);
  const total = weightSum > 0 ? Math.round((weightedSum * 100) / weightSum) : 0;

  const issues = collectIssues({
    program,
    config,
    validation: opts.validation ?? null,
    hardwareItems: hardware.items,
    minimum,
    health,
    traceability,
    batteryScore,
    assurance: assurance.issues,
    operators,
    drift: opts.driftIssues ?? [],
  });

  const blocking = issues.some((i) => i.severity === 'Critical' || i.severity === 'High');
  const minor = issues.some((i) => i.severity === 'Medium' || i.severity === 'Low');
  const missionReady = total >= policy.minimum_score && hardware.compatible && !blocking && (operators?.ok ?? true);
  const status: ReadinessStatus = missionReady
    ? minor
      ? 'Degraded'
      : 'Ready'
    : total >= policy.minimum_score - 15
      ? 'Degraded'
      : 'NotReady';

  const report: ReadinessReport = {
    status,
    mission_ready: missionReady,
    score: { total, maximum: 100, factors },
    issues,
    policy: { minimum_score: policy.minimum_score, weights: policy.weights },
    target: reportedTarget(hardware.resolution),
    robots: program.robots.map((r) => r.name),
    ...(opts.runtimeHealth ? { runtime: opts.runtimeHealth } : {}),
  };
  return { report, hardware, capabilities, minimum, health, traceability, operators };
}

/**
 * Fold a runtime run into the static health (docs/program-language.md §8, §29 `--runtime`): each injected fault becomes a
 * check with the fault's status (so §9.5 rule 5 raises it as an issue), and the overall status is
 * the worst injected one (Degraded 70, Critical 30) or Failed when the run itself failed. A run
 * without faults leaves the static health as it is.
 */
function withRuntimeHealth(health: StaticHealthReport, runtime: RuntimeHealth | null): StaticHealthReport {
  if (runtime === null) return health;
  const checks = [...health.checks];
  for (const f of runtime.injected) {
    checks.push({
      name: f.fault,
      target: f.robot,
      target_kind: 'robot',
      metric: 'runtime',
      operator: '==',
      threshold: 'Healthy',
      status: f.status,
      message: `Injected fault ${f.fault} on robot '${f.robot}': ${f.status}`,
    });
  }
  if (runtime.error !== null) {
    checks.push({ name: 'runtime', target: null, target_kind: null, metric: 'runtime', operator: '==', threshold: 'completed', status: 'Failed', message: `Runtime simulation failed: ${runtime.error}` });
  }
  const overall = runtime.status === 'Healthy' ? health.overall : runtime.status;
  return { ...health, checks, overall };
}

function factorRow(factor: string, score: number, weight: number): ReadinessFactor {
  return { factor, score, weight, weighted: (score * weight) / 100 };
}

function countScore(n: number): number {
  return sfc(n === 0, n);
}

/** Minimum over robots: 50 when a mission-required capability is absent, 75 with a PARTIAL row, else 100. */
function missionScore(analyses: RobotCapabilityAnalysis[]): number {
  let score = 100;
  for (const a of analyses) {
    const required = a.robot.missions.flatMap((m) => m.requiredCapabilities);
    const fail = required.some((c) => !a.present.has(c));
    const partial = a.rows.some((r) => r.status === 'PARTIAL');
    score = Math.min(score, fail ? 50 : partial ? 75 : 100);
  }
  return score;
}

// ---------------------------------------------------------------------------
// Word tests used by the issue rules (docs/program-language.md §9.5). "LTE" must not sit between letters, so names such
// as "filter" or "alternate" do not count as connectivity mentions while "lte_modem" does.

const BATTERY = /battery/i;
const LTE_OR_SIGNAL = /(^|[^a-z])lte([^a-z]|$)|signal/i;
const CONNECTIVITY = /connectivity/i;

export function mentionsBattery(message: string): boolean {
  return BATTERY.test(message);
}

function mentionsLteOrSignal(message: string): boolean {
  return LTE_OR_SIGNAL.test(message);
}

function mentionsConnectivity(message: string): boolean {
  return LTE_OR_SIGNAL.test(message) || CONNECTIVITY.test(message);
}

// ---------------------------------------------------------------------------
// Assurance factor (docs/program-language.md §9.3 #12)

interface AssuranceDeductions {
  score: number;
  issues: ReadinessIssue[];
}

function assuranceDeductions(program: Program): AssuranceDeductions {
  let score = 100;
  const issues: ReadinessIssue[] = [];
  const issue = (severity: IssueSeverity, message: string, action: string): void =>
    void issues.push({ factor: 'Assurance', severity, message, suggested_action: action });

  const emptyCases = program.assuranceCases.filter((c) => c.evidence.length === 0).map((c) => c.name);
  if (emptyCases.length > 0) {
    score -= 40;
    issue('Medium', `Assurance case without evidence: ${emptyCases.join(', ')}`, 'Link evidence (hardware review, replay, safety survey) to every assurance_case');
  }
  const emptyModels = program.knowledgeModels.filter((k) => k.components.length === 0).map((k) => k.name);
  if (emptyModels.length > 0) {
    score -= 20;
    issue('Low', `Knowledge model without components: ${emptyModels.join(', ')}`, 'Declare the components each knowledge_model describes');
  }
  for (const estimator of program.stateEstimators) {
    if (estimator.inputs.length > 0) continue;
    score -= 15;
    issue('Medium', `State estimator '${estimator.name}' has no inputs`, 'List the signals the estimator fuses in its inputs');
  }
  const handled = new Set(program.anomalyHandlers.map((h) => h.detector));
  for (const detector of program.anomalyDetectors) {
    if (handled.has(detector.name)) continue;
    score -= 10;
    issue('Medium', `Anomaly detector '${detector.name}' has no 'on anomaly' handler`, `Add 'on anomaly ${detector.name} severity … { … }'`);
  }
  if (program.anomalyDetectors.length > 0 && program.mitigations.length === 0) {
    score -= 10;
    issue('Medium', 'Anomaly detectors declared but no mitigation', 'Declare a mitigation for the detected conditions');
  }
  return { score: Math.max(0, score), issues };
}

// ---------------------------------------------------------------------------
// Issues (docs/program-language.md §9.5 order)

interface IssueInputs {
  program: Program;
  config: ResolvedConfig | null;
  validation: ValidationResult | null;
  hardwareItems: HardwareItem[];
  minimum: MinimumCapabilitiesResult;
  health: StaticHealthReport;
  traceability: TraceabilityReport;
  batteryScore: number;
  assurance: ReadinessIssue[];
  operators: OperatorCheck | null;
  drift: readonly ReadinessIssue[];
}

function collectIssues(input: IssueInputs): ReadinessIssue[] {
  const issues: ReadinessIssue[] = [];
  const add = (factor: string, severity: IssueSeverity, message: string, suggested_action: string | null): void =>
    void issues.push({ factor, severity, message, suggested_action });

  // 1. Hardware errors.
  for (const i of input.hardwareItems) {
    if (i.severity === 'error') add('Hardware', 'High', i.message, 'Change the deployment target or adjust the robot to fit the hardware profile');
  }
  // 2. Battery / LTE / signal mentions, any severity.
  for (const i of input.hardwareItems) {
    const battery = mentionsBattery(i.message);
    if (!battery && !mentionsLteOrSignal(i.message)) continue;
    const below = i.message.includes('below');
    add(
      battery ? 'Battery' : 'Connectivity',
      below ? 'Medium' : 'Low',
      i.message,
      battery
        ? below
          ? 'Shorten the mission or use a larger battery'
          : null
        : below
          ? 'Check link coverage along the mission route'
          : null,
    );
  }
  // 3. Configuration.
  const config = input.config;
  if (config !== null) {
    const fleet = new Set(config.robots.map((r) => r.id.toLowerCase()));
    for (const robot of input.program.robots) {
      if (!fleet.has(robot.name.toLowerCase())) {
        add('Configuration', 'Medium', `Robot '${robot.name}' is not declared in the fleet configuration`, `Add a [[fleet.robots]] entry with id = "${robot.name}"`);
      }
    }
    for (const device of config.devices) {
      if (!device.networked) continue;
      if (device.endpoint_url === null && device.ip_address === null) {
        add('Connectivity', 'High', `Networked device '${device.id}' has no endpoint or IP address`, `Set endpoint or ip for device '${device.id}'`);
      }
      if (device.security_identity === null) {
        add('Connectivity', 'Medium', `Networked device '${device.id}' has no security identity`, `Set security_identity for device '${device.id}'`);
      }
      if (device.trust_level === null || device.trust_level.toLowerCase() === 'unknown') {
        add('Connectivity', 'Low', `Networked device '${device.id}' has an unknown trust level`, `Set trust_level for device '${device.id}'`);
      }
    }
    for (const finding of input.validation?.findings ?? []) {
      if (finding.severity === 'error') add('Configuration', 'High', `${finding.message} (${finding.path})`, 'Fix the configuration entry');
    }
  }
  // 3 (continued). Drift since a baseline configuration (CLI `--baseline`).
  issues.push(...input.drift);
  // 4. Minimum capabilities.
  for (const message of input.minimum.errors) {
    add('Capabilities', 'High', message, 'Add the hardware the capability needs or remove the requirement');
  }
  // 5. Health checks (static checks are Unknown; only the calibration rule can fire here).
  for (const check of input.health.checks) {
    if (check.message.toLowerCase().includes('calibration')) {
      add('Health', 'Low', check.message, 'Verify sensor calibration before deployment');
    } else if (['Critical', 'Failed', 'Unsafe'].includes(check.status)) {
      add('Health', 'High', check.message, 'Resolve the failing health check');
    } else if (['Degraded', 'Warning', 'Offline'].includes(check.status)) {
      add('Health', 'Medium', check.message, 'Investigate the degraded health check');
    }
  }
  // 6. Traceability warnings about connectivity.
  for (const warning of input.traceability.warnings) {
    if (mentionsConnectivity(warning)) add('Connectivity', 'Medium', warning, null);
  }
  // 7. Battery score.
  if (input.batteryScore < 80) {
    add('Battery', 'Medium', 'Battery below recommended threshold', 'Increase battery capacity or shorten the mission');
  }
  // 8. Assurance deductions.
  issues.push(...input.assurance);
  // 9. Operators.
  for (const u of input.operators?.unresolved ?? []) {
    add(
      OPERATOR_FACTOR,
      'High',
      `Mission '${u.mission}' on robot '${u.robot}' requires approval by '${u.actor}', but no configured operator has that id or role`,
      `Add a [[humans]] entry with role = "${u.actor}"`,
    );
  }
  return issues;
}
