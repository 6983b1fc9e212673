import path from 'node:path';
import type { ProgramQuery, ProgramRequest } from './program-request.js';
import type { ProgramWorkspace, WorkspaceEscalations } from './program-workspace.js';
import { EscalationFile } from './escalation-file.js';
import type { ProgramEngine } from './program-engine.js';
import type { ProgramFacts } from '../entities/program-facts.js';

type EngineMethod = {
  [K in keyof ProgramEngine]: ProgramEngine[K] extends (input: infer I) => unknown ? K : never;
}[keyof ProgramEngine];

let engineModule: Promise<typeof import('./program-engine.js')> | null = null;

/**
 * The program operations' entry point for every transport. The parser, analyses and simulator are
 * a large share of the agent's code; they load on the first program request (a separate bundle
 * chunk), which keeps them off the agent's cold start and idle memory.
 */
export class ProgramService {
  private engine: ProgramEngine | null = null;
  private readonly traceListeners = new Set<(tracePath: string) => void>();

  constructor(readonly workspace: ProgramWorkspace) {
    // The CLI names no escalation store: it uses the file of its settings, the agent's own store file.
    if (workspace.escalations === undefined) {
      workspace.escalations = EscalationFile.forSettings(workspace.stateDir, workspace.decisions.escalationStore, workspace.decisions.simTimeMs);
    }
  }

  /** The agent's escalation store, set by the decisions module when it opens (modules open in order). */
  setEscalations(port: WorkspaceEscalations | null): void {
    this.workspace.escalations = port;
  }

  /**
   * Called with the absolute path of every trace file a simulation of this process records
   * (`record_trace`), right after it is written: the autonomy memory indexes traces then.
   */
  onTraceRecorded(listener: (tracePath: string) => void): () => void {
    this.traceListeners.add(listener);
    return () => this.traceListeners.delete(listener);
  }

  async run<K extends EngineMethod>(method: K, input: ProgramRequest & ProgramQuery): Promise<ReturnType<ProgramEngine[K]>> {
    const engine = await this.load();
    const result = (engine[method] as (i: unknown) => ReturnType<ProgramEngine[K]>).call(engine, input);
    const simulation = (result as { simulation?: { trace_path?: unknown; escalations_registered?: unknown } } | null)?.simulation;
    // Registered escalations are on disk before the answer (the kernel's barrier covers the agent's
    // store too; the CLI has no kernel).
    if (simulation?.escalations_registered === true) await this.workspace.escalations?.commit();
    const recorded = simulation?.trace_path;
    if (typeof recorded === 'string') {
      const tracePath = path.resolve(this.workspace.cwd, recorded);
      for (const l of this.traceListeners) {
        try {
          l(tracePath);
        } catch {
          /* a listener's failure never fails the simulation */
        }
      }
    }
    // Remote callers (the server confines them to the project root) see project-relative paths only:
    // programs and traces relative to the project root, and the state directory (recovery knowledge
    // store, baselines) relative to it too, or as `<state dir>` when it lies elsewhere; where the
    // project sits on the robot's disk is nobody's business (docs/security.md §5, "Program files").
    // The CLI runs as the local user and keeps absolute paths.
    return this.workspace.confineToRoot ? (relativeServerPaths(result, this.workspace) as typeof result) : result;
  }

  private async load(): Promise<ProgramEngine> {
    if (!this.engine) {
      engineModule ??= import('./program-engine.js');
      const { ProgramEngine } = await engineModule;
      this.engine ??= new ProgramEngine(this.workspace);
    }
    return this.engine;
  }

  /**
   * Loads the engine when the server has a `--program`, so `programFacts()` can answer. Callers that
   * need the facts (the entity registry's operations) await this first; it is a no-op afterwards.
   */
  async prepareFacts(): Promise<void> {
    if (this.workspace.programPath && !this.engine) await this.load();
  }

  /** Robots, sensors, actuators and missions of the server's `--program` (null without one). */
  programFacts(): ProgramFacts | null {
    return this.engine?.programFacts() ?? null;
  }
}

/**
 * Rewrites absolute paths in every string of a response: the state directory first (it may lie inside
 * the project), then anything under the project root, which becomes relative to it.
 */
export function relativeServerPaths(value: unknown, ws: Pick<ProgramWorkspace, 'stateDir' | 'projectRoot'>): unknown {
  const abs = path.resolve(ws.stateDir);
  const root = path.resolve(ws.projectRoot);
  const rel = path.relative(root, abs);
  const shown = rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : '<state dir>';
  const rootPrefix = root.endsWith(path.sep) ? root : root + path.sep;
  const rewrite = (text: string): string => {
    let out = text.includes(abs) ? text.split(abs).join(shown) : text;
    if (out.includes(rootPrefix)) out = out.split(rootPrefix).join('');
    return out === root ? '.' : out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return rewrite(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return walk(value);
}
