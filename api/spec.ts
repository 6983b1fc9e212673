import type { z } from 'zod';
import type { Action } from './roles.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call an operation (docs/security.md §5, §6). Every transport enforces it the same way
 * (the agent's invoke kernel), and the OpenAPI document shows it as `x-svc-access`.
 * - public: never gated (health, version, instance, tenant, the sign-in flow);
 * - read: open, unless `SVC_API_REQUIRE_AUTH_ALL_READS` asks for a principal on every read;
 * - sensitive-read: needs a principal under either read flag (device, fleet, entity, audit, program
 *   source… reads); what an operation does not declare is this, or an Operate mutation;
 * - action: a principal whose role grants the RBAC action;
 * - admin: an administrator.
 */
export type Access =
  | { kind: 'public' }
  | { kind: 'read' }
  | { kind: 'sensitive-read' }
  | { kind: 'action'; action: Action; orSharedSecret?: SharedSecretAccess }
  | { kind: 'admin' };

/** Shared secrets the agent holds for inbound integrations (each is configured by one setting). */
export type SharedSecretName = 'pagerduty-webhook';

/**
 * An action route that an integration without an API key may also call by presenting a shared secret
 * in a header (the PagerDuty webhook, docs/operations.md § Alerting). The secret counts only when it is
 * configured and the header matches it exactly (compared in constant time); otherwise the action rule
 * applies unchanged: no principal → 401, a principal without the action → 403.
 */
export interface SharedSecretAccess {
  header: string;
  secret: SharedSecretName;
}

/** gRPC request message shapes (docs/grpc.md § Request messages). */
export type RpcRequestKind =
  | 'Empty'
  | 'JsonBodyRequest'
  | 'QueryRequest'
  | 'DeviceIdRequest'
  | 'DeviceBodyRequest'
  | 'EntityIdRequest'
  | 'EntityBodyRequest'
  | 'IncidentIdRequest'
  | 'IncidentBodyRequest'
  | 'ApprovalBodyRequest'
  | 'ReadinessRequest'
  | 'TrustPackageRequest'
  | 'DriftRequest';

/**
 * One operation of the API as every party sees it: the agent's transports, the OpenAPI document, the
 * `.proto`, the JSON-RPC gateway, the CLI, the relay, the client libraries and the panel. It holds no
 * behaviour: the agent binds a handler to each spec by id (`agent/core/handlers.ts`).
 */
export interface OperationSpec<B = unknown, Q = unknown> {
  /** Stable camelCase id: OpenAPI operationId, the handler's key, and the default CLI words. */
  id: string;
  /** OpenAPI tag; the contract's domain file. */
  group: string;
  summary: string;
  description?: string;
  method: HttpMethod;
  /** `/v1/...` with `{name}` path parameters. */
  path: string;
  /** Closed by default: omitted, a GET is a sensitive read and anything else an Operate mutation (`accessOf`). */
  access?: Access;
  /**
   * A read-like operation that writes when the named boolean body field is true (simulation with
   * `record_trace` writes a trace file). Such a call needs the Operate action and is audited like any
   * mutation; otherwise it is the read its `access` says (docs/security.md §10).
   */
  mutatesWhen?: { bodyField: string };
  /**
   * A GET that changes state on every call (it appends a record, e.g. the compliance export's
   * evidence): a mutation for the audit rule, audited exactly once by the kernel like any other.
   */
  writes?: true;
  /**
   * gRPC RPC of ControlCenter. The `.proto`, the gRPC service and the JSON-RPC gateway derive from it
   * (`api/rpc-contract.ts`). `bodyParams` names path parameters that the request message does not
   * carry as a field and that are read from a field of `body_json` instead, e.g. `{ id: 'key_id' }`.
   */
  rpc?: { name: string; request: RpcRequestKind; bodyParams?: Record<string, string> };
  /**
   * Further RPCs served by this same operation, each with its own request message. One REST route
   * whose query selects a list or a detail form (`GET /v1/deployment-profiles` and `?name=`) stays
   * one operation, while its gRPC clients know the two forms by two names (`ListDeploymentProfiles`
   * with `Empty`, `GetDeploymentProfile` with `QueryRequest`). Each behaves exactly as `rpc` would
   * with that request message (`rpcBindings`); needs `rpc`.
   */
  moreRpcs?: { name: string; request: RpcRequestKind }[];
  /** Exposed on the JSON-RPC gateway (`svc.v1.ControlCenter/<rpc.name>`). */
  jsonRpc?: boolean;
  /**
   * Fully-qualified JSON-RPC method names kept for older clients that also reach this operation on
   * the gateway, e.g. `svc.v1.SvcService/GetSreSummary` (docs/grpc.md § JSON-RPC gateway). Needs `rpc`.
   */
  jsonRpcAliases?: string[];
  /** CLI words (`['version']` → `svc version`); defaults to the kebab-cased id. `false` hides it. */
  cli?: string[] | false;
  /** Other words the CLI accepts for the same command (`['entity', 'list']` beside `['entities', 'list']`). */
  cliAliases?: string[][];
  /**
   * Body (POST) or query (GET) fields the CLI fills from positional arguments after the path
   * parameters, in order: `cliArgs: ['file']` makes `svc recovery plan demo.sd` send `{file: "demo.sd"}`.
   */
  cliArgs?: string[];
  /** CLI option names that stand for another field (`{entity: 'entity_id'}`: `--entity ID`). */
  cliOptions?: Record<string, string>;
  /**
   * Input schemas. Domain files wrap theirs (and shared module-level schemas) in `z.lazy(() => …)`:
   * a schema is then built on its first use, not for every operation at start.
   */
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /** Response schema, documentation only (OpenAPI). */
  response?: z.ZodType;
  /**
   * The operation writes a role: a key's or user's role, an OIDC group→role map, or users with roles.
   * Its handler must refuse, with 403 `forbidden`, any role its caller could not grant
   * (docs/security.md §5 "No escalation"; `test/security/role-grants.test.ts`).
   */
  grantsRole?: boolean;
}

/** Keeps a spec's body and query types, so the handler bound to it is typed by them. */
export function defineSpec<B = Record<string, never>, Q = Record<string, never>>(spec: OperationSpec<B, Q>): OperationSpec<B, Q> {
  return spec;
}

/**
 * The operation once per RPC it serves: itself for `rpc`, then a copy whose `rpc` is each of
 * `moreRpcs` (so the gRPC service, the JSON-RPC gateway and the request mapping treat every RPC
 * name alike and need not know there are several). Empty without `rpc`.
 */
export function rpcBindings<T extends Pick<OperationSpec, 'rpc' | 'moreRpcs'>>(op: T): T[] {
  if (!op.rpc) return [];
  return [op, ...(op.moreRpcs ?? []).map((more) => ({ ...op, rpc: { name: more.name, request: more.request } }))];
}

/** `{id}` path parameters in declaration order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([a-z_][a-z0-9_]*)\}/gi)].map((m) => m[1]!);
}

const SENSITIVE_READ: Access = { kind: 'sensitive-read' };
const OPERATE: Access = { kind: 'action', action: 'Operate' };

/** The operation's access rule; one that declares none is closed (docs/security.md §5, "Access rules"). */
export function accessOf(op: Pick<OperationSpec, 'method' | 'access'>): Access {
  return op.access ?? (op.method === 'GET' ? SENSITIVE_READ : OPERATE);
}

/** The access a call of a `mutatesWhen` operation needs when it writes. */
export const WRITE_ACCESS_FOR_MUTATES_WHEN: Access = OPERATE;

/** `x-svc-access` of the OpenAPI document: `public`, `read`, `sensitive-read`, `action:<Action>` or `admin`. */
export function accessLabel(access: Access): string {
  return access.kind === 'action' ? `action:${access.action}` : access.kind;
}

/** A state change: not a GET, and gated by an action or administrator (read-like POSTs are reads). */
export function isMutation(op: Pick<OperationSpec, 'method' | 'access' | 'writes'>): boolean {
  const access = accessOf(op);
  return (op.method !== 'GET' || op.writes === true) && (access.kind === 'action' || access.kind === 'admin');
}

/**
 * The audit rule (`x-svc-audit`): every state change is audited exactly once, reads never. A
 * `mutatesWhen` operation is audited on the calls that write (`writesOn`).
 */
export function isAudited(op: Pick<OperationSpec, 'method' | 'access' | 'mutatesWhen' | 'writes'>): boolean {
  return isMutation(op) || op.mutatesWhen !== undefined;
}

/** Whether this call of `op` changes state: a mutation, or a `mutatesWhen` operation asked to write. */
export function writesOn(op: Pick<OperationSpec, 'method' | 'access' | 'mutatesWhen' | 'writes'>, body: unknown): boolean {
  if (isMutation(op)) return true;
  const field = op.mutatesWhen?.bodyField;
  return field !== undefined && typeof body === 'object' && body !== null && (body as Record<string, unknown>)[field] === true;
}

export function cliWords(op: Pick<OperationSpec, 'id' | 'cli'>): string[] | null {
  if (op.cli === false) return null;
  return op.cli ?? [op.id.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()];
}
