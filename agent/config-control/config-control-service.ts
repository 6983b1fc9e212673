import fs from 'node:fs';
import { API_VERSION } from '../../api/versions.js';
import { API_MUTATION, CLI_MUTATION, GRPC_MUTATION } from '../audit/mutation-audit.js';
import { ApiError, badRequest } from '../core/errors.js';
import type { DeviceRecord, DeviceRegistry } from '../devices/device-registry.js';
import { isLifecycleState } from '../devices/lifecycle.js';
import type { ProjectContext } from '../project/project-context.js';
import { resolveProjectConfig } from '../project/resolve-config.js';
import type { Principal } from '../security/principal.js';
import type { ConfigControlSettings } from '../settings/settings.js';
import { ApprovalStore, type ConfigApprovalRequest } from './approval-store.js';
import { publishFiles, writeDevicesToFragments } from './publish.js';
import { liveResolved, type SnapshotDevice, type SnapshotMeta, type SnapshotResolved, type StoredSnapshot } from './snapshot-model.js';
import { SnapshotStore } from './snapshot-store.js';

export interface PublishResult {
  snapshot_id: string;
  devices_persisted: number;
  devices_failed: string[];
  reloaded_from_disk: boolean;
}

export interface HistoryEntry {
  id: string;
  timestamp: number;
  action: string;
  snapshot_id?: string;
  actor?: string;
}

/** The RPCs whose audit records are configuration changes (docs/operations.md § History). */
const CONFIG_RPCS = new Set(['SaveConfigSnapshot', 'SubmitConfigApproval', 'ApproveConfigApproval', 'RejectConfigApproval']);

const approvalError = (message: string, status = 400, code: 'bad_request' | 'not_found' | 'conflict' = 'bad_request') =>
  new ApiError(status, code, `config approval error: ${message}`);

const principalKey = (p: Principal | null) => p?.key_id ?? 'anonymous';

/**
 * Configuration under control (docs/operations.md § Configuration snapshots and approvals):
 * snapshots of the live configuration, the four-eyes approval queue whose quorum publishes a
 * snapshot, and the history read from the snapshot directory and the mutation audit log.
 */
export class ConfigControlService {
  readonly snapshots: SnapshotStore;
  readonly approvals: ApprovalStore;

  constructor(
    private readonly deps: {
      settings: ConfigControlSettings;
      project: ProjectContext;
      devices: DeviceRegistry;
      mutationAuditPath: string;
    },
  ) {
    this.snapshots = new SnapshotStore(deps.settings.snapshotsDir, () => deps.settings.snapshotKey);
    this.approvals = new ApprovalStore(deps.settings.approvalsFile);
  }

  /** The live configuration and device pool in snapshot form, or null without a configuration. */
  current(): SnapshotResolved | null {
    const config = this.deps.project.config;
    return config ? liveResolved(config, this.deps.devices.list()) : null;
  }

  listSnapshots() {
    return { version: API_VERSION, snapshots: this.snapshots.list().map((s) => s.meta) };
  }

  saveSnapshot(body: { label?: string | undefined; encrypt?: boolean | undefined }) {
    const resolved = this.current();
    if (!resolved) throw badRequest('no resolved configuration loaded; use --config');
    const encrypt = body.encrypt ?? this.deps.settings.encryptByDefault;
    const meta = this.snapshots.save(resolved, { label: body.label, encrypt });
    return { version: API_VERSION, ok: true, snapshot: meta };
  }

  loadSnapshot(id: string): StoredSnapshot {
    return this.snapshots.load(id);
  }

  /** The newest snapshot's meta, or null when there is none. */
  newestSnapshot(): SnapshotMeta | null {
    return this.snapshots.list()[0]?.meta ?? null;
  }

  listApprovals() {
    return { version: API_VERSION, approvals: this.approvals.read() };
  }

