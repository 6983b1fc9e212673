/**
 * Mission twins (docs/twins.md): snapshots of a program's mission-twin report per twin id, stamped
 * with the instance tenant. A twin stored under another tenant is never shown (403 on get and
 * history) and never overwritten (403 on every write). Snapshots come from the loaded program
 * (sync), a program or a recorded trace inside the project root (import-replay), or a remote site
 * (push). Usage counters are per process, as the usage route documents.
 */
import fs from 'node:fs';
import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import { ApiError, badRequest, notFound, tenantMismatch } from '../core/errors.js';
import type { ProjectContext } from '../project/project-context.js';
import { projectRelative } from '../project/project-context.js';
import { resolveInsideProject } from '../project/project-paths.js';
import { loadProgram, loadTrace, NO_PROGRAM_MESSAGE as NO_PROGRAM, refuseStateDir } from '../programs/program-files.js';
import type { TraceFile } from '../programs/runtime/trace-file.js';
import type { SreService } from '../sre/sre-service.js';
import type { JsonStore } from '../state/json-store.js';
import { missionTwin } from '../analytics/analyses.js';
import { RECOVERY_KNOWLEDGE_FILE } from '../programs/program-engine.js';
import { replaySummary } from './replay-summary.js';
import { TWIN_HISTORY_MAX, type TwinFile, type TwinSnapshot } from './twin-store.js';

export { NO_PROGRAM };

export interface TwinDeps {
  store: JsonStore<TwinFile>;
  project: ProjectContext;
  stateDir: string;
  tenantId: string;
  sre: Pick<SreService, 'readinessTrends'>;
  now?: () => number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `patrol.sd` → `patrol`, `Mission.Alpha.sd` → `mission-alpha`. */
export function defaultTwinId(file: string): string {
  const base = path.basename(file.replace(/\\/g, '/'));
  const stem = base.includes('.') ? base.slice(0, base.lastIndexOf('.')) : base;
  return stem.toLowerCase().replace(/\./g, '-');
}

/** A twin id a caller chose: non-empty, routable (no `/`), printable. */
function checkTwinId(id: string): string {
  if (id === '' || id.length > 128 || id.includes('/') || /[\u0000-\u001f\u007f]/.test(id)) throw badRequest(`invalid twin id '${id}'`);
  return id;
}

export class TwinService {
  private readonly now: () => number;
  private readonly counters = { push: 0, sync: 0, history: 0 };

  constructor(private readonly deps: TwinDeps) {
    this.now = deps.now ?? Date.now;
  }

  private latest(id: string): TwinSnapshot | undefined {
    return this.deps.store.data.latest.find((s) => s.twin_id === id);
  }

  private ours(): TwinSnapshot[] {
    return this.deps.store.data.latest.filter((s) => s.tenant_id === this.deps.tenantId);
  }

  private ringLength(id: string): number {
    return this.deps.store.data.history[id]?.length ?? 0;
  }

  list() {
    const twins = this.ours()
      .sort((a, b) => (a.twin_id < b.twin_id ? -1 : a.twin_id > b.twin_id ? 1 : 0))
      .map((s) => ({
        twin_id: s.twin_id,
        tenant_id: s.tenant_id,
        program: s.program,
        captured_at_ms: s.captured_at_ms,
        mission_ready: s.mission_twin.risks.mission_ready,
        readiness_score: s.mission_twin.risks.readiness_score,
        history_count: this.ringLength(s.twin_id),
      }));
    return { version: API_VERSION, twins };
  }

  usage() {
    const ours = this.ours();
    return {
      version: API_VERSION,
      tenant_id: this.deps.tenantId,
      twin_count: ours.length,
      snapshot_count: ours.reduce((n, s) => n + this.ringLength(s.twin_id), 0),
      push_count: this.counters.push,
      sync_count: this.counters.sync,
      history_count: this.counters.history,
    };
  }

