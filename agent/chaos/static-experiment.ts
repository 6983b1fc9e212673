import fs from 'node:fs';
import path from 'node:path';
import { evaluateReadiness } from '../programs/analysis/readiness.js';
import { staticHealth } from '../programs/analysis/health.js';
import { healProgram } from '../programs/assurance/heal.js';
import { classifyFailure, diagnoseFailure } from '../programs/assurance/recovery-actions.js';
import { AUTOMATIC_LEVEL } from '../programs/assurance/recovery-plan.js';
import { loadProgram, resolveRequestFile } from '../programs/program-files.js';
import type { ProgramWorkspace } from '../programs/program-workspace.js';
import type { RuntimeHealth } from '../programs/analysis/options.js';
import { ProgramRuntimeError } from '../programs/runtime/interpreter.js';
import { simulateProgram, type ExecutedSimulation } from '../programs/runtime/simulate.js';
import { RECOVERY_KNOWLEDGE_FILE } from '../programs/program-engine.js';
import { chaosKind, type ChaosKind } from './injections.js';

/** The failure context a kind stands for (the recovery `legacy_report` issue mapping). */
const ISSUE: Record<ChaosKind, string> = {
  gps: 'gps.failed',
  camera: 'camera.failed',
  lidar: 'lidar.failed',
  connectivity: 'connectivity.lost',
  provider: 'provider.failed',
  package: 'package.failed',
  battery: 'battery.critical',
};

/**
 * The runtime failure the simulator injects for a kind (`--inject-failure`, docs/program-language.md
 * §24.1): a critical battery is a critical robot. Connectivity, provider and package have no runtime
 * model in the simulator: their run has no fault injected, and the result says so (`runtime_faults: []`).
 */
const SIM_FAILURE: Partial<Record<ChaosKind, string>> = { gps: 'gps', camera: 'camera', lidar: 'lidar', battery: 'health' };

export interface InjectionResult {
  injection: string;
  recovery_passed: boolean;
  health_passed: boolean;
  readiness_passed: boolean;
  safety_passed: boolean;
  passed: boolean;
  details: string[];
  /** Faults the simulated run actually injected (robot, fault, status). */
  runtime_faults?: { robot: string; fault: string; status: string }[];
}

function defaultInjections(source: string): string[] {
  const text = source.toLowerCase();
  const out: string[] = [];
  for (const k of ['gps', 'camera', 'lidar'] as const) if (text.includes(k)) out.push(`${k}-failure`);
  if (text.includes('connect')) out.push('connectivity-failure');
  for (const k of ['provider', 'package', 'battery'] as const) if (text.includes(k)) out.push(`${k}-failure`);
  return out.length ? out : ['gps-failure'];
}

/**
 * The static chaos experiment (docs/mesh.md § Static experiment): for each injected failure, the heal
 * evaluation of that single failure context, readiness and health from a simulated run of the
 * program with the failure injected, and a safety check over the recovery results. Nothing reaches a
 * device or robot.
 */
export function staticExperiment(ws: ProgramWorkspace, requested: readonly string[]) {
  const file = resolveRequestFile(ws, undefined, 'program');
  const program = loadProgram(file);
  const labels = requested.length ? [...requested] : defaultInjections(fs.readFileSync(file, 'utf8'));
  const analysis = { config: ws.config, target: null, allTargets: false };
  const checks = staticHealth(program).checks.length;
  const injections = labels.map((label): InjectionResult => {
    const kind = chaosKind(label);
    if (!kind) return { injection: label, recovery_passed: false, health_passed: false, readiness_passed: false, safety_passed: false, passed: false, details: [`unknown injection kind: ${label}`] };
    const issue = ISSUE[kind];
    const classification = classifyFailure(issue);
    const heal = healProgram(program, {
      ...analysis,
      contexts: [{ issue, classification, diagnosis: diagnoseFailure(issue, classification), level: AUTOMATIC_LEVEL }],
      knowledgePath: path.join(ws.stateDir, RECOVERY_KNOWLEDGE_FILE),
    });
    let runtime: RuntimeHealth;
    try {
      const sim = simulateProgram(program, {
        file,
        execute: true,
        injectHealthFaults: false,
        config: ws.config,
        decisions: ws.decisions,
        ...(SIM_FAILURE[kind] ? { injectFailure: SIM_FAILURE[kind] } : {}),
      }) as ExecutedSimulation;
      const h = sim.result.health;
      runtime = {
        executed: true,
        status: h?.status ?? 'Healthy',
        injected: (h?.injected ?? []).map((f) => ({ robot: f.robot, fault: f.fault, status: f.status })),
        emergency_stop: sim.result.state.emergency_stop,
        error: null,
      };
    } catch (err) {
      if (!(err instanceof ProgramRuntimeError)) throw err;
      runtime = { executed: false, status: 'Failed', injected: [], emergency_stop: false, error: err.message };
    }
    const readiness = evaluateReadiness(program, { ...analysis, runtimeHealth: runtime });
    const severe = readiness.issues.some((i) => i.severity === 'Critical' || i.severity === 'High');
    const readinessPassed = readiness.mission_ready || heal.readiness.recovery_ready || !severe;
    const healthPassed = !['Critical', 'Unsafe', 'Failed'].includes(runtime.status);
    const actions = heal.results.flatMap((r) => r.actions);
    const approved = actions.filter((a) => a.gates.every((g) => g.gate !== 'Operator Approval' || g.passed)).length;
    const unsafe = heal.results.filter((r) => r.status === 'Unsafe').length;
    const safetyPassed = unsafe === 0 && approved === actions.length;
    const recoveryPassed = heal.passed;
    return {
      injection: label,
      recovery_passed: recoveryPassed,
      health_passed: healthPassed,
      readiness_passed: readinessPassed,
      safety_passed: safetyPassed,
      passed: recoveryPassed && healthPassed && readinessPassed && safetyPassed,
      details: [
        `recovery: ${recoveryPassed ? 'pass' : 'fail'} (plans=${heal.plans.length}, success_rate=${Math.round(heal.assurance.success_rate * 100)}%)`,
        `readiness: ${readinessPassed ? 'pass' : 'fail'} (mission_ready=${readiness.mission_ready}, score ${readiness.score.total}/${readiness.score.maximum})`,
        `health: ${healthPassed ? 'pass' : 'fail'} (overall=${runtime.status}, checks=${checks})`,
        `safety: ${safetyPassed ? 'pass' : 'fail'} (unsafe_results=${unsafe}, approved_actions=${approved}/${actions.length})`,
      ],
      runtime_faults: runtime.injected.map((f) => ({ robot: f.robot, fault: f.fault, status: String(f.status) })),
    };
  });
  return { program: path.basename(file), kind: 'static', injections, passed: injections.length > 0 && injections.every((i) => i.passed) };
}
