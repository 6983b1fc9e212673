/**
 * Section commands (docs/program-language.md §29, docs/programs.md "The CLI"): CLI-only commands that
 * print one part of a program operation's body. They are compositions of ProgramService calls, not
 * contract operations, so they live in this one table (and `svc help` lists them from it):
 *
 * - sections of the assure report (§10): `svc mission verify`, `svc anomaly scan`, `svc prognostics`,
 *   `svc resilience check`, `svc state estimate`, `svc mitigation plan`;
 * - sections of the capabilities verification (§14): `svc trace capabilities|hardware|health`,
 *   `svc robot capabilities`, `svc health robot` (the static health checks grouped by robot);
 * - `svc recover FILE --failure KIND`: the heal analysis (§12) of that one failure.
 *
 * `--json` prints `{version, file, <section>}` with the section exactly as in the REST body.
 */
import path from 'node:path';
import type { Settings } from '../settings/settings.js';
import { UsageError } from './args.js';
import { healLines } from './program-text.js';
import { healthCheckLines, healthPassed, healthPolicyLines } from './program-views.js';

type Body = Record<string, any>;

type Source = 'assure' | 'capabilities' | 'recover';

export interface SectionCommand {
  words: readonly string[];
  summary: string;
  source: Source;
  /** Key of the section in the `--json` output. */
  key: string;
  pick(body: Body): unknown;
  /** Text of the section; `body` is the whole REST body the section came from (for names it groups by). */
  text(section: any, body: Body): string[];
  passed(section: any): boolean;
}

const verdict = (passed: boolean) => (passed ? 'PASS' : 'FAIL');

function missionLines(m: Body): string[] {
  const v = m.verification;
  return [
    `Mission assurance: ${verdict(m.passed)}`,
    ...m.plans.flatMap((p: Body) => [`  plan ${p.name}: ${p.steps.join(' → ') || '(no steps)'}`, ...p.constraints.map((c: string) => `    constraint: ${c}`)]),
    `  execution: ${m.execution.plan ?? '-'} at step ${m.execution.current_step ?? '-'} (${m.execution.status})`,
    `  verification: Mission ${v.mission_name ?? '-'} on ${v.robot ?? '-'}: ${v.achievable ? 'ACHIEVABLE' : 'BLOCKED'}`,
    ...v.issues.map((i: string) => `    - ${i}`),
    ...m.abort_reasons.map((a: Body) => `  abort: ${a.reason} (${a.severity})`),
  ];
}

function anomalyLines(a: Body): string[] {
  return [
    `Anomaly scan: ${verdict(a.passed)}`,
    ...a.detectors.map((d: Body) => `  detector ${d.detector}: ${d.rules.join('; ') || '(no rules)'}`),
    ...a.handlers.map((h: string) => `  handler ${h}`),
    ...a.anomalies.map((x: Body) => `  [${x.severity}] ${x.detector}${x.metric ? ` ${x.metric}` : ''}: expected ${x.expected}, observed ${x.observed}`),
    ...a.learned.map((l: Body) => `  learned ${l.detector} (${l.backend})`),
  ];
}

function prognosticsLines(p: Body): string[] {
  return [
    `Prognostics: ${verdict(p.passed)}`,
    ...p.models.map((m: Body) => `  model ${m.name}${m.target ? ` → ${m.target}` : ''}: ${m.rules.join('; ') || '(no rules)'}`),
    ...p.rul_predictions.map((r: Body) => `  remaining useful life of ${r.component}: ${r.estimate ?? 'no threshold declared'} (confidence ${r.confidence})`),
    ...p.warnings.map((w: string) => `  warning: ${w}`),
  ];
}

function resilienceLines(r: Body): string[] {
  return [
    `Resilience: ${verdict(r.passed)} (readiness score ${r.readiness_score})`,
    ...r.policies.map((p: Body) => `  policy ${p.name}: ${p.strategies.map((s: Body) => s.name).join(', ') || '(no strategies)'}`),
    ...r.recovery.map((m: Body) => `  mitigation ${m.name}: ${m.actions.join(', ') || '(no actions)'}`),
  ];
}

function stateLines(s: Body): string[] {
  return [
    `State estimation: ${verdict(s.passed)}`,
    ...s.estimators.map((e: Body) => `  estimator ${e.estimator}: ${e.inputs.join(', ') || '(no inputs)'} → ${e.fused.name} (confidence ${e.fused.confidence})`),
    ...s.issues.map((i: string) => `  issue: ${i}`),
  ];
}