  /** The latest snapshot of a twin this tenant may see: unknown → 404, another tenant's → 403, whoever asks. */
  private visible(id: string): TwinSnapshot {
    const s = this.latest(id);
    if (!s) throw notFound(`twin '${id}' not found`);
    if (s.tenant_id !== this.deps.tenantId) throw tenantMismatch();
    return s;
  }

  get(id: string) {
    return { ...this.visible(id) };
  }

  history(id: string) {
    this.visible(id);
    this.counters.history += 1;
    return { version: API_VERSION, twin_id: id, snapshots: [...(this.deps.store.data.history[id] ?? [])] };
  }

  /** Appends to the ring and replaces the latest; refuses (403) a twin id another tenant stored (D9). */
  private upsert(snapshot: TwinSnapshot): void {
    const existing = this.latest(snapshot.twin_id);
    if (existing && existing.tenant_id !== this.deps.tenantId) throw tenantMismatch();
    this.deps.store.change((data) => {
      data.latest = [...data.latest.filter((s) => s.twin_id !== snapshot.twin_id), snapshot];
      const ring = [...(data.history[snapshot.twin_id] ?? []), snapshot];
      data.history[snapshot.twin_id] = ring.slice(Math.max(0, ring.length - TWIN_HISTORY_MAX));
    });
  }

