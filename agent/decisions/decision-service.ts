import fs from 'node:fs';
import path from 'node:path';

import { API_VERSION } from '../../api/versions.js';
import { ApiError, badRequest, conflict, notFound } from '../core/errors.js';
import { resolveInsideProject } from '../project/project-paths.js';
import { relativeServerPaths } from '../programs/program-service.js';
import type { ProgramWorkspace } from '../programs/program-workspace.js';
import type { DecisionSettings } from '../settings/settings.js';
import type { JsonStore } from '../state/json-store.js';
import type { CacheSignatures, OfflinePolicyRecord } from './decision-program.js';
import { addPendingEscalation, ESCALATION_FILE, openEscalationStore, openMeshStore, type RaisedEscalation, type EscalationDoc, type EscalationGrant, type MeshDoc, type MeshVote } from './decision-stores.js';

type DecisionProgram = typeof import('./decision-program.js');
let programModule: Promise<DecisionProgram> | null = null;
/** The program language loads on the first decision request, like the program engine (agent/programs/program-service.ts). */
const lang = (): Promise<DecisionProgram> => (programModule ??= import('./decision-program.js'));

export { ESCALATION_FILE } from './decision-stores.js';
export const POLICY_CACHE_FILE = 'decision-policy-cache.json';
export const MESH_FILE = 'decision-mesh.json';

/** Layers from the most to the least authoritative (docs/program-language.md §25). */
const LAYER_PRECEDENCE = ['reflex', 'local_entity', 'group_fleet', 'control_center'];

export interface DecisionDeps {
  workspace: () => ProgramWorkspace;
  stateDir: string;
  settings: DecisionSettings;
  /** Loads the registry's program facts before `entity` is asked (services.programs.prepareFacts). */
  prepareEntities: () => Promise<void>;
  entity: (id: string) => { trust_status: string | null; metadata: Record<string, string> } | null;
  fetch?: typeof fetch;
}

