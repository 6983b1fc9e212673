import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import { ApiError, badRequest, conflict } from '../core/errors.js';
import type { DevicePool } from '../devices/device-pool.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { EntityDeclaration } from '../entities/declaration.js';
import type { EntityService } from '../entities/entity-service.js';
import { MISSION_MOVES, missionStatuses, moveAllowed, parseMissionState, type MissionMove, type MissionState } from '../entities/mission-state.js';
import type { Entity } from '../entities/model.js';
import { missionApprovalSeeds } from '../entities/sources.js';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent, type PlatformEventName } from '../events/platform-events.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { JsonStore } from '../state/json-store.js';
import type { ApprovalQueue, ApprovalRecord } from './approval-queue.js';
import type { FleetAgentRegistry, StoredFleetAgent } from './fleet-agents.js';

export const OPERATOR_EVENT_SOURCE = 'svc-operator';
export const MISSION_LIFECYCLE_FILE = 'mission-lifecycle.json';
const LOG_RING = 1000;

/** Who acts: the principal's key id (and user, role when known), or a service name such as `recovery`. */
export interface OperatorActor {
  key_id: string;
  user_id: string | null;
  role: string | null;
}

const actorOf = (a: OperatorActor | string): OperatorActor => (typeof a === 'string' ? { key_id: a, user_id: null, role: null } : a);

/** One accepted move of the mission lifecycle, kept in `mission-lifecycle.json` (ring of 1000, oldest first). */
export interface MissionTransition {
  entity_id: string;
  move: MissionMove | 'approve' | 'reject';
  from: MissionState;
  to: MissionState;
  actor: string;
  actor_user: string | null;
  note: string | null;
  at_ms: number;
}

const notFoundInBody = (message: string) => new ApiError(400, 'not_found', message);

/** `not_ready` → `NotReady` (the missions list speaks PascalCase, docs/operator.md). */
const pascal = (s: string) => s.split('_').map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');

const MOVE_EVENT: Record<MissionMove, PlatformEventName> = { pause: 'MissionPaused', resume: 'MissionResumed', cancel: 'MissionAborted' };

export interface OperatorDeps {
  entities: EntityService;
  /** Loads the server's program so its missions are in the registry. */
  prepareFacts: () => Promise<void>;
  devicePool: DevicePool;
  devices: DeviceRegistry;
  bus: EventBus;
  queue: ApprovalQueue;
  fleetAgents: FleetAgentRegistry;
}

/**
 * The operator console's direct controls (docs/operator.md): the mission lifecycle (pause, resume,
 * cancel) written into the entity overlay, so the registry is the one place a mission's state lives;
 * the approval queue with the approver's identity; device quarantine through the device pool; the
 * fleet agent registry. No transport here: recovery and other services call the same methods.
 */
export class OperatorService {
  private constructor(
    private readonly deps: OperatorDeps,
    private readonly log: JsonStore<MissionTransition[]>,
  ) {}

  static async open(deps: OperatorDeps, stateDir: string, config: ResolvedConfig | null, onWarning?: (m: string) => void): Promise<OperatorService> {
    const log = await JsonStore.open<MissionTransition[]>(path.join(stateDir, MISSION_LIFECYCLE_FILE), {
      defaults: () => [],
      revive: (raw) => {
        if (!Array.isArray(raw)) throw new Error('expected an array of mission transitions');
        return raw as MissionTransition[];
      },
      ...(onWarning ? { onWarning } : {}),
    });
    // Seeds join the queue when the configuration loads, so reading the queue never writes it.
    if (config) deps.queue.mergeSeeds(missionApprovalSeeds(config));
    return new OperatorService(deps, log);
  }

  // -------------------------------------------------------------------------------------------
  // Missions

  private async missions(): Promise<{ entities: Entity[]; status: (id: string) => { lifecycle_state: string; readiness_status: string; health_status: string } }> {
    await this.deps.prepareFacts();
    const view = this.deps.entities.view();
    return { entities: view.graph.list().filter((e) => e.kind === 'mission'), status: (id) => view.status.status(id) };
  }

  /** A mission's state: what the registry states, `Pending` for a mission nobody has moved yet. */
  static stateOf(e: Entity): MissionState {
    const raw = e.metadata['mission_state'];
    return raw === undefined ? 'Pending' : parseMissionState(raw);
  }

