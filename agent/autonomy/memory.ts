import fs from 'node:fs';
import path from 'node:path';
import type { RegistryView } from '../entities/entity-service.js';
import type { ProgramFacts } from '../entities/program-facts.js';
import type { Incident } from '../incidents/incidents.js';
import type { ReflexEntry } from './reflexes.js';
import type { EpisodicEntry, ReflexTrace } from './stores.js';
import { byId, cmp } from './order.js';

const MAX_TRACE_BYTES = 32 * 1024 * 1024;
const ROBOT_DECL = /^\s*robot\s+([A-Za-z_][\w-]*)\s*\{/m;

/**
 * The robot a trace describes: the first `robot Name {` of the program named by the trace's
 * `source` (resolved against the trace's directory), else the entity whose id is the file's stem,
 * else `platform`.
 */
export function traceOwner(tracePath: string, entityExists: (id: string) => boolean): { owner: string; frames: unknown } {
  const stem = path.basename(tracePath, '.trace');
  let frames: unknown = [];
  try {
    if (fs.statSync(tracePath).size <= MAX_TRACE_BYTES) {
      const trace = JSON.parse(fs.readFileSync(tracePath, 'utf8')) as { source?: unknown; frames?: unknown };
      frames = trace.frames;
      if (typeof trace.source === 'string' && trace.source !== '') {
        const program = path.resolve(path.dirname(tracePath), trace.source);
        const m = ROBOT_DECL.exec(fs.readFileSync(program, 'utf8'));
        if (m) return { owner: m[1]!, frames };
      }
    }
  } catch {
    /* unreadable trace or program: fall through to the file name */
  }
  return { owner: entityExists(stem) ? stem : 'platform', frames };
}

/** `*.trace` files under a root (symlinked directories are not followed), at most `limit`. */
export function findTraces(root: string, limit = 200): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (out.length >= limit) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => cmp(a.name, b.name))) {
      if (out.length >= limit) return;
      const full = path.join(dir, e.name);
      if (e.isDirectory() && e.name !== 'node_modules' && !e.name.startsWith('.')) walk(full);
      else if (e.name.endsWith('.trace') && (e.isFile() || e.isSymbolicLink())) out.push(full);
    }
  };
  walk(root);
  return out;
}

export interface MemoryInputs {
  view: RegistryView;
  facts: ProgramFacts | null;
  catalogue: readonly ReflexEntry[];
  traces: readonly ReflexTrace[];
  episodic: readonly EpisodicEntry[];
  /** `[[recovery.playbooks]]` of the configuration: name and entity kinds (empty = every kind). */
  playbooks: ReadonlyArray<{ name: string; entity_kinds: string[] }>;
}

const ROBOT_KINDS = new Set(['robot', 'drone', 'vehicle']);

function episodicRef(e: EpisodicEntry): string {
  if (e.artifact_kind === 'replay') return e.replay_path ? `replay:${e.replay_path}` : (e.trace_id ?? e.id);
  if (e.artifact_kind === 'incident') return `incident:${e.incident_id ?? e.id}`;
  return `recovery:${e.recovery_id ?? e.id}`;
}

/**
 * Memory (docs/autonomy.md § Memory): for every entity, the reflexes that guard it, its working
 * context, the episodes indexed for it (traces, incidents, recoveries, recorded when they happened),
 * its place in the graph and the procedures that apply to it. Pure: nothing is indexed here.
 */
export function memoryView(inp: MemoryInputs) {
  const { view, facts } = inp;
  const robots = new Set((facts?.robots ?? []).map((r) => r.name));
  const byCategory: Record<'reflex' | 'working' | 'episodic' | 'semantic' | 'procedural', Array<Record<string, unknown>>> = { reflex: [], working: [], episodic: [], semantic: [], procedural: [] };
  const memory: Array<Record<string, unknown>> = [];
  for (const e of [...view.graph.list()].sort(byId)) {
    const isRobot = ROBOT_KINDS.has(e.kind) || robots.has(e.id);
    const fired = new Set(inp.traces.filter((t) => t.entity_id === e.id || t.device_id === e.id).map((t) => t.reflex_id));
    const reflex = inp.catalogue
      .filter((r) => {
        if (fired.has(r.id)) return true;
        if (!isRobot) return false;
        if (r.source === 'builtin') return true;
        const k = facts?.killSwitches?.find((x) => `reflex.program.${x.name}` === r.id);
        return k ? k.robot === null || k.robot === e.id : true;
      })
      .map((r) => r.id);
    const working = [
      ...(e.metadata['mission_id'] ? [`mission:${e.metadata['mission_id']}`] : []),
      ...(e.metadata['fleet_id'] ? [`fleet:${e.metadata['fleet_id']}`] : []),
      ...(e.kind === 'mission' ? [`mission:${e.id}`] : []),
    ];
    const episodes = inp.episodic.filter((x) => x.entity_id === e.id);
    const episodic = episodes.map(episodicRef);
    const semantic = [`entity:${e.id}`, ...view.graph.relationshipsOf(e.id).map((r) => (r.from_id === e.id ? `${r.kind}->${r.to_id}` : `${r.kind}<-${r.from_id}`))];
    const procedural = [
      ...(isRobot ? (facts?.decisionTrees ?? []).map((t) => `decision_tree:${t.name}`) : []),
      ...(isRobot ? (facts?.killSwitches ?? []).filter((k) => k.robot === null || k.robot === e.id).map((k) => `kill_switch:${k.name}`) : []),
      ...inp.playbooks.filter((p) => p.entity_kinds.length === 0 || p.entity_kinds.includes(e.kind)).map((p) => `playbook:${p.name}`),
    ];
    const refs: Record<string, string[]> = {};
    for (const [k, v] of Object.entries({ reflex, working, episodic, semantic, procedural })) if (v.length > 0) refs[k] = v;
    memory.push({
      entity_id: e.id,
      kind: e.kind,
      refs,
      model: {
        reflex: { rules: reflex },
        working: { context_keys: working },
        episodic: { trace_ids: episodes.filter((x) => x.trace_id).map((x) => x.trace_id!) },
        semantic: { graph_refs: semantic },
        procedural: { playbook_ids: procedural },
      },
    });
    for (const r of reflex) byCategory.reflex.push({ entity_id: e.id, ref: r });
    for (const r of working) byCategory.working.push({ entity_id: e.id, ref: r });
    for (const x of episodes) byCategory.episodic.push({ entity_id: e.id, ref: x.replay_path ?? x.trace_id ?? episodicRef(x), artifact_kind: x.artifact_kind, timestamp: x.timestamp });
    for (const r of semantic) byCategory.semantic.push({ entity_id: e.id, ref: r });
    for (const r of procedural) byCategory.procedural.push({ entity_id: e.id, ref: r });
  }
  // Episodes of ids the registry does not hold (e.g. `platform`) stay visible in the category list.
  const known = new Set(view.graph.list().map((e) => e.id));
  for (const x of inp.episodic) if (!known.has(x.entity_id)) byCategory.episodic.push({ entity_id: x.entity_id, ref: x.replay_path ?? x.trace_id ?? episodicRef(x), artifact_kind: x.artifact_kind, timestamp: x.timestamp });
  return { entities_with_memory: memory.filter((m) => Object.keys(m['refs'] as object).length > 0).length, memory, by_category: byCategory, episodic_store: [...inp.episodic] };
}

export function incidentOwner(i: Incident, ids: readonly string[], names: (text: string, id: string) => boolean): string {
  const text = `${i.title} ${i.description}`;
  return [...ids].sort((a, b) => b.length - a.length).find((id) => names(text, id)) ?? 'platform';
}