interface PolicyCacheDoc {
  version: number;
  policies: Record<string, OfflinePolicyRecord>;
  decision_trees: Record<string, { signature?: string | null }>;
  updated_at_ms: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isWithin(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Distributed decisions (docs/decisions.md): program extraction and simulation, decision frames of
 * traces, the signed policy cache, the escalation store and the fleet decision mesh. No transport.
 */
export class DecisionService {
  private constructor(
    private readonly deps: DecisionDeps,
    private readonly escalations: JsonStore<EscalationDoc>,
    private readonly mesh: JsonStore<MeshDoc>,
  ) {}

  static async open(deps: DecisionDeps): Promise<DecisionService> {
    const escalations = await openEscalationStore(deps.settings.escalationStore ?? path.join(deps.stateDir, ESCALATION_FILE));
    const mesh = await openMeshStore(path.join(deps.stateDir, MESH_FILE));
    return new DecisionService(deps, escalations, mesh);
  }

  async flush(): Promise<void> {
    await Promise.all([this.escalations.flush(), this.mesh.flush()]);
  }

  /** Remote callers see project-relative paths, and the state directory by its relative name (docs/security.md §5). */
  private shown<T>(value: T): T {
    return relativeServerPaths(value, { stateDir: this.deps.stateDir, projectRoot: this.deps.workspace().projectRoot }) as T;
  }

  /**
   * The escalation store as program runs see it (docs/decisions.md § Escalations): whether an id is
   * granted, and the pending escalations a run registers. The programs service holds it (set when this
   * module opens); writes go through the store's commit barrier like every other change.
   */
  escalationPort() {
    return {
      isGranted: (id: string) => Boolean(this.escalations.data.granted[id]),
      registerPending: (e: RaisedEscalation) => {
        addPendingEscalation(this.escalations, e, this.now());
      },
      commit: () => this.escalations.commit(),
    };
  }

  private now(): number {
    return this.deps.settings.simTimeMs ?? Date.now();
  }

  private async program(file: string | undefined) {
    const l = await lang();
    const resolved = l.resolveRequestFile(this.deps.workspace(), file, 'program');
    return { l, program: l.loadProgram(resolved) };
  }

  // ---------------------------------------------------------------------------------------------
  // Program extraction

  async list(query: { file?: string | undefined }) {
    const { l, program } = await this.program(query.file);
    const sig = this.signatures();
    return { api_version: API_VERSION, authorities: l.authorities(program), decision_trees: l.trees(program, sig), offline_policies: l.offlinePolicies(program, sig) };
  }

  async policies(query: { file?: string | undefined }) {
    const { l, program } = await this.program(query.file);
    const sig = this.signatures();
    return { api_version: API_VERSION, offline_policies: l.offlinePolicies(program, sig), decision_trees: l.trees(program, sig) };
  }

  async simulate(body: Parameters<DecisionProgram['simulate']>[1] & { file?: string | undefined }) {
    const { l, program } = await this.program(body.file);
    await this.deps.prepareEntities();
    const simulation = l.simulate(program, body, {
      nowMs: this.now(),
      trustKey: this.deps.settings.policyTrustKey,
      requireSignedTrees: this.deps.settings.requireSignedTrees,
      signatures: this.signatures(),
      entity: this.deps.entity,
    });
    if (!simulation) throw badRequest('the program declares no robot; set entity_id');
    return { api_version: API_VERSION, simulation };
  }

  // ---------------------------------------------------------------------------------------------
  // Decision frames of a trace

  async traces(query: { trace?: string | undefined; file?: string | undefined }) {
    const l = await lang();
    const ws = this.deps.workspace();
    let requested: string;
    let resolved: string;
    if (query.trace) {
      requested = query.trace;
      resolved = this.resolveTrace(ws, requested);
    } else {
      const program = query.file ? query.file : ws.programPath;
      if (!program) throw badRequest('no trace file specified (set trace or file, or start with --program)');
      requested = program.replace(/\.[^./\\]*$/, '') + '.trace';
      resolved = this.resolveTrace(ws, requested);
    }
    const trace = l.loadTrace(resolved);
    const frames = trace.frames
      .filter((f) => isRecord(f.payload) && f.payload['version'] === 3)
      .map((f) => ({ sim_time_ms: f.sim_time_ms, event: f.event, payload: f.payload }));
    const root = path.resolve(ws.projectRoot);
    const shown = isWithin(root, resolved) ? path.relative(root, resolved) : requested;
    return { api_version: API_VERSION, trace: shown, count: frames.length, frames };
  }

  /** A `.trace` regular file: relative paths against the project root, then the state directory; absolute ones inside either. */
  private resolveTrace(ws: ProgramWorkspace, requested: string): string {
    if (!requested.toLowerCase().endsWith('.trace')) throw badRequest(`not a .trace file: ${requested}`);
    const candidates: string[] = [];
    for (const base of [ws.projectRoot, this.deps.stateDir]) {
      try {
        candidates.push(resolveInsideProject(base, requested));
      } catch {
        /* outside this base */
      }
    }
    if (candidates.length === 0) throw badRequest(`path escapes the project root: ${requested}`);
    const hit = candidates.find((c) => {
      try {
        return fs.statSync(c).isFile();
      } catch {
        return false;
      }
    });
    if (!hit) throw notFound(this.shown(`trace not found: ${requested}`));
    return hit;
  }

  // ---------------------------------------------------------------------------------------------
  // Signed offline-policy cache

  private cacheFile(): string {
    return this.deps.settings.policyCache ?? path.join(this.deps.stateDir, POLICY_CACHE_FILE);
  }

  private readCache(file: string): PolicyCacheDoc {
    const empty: PolicyCacheDoc = { version: 1, policies: {}, decision_trees: {}, updated_at_ms: 0 };
    let raw: unknown;
    try {
      if (!fs.statSync(file).isFile()) return empty;
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      return empty;
    }
    if (!isRecord(raw)) return empty;
    const policies: Record<string, OfflinePolicyRecord> = {};
    if (isRecord(raw['policies'])) {
      for (const [name, p] of Object.entries(raw['policies'])) {
        if (!isRecord(p)) continue;
        const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
        policies[name] = {
          name: typeof p['name'] === 'string' ? p['name'] : name,
          max_duration_minutes: typeof p['max_duration_minutes'] === 'number' ? p['max_duration_minutes'] : null,
          allowed_actions: list(p['allowed_actions']),
          forbidden_actions: list(p['forbidden_actions']),
          policy_version: typeof p['policy_version'] === 'string' ? p['policy_version'] : '1.0.0',
          signature: typeof p['signature'] === 'string' ? p['signature'] : null,
          expires_at_ms: typeof p['expires_at_ms'] === 'number' ? p['expires_at_ms'] : null,
        };
      }
    }
    const trees = isRecord(raw['decision_trees']) ? (raw['decision_trees'] as Record<string, { signature?: string | null }>) : {};
    return { version: typeof raw['version'] === 'number' ? raw['version'] : 1, policies, decision_trees: trees, updated_at_ms: typeof raw['updated_at_ms'] === 'number' ? raw['updated_at_ms'] : 0 };
  }

  /** Signatures of the configured cache, by tree and policy name. */
  private signatures(): CacheSignatures {
    const doc = this.readCache(this.cacheFile());
    const trees: Record<string, string> = {};
    for (const [name, t] of Object.entries(doc.decision_trees)) if (isRecord(t) && typeof t['signature'] === 'string') trees[name] = t['signature'];
    const policies: Record<string, string> = {};
    for (const [name, p] of Object.entries(doc.policies)) if (p.signature) policies[name] = p.signature;
    return { trees, policies };
  }

  async policyCache(query: { cache?: string | undefined }) {
    const l = await lang();
    const configured = path.resolve(this.cacheFile());
    let file = configured;
    if (query.cache) {
      file = path.resolve(this.deps.workspace().projectRoot, query.cache);
      if (!file.toLowerCase().endsWith('.json')) throw badRequest(`not a .json file: ${query.cache}`);
      // The state directory holds keys and secrets: only the configured cache may be read from there.
      if (file !== configured && isWithin(path.resolve(this.deps.stateDir), file)) throw badRequest(`path is inside the agent's state directory: ${query.cache}`);
    }
    const doc = this.readCache(file);
    const now = this.now();
    const key = this.deps.settings.policyTrustKey;
    const policies: Record<string, OfflinePolicyRecord & { signature_valid: boolean | null; expired: boolean }> = {};
    for (const [name, p] of Object.entries(doc.policies)) {
      policies[name] = {
        ...p,
        signature_valid: key && p.signature ? l.signatureMatches(key, l.canonicalPolicyText(p), p.signature) : null,
        expired: p.expires_at_ms !== null && p.expires_at_ms <= now,
      };
    }
    return { api_version: API_VERSION, cache_path: this.shown(file), policy_count: Object.keys(policies).length, updated_at_ms: doc.updated_at_ms, policies };
  }

  // ---------------------------------------------------------------------------------------------
  // Escalations

  listEscalations() {
    const d = this.escalations.data;
    return {
      api_version: API_VERSION,
      pending: Object.values(d.pending).sort((a, b) => a.created_at_ms - b.created_at_ms || a.escalation_id.localeCompare(b.escalation_id)),
      granted: Object.values(d.granted).sort((a, b) => a.approved_at_ms - b.approved_at_ms || a.escalation_id.localeCompare(b.escalation_id)),
      updated_at_ms: d.updated_at_ms,
    };
  }

  /**
   * Grants an escalation: a pending one (direct:false), or one the loaded program can raise that the
   * robot has not asked for yet (direct:true). Anything else is 404; a second grant 409.
   */
  async escalate(body: { escalation_id: string; approver: string; entity_id?: string | undefined }, keyId: string | null) {
    const id = body.escalation_id;
    if (this.escalations.data.granted[id]) throw conflict(`escalation '${id}' is already granted`);
    const pending = this.escalations.data.pending[id];
    let source: { entity_id: string; reason: string } | undefined = pending;
    if (!source) {
      const ws = this.deps.workspace();
      if (ws.programPath) {
        const { l, program } = await this.program(undefined);
        source = l.raisableEscalations(program).get(id);
      }
    }
    if (!source || (body.entity_id && body.entity_id !== source.entity_id)) throw notFound(`escalation '${id}' not found`);
    const now = this.now();
    const grant: EscalationGrant = {
      escalation_id: id,
      entity_id: source.entity_id,
      approver: body.approver,
      approved_by_key_id: keyId,
      approved_at_ms: now,
      reason: source.reason,
      direct: !pending,
    };
    this.escalations.change((d) => {
      delete d.pending[id];
      d.granted[id] = grant;
      d.updated_at_ms = now;
    });
    await this.escalations.commit();
    return { api_version: API_VERSION, ok: true, grant };
  }

  // ---------------------------------------------------------------------------------------------
  // Fleet decision mesh

  private claimNonce(d: MeshDoc, nonce: string, entityId: string | null, via: 'register' | 'vote', now: number): void {
    if (d.nonces[nonce]) throw conflict(`nonce already used: ${nonce}`);
    d.nonces[nonce] = { entity_id: entityId, registered_at_ms: now, via };
  }

  async registerNonce(body: { nonce: string; entity_id?: string | undefined }) {
    const now = this.now();
    if (this.mesh.data.nonces[body.nonce]) throw conflict(`nonce already used: ${body.nonce}`);
    this.mesh.change((d) => {
      this.claimNonce(d, body.nonce, body.entity_id ?? null, 'register', now);
      d.updated_at_ms = now;
    });
    await this.mesh.commit();
    return { api_version: API_VERSION, ok: true, nonce: body.nonce, registered_at_ms: now, used_nonces: Object.keys(this.mesh.data.nonces).length };
  }

  async ingestVote(body: { round_id: string; entity_id: string; action: string; layer: string; nonce: string; reason?: string | undefined; fleet_name?: string | undefined; timestamp_ms?: number | undefined }, keyId: string | null) {
    const now = this.now();
    const d0 = this.mesh.data;
    if (d0.nonces[body.nonce]) throw conflict(`nonce already used: ${body.nonce}`);
    const existing = d0.rounds[body.round_id];
    if (existing?.votes.some((v) => v.entity_id === body.entity_id)) throw conflict(`entity '${body.entity_id}' already voted in round '${body.round_id}'`);
    if (existing && body.fleet_name && existing.fleet_name && existing.fleet_name !== body.fleet_name) {
      throw badRequest(`round '${body.round_id}' belongs to fleet '${existing.fleet_name}'`);
    }
    const vote: MeshVote = {
      round_id: body.round_id,
      entity_id: body.entity_id,
      action: body.action,
      layer: body.layer,
      nonce: body.nonce,
      reason: body.reason ?? null,
      timestamp_ms: body.timestamp_ms ?? now,
      received_at_ms: now,
      recorded_by_key_id: keyId,
    };
    this.mesh.change((d) => {
      this.claimNonce(d, body.nonce, body.entity_id, 'vote', now);
      const round = (d.rounds[body.round_id] ??= { round_id: body.round_id, fleet_name: body.fleet_name ?? null, created_at_ms: now, votes: [] });
      if (!round.fleet_name && body.fleet_name) round.fleet_name = body.fleet_name;
      round.votes.push(vote);
      d.updated_at_ms = now;
    });
    await this.mesh.commit();
    return { api_version: API_VERSION, ok: true, vote, round: { round_id: body.round_id, vote_count: this.mesh.data.rounds[body.round_id]!.votes.length } };
  }

  nonceStatus() {
    const d = this.mesh.data;
    const entries = Object.entries(d.nonces).sort((a, b) => b[1].registered_at_ms - a[1].registered_at_ms);
    return {
      api_version: API_VERSION,
      ok: true,
      used_nonces: entries.length,
      last_nonce: entries[0] ? { nonce: entries[0][0], ...entries[0][1] } : null,
      rounds: Object.keys(d.rounds).length,
      updated_at_ms: d.updated_at_ms,
    };
  }

  /** The winner of a round by layer precedence (reflex first), then the earliest decision; the rest rejected. */
  conflicts(query: { round?: string | undefined }) {
    if (!query.round) throw badRequest('round query parameter required');
    const round = this.mesh.data.rounds[query.round];
    if (!round) throw notFound(`round '${query.round}' not found`);
    const rank = (v: MeshVote) => {
      const i = LAYER_PRECEDENCE.indexOf(v.layer);
      return i < 0 ? LAYER_PRECEDENCE.length : i;
    };
    const ordered = [...round.votes].sort((a, b) => rank(a) - rank(b) || a.timestamp_ms - b.timestamp_ms || a.entity_id.localeCompare(b.entity_id));
    const winner = ordered[0]!;
    const distinct = new Set(round.votes.map((v) => v.action)).size > 1;
    const rejected = ordered.slice(1).map((v) => ({
      layer_precedence: v.layer,
      entity_id: v.entity_id,
      action: v.action,
      reason: v.action === winner.action ? 'agrees with the winner' : rank(v) > rank(winner) ? `lower precedence than ${winner.layer}` : 'later decision at the same layer',
    }));
    return {
      api_version: API_VERSION,
      conflict: {
        ok: true,
        round_id: round.round_id,
        fleet_name: round.fleet_name,
        vote_count: round.votes.length,
        conflicting: distinct,
        resolution: {
          winner: { layer_precedence: winner.layer, entity_id: winner.entity_id, action: winner.action, reason: winner.reason ?? `highest layer precedence (${winner.layer})` },
          rejected,
          precedence_applied: distinct && rank(ordered[ordered.length - 1]!) !== rank(winner),
        },
      },
    };
  }

  // ---- the mesh routes: proxy when SVC_FLEET_MESH_URL is set, else this agent's own state

  private async upstream(pathAndQuery: string): Promise<{ status: number; text: string }> {
    const url = this.deps.settings.fleetMeshUrl!;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.deps.settings.fleetMeshToken) headers['authorization'] = `Bearer ${this.deps.settings.fleetMeshToken}`;
    try {
      const res = await (this.deps.fetch ?? fetch)(`${url}${pathAndQuery}`, { headers, signal: AbortSignal.timeout(5000) });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      throw new ApiError(502, 'upstream_error', `fleet decision mesh unreachable: ${cause ?? (err as Error).message}`, { api_version: API_VERSION, configured: true, mesh_url: url });
    }
  }

  async meshStatus() {
    const url = this.deps.settings.fleetMeshUrl;
    if (!url) {
      return { api_version: API_VERSION, configured: false, mesh_url: null, hint: 'Set SVC_FLEET_MESH_URL to enable fleet decision mesh proxy', local: this.nonceStatus() };
    }
    const parse = (r: { status: number; text: string }, required: boolean) => {
      if (required && (r.status < 200 || r.status >= 300)) throw new ApiError(502, 'upstream_error', `fleet decision mesh HTTP ${r.status}: ${r.text.slice(0, 500)}`, { api_version: API_VERSION, configured: true, mesh_url: url });
      try {
        return JSON.parse(r.text) as unknown;
      } catch {
        return { raw: r.text };
      }
    };
    const [nonce, status] = await Promise.all([this.upstream('/v1/fleet/decisions/nonce/status'), this.upstream('/v1/status')]);
    return { api_version: API_VERSION, configured: true, mesh: { ok: true, mesh_url: url, nonce: parse(nonce, true), mesh_status: parse(status, false) } };
  }

  async meshConflicts(query: { round?: string | undefined }) {
    if (!query.round) throw badRequest('round query parameter required');
    const url = this.deps.settings.fleetMeshUrl;
    if (!url) return { ...this.conflicts(query), configured: false, source: 'local' };
    const r = await this.upstream(`/v1/fleet/decisions/conflicts?round=${encodeURIComponent(query.round)}`);
    if (r.status < 200 || r.status >= 300) {
      throw new ApiError(502, 'upstream_error', `fleet decision conflict HTTP ${r.status}: ${r.text.slice(0, 500)}`, { api_version: API_VERSION, configured: true, mesh_url: url });
    }
    let body: unknown;
    try {
      body = JSON.parse(r.text);
    } catch (err) {
      throw new ApiError(502, 'upstream_error', `invalid fleet decision conflict JSON: ${(err as Error).message}`, { api_version: API_VERSION, configured: true, mesh_url: url });
    }
    const conflict = isRecord(body) && isRecord(body['conflict']) ? body['conflict'] : body;
    return { api_version: API_VERSION, configured: true, source: url, conflict };
  }
}
