/**
 * The `assurance` (evidence) sub-report of assure (docs/program-language.md §10) and its safety case:
 * assurance cases with linked evidence, hardware/capability verification, safety rules and kill
 * switches, traceability rows, and the configuration identity rule.
 */
import type { Program } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import type { ReadinessEvaluation } from '../analysis/readiness.js';
import type { HardwareReport } from '../analysis/verify-hardware.js';
import type { MissionReport } from '../analysis/verify-mission.js';
import type { MinimumCapabilitiesResult } from '../analysis/capability-inference.js';
import type { StaticHealthReport } from '../analysis/health.js';
import type { TraceabilityReport } from '../analysis/traceability.js';
import { lacksIdentity, networkedDevices } from './config-policy.js';
import { analyseSafetyCoverage } from './safety-coverage.js';

export type EvidenceKind = 'hardware' | 'capability' | 'health' | 'replay' | 'safety' | 'verification';

export interface KillSwitchValidation {
  name: string;
  scope: string;
  priority: string | null;
  remote_signed: boolean;
  has_action: boolean;
  valid: boolean;
}

export interface SafetyCase {
  program: string;
  hardware_verification: HardwareReport;
  capability_verification: MinimumCapabilitiesResult;
  health_checks: { report: StaticHealthReport; traceability: TraceabilityReport };
  safety_rules: string[];
  kill_switch_validation: KillSwitchValidation[];
  connectivity_validation: { category: string; message: string; severity: string }[];
  mission_verification: MissionReport[];
  traceability_matrix: { hardware: string[]; capabilities: string[]; readiness: string[] };
  test_results: string[];
  known_risks: string[];
  deployable: boolean;
}

export interface EvidenceReport {
  cases: { name: string; evidence: { source: string; kind: EvidenceKind; status: 'linked' }[] }[];
  verification: { compatible: boolean; items: string[] };
  safety: { rules: string[]; kill_switches: string[] };
  traceability: { rows: string[] };
  safety_case: SafetyCase;
  passed: boolean;
}

export function evidenceKind(name: string): EvidenceKind {
  const text = name.toLowerCase();
  if (text.includes('hardware')) return 'hardware';
  if (text.includes('capability') || text.includes('traceability')) return 'capability';
  if (text.includes('health')) return 'health';
  if (text.includes('replay') || text.includes('simulation')) return 'replay';
  if (text.includes('safety')) return 'safety';
  return 'verification';
}

function killSwitches(program: Program): KillSwitchValidation[] {
  const all = [
    ...program.killSwitches.map((k) => ({ k, scope: 'program' })),
    ...program.robots.flatMap((r) => r.killSwitches.map((k) => ({ k, scope: r.name }))),
  ];
  return all.map(({ k, scope }) => {
    const hasAction = k.actions.length > 0 || k.body.length > 0;
    return { name: k.name, scope, priority: k.priority, remote_signed: k.remoteSigned, has_action: hasAction, valid: hasAction };
  });
}

const unique = (items: string[]): string[] => [...new Set(items)];

function traceabilityMatrix(program: Program, readiness: ReadinessEvaluation): SafetyCase['traceability_matrix'] {
  const hardware = unique([...program.hardware.map((h) => h.name), ...program.deploys.flatMap((d) => d.targets), ...program.robots.flatMap((r) => r.usesHardware)]);
  const capabilities = unique(readiness.capabilities.flatMap((a) => a.rows.map((row) => row.capability)));
  const readinessRows = unique(program.requiresCapabilities.map((r) => r.capability));
  return { hardware, capabilities, readiness: readinessRows };
}

export interface EvidenceInputs {
  readiness: ReadinessEvaluation;
  hardware: HardwareReport;
  missions: MissionReport[];
  config: ResolvedConfig | null;
}

export function evidenceReport(program: Program, inputs: EvidenceInputs): EvidenceReport {
  const { readiness, hardware, missions, config } = inputs;
  const minimum = readiness.minimum;
  const safety = analyseSafetyCoverage(program);
  const kills = killSwitches(program);
  const matrix = traceabilityMatrix(program, readiness);
  const compatible = hardware.compatible && minimum.compatible;

  const rows = [
    ...matrix.hardware.map((h) => `hardware: ${h}`),
    ...matrix.capabilities.map((c) => `capability: ${c}`),
    ...matrix.readiness.map((c) => `readiness: ${c}`),
    ...(config?.devices ?? []).map((d) => `device: ${d.id} (${d.device_type})`),
  ];

  const certifyErrors = hardware.items.filter((i) => i.category === 'certification' && i.severity === 'error').map((i) => i.message);
  const safety_case: SafetyCase = {
    program: program.file,
    hardware_verification: hardware,
    capability_verification: minimum,
    health_checks: { report: readiness.health, traceability: readiness.traceability },
    safety_rules: safety.rules,
    kill_switch_validation: kills,
    connectivity_validation: hardware.items
      .filter((i) => ['connectivity', 'network', 'bandwidth', 'connectivity_policy'].includes(i.category))
      .map((i) => ({ category: i.category, message: i.message, severity: i.severity })),
    mission_verification: missions,
    traceability_matrix: matrix,
    test_results: [
      `Hardware compatible: ${hardware.compatible}`,
      `Minimum capabilities: ${minimum.compatible}`,
      `Health checks: ${readiness.health.overall}`,
    ],
    known_risks: [...minimum.errors, ...readiness.traceability.warnings, ...certifyErrors],
    deployable: compatible && safety.deployable,
  };

  let passed = compatible && (readiness.health.overall as string) !== 'Failed' && program.assuranceCases.length > 0;
  if (config && networkedDevices(config).some(lacksIdentity)) passed = false;

  return {
    cases: program.assuranceCases.map((c) => ({
      name: c.name,
      evidence: c.evidence.map((source) => ({ source, kind: evidenceKind(source), status: 'linked' as const })),
    })),
    verification: { compatible, items: hardware.items.slice(0, 10).map((i) => i.message) },
    safety: { rules: safety.rules, kill_switches: kills.map((k) => `Kill switch '${k.name}' declared`) },
    traceability: { rows },
    safety_case,
    passed,
  };
}
