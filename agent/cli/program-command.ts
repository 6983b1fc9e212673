import path from 'node:path';
import { findManifest, resolveProjectConfig } from '../project/resolve-config.js';
import { ProgramService } from '../programs/program-service.js';
import type { ProgramWorkspace } from '../programs/program-workspace.js';
import { programCommandFor, type ProgramCommand } from '../programs/handlers.js';
import type { Settings } from '../settings/settings.js';
import { UsageError } from './args.js';
import { presentProgramResult } from './program-text.js';
import { appendReadinessHistory } from '../sre/readiness-history-file.js';

/** Flags that never take a value: `svc sim --record f.sd` must not read `f.sd` as the flag's value. */
const BOOLEAN_FLAGS = new Set([
  'json',
  'all-targets',
  'runtime',
  'inject-health-faults',
  'traceability',
  'capabilities',
  'record',
  'execute',
  'deterministic',
  'playback',
  'decision-trace',
  'explain',
  'markdown',
  'html',
  'metrics-json',
  'verbose',
]);
const VALUE_FLAGS = new Set(['target', 'config', 'from', 'mode', 'file', 'limit', 'trace-out', 'inject-failure', 'failed', 'progress', 'trigger']);
/** Flags that choose the output, not the request. */
const OUTPUT_FLAGS = new Set(['json', 'markdown', 'html', 'metrics-json']);
/** Flags that only the local CLI passes on (LocalProgramRequest), or that only shape the run here. */
const LOCAL_FLAGS = new Set(['config', 'file', 'trace-out', 'inject-failure', 'verbose']);

/** `svc run` iterations (docs/program-language.md §24.1): 10, or 20 with --verbose. */
export const RUN_MAX_LOOP_ITERATIONS = 10;
const RUN_VERBOSE_MAX_LOOP_ITERATIONS = 20;

/** CLI flag → request field (docs/program-language.md §29 spellings). */
const FLAG_FIELDS: Record<string, string> = {
  'all-targets': 'all_targets',
  runtime: 'include_runtime',
  'inject-health-faults': 'inject_health_faults',
  record: 'record_trace',
  'decision-trace': 'decision_trace',
};

export interface ProgramCliOutcome {
  stdout: string;
  exitCode: number;
}

/**
 * `svc <program command> FILE [flags]`: builds a workspace from the command line (the `--config`
 * given, else the first `svc.toml` above the file), runs the same ProgramService method as the
 * REST route, and prints JSON (`--json`) or the text form of docs/program-language.md §29. Exit 0 ready/passed, 1 not.
 */
