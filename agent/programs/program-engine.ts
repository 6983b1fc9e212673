import fs from 'node:fs';
import path from 'node:path';
import { badRequest, notFound } from '../core/errors.js';
import { resolveInsideProject } from '../project/project-paths.js';
import type { AnalysisOptions } from './analysis/options.js';
import { evaluateReadiness, readinessPolicy } from './analysis/readiness.js';
import { baselineDrift, driftIssues } from './analysis/baseline-drift.js';
import { verifyHardware } from './analysis/verify-hardware.js';
import { verifyCapabilities } from './analysis/capabilities.js';
import { verifyMission } from './analysis/verify-mission.js';
import { verifyContract } from './analysis/contract.js';
import { ContinuityInputError, evaluateContinuity } from './analysis/continuity.js';
import type { Program } from './language/ast.js';
import { assureProgram } from './assurance/assure.js';
import { diagnoseProgram, diagnoseTrace } from './assurance/diagnose.js';
import { healProgram } from './assurance/heal.js';
import { classifyFailure, diagnoseFailure } from './assurance/recovery-actions.js';
import { programTrust } from './assurance/trust.js';
import { explain } from './assurance/explain.js';
import { auditDecisions } from './assurance/audit-decisions.js';
import { simulateProgram, type ExecutedSimulation } from './runtime/simulate.js';
import { FAILURE_FAULTS } from './runtime/health-injection.js';
import type { EscalationPort } from './runtime/escalations.js';
import type { RuntimeHealth } from './analysis/options.js';
import { replayTrace, traceSourcePath } from './runtime/replay.js';
import { parseOffset } from './runtime/trace-file.js';
import { listTraces } from './runtime/trace-listing.js';
import { listProgramFiles } from './program-listing.js';
import { ProgramRuntimeError } from './runtime/interpreter.js';
import { isTracePath, loadProgram, loadTrace, refuseStateDir, resolveRequestFile } from './program-files.js';
import type { LocalProgramRequest, ProgramQuery, ProgramRequest } from './program-request.js';
import type { ProgramWorkspace } from './program-workspace.js';
import type { ProgramFacts } from '../entities/program-facts.js';
import { projectRelative } from '../project/project-context.js';

const VERSION = 'v1' as const;

function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Recovery knowledge lives in the state directory (docs/program-language.md §28), never the working directory. */
export const RECOVERY_KNOWLEDGE_FILE = 'recovery_knowledge.json';

/**
 * Every program operation (docs/program-language.md §8–§23) as a function of a workspace and a request,
 * returning the documented body with `version` and `file`. Loaded on first use through
 * ProgramService, so an agent that never analyses a program never loads the parser or simulator.
 */
export class ProgramEngine {
  constructor(readonly workspace: ProgramWorkspace) {}

  private options(req: ProgramRequest): AnalysisOptions {
    return { config: this.workspace.config, target: req.target ?? null, allTargets: req.all_targets === true };
  }

  private program(req: ProgramRequest) {
    const file = resolveRequestFile(this.workspace, req.file, 'program');
    return { file, program: loadProgram(file) };
  }

  readiness(req: ProgramRequest) {
    const { file, program } = this.program(req);
    return { version: VERSION, file, report: evaluateReadiness(program, this.options(req)) };
  }

  assure(req: ProgramRequest) {
    const { file, program } = this.program(req);
    return { version: VERSION, file, report: assureProgram(program, { ...this.options(req), knowledgePath: this.knowledgePath() }) };
  }

  diagnose(req: ProgramRequest) {
    const file = resolveRequestFile(this.workspace, req.file, 'file');
    if (isTracePath(file)) return { version: VERSION, file, report: diagnoseTrace(loadTrace(file)) };
    return { version: VERSION, file, report: diagnoseProgram(loadProgram(file), this.options(req)) };
  }

  /** Mission continuity of a failed robot (docs/program-language.md §30). */
  continuity(req: ProgramRequest) {
    const { file, program } = this.program(req);
    if (typeof req.failed !== 'string' || req.failed === '') throw badRequest('missing failed (the robot that failed)');
    if (typeof req.trigger !== 'string' || req.trigger === '') throw badRequest('missing trigger (what happened, e.g. central.lost)');
    try {
      return { version: VERSION, file, report: evaluateContinuity(program, { failed: req.failed, progress: req.progress ?? 0, trigger: req.trigger }) };
    } catch (err) {
      if (err instanceof ContinuityInputError) throw badRequest(err.message);
      throw err;
    }
  }

