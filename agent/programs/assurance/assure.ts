/**
 * Assure (docs/program-language.md §10): seven sub-reports (evidence, anomalies, prognostics, resilience,
 * mission, state, recovery), program-level issues and the overall verdict. One readiness
 * evaluation (target of §1) feeds every part, so all of them judge the same hardware.
 */
import type { Program } from '../language/ast.js';
import type { AnalysisOptions } from '../analysis/options.js';
import { evaluateReadinessDetailed } from '../analysis/readiness.js';
import { verifyHardware } from '../analysis/verify-hardware.js';
import { missionReports } from '../analysis/verify-mission.js';
import { assurancePolicy, missionPolicy } from './config-policy.js';
import { evidenceReport, type EvidenceReport } from './assure-evidence.js';
import {
  anomalyReport,
  missionAssuranceReport,
  prognosticsReport,
  resilienceReport,
  stateReport,
  type AnomalyReport,
  type MissionAssuranceReport,
  type PrognosticsReport,
  type ResilienceReport,
  type StateReport,
} from './assure-sections.js';
import { healProgram, type HealReport } from './heal.js';
import { modeIssues } from './operating-modes.js';

export interface AssureReport {
  assurance: EvidenceReport;
  anomalies: AnomalyReport;
  prognostics: PrognosticsReport;
  resilience: ResilienceReport;
  mission: MissionAssuranceReport;
  state: StateReport;
  recovery: HealReport;
  issues: string[];
  /** 100 × (sub-reports passed) / 7, rounded; compared with `[assurance] minimum_score` under a config. */
  score: number;
  passed: boolean;
}

export interface AssureOptions extends AnalysisOptions {
  /** `<stateDir>/recovery_knowledge.json` for the recovery sub-report. */
  knowledgePath?: string | null;
}

/** Knowledge-model issues, then state issues, then mode issues (docs/program-language.md §10). */
function programIssues(program: Program, state: StateReport): string[] {
  const issues: string[] = [];
  for (const model of program.knowledgeModels) {
    if (model.components.length === 0) issues.push(`Knowledge model '${model.name}' has no components declared`);
    for (const dependency of model.dependencies) {
      if (dependency.requires.length === 0) issues.push(`Knowledge model '${model.name}' dependency '${dependency.capability}' has empty requires list`);
    }
  }
  if (program.robots.length > 0 && program.knowledgeModels.length === 0) issues.push('Robot declared but no knowledge_model defined');
  issues.push(...state.issues);
  issues.push(...modeIssues(program));
  return issues;
}

export function assureProgram(program: Program, options: AssureOptions): AssureReport {
  const config = options.config ?? null;
  const analysis: AnalysisOptions = { config, target: options.target ?? null, allTargets: options.allTargets === true };
  const readiness = evaluateReadinessDetailed(program, analysis);
  const hardware = verifyHardware(program, analysis);
  const missions = missionReports(program, { hardware: readiness.hardware, capabilities: readiness.capabilities, minimum: readiness.minimum });

  const assurance = evidenceReport(program, { readiness, hardware, missions, config });
  const anomalies = anomalyReport(program);
  const prognostics = prognosticsReport(program);
  const resilience = resilienceReport(program, readiness);
  const mission = missionAssuranceReport(program, missions, readiness, config ? missionPolicy(config) : null);
  const state = stateReport(program);
  const recovery = healProgram(program, { ...analysis, devices: [], knowledgePath: options.knowledgePath ?? null, readiness });
  const issues = programIssues(program, state);

  const flags = [assurance.passed, anomalies.passed, prognostics.passed, resilience.passed, mission.passed, state.passed, recovery.passed];
  const score = Math.round((100 * flags.filter(Boolean).length) / flags.length);
  let passed = flags.every(Boolean) && issues.length === 0;
  if (config) {
    const policy = assurancePolicy(config);
    if (score < policy.minimum_score) passed = false;
    if (policy.require_recovery && program.recoveryPolicies.length === 0 && program.mitigations.length === 0) passed = false;
    if (policy.require_resilience && program.resiliencePolicies.length === 0) passed = false;
    if (policy.require_mitigations && program.mitigations.length === 0) passed = false;
    if (policy.require_anomaly_handlers && program.anomalyDetectors.some((d) => !program.anomalyHandlers.some((h) => h.detector === d.name))) passed = false;
  }

  return { assurance, anomalies, prognostics, resilience, mission, state, recovery, issues, score, passed };
}