  submitApproval(body: { snapshot_id: string; note?: string | undefined; required_approvals?: number | undefined }, principal: Principal | null) {
    // Read the queue first: a corrupt queue answers 500 before anything else happens.
    const requests = this.approvals.read();
    this.snapshots.load(body.snapshot_id);
    const required = body.required_approvals && body.required_approvals > 0 ? body.required_approvals : (this.deps.settings.approvalsRequired ?? 1);
    const now = Date.now();
    const approval: ConfigApprovalRequest = {
      id: this.approvals.nextId(now, requests),
      snapshot_id: body.snapshot_id,
      requester: principalKey(principal),
      status: 'pending',
      created_at_ms: now,
      required_approvals: required,
      approvals: [],
      ...(body.note !== undefined ? { note: body.note } : {}),
    };
    this.approvals.write([...requests, approval]);
    return { version: API_VERSION, ok: true, approval };
  }

  private pending(requests: ConfigApprovalRequest[], id: string): ConfigApprovalRequest {
    const request = requests.find((r) => r.id === id);
    if (!request) throw approvalError(`approval request '${id}' not found`, 400, 'not_found');
    if (request.status !== 'pending') throw approvalError(`approval request '${id}' is not pending`, 409, 'conflict');
    return request;
  }

  approve(id: string, body: { note?: string | undefined }, principal: Principal | null) {
    const requests = this.approvals.read();
    const request = this.pending(requests, id);
    const approver = principalKey(principal);
    if (request.approvals.some((v) => v.approver === approver)) throw approvalError(`approver '${approver}' already voted on '${id}'`, 409, 'conflict');
    if (request.required_approvals > 1 && approver === request.requester) throw approvalError('requester cannot approve their own multi-approver request');
    const completes = request.approvals.length + 1 >= request.required_approvals;
    // The snapshot must load before the deciding vote is recorded: a publish that cannot happen
    // leaves the request pending and the vote unrecorded (docs/operations.md § Publishing).
    const snapshot = completes ? this.snapshots.load(request.snapshot_id) : null;
    const now = Date.now();
    request.approvals.push({ approver, approved_at_ms: now, ...(body.note !== undefined ? { note: body.note } : {}) });
    if (completes) {
      request.status = 'approved';
      request.resolved_at_ms = now;
      request.resolver = approver;
    }
    this.approvals.write(requests);
    const publish = snapshot ? this.publish(snapshot) : null;
    return { version: API_VERSION, ok: true, approval: request, quorum: quorum(request), publish };
  }

  reject(id: string, body: { note?: string | undefined }, principal: Principal | null) {
    const requests = this.approvals.read();
    const request = this.pending(requests, id);
    request.status = 'rejected';
    request.resolved_at_ms = Date.now();
    request.resolver = principalKey(principal);
    if (body.note !== undefined) request.note = body.note;
    this.approvals.write(requests);
    return { version: API_VERSION, ok: true, approval: request, quorum: quorum(request), publish: null };
  }

  /**
   * Publishes a snapshot: its configured devices go into the project's device fragments, the project
   * configuration is resolved again from disk, and the device pool takes the published values (so
   * `GET /v1/devices` shows them at once and `devices.json` keeps them across a restart). Without
   * a configuration file, or when no device reached a file, the snapshot's configuration replaces
   * the live one in memory only; a restart reads `--config` again.
   */
  publish(snapshot: StoredSnapshot): PublishResult {
    const project = this.deps.project;
    const configured = snapshot.resolved.device_pool.filter((d) => d.source === 'config');
    let persisted = 0;
    let failed: string[] = [];
    if (project.configPath) {
      const root = project.config?.projectRoot ?? snapshot.resolved.config.projectRoot;
      // The snapshot's own layers and fragments: a device is edited where it is declared (a fleet
      // robot's compute device in the fleet fragment), never copied into the devices fragment.
      const files = publishFiles(snapshot.resolved.config, root);
      const r = writeDevicesToFragments(files, configured, snapshot.resolved.config.devices ?? []);
      persisted = r.devices_persisted;
      failed = r.devices_failed;
    }
    const reloaded = project.configPath !== null && persisted > 0;
    if (reloaded) {
      try {
        project.config = resolveProjectConfig(project.configPath!);
      } catch (err) {
        throw badRequest((err as Error).message);
      }
    } else {
      project.config = snapshot.resolved.config;
    }
    this.applyToPool(snapshot.resolved.device_pool);
    return { snapshot_id: snapshot.meta.id, devices_persisted: persisted, devices_failed: failed, reloaded_from_disk: reloaded };
  }