  heal(req: ProgramRequest) {
    const { file, program } = this.program(req);
    const devices = this.workspace.devices?.() ?? this.workspace.config?.devices ?? [];
    return { version: VERSION, file, report: healProgram(program, { ...this.options(req), devices, knowledgePath: this.knowledgePath() }) };
  }

  /**
   * The heal analysis (docs/program-language.md §12) for failure contexts the recovery orchestrator
   * chooses (docs/recovery.md): `plans` holds one heal plan and gated result per issue of
   * `recovery_issues` (same order), `legacy` the heal report of `legacy_issue` alone (or the
   * program's own contexts when absent). Both share the knowledge base of the state directory.
   */
  recoveryAnalysis(req: ProgramRequest & { recovery_issues?: readonly string[]; legacy_issue?: string | null }) {
    const { file, program } = this.program(req);
    const devices = this.workspace.devices?.() ?? this.workspace.config?.devices ?? [];
    const options = { ...this.options(req), devices, knowledgePath: this.knowledgePath() };
    const context = (issue: string) => {
      const classification = classifyFailure(issue);
      return { issue, classification, diagnosis: diagnoseFailure(issue, classification), level: 'Level3AutomaticWithValidation' };
    };
    const issues = req.recovery_issues ?? [];
    const plans = issues.length > 0 ? healProgram(program, { ...options, contexts: issues.map(context) }) : null;
    const legacy = healProgram(program, req.legacy_issue ? { ...options, contexts: [context(req.legacy_issue)] } : options);
    return { version: VERSION, file, plans, legacy };
  }

  verifyHardware(req: ProgramRequest) {
    const { file, program } = this.program(req);
    return { version: VERSION, file, report: verifyHardware(program, this.options(req)) };
  }

  verifyCapabilities(req: ProgramRequest) {
    const { file, program } = this.program(req);
    const result = verifyCapabilities(program, { ...this.options(req), traceability: req.traceability === true });
    return { version: VERSION, file, capabilities: result.capabilities, health: result.health, traceability: result.traceability };
  }

  verifyMission(req: ProgramRequest) {
    const { file, program } = this.program(req);
    return { version: VERSION, file, report: verifyMission(program, this.options(req)) };
  }

  contractVerify(req: ProgramRequest) {
    const { file, program } = this.program(req);
    const { report, passed } = verifyContract(program, this.options(req));
    return { version: VERSION, file, report, passed };
  }

  /**
   * The CLI's readiness (`svc readiness`, docs/program-language.md §8, §29): the REST flags plus what
   * remote callers cannot ask for. `include_runtime` / `inject_health_faults` simulate the program
   * (with the health faults when asked) and fold the run's health into the Health factor;
   * `readiness_policy` (`--policy FILE`) overrides the configured minimum score and weights;
   * `baseline` (`--baseline DIR`) adds the configuration drift since that saved project as issues.
   */
  readinessLocal(req: LocalProgramRequest) {
    const { file, program } = this.program(req);
    const options: AnalysisOptions = { ...this.options(req) };
    if (req.include_runtime === true || req.inject_health_faults === true) options.runtimeHealth = this.runtimeHealth(program, file, req);
    if (req.readiness_policy) {
      const configured = readinessPolicy(this.workspace.config);
      const given = req.readiness_policy;
      options.readinessPolicy = { minimum_score: given.minimum_score ?? configured.minimum_score, weights: { ...configured.weights, ...given.weights } };
    }
    if (req.baseline !== undefined) options.driftIssues = driftIssues(this.baselineDrift(req.baseline));
    if (req.simulate_faults) options.simulateFaults = req.simulate_faults;
    return { version: VERSION, file, report: evaluateReadiness(program, options) };
  }

  /** The CLI's verify hardware: `simulate_faults` (`svc verify --simulate FAULTS`) degrade the profiles first (§9.2). */
  verifyHardwareLocal(req: LocalProgramRequest) {
    const { file, program } = this.program(req);
    return { version: VERSION, file, report: verifyHardware(program, { ...this.options(req), simulateFaults: req.simulate_faults ?? [] }) };
  }

