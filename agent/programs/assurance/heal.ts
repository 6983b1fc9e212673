/**
 * Heal (docs/program-language.md §12): plan a recovery for every failure the program anticipates, pass
 * each action through the gates (safety, hardware, capability, readiness, approval) and report
 * what a static evaluation would execute. Nothing is executed for real: the audit trail says so
 * (`timestamp_hint: "static-analysis"`).
 */
import type { Program } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import type { AnalysisOptions } from '../analysis/options.js';
import { evaluateReadinessDetailed, type ReadinessEvaluation } from '../analysis/readiness.js';
import { verifyHardware } from '../analysis/verify-hardware.js';
import { maxRisk, type RecoveryAction, type RiskLevel } from './recovery-actions.js';
import { knowledgeReport, type KnowledgeReport } from './recovery-knowledge.js';
import {
  AUTOMATIC_LEVEL_RANK,
  planRecovery,
  recoveryContexts,
  recoveryPolicies,
  type PlannedRecovery,
  type RecoveryContext,
  type RecoveryPlan,
  type RecoveryPolicy,
  type RegistryDevice,
} from './recovery-plan.js';
import { modeIssues } from './operating-modes.js';

export type RecoveryStatus = 'Success' | 'PartialSuccess' | 'Unsafe' | 'Failed';

export const GATE_SAFETY = 'Safety Validation';
export const GATE_HARDWARE = 'Hardware Verification';
export const GATE_CAPABILITY = 'Capability Verification';
export const GATE_READINESS = 'Readiness Validation';
export const GATE_APPROVAL = 'Operator Approval';

export interface GateResult {
  gate: string;
  passed: boolean;
  detail: string;
}

export interface ActionResult {
  order: number;
  description: string;
  executed: boolean;
  gates: GateResult[];
}

export interface RecoveryResult {
  plan: string;
  failure: string;
  status: RecoveryStatus;
  actions: ActionResult[];
}

export interface AuditEntry {
  plan: string;
  order: number;
  action: string;
  outcome: 'executed' | 'blocked';
  failed_gates: string[];
  timestamp_hint: 'static-analysis';
}

export interface FleetRecoveryPlan {
  fleet: string;
  failed_robot: string;
  members: string[];
  actions: string[];
}

export interface HealReport {
  policies: RecoveryPolicy[];
  contexts: RecoveryContext[];
  plans: RecoveryPlan[];
  results: RecoveryResult[];
  audit: AuditEntry[];
  readiness: { recovery_ready: boolean; risk: RiskLevel; readiness_score: number; blockers: string[] };
  assurance: {
    recovery_evidence: string[];
    recovery_readiness: boolean;
    /** Executed actions / planned actions (1 with nothing planned). */
    success_rate: number;
    traceability: { failure: string; plan: string; source: string; policies: string[] }[];
  };
  fleet_plans: FleetRecoveryPlan[];
  knowledge: KnowledgeReport;
  mode_issues: string[];
  passed: boolean;
}

export interface HealOptions extends AnalysisOptions {
  /** Device registry (configuration devices or the live pool); enables failover enrichment. */
  devices?: readonly RegistryDevice[];
  /** `<stateDir>/recovery_knowledge.json` (docs/program-language.md §28); null or absent: no stored knowledge. */
  knowledgePath?: string | null;
  /** A readiness evaluation already made with the same options (assure passes its own). */
  readiness?: ReadinessEvaluation;
  /**
   * Evaluate these failure contexts instead of the ones the program's policies declare: the recovery
   * orchestrator's targets (docs/recovery.md) or a chaos injection's single context (docs/mesh.md).
   */
  contexts?: readonly RecoveryContext[];
}

/** The fixed fleet playbook (docs/program-language.md §12): the reference names the failed robot "Rover" for every fleet. */
const FLEET_FAILED_ROBOT = 'Rover';
const FLEET_ACTIONS = ['isolate_failed_robot', 'reassign_mission', 'rebalance_coverage', 'notify_operator'];

interface GateInputs {
  hardwareCompatible: boolean;
  hardwareTarget: string | null;
  robots: number;
  missionReady: boolean;
  readinessScore: number;
}

function gatesFor(action: RecoveryAction, plan: RecoveryPlan, inputs: GateInputs): GateResult[] {
  const unsafe = action.description.toLowerCase().includes('unsafe');
  const safetyFailure = plan.classification === 'SafetyFailure';
  const lowRisk = action.risk === 'Low';
  const readinessPassed = inputs.missionReady || (lowRisk && inputs.readinessScore > 0) || AUTOMATIC_LEVEL_RANK <= 1;
  const gates: GateResult[] = [
    {
      gate: GATE_SAFETY,
      passed: !unsafe && !safetyFailure,
      detail: unsafe ? 'Action is marked unsafe' : safetyFailure ? 'Failure is a safety violation: automatic recovery is not allowed' : 'No unsafe action',
    },
    {
      gate: GATE_HARDWARE,
      passed: inputs.hardwareCompatible,
      detail: `${inputs.hardwareCompatible ? 'Compatible' : 'Incompatible'} with ${inputs.hardwareTarget ?? 'no declared target'}`,
    },
    {
      gate: GATE_CAPABILITY,
      passed: inputs.robots > 0,
      detail: inputs.robots > 0 ? `${inputs.robots} robot(s) declared` : 'No robot declared',
    },
    {
      gate: GATE_READINESS,
      passed: readinessPassed,
      detail: inputs.missionReady
        ? `Mission ready (score ${inputs.readinessScore})`
        : readinessPassed
          ? `Low-risk action allowed at readiness score ${inputs.readinessScore}`
          : `Mission not ready (score ${inputs.readinessScore}) and action risk is ${action.risk}`,
    },
  ];
  if (action.requires_approval) {
    gates.push({ gate: GATE_APPROVAL, passed: false, detail: `${action.risk} risk action needs operator approval; none is granted in a static evaluation` });
  }
  return gates;
}

