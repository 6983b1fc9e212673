/**
 * Explain (docs/program-language.md §22): plain-language sections about a program or a trace. Modes:
 * `trace`, `decision` (trace input), `readiness`, `verify`, `safety`, `program` (program input).
 * The baseline `drift` section of the program mode is CLI-only (ProgramEngine.explainLocal). Explaining
 * never writes state: composite trust is computed without recording an integrity baseline.
 */
import { badRequest } from '../../core/errors.js';
import type { Program } from '../language/ast.js';
import type { TraceFile } from '../runtime/trace-file.js';
import type { AnalysisOptions } from '../analysis/options.js';
import { evaluateReadinessDetailed, type ReadinessEvaluation } from '../analysis/readiness.js';
import { verifyHardware, type HardwareReport } from '../analysis/verify-hardware.js';
import { missionReports, type MissionReport } from '../analysis/verify-mission.js';
import { verifyContract } from '../analysis/contract.js';
import { decisionRecord, type DecisionRecord } from './audit-decisions.js';
import { analyseSafetyCoverage } from './safety-coverage.js';
import { hasContracts, PACKAGE_TRUST, programTrust, secureBootChecks, secureBootCoverage, UNRATED_PACKAGE_TRUST } from './trust.js';
import { lacksEndpoint, lacksIdentity, networkedDevices } from './config-policy.js';

export interface ExplainSection {
  topic: string;
  summary: string;
  details: string[];
}

export interface ExplainResult {
  mode: string;
  report: { program: string; sections: ExplainSection[] };
}

export type ExplainInput = { kind: 'program'; program: Program } | { kind: 'trace'; trace: TraceFile };

export interface ExplainOptions extends AnalysisOptions {
  mode?: string | null;
  /** The requested file (reported as `program`). */
  file?: string | null;
  stateDir?: string | null;
  projectRoot?: string | null;
}

export const EXPLAIN_MODES = ['program', 'readiness', 'verify', 'safety', 'trace', 'decision'] as const;

// ---------------------------------------------------------------------------
// Trace modes

interface TracedDecision {
  record: DecisionRecord;
  payload: Record<string, unknown>;
}

function tracedDecisions(trace: TraceFile): TracedDecision[] {
  const out: TracedDecision[] = [];
  for (const frame of trace.frames) {
    const record = decisionRecord(frame);
    if (record) out.push({ record, payload: frame.payload ?? {} });
  }
  return out;
}

function traceSections(trace: TraceFile): ExplainSection[] {
  const decisions = tracedDecisions(trace);
  return [
    {
      topic: 'decisions',
      summary: `${decisions.length} decision(s) in trace`,
      details: decisions.map(({ record }) => `${record.decision_id} @ ${record.timestamp_ms}ms — ${record.decision} (${record.reason})`),
    },
  ];
}

function rejectedAlternatives(payload: Record<string, unknown>): unknown[] {
  if (Array.isArray(payload['rejected_alternatives'])) return payload['rejected_alternatives'];
  const evidence = payload['evidence'];
  if (typeof evidence === 'object' && evidence !== null && Array.isArray((evidence as Record<string, unknown>)['rejected_alternatives'])) {
    return (evidence as Record<string, unknown[]>)['rejected_alternatives']!;
  }
  return [];
}

function decisionSections(trace: TraceFile): ExplainSection[] {
  const decisions = tracedDecisions(trace);
  const sections: ExplainSection[] = [{ topic: 'summary', summary: `${decisions.length} autonomous decision(s) in trace`, details: [] }];
  for (const { record, payload } of decisions) {
    sections.push({
      topic: `decision/${record.decision_id}`,
      summary: `At T+${record.timestamp_ms}ms the system chose '${record.decision}' because ${record.reason}`,
      details: [
        `Reason: ${record.reason}`,
        `Source event: ${record.source_event}`,
        `Mission: ${record.mission ?? '-'}`,
        `Evidence: ${JSON.stringify(record.evidence)}`,
        `Rejected alternatives: ${JSON.stringify(rejectedAlternatives(payload))}`,
        `Safety checks: ${JSON.stringify(record.safety_checks)}`,
        `Chosen action: ${record.action ?? record.decision}`,
      ],
    });
  }
  return sections;
}

// ---------------------------------------------------------------------------
// Program modes

/** The analyses the program sections share, evaluated once. */
interface ProgramFacts {
  readiness: ReadinessEvaluation;
  hardware: HardwareReport;
  missions: MissionReport[];
}

function programFacts(program: Program, analysis: AnalysisOptions): ProgramFacts {
  const readiness = evaluateReadinessDetailed(program, analysis);
  const hardware = verifyHardware(program, analysis);
  const missions = missionReports(program, { hardware: readiness.hardware, capabilities: readiness.capabilities, minimum: readiness.minimum });
  return { readiness, hardware, missions };
}