  /** The first mission entity (id order) whose id, name or `mission_name` is `key`. */
  private async findMission(key: string): Promise<Entity | undefined> {
    const { entities } = await this.missions();
    return entities.find((e) => e.id === key || e.name === key || e.metadata['mission_name'] === key);
  }

  async listMissions() {
    const { entities, status } = await this.missions();
    const last = new Map<string, MissionTransition>();
    for (const t of this.log.data) last.set(t.entity_id, t);
    const missions = entities.map((e) => {
      const s = status(e.id);
      return {
        id: e.id,
        name: e.name ?? e.id,
        mission_state: OperatorService.stateOf(e),
        lifecycle_state: pascal(s.lifecycle_state),
        readiness: pascal(s.readiness_status),
        health: s.health_status,
        allowed_moves: (Object.keys(MISSION_MOVES) as MissionMove[]).filter((m) => moveAllowed(m, OperatorService.stateOf(e))),
        last_transition: last.get(e.id) ?? null,
      };
    });
    return { version: API_VERSION, missions, count: missions.length, pending_approvals: this.deps.queue.pendingCount() };
  }

  /** Accepted moves, oldest first (optionally of one mission entity). */
  transitions(entityId?: string): MissionTransition[] {
    return this.log.data.filter((t) => entityId === undefined || t.entity_id === entityId);
  }

  pauseMission(missionId: string, actor: OperatorActor | string, note?: string | null) {
    return this.move('pause', missionId, actorOf(actor), note ?? null);
  }

  resumeMission(missionId: string, actor: OperatorActor | string, note?: string | null) {
    return this.move('resume', missionId, actorOf(actor), note ?? null);
  }

  cancelMission(missionId: string, actor: OperatorActor | string, note?: string | null) {
    return this.move('cancel', missionId, actorOf(actor), note ?? null);
  }

  private async move(move: MissionMove, missionId: string, actor: OperatorActor, note: string | null) {
    const mission = await this.findMission(missionId);
    if (!mission) throw notFoundInBody(`mission '${missionId}' not found`);
    const from = OperatorService.stateOf(mission);
    if (!moveAllowed(move, from)) throw conflict(`mission '${missionId}' is ${from}`);
    const to = MISSION_MOVES[move].to;
    this.writeState(mission.id, to, actor, note !== null ? { mission_note: note } : {});
    this.record({ entity_id: mission.id, move, from, to, actor: actor.key_id, actor_user: actor.user_id, note, at_ms: Date.now() });
    this.deps.bus.publish(platformEvent(MOVE_EVENT[move], OPERATOR_EVENT_SOURCE, { mission_id: missionId, entity_id: mission.id, from, to, note, actor_key_id: actor.key_id }, mission.id));
    return { version: API_VERSION, ok: true, mission_id: missionId, mission_state: to, entity_id: mission.id, note };
  }

  /** Writes the mission's state and its statuses into the overlay copy of the entity (created on first change). */
  private writeState(entityId: string, state: MissionState, actor: OperatorActor, metadata: Record<string, string>): void {
    const overlay = this.deps.entities.overlay;
    const previous = overlay.data.entities[entityId];
    const base: EntityDeclaration = previous ? { ...previous } : { id: entityId, entity_type: 'mission' };
    const decl: EntityDeclaration = {
      ...base,
      ...missionStatuses(state),
      metadata: {
        ...(base.metadata ?? {}),
        ...metadata,
        mission_state: state,
        mission_state_by: actor.key_id,
        mission_state_at: new Date().toISOString(),
      },
    };
    overlay.upsertEntity(decl, actor.key_id);
  }

  private record(t: MissionTransition): void {
    this.log.change((d) => {
      d.push(t);
      if (d.length > LOG_RING) d.splice(0, d.length - LOG_RING);
    });
  }

  // -------------------------------------------------------------------------------------------
  // Approvals

  listApprovals() {
    const approvals = this.deps.queue.list();
    return { version: API_VERSION, approvals, count: approvals.length, pending: approvals.filter((a) => a.status === 'pending').length };
  }

