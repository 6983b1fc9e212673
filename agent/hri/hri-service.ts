/**
 * HRI sessions (docs/twins.md § HRI sessions): remote-expert sessions linking a field technician,
 * an expert, a robot and AR/camera devices. Configured sessions (`[[spatial_sessions]]`) are
 * read-only; started ones are persisted with their annotations (`control-center-hri-sessions.json`)
 * and survive a restart. A session's replay is what was recorded while it was active: its
 * annotations plus the telemetry and platform events of its robot, its devices and itself, read
 * from the telemetry store (whose ring is rebuilt from the on-disk history at start).
 */
import { API_VERSION } from '../../api/versions.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import { fleetOf } from '../project/devices.js';
import type { ProjectContext } from '../project/project-context.js';
import type { JsonStore } from '../state/json-store.js';
import type { TelemetryEvent } from '../telemetry/telemetry-events.js';
import type { TelemetryStore } from '../telemetry/telemetry-store.js';
import type { HriAnnotation, HriFile, StoredHriSession } from './hri-store.js';

export const NO_CONFIG = 'no resolved configuration loaded';
const NOT_ACTIVE = 'session not found or not active';
const DEFAULT_REPLAY_LIMIT = 500;

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);
const tables = (v: unknown): Table[] => (Array.isArray(v) ? v.filter(isTable) : []);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export interface HriDeps {
  store: JsonStore<HriFile>;
  project: ProjectContext;
  bus: EventBus;
  telemetry: TelemetryStore;
  now?: () => number;
}

export interface StartSessionBody {
  id?: string | undefined;
  session_type?: string | undefined;
  field_human_id?: string | undefined;
  expert_human_id?: string | undefined;
  robot_id?: string | undefined;
  ar_device_id?: string | undefined;
  camera_device_id?: string | undefined;
  capabilities?: string[] | undefined;
}

type SessionFields = Omit<StoredHriSession, 'annotations' | 'started_at_ms'>;

function configuredSession(t: Table): SessionFields | null {
  const id = str(t['id']);
  if (!id) return null;
  return {
    id,
    session_type: str(t['type']) ?? str(t['session_type']) ?? 'remote_expert',
    field_human_id: str(t['field_human_id']),
    expert_human_id: str(t['expert_human_id']),
    robot_id: str(t['robot_id']),
    ar_device_id: str(t['ar_device_id']),
    camera_device_id: str(t['camera_device_id']),
    capabilities: Array.isArray(t['capabilities']) ? t['capabilities'].filter((c): c is string => typeof c === 'string') : [],
  };
}

const replayUrl = (id: string) => `/v1/hri/sessions/${encodeURIComponent(id)}/replay`;
const entityOf = (id: string) => `hri-session/${id}`;

export class HriService {
  private readonly now: () => number;

  constructor(private readonly deps: HriDeps) {
    this.now = deps.now ?? Date.now;
  }

  private tree(): Table | null {
    return this.deps.project.config?.tree ?? null;
  }

  private needTree(): Table {
    const t = this.tree();
    if (!t) throw badRequest(NO_CONFIG);
    return t;
  }

  /** `[[spatial_sessions]]` in configuration order (the first of a repeated id wins). */
  private configured(): SessionFields[] {
    const out: SessionFields[] = [];
    for (const t of tables(this.tree()?.['spatial_sessions'])) {
      const s = configuredSession(t);
      if (s && !out.some((x) => x.id === s.id)) out.push(s);
    }
    return out;
  }

  private active(id: string): StoredHriSession | undefined {
    return this.deps.store.data.sessions.find((s) => s.id === id);
  }

  private record(s: SessionFields, active: StoredHriSession | null) {
    const base = active ?? s;
    return {
      id: base.id,
      session_type: base.session_type,
      field_human_id: base.field_human_id,
      expert_human_id: base.expert_human_id,
      robot_id: base.robot_id,
      ar_device_id: base.ar_device_id,
      camera_device_id: base.camera_device_id,
      status: active ? 'active' : 'configured',
      capabilities: [...base.capabilities],
      annotations: active ? active.annotations.map((a) => ({ ...a })) : [],
      replay_url: active ? replayUrl(base.id) : null,
      ...(active ? { started_at_ms: active.started_at_ms } : {}),
    };
  }

  list() {
    const configured = this.configured();
    const sessions = configured.map((c) => this.record(c, this.active(c.id) ?? null));
    const rest = this.deps.store.data.sessions.filter((s) => !configured.some((c) => c.id === s.id)).sort(byId);
    sessions.push(...rest.map((s) => this.record(s, s)));
    return { version: API_VERSION, sessions, count: sessions.length };
  }