  /** Readiness with a runtime run, whatever the flags say (kept for callers of the earlier name). */
  readinessWithRuntime(req: LocalProgramRequest) {
    return this.readinessLocal({ ...req, include_runtime: true });
  }

  private baselineDrift(baseline: string) {
    if (!this.workspace.config) throw badRequest(`--baseline compares project configurations, and this program has none (no svc.toml above it; give --config)`);
    return baselineDrift(baseline, this.workspace.config);
  }

  private runtimeHealth(program: Program, file: string, req: ProgramRequest): RuntimeHealth {
    try {
      const sim = simulateProgram(program, {
        file,
        execute: true,
        injectHealthFaults: req.inject_health_faults === true,
        config: this.workspace.config,
        decisions: this.workspace.decisions,
      }) as ExecutedSimulation;
      const health = sim.result.health;
      return {
        executed: true,
        status: health?.status ?? 'Healthy',
        injected: (health?.injected ?? []).map((f) => ({ robot: f.robot, fault: f.fault, status: f.status })),
        emergency_stop: sim.result.state.emergency_stop,
        error: null,
      };
    } catch (err) {
      if (!(err instanceof ProgramRuntimeError)) throw err;
      return { executed: false, status: 'Failed', injected: [], emergency_stop: false, error: err.message };
    }
  }

  /**
   * The REST simulation. It registers the escalations its decisions wait on only when it is a
   * recording run (`record_trace`: the call that needs Operate and is audited, docs/decisions.md);
   * any other run reports them and writes nothing.
   */
  simulate(req: ProgramRequest) {
    return this.runSimulation(req, {}, req.record_trace === true);
  }

  /**
   * The CLI's simulation (`svc sim`, `svc run`): the REST flags plus where to write the trace,
   * the iteration budget and `--inject-failure`, which remote callers cannot set.
   */
  simulateLocal(req: LocalProgramRequest) {
    const failure = req.inject_failure ?? null;
    if (failure !== null && !(failure in FAILURE_FAULTS)) {
      throw badRequest(`unknown failure '${failure}' (known: ${Object.keys(FAILURE_FAULTS).join(', ')})`);
    }
    return this.runSimulation(req, {
      traceOut: req.trace_out ?? null,
      maxLoopIterations: req.max_loop_iterations,
      injectFailure: failure,
      wallClock: req.wall_clock === true,
    }, true);
  }

  private runSimulation(
    req: ProgramRequest,
    local: { traceOut?: string | null; maxLoopIterations?: number | undefined; injectFailure?: string | null; wallClock?: boolean },
    register: boolean,
  ) {
    const { file, program } = this.program(req);
    const store = this.workspace.escalations ?? null;
    const registers = register && store !== null;
    const escalations: EscalationPort | null = store && {
      isGranted: (id) => store.isGranted(id),
      registerPending: (record) => {
        if (registers) store.registerPending(record);
      },
    };
    try {
      const simulation = simulateProgram(program, {
        file,
        execute: req.execute === true,
        decisionTrace: req.decision_trace === true,
        recordTrace: req.record_trace === true || Boolean(local.traceOut),
        injectHealthFaults: req.inject_health_faults === true,
        config: this.workspace.config,
        decisions: this.workspace.decisions,
        ...(local.traceOut ? { traceOut: local.traceOut } : {}),
        ...(local.maxLoopIterations !== undefined ? { maxLoopIterations: local.maxLoopIterations } : {}),
        ...(local.injectFailure ? { injectFailure: local.injectFailure } : {}),
        ...(local.wallClock ? { wallClock: true } : {}),
        escalations,
      });
      if (!simulation.dry_run && simulation.escalations) simulation.escalations_registered = registers;
      return { version: VERSION, file, simulation };
    } catch (err) {
      if (err instanceof ProgramRuntimeError) throw badRequest(err.message);
      throw err;
    }
  }