function traceabilityTail(t: Body): string[] {
  return [...t.warnings.map((w: string) => `  warning: ${w}`), ...t.errors.map((e: string) => `  error: ${e}`)];
}

function capabilityTraceLines(t: Body): string[] {
  return [
    `Capability traceability: ${verdict(t.errors.length === 0)}`,
    ...t.capability_rows.map(
      (r: Body) =>
        `  [${r.status}] ${r.capability}: required by ${r.required_by || '-'}, provided by ${r.provided_by || '-'}, hardware ${r.hardware || '-'}, package ${r.package || '-'}, provider ${r.provider || '-'}`,
    ),
    ...traceabilityTail(t),
  ];
}

function hardwareTraceLines(t: Body): string[] {
  return [
    `Hardware traceability: ${verdict(t.errors.length === 0)}`,
    ...t.hardware_rows.map(
      (r: Body) =>
        `  [${r.verified ? 'verified' : 'unverified'}] ${r.hardware_component} used by ${r.used_by} (${path.basename(String(r.source_location))})${r.capability ? ` for ${r.capability}` : ''}${r.provider ? ` via ${r.provider}` : ''}`,
    ),
    ...traceabilityTail(t),
  ];
}

function robotCapabilityLines(robots: Body[]): string[] {
  return robots.flatMap((robot) => [`Robot ${robot.robot}`, ...robot.rows.map((row: Body) => `  ${row.status.padEnd(7)} ${row.capability} (${row.source})`)]);
}

/**
 * `svc health robot`: the static health of docs/program-language.md §9.9 per robot. The checks and the
 * overall status are the analysis's (the `health` part of verify capabilities); this only groups the
 * checks by the robot they target (robots from the `capabilities` part, so a robot with no check shows
 * too), then lists the checks aimed at anything else (a fleet, or the program).
 */
function robotHealthLines(health: Body, body: Body): string[] {
  const robots: string[] = (body.capabilities ?? []).map((r: Body) => r.robot);
  const isRobotCheck = (c: Body, robot: string) => c.target_kind === 'robot' && c.target === robot;
  const check = (c: Body) => `    [${c.status}] ${c.name}: ${c.message}`;
  const others = health.checks.filter((c: Body) => !robots.some((r) => isRobotCheck(c, r)));
  return [
    `Robot health: overall ${health.overall} (${health.checks.length} check(s) over ${robots.length} robot(s))`,
    ...robots.flatMap((robot) => {
      const checks = health.checks.filter((c: Body) => isRobotCheck(c, robot));
      return [`  Robot ${robot}: ${checks.length === 0 ? 'no health checks' : `${checks.length} check(s)`}`, ...checks.map(check)];
    }),
    ...(others.length > 0 ? ['  Other targets:', ...others.map((c: Body) => `${check(c)} (${c.target_kind ?? 'program'}${c.target ? ` ${c.target}` : ''})`)] : []),
    ...healthPolicyLines(health),
  ];
}

/** The section commands: one row each. */
export const SECTION_COMMANDS: readonly SectionCommand[] = [
  { words: ['mission', 'verify'], summary: 'the mission part of svc assure', source: 'assure', key: 'mission', pick: (b) => b.report.mission, text: missionLines, passed: (s) => s.passed === true },
  { words: ['anomaly', 'scan'], summary: 'the anomalies part of svc assure', source: 'assure', key: 'anomalies', pick: (b) => b.report.anomalies, text: anomalyLines, passed: (s) => s.passed === true },
  { words: ['prognostics'], summary: 'the prognostics part of svc assure', source: 'assure', key: 'prognostics', pick: (b) => b.report.prognostics, text: prognosticsLines, passed: (s) => s.passed === true },
  { words: ['resilience', 'check'], summary: 'the resilience part of svc assure', source: 'assure', key: 'resilience', pick: (b) => b.report.resilience, text: resilienceLines, passed: (s) => s.passed === true },
  { words: ['state', 'estimate'], summary: 'the state estimation part of svc assure', source: 'assure', key: 'state', pick: (b) => b.report.state, text: stateLines, passed: (s) => s.passed === true },
  { words: ['mitigation', 'plan'], summary: 'the recovery (mitigation) part of svc assure', source: 'assure', key: 'recovery', pick: (b) => b.report.recovery, text: healLines, passed: (s) => s.passed === true },
  { words: ['trace', 'capabilities'], summary: 'capability traceability rows of svc verify --capabilities --traceability', source: 'capabilities', key: 'traceability', pick: (b) => b.traceability, text: capabilityTraceLines, passed: (t) => t.errors.length === 0 },
  { words: ['trace', 'hardware'], summary: 'hardware traceability rows of svc verify --capabilities --traceability', source: 'capabilities', key: 'traceability', pick: (b) => b.traceability, text: hardwareTraceLines, passed: (t) => t.errors.length === 0 },
  { words: ['trace', 'health'], summary: 'the static health checks of svc verify --capabilities', source: 'capabilities', key: 'health', pick: (b) => b.health, text: healthCheckLines, passed: healthPassed },
  { words: ['health', 'robot'], summary: 'the static health checks per robot (of svc verify --capabilities)', source: 'capabilities', key: 'health', pick: (b) => b.health, text: robotHealthLines, passed: healthPassed },
  { words: ['robot', 'capabilities'], summary: 'declared and inferred capabilities per robot', source: 'capabilities', key: 'capabilities', pick: (b) => b.capabilities, text: robotCapabilityLines, passed: () => true },
  { words: ['recover'], summary: 'the heal analysis of one failure (--failure KIND, e.g. gps)', source: 'recover', key: 'report', pick: (b) => b.legacy, text: healLines, passed: (s) => s.passed === true },
];

