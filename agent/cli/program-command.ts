import fs from 'node:fs';
import path from 'node:path';
import { loadConfigFile } from '../project/load-file.js';
import { isTable } from '../project/deep-merge.js';
import { findManifest, isDirectory, resolveProjectConfig } from '../project/resolve-config.js';
import { WEIGHT_KEYS } from '../programs/analysis/readiness-policy.js';
import { PROFILE_FAULTS } from '../programs/analysis/hardware-profiles.js';
import { loadTrace } from '../programs/program-files.js';
import { parseOffset, type TraceFrame } from '../programs/runtime/trace-file.js';
import { ProgramService } from '../programs/program-service.js';
import type { ProgramWorkspace } from '../programs/program-workspace.js';
import { programCommandFor, type ProgramCommand } from '../programs/handlers.js';
import type { Settings } from '../settings/settings.js';
import { UsageError } from './args.js';
import { presentProgramResult } from './program-text.js';
import {
  atLines,
  atView,
  frameLine,
  healthCheckLines,
  healthPassed,
  isFaultFrame,
  minimumCapabilityLines,
  readinessAgentJson,
  schedulerLines,
  strictCertify,
  strictLine,
  strictPassed,
  trustMarkdown,
} from './program-views.js';
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
  'strict',
  'agent-json',
  'strict-certify',
  'health',
  'minimum-capabilities',
  'trace-scheduler',
  'inspect',
  'show-faults',
  'wall-clock',
  'replay',
]);
const VALUE_FLAGS = new Set([
  'target', 'config', 'from', 'mode', 'file', 'limit', 'trace-out', 'inject-failure', 'failed', 'progress', 'trigger',
  'baseline', 'policy', 'at', 'project', 'format', 'simulate',
]);
/** Flags that choose the output, not the request. */
const OUTPUT_FLAGS = new Set(['json', 'markdown', 'html', 'metrics-json', 'agent-json']);
/** Flags that only the local CLI passes on (LocalProgramRequest), or that only shape the run or its output here. */
const LOCAL_FLAGS = new Set([
  'config', 'file', 'trace-out', 'inject-failure', 'verbose', 'strict', 'baseline', 'policy', 'strict-certify', 'health',
  'minimum-capabilities', 'trace-scheduler', 'at', 'inspect', 'show-faults', 'wall-clock', 'project', 'format', 'simulate',
  'replay',
]);

const READINESS = 'evaluateProgramReadiness';
const VERIFY = 'verifyProgramHardware';
const CAPABILITIES = 'verifyProgramCapabilities';
const SIM = 'runProgramSimulation';
const REPLAY = 'replayProgram';
const TRUST = 'getTrustProgram';
const EXPLAIN = 'explainProgram';

/**
 * Flags of some commands only (docs/program-language.md §29): flag → the operations whose command
 * takes it. Any other command refuses the flag (exit 2); flags not listed are the request flags
 * every program command accepts.
 */
const FLAG_COMMANDS: Record<string, readonly string[]> = {
  'metrics-json': [SIM],
  'trace-out': [SIM],
  'inject-failure': [SIM],
  verbose: [SIM],
  'trace-scheduler': [SIM],
  replay: [SIM],
  simulate: [READINESS, VERIFY],
  markdown: [READINESS],
  html: [READINESS],
  strict: [READINESS],
  policy: [READINESS],
  'agent-json': [READINESS],
  baseline: [READINESS, EXPLAIN],
  'strict-certify': [VERIFY],
  health: [CAPABILITIES],
  'minimum-capabilities': [CAPABILITIES],
  at: [REPLAY],
  inspect: [REPLAY],
  'show-faults': [REPLAY],
  'wall-clock': [REPLAY, SIM],
  project: [TRUST],
  format: [TRUST],
};