  replay(req: ProgramRequest) {
    // 'file' (.sd or .trace) so that a program file gets the replay-specific message below.
    const file = resolveRequestFile(this.workspace, req.file, 'file');
    if (!isTracePath(file)) throw badRequest(`replay needs a .trace file: ${req.file ?? file}`);
    let trace = loadTrace(file);
    const mode = req.playback === true ? 'playback' : req.deterministic === true ? 'deterministic' : 'inspect';
    // Deterministic replay re-runs the trace's source program: find it here, under the same path rules as `file`.
    if (mode === 'deterministic') trace = { ...trace, source: this.traceSource(trace.source, file) };
    if (typeof req.from === 'string') {
      try {
        parseOffset(req.from);
      } catch (err) {
        throw badRequest((err as Error).message);
      }
    }
    try {
      const replay = replayTrace(trace, { traceFile: file, mode, from: req.from, loadProgram: (p: string) => loadProgram(p), signingKey: this.workspace.decisions.policySigningKey });
      return { version: VERSION, file, replay };
    } catch (err) {
      if (err instanceof ProgramRuntimeError) throw badRequest(err.message);
      throw err;
    }
  }

  /**
   * The program a trace's `source` names: an absolute path as written, a relative one against the
   * trace's own folder, which is how traces are saved (docs/program-language.md §17, §26), never
   * against the working directory, so the CLI and REST find the same program wherever they run.
   * Remote callers stay inside the project root: a source leading out of it is a 400, whether or not
   * it exists, and a missing one is a 404 naming both paths relative to the project root.
   */
  private traceSource(source: string, traceFile: string): string {
    const ws = this.workspace;
    const shown = (p: string) => (ws.confineToRoot ? projectRelative(ws, p)! : p);
    if (!source) throw badRequest(`trace has no source program: ${shown(traceFile)}`);
    const candidate = traceSourcePath(source, traceFile);
    let checked = candidate;
    if (ws.confineToRoot) {
      // Checked as the path relative to the root it is (the trace's folder joined with the source),
      // so an error names no absolute path of the robot's disk.
      const root = realpathOr(ws.projectRoot);
      const requested = path.isAbsolute(source) ? source : path.join(path.relative(root, path.dirname(traceFile)), source);
      checked = resolveInsideProject(ws.projectRoot, requested);
      // A trace's source is read like a program file: never from the state directory (docs/security.md §5).
      refuseStateDir(ws, checked, source);
    }
    if (isFile(checked)) return checked;
    throw notFound(`program not found: ${shown(checked)} (the source '${source}' of the trace ${shown(traceFile)}, relative to the trace's folder)`);
  }

  trust(query: ProgramQuery) {
    const file = resolveRequestFile(this.workspace, query.file, 'program');
    const program = loadProgram(file);
    return {
      version: VERSION,
      file,
      report: programTrust(program, { file, projectRoot: this.workspace.projectRoot, stateDir: this.workspace.stateDir, config: this.workspace.config }),
    };
  }

  source(query: ProgramQuery) {
    const file = resolveRequestFile(this.workspace, query.file, 'program');
    return { version: VERSION, file, label: path.basename(file), source: fs.readFileSync(file, 'utf8') };
  }

  explain(req: ProgramRequest) {
    const file = resolveRequestFile(this.workspace, req.file, 'file');
    const mode = (req.mode ?? (isTracePath(file) ? 'trace' : 'program')).toLowerCase();
    const input = isTracePath(file) || mode === 'trace' || mode === 'decision'
      ? { kind: 'trace' as const, trace: loadTrace(file) }
      : { kind: 'program' as const, program: loadProgram(file) };
    const result = explain(input, { ...this.options(req), mode, file, stateDir: this.workspace.stateDir, projectRoot: this.workspace.projectRoot });
    return { version: VERSION, file, mode: result.mode, report: result.report };
  }

  /**
   * The CLI's explain: with `baseline` (`svc explain F.sd --baseline DIR`), the program mode gains the
   * `drift` section (docs/program-language.md §22: CLI only) listing the configuration drift since
   * that saved project.
   */
  explainLocal(req: LocalProgramRequest) {
    const body = this.explain(req);
    if (req.baseline === undefined) return body;
    if (body.mode !== 'program') throw badRequest(`--baseline adds the drift section of the program explanation, not of mode '${body.mode}'`);
    const drift = this.baselineDrift(req.baseline);
    const findings = drift.report.findings;
    const serious = findings.filter((f) => ['medium', 'high', 'critical'].includes(f.severity)).length;
    body.report.sections.push({
      topic: 'drift',
      summary: findings.length === 0 ? `No configuration drift since the baseline ${req.baseline}` : `${findings.length} drift finding(s) since the baseline ${req.baseline} (${serious} medium or worse)`,
      details: findings.map((f) => `[${f.severity}] ${f.dimension}: ${f.message}`),
    });
    return body;
  }