export function findSectionCommand(words: readonly string[]): { command: SectionCommand; rest: string[] } | null {
  const command = SECTION_COMMANDS.find((c) => c.words.every((w, i) => words[i] === w));
  return command ? { command, rest: words.slice(command.words.length) } : null;
}

/** `svc help` lines of the section commands. */
export function sectionUsage(): string[] {
  return SECTION_COMMANDS.map((c) => `  svc ${[...c.words, 'FILE.sd', ...(c.source === 'recover' ? ['--failure KIND'] : [])].join(' ').padEnd(40)} ${c.summary}`);
}

const COMMON_OPTIONS = new Set(['json', 'config', 'target', 'all-targets']);

export async function runSectionCommand(
  command: SectionCommand,
  rest: readonly string[],
  options: Map<string, string | true>,
  settings: Settings,
  cwd = process.cwd(),
): Promise<{ stdout: string; exitCode: number }> {
  const name = `svc ${command.words.join(' ')}`;
  const files = [...rest];
  let failure: string | null = null;
  const request: Record<string, unknown> = {};
  for (const [option, value] of options) {
    if (option === 'failure' && command.source === 'recover') {
      if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--failure needs a failure kind (e.g. gps, lidar, lte.lost)`);
      failure = value.trim();
    } else if (option === 'json' || option === 'all-targets') {
      if (typeof value === 'string') files.push(value);
      if (option === 'all-targets') request['all_targets'] = true;
    } else if (COMMON_OPTIONS.has(option)) {
      if (value === true) throw new UsageError(`--${option} needs a value`);
      if (option === 'target') request['target'] = value;
    } else {
      throw new UsageError(`unknown option --${option} for '${name}' (options: --json, --config FILE, --target HW, --all-targets${command.source === 'recover' ? ', --failure KIND' : ''})`);
    }
  }
  if (files.length !== 1) throw new UsageError(`'${name}' takes one file (got ${files.length ? files.join(' ') : 'none'})`);
  if (command.source === 'recover' && failure === null) throw new UsageError(`'${name}' needs --failure KIND (e.g. --failure gps)`);
  const [{ ProgramService }, { cliWorkspace }] = await Promise.all([import('../programs/program-service.js'), import('./program-command.js')]);
  const file = path.resolve(cwd, files[0]!);
  const config = options.get('config');
  const service = new ProgramService(cliWorkspace(file, typeof config === 'string' ? config : undefined, cwd, settings));
  const input = { file, ...request };
  const body = (command.source === 'assure'
    ? await service.run('assure', input)
    : command.source === 'capabilities'
      ? await service.run('verifyCapabilities', { ...input, traceability: true })
      : await service.run('recoveryAnalysis', { ...input, legacy_issue: failure } as never)) as Body;
  const section = command.pick(body);
  const json = { version: body['version'], file: body['file'], ...(failure !== null ? { failure } : {}), [command.key]: section };
  const stdout = options.has('json') ? JSON.stringify(json, null, 2) : command.text(section, body).join('\n');
  return { stdout: `${stdout}\n`, exitCode: command.passed(section) ? 0 : 1 };
}