const TRUST_FORMATS = ['text', 'json', 'markdown'];

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
  local: { maxLoopIterations?: number; write?: (text: string) => void } = {},
): Promise<ProgramCliOutcome> {
  const files = [...positional];
  const flags = new Map<string, string | true>();
  for (const [name, value] of options) {
    if (BOOLEAN_FLAGS.has(name)) {
      flags.set(name, true);
      if (typeof value === 'string') files.push(value);
    } else if (VALUE_FLAGS.has(name)) {
      if (value === true) throw new UsageError(name === 'simulate' ? simulateUsage('--simulate needs fault names') : `--${name} needs a value`);
      flags.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name} for '${spec.cli.join(' ')}'`);
    }
  }
  // `svc verify f.sd --capabilities` / `--traceability` / `--health` / `--minimum-capabilities` is the
  // capabilities verification (docs/program-language.md §29).
  if (spec.id === VERIFY && ['capabilities', 'traceability', 'health', 'minimum-capabilities'].some((f) => flags.has(f))) {
    spec = programCommandFor({ id: CAPABILITIES })!;
  }
  // `svc explain readiness --file f.sd`, `svc explain decision t.trace`.
  if (spec.id === EXPLAIN && files.length > 0 && EXPLAIN_MODES.has(files[0]!) && !flags.has('mode')) {
    flags.set('mode', files.shift()!);
  }
  if (typeof flags.get('file') === 'string') files.unshift(flags.get('file') as string);
  const needsFile = spec.id !== 'listProgramTraces' && spec.id !== 'listProgramFiles';
  if (needsFile && files.length !== 1) {
    throw new UsageError(`'svc ${spec.cli.join(' ')}' takes one file (got ${files.length ? files.join(' ') : 'none'})`);
  }
  for (const name of flags.keys()) {
    const owners = FLAG_COMMANDS[name];
    if (owners && !owners.includes(spec.id)) {
      const commands = owners.map((id) => `'svc ${id === CAPABILITIES ? 'verify --capabilities' : programCommandFor({ id })!.cli.join(' ')}'`);
      if (owners.includes(SIM)) commands.push("'svc run'");
      throw new UsageError(`--${name} is an option of ${commands.join(' and ')}`);
    }
  }
  const format = flags.get('format');
  if (typeof format === 'string' && !TRUST_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${TRUST_FORMATS.join(', ')} (got '${format}')`);
  const outputs = [...OUTPUT_FLAGS, 'format'].filter((f) => flags.has(f));
  if (outputs.length > 1) throw new UsageError(`choose one output: ${outputs.map((f) => `--${f}`).join(' or ')}`);
  const replayViews = replayViewFlags(spec.id, flags);
  const simulateFaults = typeof flags.get('simulate') === 'string' ? parseSimulateFaults(flags.get('simulate') as string) : null;
  // `svc sim --replay` re-runs the program as deterministic replay does, with svc sim's 20 iterations (§24.1).
  if (flags.has('replay') && local.maxLoopIterations !== undefined) {
    throw new UsageError("--replay checks the recording against a deterministic replay, which runs svc sim's 20 loop iterations: use 'svc sim --replay'");
  }
  const simulation = spec.id === SIM;
  // `svc readiness F --record` appends the evaluation to the readiness history the agent's trends read
  // (docs/observability.md § Readiness trends); for `svc sim` the flag records a trace instead.
  const recordReadiness = spec.id === READINESS && flags.delete('record');
  // A readiness under assumed faults is a what-if: it must not enter the history the trends read.
  if (recordReadiness && simulateFaults) throw new UsageError('--record keeps the readiness history; a readiness under --simulate faults is a what-if and is not recorded');
  const file = files[0] ? path.resolve(cwd, files[0]) : null;
  const workspace = flags.has('project')
    ? projectWorkspace(flags.get('project') as string, flags.get('config'), cwd, settings)
    : cliWorkspace(file, flags.get('config') as string | undefined, cwd, settings);
  const request = toRequest(spec, flags, file);
  const service = new ProgramService(workspace);
  let strict = flags.has('strict');
  let body: unknown;
  if (simulation) {
    // CLI-only parts of a simulation (never accepted from a remote body).
    const traceOut = flags.get('trace-out');
    if (typeof traceOut === 'string') request['trace_out'] = path.resolve(cwd, traceOut);
    const failure = flags.get('inject-failure');
    if (typeof failure === 'string') request['inject_failure'] = failure;
    if (local.maxLoopIterations !== undefined) request['max_loop_iterations'] = local.maxLoopIterations;
    if (flags.has('replay')) request['record_trace'] = true;
    // The run sleeps each loop interval for real (docs/program-language.md §24.1); the output is the same.
    if (flags.has('wall-clock')) request['wall_clock'] = true;
    body = await service.run('simulateLocal', request as never);
  } else if (spec.id === READINESS) {
    // `--runtime` (implied by `--inject-health-faults`) runs the program and folds its health in;
    // `--policy FILE` and `--baseline DIR` are local inputs (docs/program-language.md §8, §29).
    const policyFile = flags.get('policy');
    if (typeof policyFile === 'string') {
      const policy = readPolicyFile(path.resolve(cwd, policyFile));
      strict ||= policy.strict === true;
      request['readiness_policy'] = { minimum_score: policy.minimum_score, weights: policy.weights };
    }
    const baseline = flags.get('baseline');
    if (typeof baseline === 'string') request['baseline'] = baselineDir(path.resolve(cwd, baseline));
    if (simulateFaults) request['simulate_faults'] = simulateFaults;
    body = await service.run('readinessLocal', request as never);
  } else if (spec.id === VERIFY && simulateFaults) {
    body = await service.run('verifyHardwareLocal', { ...request, simulate_faults: simulateFaults } as never);
  } else if (spec.id === EXPLAIN && typeof flags.get('baseline') === 'string') {
    request['baseline'] = baselineDir(path.resolve(cwd, flags.get('baseline') as string));
    body = await service.run('explainLocal', request as never);
  } else {
    body = await spec.run(service, request as never);
  }
  if (recordReadiness && file) {
    const report = (body as { report?: Parameters<typeof appendReadinessHistory>[2] }).report;
    if (report) await appendReadinessHistory(settings.stateDir, file, report);
  }
  // CLI-only compositions and views on top of the REST body (docs/programs.md, "The CLI").
  if (flags.has('strict-certify')) body = strictCertify(body as Record<string, any>);
  if (flags.has('minimum-capabilities')) {
    const assured = (await service.run('assure', { file: file ?? undefined, target: request['target'] as string | undefined, all_targets: request['all_targets'] as boolean | undefined })) as { report: Record<string, any> };
    body = { ...(body as object), minimum_capabilities: assured.report['assurance'].safety_case.capability_verification };
  }
  if (simulateFaults) body = { ...(body as object), simulated_faults: simulateFaults };
  // `svc sim --replay` (docs/program-language.md §26): the recorded trace, replayed deterministically at once.
  if (flags.has('replay')) {
    const tracePath = (body as { simulation?: { trace_path?: unknown } }).simulation?.trace_path;
    if (typeof tracePath === 'string') {
      const replayed = (await service.run('replay', { file: path.resolve(cwd, tracePath), deterministic: true })) as { replay: unknown };
      body = { ...(body as object), replay: replayed.replay };
    }
  }
  if (replayViews && file) {
    const view = replayView(file, replayViews);
    // With --json the pacing stays silent: stdout carries only the body.
    const write = flags.has('json') ? () => undefined : (local.write ?? ((t: string) => void process.stdout.write(t)));
    if (flags.has('wall-clock')) await paceFrames(view.playback, write);
    body = { ...(body as object), ...view.json };
  }
  const wantsJson = flags.has('json') || format === 'json';
  if (flags.has('agent-json')) {
    const summary = readinessAgentJson(body as Record<string, any>, strict);
    return { stdout: `${JSON.stringify(summary, null, 2)}\n`, exitCode: summary['exit_code'] };
  }
  if (format === 'markdown') {
    const outcome = presentProgramResult(spec.id, body, { json: false });
    return { stdout: `${trustMarkdown(body as Record<string, any>).join('\n')}\n`, exitCode: outcome.exitCode };
  }
  const outcome = presentProgramResult(spec.id, body, {
    json: wantsJson,
    markdown: flags.has('markdown'),
    html: flags.has('html'),
    metricsJson: flags.has('metrics-json'),
  });
  return decorate(spec.id, body as Record<string, any>, outcome, { flags, strict, json: wantsJson || flags.has('metrics-json'), views: replayViews });
}