  auditDecisions(req: ProgramRequest) {
    const file = resolveRequestFile(this.workspace, req.file, 'trace');
    const result = auditDecisions(loadTrace(file), { source: file, explain: req.explain === true });
    return { version: VERSION, file, report: result.report, decision_count: result.decision_count, explanation: result.explanation };
  }

  traces(query: ProgramQuery) {
    const ws = this.workspace;
    const root = ws.config ? ws.projectRoot : ws.programPath ? path.dirname(ws.programPath) : ws.confineToRoot ? ws.projectRoot : ws.cwd;
    const limit = Math.min(200, Math.max(1, query.limit ?? 50));
    return { version: VERSION, ...listTraces(root, limit) };
  }

  /** The `.sd` files the other operations' `file` may name (docs/programs.md § Program files); same root as traces. */
  programFiles(query: ProgramQuery) {
    const ws = this.workspace;
    const root = ws.config ? ws.projectRoot : ws.programPath ? path.dirname(ws.programPath) : ws.confineToRoot ? ws.projectRoot : ws.cwd;
    return { version: VERSION, ...listProgramFiles(root, { stateDir: ws.stateDir, served: ws.programPath, limit: query.limit ?? null }) };
  }

  /**
   * What the entity registry reads of the `--program`: robots with their sensors, actuators and
   * missions, and the mission plans. A program that no longer parses contributes nothing rather
   * than breaking the registry; the program routes report its error.
   */
  programFacts(): ProgramFacts | null {
    const file = this.workspace.programPath;
    if (!file) return null;
    let program;
    try {
      program = loadProgram(file);
    } catch {
      return null;
    }
    return {
      // Shown as the entities' source over the API: relative to the project (docs/security.md §5).
      file: projectRelative(this.workspace, file)!,
      robots: program.robots.map((r) => ({
        name: r.name,
        sensors: r.sensors.map((s) => ({ name: s.name, type: s.type, ...(s.driver ? { vendor: s.driver.vendor, model: s.driver.model } : {}) })),
        actuators: r.actuators.map((a) => ({ name: a.name, type: a.type })),
        missions: r.missions.map((m) => ({ name: m.name })),
      })),
      missionPlans: program.missionPlans.map((p) => ({ name: p.name })),
      killSwitches: [
        ...program.killSwitches.map((k) => ({ name: k.name, robot: null, actions: [...k.actions] })),
        ...program.robots.flatMap((r) => r.killSwitches.map((k) => ({ name: k.name, robot: r.name, actions: [...k.actions] }))),
      ],
      homeostasisMetrics: policyItems(program, 'homeostasis', 'metric'),
      attentionRules: policyItems(program, 'attention', 'rule'),
      decisionTrees: program.decisionTrees.map((t) => ({ name: t.name, layer: t.layer, rules: t.rules.map((r) => ({ condition: r.condition, actions: [...r.actions] })) })),
    };
  }

  private knowledgePath(): string {
    return path.join(this.workspace.stateDir, RECOVERY_KNOWLEDGE_FILE);
  }
}

/**
 * The item names (`metric X;` or `rule X;`) of a program's policies of one kind: `@policy(kind: "<kind>")`
 * declarations and the legacy `<kind>_policy` form, both kept as token text by the parser.
 */
function policyItems(program: Program, kind: string, item: string): string[] {
  const decls = [...program.policies.filter((p) => new RegExp(`\\bkind\\s*:\\s*"?${kind}"?\\s*\\)`).test(p.text)), ...program.generic.filter((g) => g.keyword === `${kind}_policy`)];
  const names = decls.flatMap((d) => [...d.text.matchAll(new RegExp(`\\b${item}\\s+([A-Za-z_][\\w.]*)\\s*;`, 'g'))].map((m) => m[1]!));
  return [...new Set(names)];
}