  /** A path a caller named, inside the project root and outside the state directory, that is a readable file. */
  private projectFile(requested: string, what: 'program' | 'trace'): string {
    const fail = (why: string) => badRequest(`read ${what} failed: ${why}`);
    let resolved: string;
    try {
      resolved = resolveInsideProject(this.deps.project.projectRoot, requested);
      refuseStateDir({ stateDir: this.deps.stateDir }, resolved, requested);
    } catch (err) {
      if (err instanceof ApiError) throw fail(err.message.startsWith('path escapes') ? 'outside project root' : err.message);
      throw err;
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(resolved);
    } catch (err) {
      throw fail(`${requested}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
    }
    if (!stat.isFile()) throw fail(`${requested}: not a file`);
    return resolved;
  }

  private readTrace(requested: string): { file: string; trace: TraceFile } {
    const file = this.projectFile(requested, 'trace');
    if (!file.toLowerCase().endsWith('.trace')) throw badRequest(`read trace failed: not a .trace file: ${requested}`);
    return { file, trace: loadTrace(file) };
  }

  /** The program a trace was recorded from (its `source`, relative to the trace's directory), held to the same root. */
  private traceProgram(traceFile: string, trace: TraceFile, requested: string): string {
    if (trace.source === '') throw badRequest(`read program failed: trace ${requested} names no program`);
    const candidate = path.resolve(path.dirname(traceFile), trace.source);
    return this.projectFile(path.relative(this.deps.project.projectRoot, candidate) || candidate, 'program');
  }

  private snapshot(twinId: string, label: string, programFile: string, trace: { file: string; trace: TraceFile } | null): TwinSnapshot {
    let program;
    try {
      program = loadProgram(programFile);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw badRequest(`read program failed: ${(err as Error).message}`);
    }
    // The same mission-twin computation as GET /v1/analytics/mission-twin (agent/analytics), over the
    // recorded readiness history of this program's file name, plus what a recorded run did.
    const historyLabel = path.basename(programFile);
    const input = {
      program,
      label,
      file: programFile,
      config: this.deps.project.config,
      projectRoot: this.deps.project.projectRoot,
      stateDir: this.deps.stateDir,
      knowledgePath: path.join(this.deps.stateDir, RECOVERY_KNOWLEDGE_FILE),
    };
    const trends = (horizonDays: number) => this.deps.sre.readinessTrends({ horizonDays, minimumScore: 80, label: historyLabel });
    const report = {
      ...missionTwin(input, trends),
      ...(trace ? { replay: replaySummary(projectRelative(this.deps.project, trace.file)!, trace.trace) } : {}),
    };
    return { version: API_VERSION, twin_id: twinId, tenant_id: this.deps.tenantId, program: label, captured_at_ms: this.now(), mission_twin: report };
  }

  /** Snapshot of the loaded program (optionally with a recorded run of it). */
  sync(query: { twin_id?: string | undefined; trace?: string | undefined }) {
    const file = this.deps.project.programPath;
    if (!file) throw badRequest(NO_PROGRAM);
    const label = path.basename(file);
    const twinId = query.twin_id ? checkTwinId(query.twin_id) : defaultTwinId(label);
    const trace = query.trace ? this.readTrace(query.trace) : null;
    const snap = this.snapshot(twinId, label, file, trace);
    this.upsert(snap);
    this.counters.sync += 1;
    return { version: API_VERSION, twin_id: twinId, captured_at_ms: snap.captured_at_ms, snapshot: snap };
  }

  /**
   * Snapshot of a program named by path, or of the run a trace recorded: a `.trace` path is read
   * and its program is the trace's `source`; `trace` adds a run to a named program.
   */
  importReplay(body: { program?: string | undefined; source?: string | undefined; trace?: string | undefined; twin_id?: string | undefined }) {
    const requested = body.program || body.source;
    if (!requested) throw badRequest('replay JSON must include program or source path');
    let programFile: string;
    let label: string;
    let trace: { file: string; trace: TraceFile } | null = null;
    if (requested.toLowerCase().endsWith('.trace')) {
      trace = this.readTrace(requested);
      programFile = this.traceProgram(trace.file, trace.trace, requested);
      label = projectRelative(this.deps.project, programFile)!;
    } else {
      programFile = this.projectFile(requested, 'program');
      // As given when relative; an absolute path inside the project is shown relative to it (never where the project sits).
      label = projectRelative(this.deps.project, programFile)!;
      if (body.trace) trace = this.readTrace(body.trace);
    }
    const twinId = body.twin_id ? checkTwinId(body.twin_id) : defaultTwinId(label);
    const snap = this.snapshot(twinId, label, programFile, trace);
    this.upsert(snap);
    this.counters.push += 1;
    return { ok: true, legacy: 'SVC_CLOUD_UPLOAD_URL', twin_id: twinId, snapshot: snap };
  }

  /** A snapshot a remote site pushed: checked field by field, tenant always ours. */
  push(id: string, body: Record<string, unknown>) {
    // A path id with an (encoded) slash is no twin route, as for reads.
    if (id.includes('/')) throw notFound();
    const twinId = checkTwinId(id);
    const invalid = (field: string) => badRequest(`invalid snapshot JSON: ${field}`);
    if (body['twin_id'] !== undefined && body['twin_id'] !== null && body['twin_id'] !== '') {
      if (typeof body['twin_id'] !== 'string') throw invalid('twin_id');
      if (body['twin_id'] !== twinId) throw badRequest('snapshot twin_id must match path');
    }
    if (typeof body['program'] !== 'string') throw invalid('program');
    const mt = body['mission_twin'];
    if (!isObject(mt)) throw invalid('mission_twin');
    const risks = mt['risks'];
    if (!isObject(risks)) throw invalid('mission_twin.risks');
    if (typeof risks['mission_ready'] !== 'boolean') throw invalid('mission_twin.risks.mission_ready');
    if (!Number.isInteger(risks['readiness_score'])) throw invalid('mission_twin.risks.readiness_score');
    const version = body['version'] ?? API_VERSION;
    if (typeof version !== 'string') throw invalid('version');
    const at = body['captured_at_ms'] ?? this.now();
    if (!Number.isSafeInteger(at) || (at as number) < 0) throw invalid('captured_at_ms');
    const snap: TwinSnapshot = {
      version,
      twin_id: twinId,
      tenant_id: this.deps.tenantId,
      program: body['program'],
      captured_at_ms: at as number,
      mission_twin: mt as TwinSnapshot['mission_twin'],
    };
    this.upsert(snap);
    this.counters.push += 1;
    return { version: API_VERSION, twin_id: twinId, captured_at_ms: snap.captured_at_ms, snapshot: snap };
  }

  close(): Promise<void> {
    return this.deps.store.close();
  }
}