  /**
   * Resolves the request named by `approval_id` (else `mission_id`). A mission with no request gets
   * one, resolved at once; an unknown mission or approval id is refused (400 not_found), and so is
   * resolving a request twice (409). The outcome is written onto the mission entity.
   */
  async approve(input: { mission_id: string; approval_id?: string | undefined; approved?: boolean | undefined; note?: string | undefined }, actor: OperatorActor | string) {
    const who = actorOf(actor);
    const approved = input.approved ?? false;
    const status = approved ? 'approved' : 'rejected';
    const key = input.approval_id ?? input.mission_id;
    let record = this.deps.queue.find(key);
    if (!record && input.approval_id !== undefined) throw notFoundInBody(`approval '${input.approval_id}' not found`);
    const mission = await this.findMission(record?.mission_id ?? input.mission_id);
    if (!record && !mission) throw notFoundInBody(`mission '${input.mission_id}' not found`);
    if (record && record.status !== 'pending') throw conflict(`approval '${record.id}' is already ${record.status}${record.resolver ? ` by ${record.resolver}` : ''}`);
    const now = Date.now();
    const resolution = { status, resolved_at_ms: now, resolver: who.key_id, resolver_user: who.user_id, resolver_role: who.role ?? 'unknown', note: input.note ?? null } as const;
    if (record) {
      this.deps.queue.resolve(record, resolution);
    } else {
      record = this.deps.queue.append({ id: `mission-${input.mission_id}`, mission_id: input.mission_id, requested_by: null, created_at_ms: now, origin: 'operator', ...resolution });
    }
    if (mission) this.reflectApproval(mission, record, who);
    this.deps.bus.publish(
      platformEvent(approved ? 'MissionApproved' : 'MissionRejected', OPERATOR_EVENT_SOURCE, { approval_id: record.id, mission_id: record.mission_id, note: record.note ?? null, actor_key_id: who.key_id, actor_user: who.user_id }, mission?.id),
    );
    return { version: API_VERSION, ok: true, mission_id: input.mission_id, approval_id: record.id, approved, status, record, entity_id: mission?.id ?? null };
  }

  /** Approved: a mission awaiting sign-off becomes Pending (ready to start); rejected: a mission not yet finished is cancelled. */
  private reflectApproval(mission: Entity, record: ApprovalRecord, actor: OperatorActor): void {
    const from = OperatorService.stateOf(mission);
    const terminal = from === 'cancelled' || from === 'completed' || from === 'Failed';
    let to = from;
    if (record.status === 'approved' && from === 'PendingApproval') to = 'Pending';
    if (record.status === 'rejected' && !terminal) to = 'cancelled';
    const metadata = { approval_id: record.id, approval_status: record.status, approval_resolver: record.resolver ?? '', approval_resolved_at_ms: String(record.resolved_at_ms ?? '') };
    this.writeState(mission.id, to, actor, metadata);
    if (to !== from) {
      this.record({ entity_id: mission.id, move: record.status === 'approved' ? 'approve' : 'reject', from, to, actor: actor.key_id, actor_user: actor.user_id, note: record.note ?? null, at_ms: Date.now() });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Quarantine and fleet agents

  /** The device pool's quarantine (persisted in the device registry); a transition the table refuses is a 400. */
  quarantine(deviceId: string, reason: string | null, actor: OperatorActor | string) {
    const who = actorOf(actor);
    const device = this.deps.devices.get(deviceId);
    if (!device) throw notFoundInBody(`device '${deviceId}' not found`);
    const from = device.lifecycle_state;
    try {
      this.deps.devicePool.quarantine(deviceId, reason ?? `quarantined by operator ${who.key_id}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) throw badRequest(`lifecycle transition ${pascal(from)} -> Quarantined not allowed for '${deviceId}'`);
      throw err;
    }
    return { version: API_VERSION, ok: true, device_id: deviceId, lifecycle_state: 'quarantined' as const, previous_state: from, reason, persisted: true };
  }

  fleetAgents() {
    const agents = this.deps.fleetAgents.list();
    return { version: API_VERSION, agents, count: agents.length };
  }

  /** The registered fleet agents with their tokens, for calling them (fleet continuity); never for a response. */
  storedFleetAgents(): StoredFleetAgent[] {
    return this.deps.fleetAgents.stored();
  }

  /** Every mission entity with its state as the registry holds it (fleet continuity reads it). */
  async missionStates(): Promise<Array<{ id: string; name: string; mission_state: MissionState }>> {
    const { entities } = await this.missions();
    return entities.map((e) => ({ id: e.id, name: e.name ?? e.id, mission_state: OperatorService.stateOf(e) }));
  }

  async flush(): Promise<void> {
    await Promise.all([this.log.flush(), this.deps.queue.flush()]);
  }
}