/** Text lines and exit codes the CLI-only flags add to a command's outcome. */
function decorate(
  specId: string,
  body: Record<string, any>,
  outcome: ProgramCliOutcome,
  ctx: { flags: Map<string, string | true>; strict: boolean; json: boolean; views: ReplayViewFlags | null },
): ProgramCliOutcome {
  let { stdout, exitCode } = outcome;
  const lines: string[] = [];
  // Printed first: `svc verify` text ends with its deployment verdict (docs/programs.md, "The CLI").
  if (body['simulated_faults'] && !ctx.json && !ctx.flags.has('markdown') && !ctx.flags.has('html')) stdout = `Simulated faults: ${body['simulated_faults'].join(', ')}\n${stdout}`;
  if (specId === READINESS && ctx.strict) {
    lines.push(strictLine(body['report']));
    if (!strictPassed(body['report'])) exitCode = 1;
  }
  if (specId === CAPABILITIES && ctx.flags.has('health')) {
    lines.push(...healthCheckLines(body['health']));
    if (!healthPassed(body['health'])) exitCode = 1;
  }
  if (specId === CAPABILITIES && body['minimum_capabilities']) {
    lines.push(...minimumCapabilityLines(body['minimum_capabilities']));
    if (!body['minimum_capabilities'].compatible) exitCode = 1;
  }
  if (specId === SIM && ctx.flags.has('trace-scheduler')) lines.push(...schedulerLines(body['simulation']?.result?.metrics));
  if (specId === SIM && body['replay']) {
    lines.push(...presentProgramResult(REPLAY, { replay: body['replay'] }, { json: false }).stdout.trimEnd().split('\n'));
    if (body['replay'].verification?.ok !== true) exitCode = 1;
  }
  if (specId === REPLAY && ctx.views) lines.push(...replayViewLines(body, ctx.views));
  if (ctx.json || lines.length === 0) return { stdout, exitCode };
  return { stdout: `${stdout}${lines.join('\n')}\n`, exitCode };
}