  /** The published decisions (lifecycle, assignment, trust, naming) onto the live device pool. */
  private applyToPool(devices: readonly SnapshotDevice[]): void {
    for (const d of devices) {
      if (!this.deps.devices.get(d.id)) continue;
      const changes: Partial<DeviceRecord> = {
        logical_name: d.logical_name,
        assigned_robot: d.assigned_robot,
        trust_level: d.trust_level,
        robot_id: d.robot_id,
        redundant_group: d.redundant_group,
        failover_priority: d.failover_priority,
      };
      if (isLifecycleState(d.lifecycle_state)) changes.lifecycle_state = d.lifecycle_state;
      this.deps.devices.update(d.id, changes);
    }
  }

  /**
   * Snapshots and the configuration mutations of the audit log, newest first. Audit records are
   * selected by what they are, not by matching text: REST (and CLI) mutations of a path under
   * `/v1/config/`, and gRPC or JSON-RPC calls of the four configuration RPCs. Approval votes carry the
   * snapshot they were about. A line that does not parse is skipped; the others still count.
   */
  history() {
    const entries: HistoryEntry[] = this.snapshots.list().map((s) => ({
      id: `snapshot-${s.meta.id}`,
      timestamp: s.meta.created_at_ms,
      action: 'snapshot',
      snapshot_id: s.meta.id,
    }));
    let approvals: ConfigApprovalRequest[] = [];
    try {
      approvals = this.approvals.read();
    } catch {
      /* a corrupt queue only costs the snapshot ids of the votes */
    }
    const snapshotOf = new Map(approvals.map((r) => [r.id, r.snapshot_id]));
    for (const line of readLines(this.deps.mutationAuditPath)) {
      let record: { id?: unknown; event_type?: unknown; payload?: unknown; timestamp_ms?: unknown };
      let payload: Record<string, unknown>;
      try {
        record = JSON.parse(line) as typeof record;
        payload = (typeof record.payload === 'string' ? JSON.parse(record.payload) : record.payload) as Record<string, unknown>;
        if (!payload || typeof payload !== 'object' || typeof record.id !== 'string' || typeof record.timestamp_ms !== 'number') continue;
      } catch {
        continue;
      }
      const rpc = typeof payload['rpc'] === 'string' ? payload['rpc'].slice(payload['rpc'].lastIndexOf('/') + 1) : '';
      const restPath = typeof payload['path'] === 'string' ? payload['path'] : '';
      let routePath: string;
      let action: string;
      if ((record.event_type === API_MUTATION || record.event_type === CLI_MUTATION) && restPath.startsWith('/v1/config/')) {
        routePath = restPath;
        action = typeof payload['method'] === 'string' ? payload['method'] : 'mutation';
      } else if ((record.event_type === GRPC_MUTATION || record.event_type === API_MUTATION) && CONFIG_RPCS.has(rpc)) {
        routePath = typeof payload['parity_path'] === 'string' ? payload['parity_path'] : restPath;
        action = 'mutation';
      } else continue;
      const entry: HistoryEntry = { id: record.id, timestamp: record.timestamp_ms, action };
      const vote = /^\/v1\/config\/approvals\/([^/]+)\/(approve|reject)$/.exec(routePath);
      const snapshotId = vote ? snapshotOf.get(decodeURIComponent(vote[1]!)) : undefined;
      if (snapshotId) entry.snapshot_id = snapshotId;
      if (typeof payload['actor_key_id'] === 'string') entry.actor = payload['actor_key_id'];
      entries.push(entry);
    }
    entries.sort((a, b) => b.timestamp - a.timestamp);
    return { version: API_VERSION, history: entries };
  }
}

function quorum(r: ConfigApprovalRequest) {
  return { required: r.required_approvals, received: r.approvals.length, met: r.approvals.length >= r.required_approvals };
}

function readLines(file: string): string[] {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
  } catch {
    return [];
  }
}