function statusOf(actions: readonly ActionResult[]): RecoveryStatus {
  const executed = actions.filter((a) => a.executed).length;
  const failed = actions.length - executed;
  if (failed === 0 && executed > 0) return 'Success';
  if (executed > 0) return 'PartialSuccess';
  if (actions.some((a) => a.gates.some((g) => g.gate === GATE_SAFETY && !g.passed))) return 'Unsafe';
  return 'Failed';
}

function evidence(program: Program): string[] {
  return [
    ...program.recoveryPolicies.map((p) => `recovery_policy ${p.name}: ${p.triggers.length} trigger(s)`),
    ...program.mitigations.map((m) => `mitigation ${m.name}: ${m.rules.length} rule(s)`),
    ...program.robots.flatMap((r) => r.triggers.flatMap((t) => (t.kind === 'recover' ? [`robot ${r.name}: recover from ${t.failure}`] : []))),
  ];
}

export function healProgram(program: Program, options: HealOptions): HealReport {
  const config: ResolvedConfig | null = options.config ?? null;
  const analysis: AnalysisOptions = { config, target: options.target ?? null, allTargets: options.allTargets === true };
  const readiness = options.readiness ?? evaluateReadinessDetailed(program, analysis);
  const hardware = verifyHardware(program, analysis);
  const inputs: GateInputs = {
    hardwareCompatible: hardware.compatible,
    hardwareTarget: hardware.target,
    robots: program.robots.length,
    missionReady: readiness.report.mission_ready,
    readinessScore: readiness.report.score.total,
  };

  const policies = recoveryPolicies(program);
  const contexts = options.contexts ? [...options.contexts] : recoveryContexts(policies);
  const knowledge = knowledgeReport(program, config, options.knowledgePath);
  const planned: PlannedRecovery[] = contexts.map((context) => planRecovery(context, policies, knowledge.entries, options.devices ?? []));
  const plans = planned.map((p) => p.plan);

  const results: RecoveryResult[] = plans.map((plan) => {
    const actions = plan.actions.map((action) => {
      const gates = gatesFor(action, plan, inputs);
      return { order: action.order, description: action.description, executed: gates.every((g) => g.passed), gates };
    });
    return { plan: plan.name, failure: plan.failure, status: statusOf(actions), actions };
  });

  const audit: AuditEntry[] = results.flatMap((result) =>
    result.actions.map((action) => ({
      plan: result.plan,
      order: action.order,
      action: action.description,
      outcome: action.executed ? ('executed' as const) : ('blocked' as const),
      failed_gates: action.gates.filter((g) => !g.passed).map((g) => g.gate),
      timestamp_hint: 'static-analysis' as const,
    })),
  );

  const mode_issues = modeIssues(program);
  const passed = plans.length > 0 && !results.some((r) => r.status === 'Unsafe' || r.status === 'Failed') && mode_issues.length === 0;
  const blockers = [
    ...results.flatMap((r) => r.actions.flatMap((a) => a.gates.filter((g) => !g.passed).map((g) => `${r.plan}#${a.order} ${g.gate}: ${g.detail}`))),
    ...mode_issues,
  ];
  const total = results.reduce((sum, r) => sum + r.actions.length, 0);
  const executed = results.reduce((sum, r) => sum + r.actions.filter((a) => a.executed).length, 0);

  return {
    policies,
    contexts,
    plans,
    results,
    audit,
    readiness: {
      recovery_ready: passed,
      risk: maxRisk(plans.map((p) => p.risk)),
      readiness_score: readiness.report.score.total,
      blockers,
    },
    assurance: {
      recovery_evidence: evidence(program),
      recovery_readiness: passed,
      success_rate: total === 0 ? 1 : Math.round((executed / total) * 10000) / 10000,
      traceability: planned.map((p) => ({ failure: p.plan.failure, plan: p.plan.name, source: p.source, policies: p.policies })),
    },
    fleet_plans: program.fleets.map((fleet) => ({ fleet: fleet.name, failed_robot: FLEET_FAILED_ROBOT, members: [...fleet.members], actions: [...FLEET_ACTIONS] })),
    knowledge,
    mode_issues,
    passed,
  };
}