// -----------------------------------------------------------------------------------------------
// svc readiness --policy FILE, --baseline DIR

interface PolicyFile {
  minimum_score?: number;
  weights?: Partial<Record<string, number>>;
  strict?: boolean;
}

/**
 * A readiness policy file (`--policy FILE`, TOML or `.json`): `minimum_score`, `[weights]` (the keys
 * of docs/program-language.md §9.3) and `strict`, at the top level or under `[readiness]` as in
 * `svc.toml`. What it names replaces the configured value; anything else is a usage error.
 */
export function readPolicyFile(file: string): PolicyFile {
  const raw = loadConfigFile(file, { role: 'readiness policy file' }) as Record<string, unknown>;
  const table = isTable(raw['readiness']) && Object.keys(raw).length === 1 ? (raw['readiness'] as Record<string, unknown>) : raw;
  const policy: PolicyFile = {};
  for (const [key, value] of Object.entries(table)) {
    if (key === 'minimum_score') {
      const n = typeof value === 'bigint' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 100) throw new UsageError(`${file}: minimum_score must be a number from 0 to 100`);
      policy.minimum_score = Math.trunc(n);
    } else if (key === 'strict') {
      if (typeof value !== 'boolean') throw new UsageError(`${file}: strict must be true or false`);
      policy.strict = value;
    } else if (key === 'weights') {
      if (!isTable(value)) throw new UsageError(`${file}: weights must be a table of factor weights`);
      policy.weights = {};
      for (const [factor, w] of Object.entries(value)) {
        if (!(WEIGHT_KEYS as readonly string[]).includes(factor)) throw new UsageError(`${file}: unknown weight '${factor}' (known: ${WEIGHT_KEYS.join(', ')})`);
        const n = typeof w === 'bigint' ? Number(w) : w;
        if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new UsageError(`${file}: weight '${factor}' must be a number ≥ 0`);
        policy.weights[factor] = n;
      }
    } else {
      throw new UsageError(`${file}: unknown readiness policy key '${key}' (known: minimum_score, weights, strict)`);
    }
  }
  return policy;
}

function baselineDir(dir: string): string {
  if (!isDirectory(dir)) throw new UsageError(`--baseline needs a directory holding the saved project (its svc.toml): ${dir}`);
  return dir;
}

/** `svc trust F --project DIR`: the project is DIR (its svc.toml when there is one), wherever the program lies. */
function projectWorkspace(dir: string, config: string | true | undefined, cwd: string, settings: Settings): ProgramWorkspace {
  if (config !== undefined) throw new UsageError('give --project DIR or --config FILE, not both');
  const root = path.resolve(cwd, dir);
  if (!isDirectory(root)) throw new UsageError(`--project needs a project directory: ${root}`);
  const manifest = path.join(root, 'svc.toml');
  const resolved = fs.existsSync(manifest) ? resolveProjectConfig(manifest) : null;
  return { projectRoot: resolved?.projectRoot ?? root, config: resolved, programPath: null, stateDir: settings.stateDir, decisions: settings.decisions, confineToRoot: false, cwd };
}

