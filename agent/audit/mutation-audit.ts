import path from 'node:path';
import type { EventBus } from '../events/event-bus.js';
import { isAudited } from '../events/platform-events.js';
import type { AlertService } from '../observability/alerts.js';
import type { Principal } from '../security/principal.js';
import { pascalRole } from '../security/rbac.js';
import { JsonlLog } from '../state/jsonl-log.js';
import { AUDIT_CHAIN_FILE, AuditChain, type AuditChainOptions, type AuditRecord } from './audit-chain.js';

export const API_MUTATION = 'control_center.api.mutation';
/** Mutations made through a gRPC RPC (docs/security.md §10, "What is recorded"). */
export const GRPC_MUTATION = 'control_center.grpc.mutation';
/** Mutations run in-process by the `svc` CLI as the local user (docs/security.md §10). */
export const CLI_MUTATION = 'control_center.cli.mutation';

export interface MutationLine {
  id: string;
  event_type: string;
  payload: string;
  timestamp_ms: number;
}

/**
 * The mutation audit (docs/security.md §10): every successful mutation, whatever the transport, into
 * the hash-chained log and the plain JSONL copy for SIEM shipping. Payloads name the actor by key id
 * and role only: never a token, a secret or a request body.
 */
export class MutationAudit {
  readonly chain: AuditChain;
  private readonly lines: JsonlLog<MutationLine>;

  constructor(
    stateDir: string,
    mutationsPath: string,
    signingSecret: string,
    bus: EventBus,
    alerts: AlertService,
    log: (line: string) => void,
    options: AuditChainOptions = {},
  ) {
    this.chain = new AuditChain(path.join(stateDir, AUDIT_CHAIN_FILE), signingSecret, options);
    this.lines = new JsonlLog<MutationLine>(mutationsPath, { fsync: false });
    const v = this.chain.verification;
    if (!v.valid) {
      log(`warning: audit chain ${this.chain.file} does not verify at ${v.breakAt}: ${v.reason}`);
      alerts.raise({
        alert_type: 'tamper',
        severity: 'critical',
        source: 'audit-chain',
        message: `audit chain broken at ${v.breakAt}: ${v.reason}`,
      });
    }
    if (v.tornTail) {
      log(`warning: the last line of ${this.chain.file} was cut short by a crash and is ignored` + (this.chain.tornTailSetAside ? `; its bytes were moved to ${this.chain.tornTailSetAside}` : ''));
    }
    // The catalogue (events/platform-events.ts) says which platform events are audited.
    bus.subscribe((e) => {
      if (isAudited(e.type)) {
        this.chain.append(e.type, { source: e.source, entity_id: e.entity_id ?? null, ...e.payload });
      }
    });
  }

  recordApiMutation(m: { method: string; path: string; status: number; correlationId: string; principal: Principal | null }): AuditRecord {
    return this.record(API_MUTATION, {
      method: m.method,
      path: m.path,
      status: m.status,
      correlation_id: m.correlationId,
      actor_key_id: m.principal?.key_id ?? 'anonymous',
      actor_role: m.principal ? pascalRole(m.principal.role) : 'guest',
    });
  }

  /** A mutation the CLI ran in-process: the actor is the local user who could read the state directory. */
  recordCliMutation(m: { method: string; path: string; correlationId: string; principal: Principal }): AuditRecord {
    return this.record(CLI_MUTATION, {
      method: m.method,
      path: m.path,
      status: 'ok',
      correlation_id: m.correlationId,
      actor_key_id: m.principal.key_id,
      actor_role: pascalRole(m.principal.role),
      local_user: m.principal.user_id,
    });
  }

  /**
   * A mutation made through an RPC. gRPC writes `control_center.grpc.mutation` naming the RPC and its
   * REST parity route; the JSON-RPC gateway writes an API mutation of `POST /v1/rpc` (as the reference
   * does) that also names the inner method and its parity route.
   */
  recordRpcMutation(m: {
    transport: 'grpc' | 'jsonrpc';
    rpc: string;
    method: string;
    path: string;
    correlationId: string;
    principal: Principal | null;
  }): AuditRecord {
    const actor = {
      correlation_id: m.correlationId,
      actor_key_id: m.principal?.key_id ?? 'anonymous',
      actor_role: m.principal ? pascalRole(m.principal.role) : 'guest',
    };
    if (m.transport === 'grpc') {
      return this.record(GRPC_MUTATION, { rpc: m.rpc, method: m.method, path: m.path, status: 'OK', ...actor });
    }
    return this.record(API_MUTATION, { method: 'POST', path: '/v1/rpc', status: 200, rpc: m.rpc, parity_method: m.method, parity_path: m.path, ...actor });
  }

  /** A state change made through any transport, in the record form of that transport (the invoke kernel's audit step). */
  recordMutation(m: {
    transport: 'rest' | 'grpc' | 'jsonrpc' | 'cli';
    method: string;
    path: string;
    correlationId: string;
    principal: Principal | null;
    /** Full RPC method name (`svc.v1.ControlCenter/<Rpc>`) for gRPC and JSON-RPC. */
    rpc?: string;
  }): AuditRecord {
    if (m.transport === 'rest') return this.recordApiMutation({ ...m, status: 200 });
    if (m.transport === 'cli') {
      if (!m.principal) throw new Error('an in-process CLI mutation always has the local principal');
      return this.recordCliMutation({ ...m, principal: m.principal });
    }
    return this.recordRpcMutation({ ...m, transport: m.transport, rpc: m.rpc ?? '' });
  }

  record(eventType: string, payload: Record<string, unknown>): AuditRecord {
    const r = this.chain.append(eventType, payload);
    this.lines.append({ id: r.id, event_type: r.event_type, payload: r.payload, timestamp_ms: Date.parse(r.timestamp) });
    return r;
  }

  get mutationsFile(): string {
    return this.lines.file;
  }

  close(): void {
    this.chain.close();
    this.lines.close();
  }
}