export async function runProgramCommand(
  spec: ProgramCommand,
  positional: readonly string[],
  options: Map<string, string | true>,
  settings: Settings,
  cwd = process.cwd(),
  local: { maxLoopIterations?: number } = {},
): Promise<ProgramCliOutcome> {
  const files = [...positional];
  const flags = new Map<string, string | true>();
  for (const [name, value] of options) {
    if (BOOLEAN_FLAGS.has(name)) {
      flags.set(name, true);
      if (typeof value === 'string') files.push(value);
    } else if (VALUE_FLAGS.has(name)) {
      if (value === true) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name} for '${spec.cli.join(' ')}'`);
    }
  }
  // `svc verify f.sd --capabilities` / `--traceability` is the capabilities verification (docs/program-language.md §29).
  if (spec.id === 'verifyProgramHardware' && (flags.has('capabilities') || flags.has('traceability'))) {
    spec = programCommandFor({ id: 'verifyProgramCapabilities' })!;
  }
  // `svc explain readiness --file f.sd`, `svc explain decision t.trace`.
  if (spec.id === 'explainProgram' && files.length > 0 && EXPLAIN_MODES.has(files[0]!) && !flags.has('mode')) {
    flags.set('mode', files.shift()!);
  }
  if (typeof flags.get('file') === 'string') files.unshift(flags.get('file') as string);
  const needsFile = spec.id !== 'listProgramTraces' && spec.id !== 'listProgramFiles';
  if (needsFile && files.length !== 1) {
    throw new UsageError(`'svc ${spec.cli.join(' ')}' takes one file (got ${files.length ? files.join(' ') : 'none'})`);
  }
  const outputs = [...OUTPUT_FLAGS].filter((f) => flags.has(f));
  if (outputs.length > 1) throw new UsageError(`choose one output: ${outputs.map((f) => `--${f}`).join(' or ')}`);
  if ((flags.has('markdown') || flags.has('html')) && spec.id !== 'evaluateProgramReadiness') {
    throw new UsageError(`--markdown and --html are readiness outputs ('svc readiness F --markdown')`);
  }
  const simulation = spec.id === 'runProgramSimulation';
  for (const name of ['metrics-json', 'trace-out', 'inject-failure', 'verbose']) {
    if (flags.has(name) && !simulation) throw new UsageError(`--${name} is an option of 'svc sim' and 'svc run'`);
  }
  // `svc readiness F --record` appends the evaluation to the readiness history the agent's trends read
  // (docs/observability.md § Readiness trends); for `svc sim` the flag records a trace instead.
  const recordReadiness = spec.id === 'evaluateProgramReadiness' && flags.delete('record');
  const file = files[0] ? path.resolve(cwd, files[0]) : null;
  const workspace = cliWorkspace(file, flags.get('config') as string | undefined, cwd, settings);
  const request = toRequest(spec, flags, file);
  const service = new ProgramService(workspace);
  let body: unknown;
  if (simulation) {
    // CLI-only parts of a simulation (never accepted from a remote body).
    const traceOut = flags.get('trace-out');
    if (typeof traceOut === 'string') request['trace_out'] = path.resolve(cwd, traceOut);
    const failure = flags.get('inject-failure');
    if (typeof failure === 'string') request['inject_failure'] = failure;
    if (local.maxLoopIterations !== undefined) request['max_loop_iterations'] = local.maxLoopIterations;
    body = await service.run('simulateLocal', request as never);
  } else if (spec.id === 'evaluateProgramReadiness' && (flags.has('runtime') || flags.has('inject-health-faults'))) {
    // `--runtime` (implied by `--inject-health-faults`) runs the program and folds its health in (docs/program-language.md §8, §29).
    body = await service.run('readinessWithRuntime', request as never);
  } else {
    body = await spec.run(service, request as never);
  }
  if (recordReadiness && file) {
    const report = (body as { report?: Parameters<typeof appendReadinessHistory>[2] }).report;
    if (report) await appendReadinessHistory(settings.stateDir, file, report);
  }
  return presentProgramResult(spec.id, body, {
    json: flags.has('json'),
    markdown: flags.has('markdown'),
    html: flags.has('html'),
    metricsJson: flags.has('metrics-json'),
  });
}

/**
 * `svc run FILE [--verbose] [sim options]`: the simulation with 10 loop iterations (20 with
 * `--verbose`), docs/program-language.md §24.1 and §29.
 */
export async function runRunCommand(positional: readonly string[], options: Map<string, string | true>, settings: Settings, cwd = process.cwd()): Promise<ProgramCliOutcome> {
  const spec = programCommandFor({ id: 'runProgramSimulation' })!;
  const verbose = options.has('verbose');
  return runProgramCommand(spec, positional, options, settings, cwd, { maxLoopIterations: verbose ? RUN_VERBOSE_MAX_LOOP_ITERATIONS : RUN_MAX_LOOP_ITERATIONS });
}

const EXPLAIN_MODES = new Set(['program', 'readiness', 'verify', 'safety', 'trace', 'decision']);

function toRequest(spec: ProgramCommand, flags: Map<string, string | true>, file: string | null): Record<string, unknown> {
  const req: Record<string, unknown> = {};
  if (file) req['file'] = file;
  for (const [name, value] of flags) {
    if (OUTPUT_FLAGS.has(name) || LOCAL_FLAGS.has(name)) continue;
    const field = FLAG_FIELDS[name] ?? name.replace(/-/g, '_');
    req[field] = name === 'limit' || name === 'progress' ? Number(value) : value;
  }
  // The CLI's `svc sim` always runs the program (the dry run has no CLI twin, docs/program-language.md §29).
  if (spec.id === 'runProgramSimulation') req['execute'] = true;
  return req;
}

/** Workspace of a CLI run: the local user's files, resolved against the working directory. */
export function cliWorkspace(file: string | null, configOption: string | undefined, cwd: string, settings: Settings): ProgramWorkspace {
  const manifest = configOption ? path.resolve(cwd, configOption) : file ? findManifest(path.dirname(file)) : findManifest(cwd);
  const config = manifest ? resolveProjectConfig(manifest) : null;
  const projectRoot = config?.projectRoot ?? (file ? path.dirname(file) : cwd);
  return { projectRoot, config, programPath: null, stateDir: settings.stateDir, decisions: settings.decisions, confineToRoot: false, cwd };
}