// -----------------------------------------------------------------------------------------------
// svc readiness|verify --simulate FAULTS

function simulateUsage(message: string): string {
  return `${message}, comma-separated (e.g. --simulate LidarFailure,NetworkOutage; known: ${PROFILE_FAULTS.join(', ')})`;
}

/**
 * `--simulate FAULTS`: the `simulate_compatibility` faults of docs/program-language.md §9.2 to apply on
 * top of the program's own. The program's block accepts any name; on the command line an unknown one
 * is a typo, so it is refused.
 */
function parseSimulateFaults(value: string): string[] {
  const faults = value.split(',').map((f) => f.trim()).filter((f) => f !== '');
  if (faults.length === 0) throw new UsageError(simulateUsage('--simulate needs fault names'));
  const unknown = faults.filter((f) => !(PROFILE_FAULTS as readonly string[]).includes(f));
  if (unknown.length > 0) throw new UsageError(simulateUsage(`--simulate: unknown fault ${unknown.map((f) => `'${f}'`).join(', ')}`));
  return [...new Set(faults)];
}

// -----------------------------------------------------------------------------------------------
// svc replay --at T, --inspect, --show-faults, --wall-clock

interface ReplayViewFlags {
  at: number | null;
  inspect: boolean;
  faults: boolean;
  from: number;
}

function offsetFlag(name: string, value: string): number {
  try {
    return parseOffset(value);
  } catch (err) {
    throw new UsageError(`--${name}: ${(err as Error).message}`);
  }
}

function replayViewFlags(specId: string, flags: Map<string, string | true>): ReplayViewFlags | null {
  if (specId !== REPLAY) return null;
  if (flags.has('inspect') && (flags.has('deterministic') || flags.has('playback'))) {
    throw new UsageError('--inspect lists the recorded frames; it does not combine with --deterministic or --playback');
  }
  // Deterministic replay always runs on the simulated clock (docs/program-language.md §24.1).
  if (flags.has('wall-clock') && !flags.has('playback')) throw new UsageError('--wall-clock paces a playback: use it with --playback');
  const at = typeof flags.get('at') === 'string' ? offsetFlag('at', flags.get('at') as string) : null;
  const from = typeof flags.get('from') === 'string' ? offsetFlag('from', flags.get('from') as string) : 0;
  const views = { at, inspect: flags.has('inspect'), faults: flags.has('show-faults'), from };
  return views.at !== null || views.inspect || views.faults || flags.has('wall-clock') ? views : null;
}

function replayView(file: string, views: ReplayViewFlags) {
  const frames = loadTrace(file).frames;
  const json: Record<string, unknown> = {};
  const indexed = frames.map((frame, index) => ({ frame, index }));
  const fromOffset = indexed.filter(({ frame }) => frame.sim_time_ms >= views.from);
  if (views.at !== null) json['at'] = atView(frames, views.at);
  if (views.inspect) json['frames'] = fromOffset.map(({ frame, index }) => ({ index, ...frame }));
  if (views.faults) json['faults'] = fromOffset.filter(({ frame }) => isFaultFrame(frame)).map(({ frame, index }) => ({ index, ...frame }));
  return { json, playback: fromOffset };
}

function replayViewLines(body: Record<string, any>, views: ReplayViewFlags): string[] {
  const lines: string[] = [];
  if (body['at']) lines.push(...atLines(body['at']));
  if (body['frames']) lines.push(`Frames from ${views.from} ms: ${body['frames'].length}`, ...body['frames'].map((f: any) => frameLine(f, f.index)));
  if (body['faults']) lines.push(`Faults: ${body['faults'].length}`, ...body['faults'].map((f: any) => frameLine(f, f.index)));
  return lines;
}

/**
 * `svc replay --playback --wall-clock`: the reference's paced playback (docs/program-language.md §24.1,
 * §27): each frame is shown after the simulated time since the previous one has passed for real.
 */
async function paceFrames(frames: readonly { frame: TraceFrame; index: number }[], write: (text: string) => void): Promise<void> {
  let previous = frames[0]?.frame.sim_time_ms ?? 0;
  for (const { frame, index } of frames) {
    const wait = Math.max(0, frame.sim_time_ms - previous);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    previous = frame.sim_time_ms;
    write(`${frameLine(frame, index).trimStart()}\n`);
  }
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