  /** Starts a session: a configured id may be started (its configured fields are the defaults), an active one is a 409. */
  start(body: StartSessionBody) {
    const now = this.now();
    const id = body.id ?? `hri-session-${now}`;
    if (id.includes('/')) throw badRequest(`invalid session id '${id}'`);
    if (this.active(id)) throw conflict('session already active');
    const cfg = this.configured().find((c) => c.id === id);
    const pick = (v: string | undefined, d: string | null | undefined) => v ?? d ?? null;
    const session: StoredHriSession = {
      id,
      session_type: body.session_type ?? cfg?.session_type ?? 'remote_expert',
      field_human_id: pick(body.field_human_id, cfg?.field_human_id),
      expert_human_id: pick(body.expert_human_id, cfg?.expert_human_id),
      robot_id: pick(body.robot_id, cfg?.robot_id),
      ar_device_id: pick(body.ar_device_id, cfg?.ar_device_id),
      camera_device_id: pick(body.camera_device_id, cfg?.camera_device_id),
      capabilities: body.capabilities ?? cfg?.capabilities ?? [],
      annotations: [],
      started_at_ms: now,
    };
    this.deps.store.change((d) => {
      d.sessions = [...d.sessions.filter((s) => s.id !== id), session].sort(byId);
    });
    this.deps.bus.publish(
      platformEvent('HriSessionStarted', 'svc-hri', { session_id: id, session_type: session.session_type, robot_id: session.robot_id }, entityOf(id)),
    );
    return { version: API_VERSION, ok: true, session: this.record(session, session) };
  }

  annotate(id: string, body: { layer: string; text: string; author_human_id?: string | undefined }) {
    const active = this.active(id);
    if (!active) {
      if (this.configured().some((c) => c.id === id)) throw conflict(NOT_ACTIVE);
      throw notFound(NOT_ACTIVE);
    }
    const annotation: HriAnnotation = { layer: body.layer, text: body.text, author_human_id: body.author_human_id ?? null, created_at_ms: this.now() };
    const updated = this.deps.store.change((d) => {
      const s = d.sessions.find((x) => x.id === id)!;
      s.annotations.push(annotation);
      return s;
    });
    this.deps.bus.publish(
      platformEvent('HriAnnotationAdded', 'svc-hri', { session_id: id, layer: annotation.layer, author_human_id: annotation.author_human_id }, entityOf(id)),
    );
    return { version: API_VERSION, ok: true, session: this.record(updated, updated) };
  }

  /** Whether a recorded event belongs to the session: its own events, or its robot's and devices'. */
  private related(s: StoredHriSession): (e: TelemetryEvent) => boolean {
    const devices = new Set([s.ar_device_id, s.camera_device_id].filter((x): x is string => x !== null));
    const targets = new Set([...devices, ...(s.robot_id ? [s.robot_id] : [])]);
    const self = entityOf(s.id);
    return (e) => {
      switch (e.kind) {
        case 'device':
          return devices.has(e.device_id) || (s.robot_id !== null && e.robot_id === s.robot_id) || e.session_id === s.id;
        case 'device_heartbeat':
          return devices.has(e.device_id);
        case 'sensor':
          return devices.has(e.sensor_id);
        case 'health':
          return targets.has(e.target);
        case 'session':
        case 'runtime_metrics':
          return e.session_id === s.id;
        case 'platform':
          return (
            e.entity_id === self ||
            e.session_id === s.id ||
            (e.entity_id !== undefined && (targets.has(e.entity_id) || [...targets].some((t) => e.entity_id!.endsWith(`/${t}`))))
          );
        default:
          return false;
      }
    };
  }

  replay(id: string, query: { limit?: string | undefined }) {
    const active = this.active(id);
    if (!active) {
      if (!this.configured().some((c) => c.id === id)) throw notFound(`session '${id}' not found`);
      return { version: API_VERSION, session_id: id, replay_url: replayUrl(id), status: 'configured', annotation_count: 0 };
    }
    const limit = Math.max(1, Math.min(Number(query.limit ?? DEFAULT_REPLAY_LIMIT) || DEFAULT_REPLAY_LIMIT, 5000));
    const belongs = this.related(active);
    const events = this.deps.telemetry.ring
      .since(this.deps.telemetry.ring.oldestOffset)
      .filter(({ item }) => item.timestamp_ms >= active.started_at_ms && belongs(item))
      .map(({ offset, item }) => ({ offset, ...item }));
    const kept = events.slice(Math.max(0, events.length - limit));
    const annotations = [...active.annotations].sort((a, b) => a.created_at_ms - b.created_at_ms);
    return {
      version: API_VERSION,
      session_id: id,
      replay_url: replayUrl(id),
      annotation_count: annotations.length,
      status: 'active',
      started_at_ms: active.started_at_ms,
      annotations,
      event_count: kept.length,
      events_truncated: events.length - kept.length,
      events: kept,
    };
  }