/** `3 robot(s)`, `1 recovery policy(ies)`, `2 kill switch(es)`. */
function plural(count: number, noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${count} ${noun}(ies)`;
  if (/(ch|sh|s|x)$/.test(noun)) return `${count} ${noun}(es)`;
  return `${count} ${noun}(s)`;
}

function structureSection(program: Program): ExplainSection {
  const counts: Array<[string, number]> = [
    ['hardware profile', program.hardware.length],
    ['deploy', program.deploys.length],
    ['fleet', program.fleets.length],
    ['health check', program.healthChecks.length + program.robots.reduce((n, r) => n + r.healthChecks.length, 0)],
    ['recovery policy', program.recoveryPolicies.length],
    ['mitigation', program.mitigations.length],
    ['decision tree', program.decisionTrees.length],
    ['assurance case', program.assuranceCases.length],
    ['anomaly detector', program.anomalyDetectors.length],
    ['kill switch', program.killSwitches.length + program.robots.reduce((n, r) => n + r.killSwitches.length, 0)],
  ];
  return {
    topic: 'structure',
    summary: [plural(program.robots.length, 'robot'), plural(program.missionPlans.length, 'mission plan'), ...counts.filter(([, n]) => n > 0).map(([noun, n]) => plural(n, noun))].join(', '),
    details: program.robots.map(
      (r) =>
        `Robot ${r.name}: ${plural(r.sensors.length, 'sensor')}, ${plural(r.actuators.length, 'actuator')}, ${plural(r.behaviors.length, 'behavior')}, ${plural(r.tasks.length, 'task')}, ${plural(r.missions.length, 'mission')}`,
    ),
  };
}

function readinessSection(facts: ProgramFacts): ExplainSection {
  const report = facts.readiness.report;
  return {
    topic: 'readiness',
    summary: report.mission_ready ? `Mission ready with score ${report.score.total}/100` : `Mission not ready — score ${report.score.total}/100`,
    details: report.issues.map((issue) => `[${issue.severity}] ${issue.message}`),
  };
}

function verifySection(facts: ProgramFacts): ExplainSection {
  const achievable = facts.missions.filter((m) => m.achievable).length;
  const target = facts.hardware.target ?? 'no declared target';
  return {
    topic: 'verify',
    summary: `Hardware ${facts.hardware.compatible ? 'compatible' : 'incompatible'} with ${target}; ${achievable}/${facts.missions.length} mission(s) achievable`,
    details: [
      ...facts.hardware.items.filter((i) => i.severity !== 'pass').map((i) => `[${i.category}] ${i.message}`),
      ...facts.missions.flatMap((m) => m.issues),
    ],
  };
}

/** Deployable with the same rule as the assure safety case: hardware, minimum capabilities, no critical/high safety finding. */
function safetySection(program: Program, facts: ProgramFacts): ExplainSection {
  const coverage = analyseSafetyCoverage(program);
  const deployable = facts.hardware.compatible && facts.readiness.minimum.compatible && coverage.deployable;
  return {
    topic: 'safety',
    summary: `Safety deployable=${deployable} coverage=${coverage.coverage}%`,
    details: [...coverage.rules, ...coverage.findings.map((f) => `[${f.severity}] ${f.message}`), ...coverage.uncovered],
  };
}

function trustSection(program: Program, options: ExplainOptions): ExplainSection {
  const report = programTrust(program, {
    file: options.file ?? program.file,
    projectRoot: options.projectRoot ?? null,
    stateDir: options.stateDir ?? null,
    recordBaseline: false,
  });
  return {
    topic: 'composite_trust',
    summary: `Composite trust ${report.score}/100 (${report.tier}), integrity ${report.integrity_status}`,
    details: [...report.categories.map((c) => `${c.name}: ${c.score} × ${c.weight}% = ${c.weighted}`), ...report.recommendations],
  };
}

function secureBootSection(program: Program): ExplainSection {
  return {
    topic: 'secure_boot',
    summary: `Secure boot coverage ${secureBootCoverage(program)}%`,
    details: secureBootChecks(program).map((c) => `[${c.passed ? 'pass' : 'fail'}] ${c.name} — ${c.detail}`),
  };
}

function contractSection(program: Program, analysis: AnalysisOptions): ExplainSection {
  const { report, passed } = verifyContract(program, analysis);
  return {
    topic: 'contract',
    summary: passed ? 'Mission contract verification passed' : `Mission contract verification failed (${report.issues.length} issue(s))`,
    details: [...report.checks.map((c) => `[${c.passed ? 'pass' : 'fail'}] ${c.name}: ${c.detail}`), ...report.issues],
  };
}

function configurationSection(analysis: AnalysisOptions): ExplainSection {
  const config = analysis.config!;
  const networked = networkedDevices(config);
  const name = [config.projectName ?? 'unnamed project', config.projectVersion].filter(Boolean).join(' ');
  return {
    topic: 'configuration',
    summary: `${name}: ${plural(config.layersApplied.length, 'layer')}, ${plural(config.fragmentsLoaded.length, 'fragment')}, ${plural(config.devices.length, 'device')} (${networked.length} networked)`,
    details: [
      ...config.layersApplied.map((l) => `layer ${l}`),
      ...config.fragmentsLoaded.map((f) => `fragment ${f}`),
      ...networked.filter(lacksEndpoint).map((d) => `Device '${d.id}' is networked but has no endpoint or IP`),
      ...networked.filter(lacksIdentity).map((d) => `Device '${d.id}' is networked but has no security identity or certificate fingerprint`),
    ],
  };
}

function deploymentGatesSection(program: Program, facts: ProgramFacts, analysis: AnalysisOptions): ExplainSection {
  const report = facts.readiness.report;
  const coverage = analyseSafetyCoverage(program);
  const contract = verifyContract(program, analysis);
  const gates: Array<[string, boolean, string]> = [
    ['readiness', report.mission_ready, `score ${report.score.total}, minimum ${report.policy.minimum_score}, status ${report.status}`],
    ['hardware', facts.hardware.compatible, facts.hardware.target ?? 'no declared target'],
    ['capabilities', facts.readiness.minimum.compatible, `${facts.readiness.minimum.errors.length} minimum-capability error(s)`],
    ['safety', coverage.deployable, `coverage ${coverage.coverage}%, ${coverage.findings.length} finding(s)`],
    ['contract', contract.passed, `${contract.report.issues.length} issue(s)`],
  ];
  const blocked = gates.filter(([, passed]) => !passed).length;
  return {
    topic: 'deployment_gates',
    summary: blocked === 0 ? 'All deployment gates pass' : `${blocked} deployment gate(s) blocked`,
    details: gates.map(([gate, passed, detail]) => `[${passed ? 'pass' : 'fail'}] ${gate} — ${detail}`),
  };
}

function packageTrustSection(packages: readonly string[]): ExplainSection {
  const scores = packages.map((name) => PACKAGE_TRUST[name] ?? UNRATED_PACKAGE_TRUST);
  const mean = Math.floor(scores.reduce((sum, s) => sum + s, 0) / scores.length);
  return {
    topic: 'package_trust',
    summary: `${plural(packages.length, 'package')}, mean trust ${mean}`,
    details: packages.map((name) => `${name}: ${name in PACKAGE_TRUST ? `trust ${PACKAGE_TRUST[name]}` : `unrated (${UNRATED_PACKAGE_TRUST})`}`),
  };
}

function programSections(program: Program, mode: string, options: ExplainOptions): ExplainSection[] {
  const analysis: AnalysisOptions = { config: options.config ?? null, target: options.target ?? null, allTargets: options.allTargets === true };
  const facts = programFacts(program, analysis);
  if (mode === 'readiness') return [readinessSection(facts)];
  if (mode === 'verify') return [verifySection(facts)];
  if (mode === 'safety') return [safetySection(program, facts)];

  const sections = [structureSection(program), readinessSection(facts), verifySection(facts), safetySection(program, facts), trustSection(program, options)];
  if (hasContracts(program)) sections.push(secureBootSection(program));
  sections.push(contractSection(program, analysis));
  if (analysis.config) {
    sections.push(configurationSection(analysis), deploymentGatesSection(program, facts, analysis));
    if (analysis.config.packages.length > 0) sections.push(packageTrustSection(analysis.config.packages));
  }
  return sections;
}

export function explain(input: ExplainInput, options: ExplainOptions = { config: null }): ExplainResult {
  const requested = (options.mode ?? '').trim().toLowerCase();
  const mode = requested !== '' ? requested : input.kind === 'trace' ? 'trace' : 'program';
  if (!(EXPLAIN_MODES as readonly string[]).includes(mode)) {
    throw badRequest(`unknown explain mode '${mode}' (expected one of ${EXPLAIN_MODES.join(', ')})`);
  }
  if (input.kind === 'trace') {
    const sections = mode === 'decision' ? decisionSections(input.trace) : traceSections(input.trace);
    return { mode: mode === 'decision' ? 'decision' : 'trace', report: { program: options.file ?? input.trace.source, sections } };
  }
  if (mode === 'trace' || mode === 'decision') {
    throw badRequest(`explain mode '${mode}' needs a .trace file`);
  }
  return { mode, report: { program: options.file ?? input.program.file, sections: programSections(input.program, mode, options) } };
}