  /** Humans of `[[humans]]`/`[[people]]` and `[fleet].humans`, first of a repeated id wins. */
  private humans(tree: Table): Table[] {
    const out: Table[] = [];
    for (const t of [...tables(tree['humans']), ...tables(tree['people']), ...tables(fleetOf(tree)?.['humans'])]) {
      const id = str(t['id']);
      if (id && !out.some((h) => h['id'] === id)) out.push(t);
    }
    return out;
  }

  collaboration() {
    const tree = this.needTree();
    const fleet = fleetOf(tree) ?? {};
    const nodes: Array<Record<string, unknown>> = [];
    const edges: Array<{ from: string; to: string; relation: string }> = [];
    for (const h of this.humans(tree)) {
      const id = str(h['id'])!;
      nodes.push({ id, kind: 'human', role: str(h['role']), availability: str(h['availability']) });
      for (const a of [...tables(h['assignments']), ...(isTable(h['assignments']) ? [h['assignments']] : [])]) {
        if (str(a['robot_id'])) edges.push({ from: id, to: str(a['robot_id'])!, relation: 'assignment' });
        if (str(a['mission_id'])) edges.push({ from: id, to: str(a['mission_id'])!, relation: 'mission' });
      }
    }
    for (const r of this.deps.project.config?.robots ?? []) nodes.push({ id: r.id, kind: 'robot', model: r.model ?? r.hardware_profile });
    for (const d of tables(fleet['drones'])) if (str(d['id'])) nodes.push({ id: str(d['id']), kind: 'drone', type: str(d['type']) });
    const configured = this.configured();
    const sessionEdges = (s: SessionFields) => {
      if (s.field_human_id) edges.push({ from: s.field_human_id, to: s.id, relation: 'field_operator' });
      if (s.expert_human_id) edges.push({ from: s.expert_human_id, to: s.id, relation: 'remote_expert' });
      if (s.robot_id) edges.push({ from: s.id, to: s.robot_id, relation: 'session_robot' });
    };
    for (const s of configured) {
      nodes.push({ id: s.id, kind: 'session', session_type: s.session_type });
      sessionEdges(s);
    }
    const active = this.deps.store.data.sessions;
    for (const s of active) {
      if (!configured.some((c) => c.id === s.id)) {
        nodes.push({ id: s.id, kind: 'session', session_type: s.session_type });
        sessionEdges(s);
      }
      edges.push({ from: s.id, to: 'active', relation: 'live_status' });
    }
    return { version: API_VERSION, node_count: nodes.length, edge_count: edges.length, nodes, edges, active_session_count: active.length };
  }

  context() {
    const tree = this.needTree();
    const fleet = fleetOf(tree) ?? {};
    const zones = [...tables(tree['hazard_zones']), ...tables(fleet['hazard_zones'])].map((z) => ({
      id: str(z['id']),
      type: str(z['type']),
      severity: str(z['severity']),
      center: z['center'] ?? null,
      radius_m: typeof z['radius_m'] === 'number' ? z['radius_m'] : null,
      linked_robots: Array.isArray(z['linked_robots']) ? z['linked_robots'].filter((x) => typeof x === 'string') : [],
      alert_on_entry: typeof z['alert_on_entry'] === 'boolean' ? z['alert_on_entry'] : false,
      description: str(z['description']),
    }));
    const humanLocations = this.humans(tree)
      .filter((h) => h['location'] !== undefined && h['location'] !== null)
      .map((h) => ({ human_id: str(h['id']), role: str(h['role']), location: h['location'] }));
    return {
      version: API_VERSION,
      hazard_zone_count: zones.length,
      hazard_zones: zones,
      human_locations: humanLocations,
      spatial_session_count: this.configured().length,
      active_hri_sessions: this.deps.store.data.sessions.length,
    };
  }

  close(): Promise<void> {
    return this.deps.store.close();
  }
}
