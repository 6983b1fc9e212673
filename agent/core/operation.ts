import type { z } from 'zod';
import type { Action } from '../security/rbac.js';
import type { Principal } from '../security/principal.js';
import type { Services } from '../runtime/services.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call an operation (docs/security.md §5, §6). Transports enforce it identically (REST, gRPC,
 * JSON-RPC, CLI) through `enforceAccess`, and the OpenAPI document shows it as `x-svc-access`.
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
  | { kind: 'action'; action: Action }
  | { kind: 'admin' };

/** gRPC request message shapes of the reference (api-behaviour §13.1). */
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

export interface OperationInput<B, Q> {
  body: B;
  query: Q;
  params: Record<string, string>;
}

export interface OperationContext {
  services: Services;
  principal: Principal | null;
  correlationId: string;
  transport: 'rest' | 'grpc' | 'jsonrpc' | 'cli';
}

export interface OperationResult {
  status?: number;
  body: unknown;
}

export interface Operation<B = unknown, Q = unknown> {
  /** Stable camelCase id: OpenAPI operationId and the CLI command are derived from it. */
  id: string;
  /** OpenAPI tag and folder-level grouping. */
  group: string;
  summary: string;
  description?: string;
  method: HttpMethod;
  /** `/v1/...` with `{name}` path parameters. */
  path: string;
  /** Closed by default: omitted, a GET is a sensitive read and anything else an Operate mutation (`accessOf`). */
  access?: Access;
  /**
   * gRPC RPC of ControlCenter, when the spec or reference names one. The `.proto`, the gRPC service
   * and the JSON-RPC gateway derive from it (`agent/api/rpc-contract.ts`). `bodyParams` names path
   * parameters that the request message does not carry as a field and that are read from a field of
   * `body_json` instead (the reference's `key_id` / `user_id`), e.g. `{ id: 'key_id' }`.
   */
  rpc?: { name: string; request: RpcRequestKind; bodyParams?: Record<string, string> };
  /** Exposed on the JSON-RPC gateway (`svc.v1.ControlCenter/<rpc.name>`). */
  jsonRpc?: boolean;
  /** CLI words (`['version']` → `svc version`); defaults to the kebab-cased id. `false` hides it. */
  cli?: string[] | false;
  /**
   * Input schemas. The operation modules wrap theirs (and their shared module-level schemas) in
   * `z.lazy(() => …)`: a schema is then built on its first use, not for every operation at start.
   */
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /** Response schema, documentation only (OpenAPI). */
  response?: z.ZodType;
  /**
   * The operation writes a role: a key's or user's role, an OIDC group→role map, or users with roles
   * (directory import, sign-in). Such a handler must refuse, with 403 `forbidden`, any role its
   * caller could not grant (`canGrant` in agent/security/rbac.ts; docs/security.md §5 "No
   * escalation"). `test/security/role-grants.test.ts` fails for an operation whose body carries a
   * role field but is not marked, and tries an escalation through every marked one.
   */
  grantsRole?: boolean;
  handler(input: OperationInput<B, Q>, ctx: OperationContext): unknown | Promise<unknown>;
}

/** Identity helper that keeps the body/query types of one operation tied to its handler. */
export function defineOperation<B = Record<string, never>, Q = Record<string, never>>(op: Operation<B, Q>): Operation {
  return op as unknown as Operation;
}

/** `{id}` path parameters in declaration order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([a-z_][a-z0-9_]*)\}/gi)].map((m) => m[1]!);
}

const SENSITIVE_READ: Access = { kind: 'sensitive-read' };
const OPERATE: Access = { kind: 'action', action: 'Operate' };

/** The operation's access rule; one that declares none is closed (docs/security.md §5, "Access rules"). */
export function accessOf(op: Pick<Operation, 'method' | 'access'>): Access {
  return op.access ?? (op.method === 'GET' ? SENSITIVE_READ : OPERATE);
}

/** `x-svc-access` of the OpenAPI document: `public`, `read`, `sensitive-read`, `action:<Action>` or `admin`. */
export function accessLabel(access: Access): string {
  return access.kind === 'action' ? `action:${access.action}` : access.kind;
}

export function isMutation(op: Pick<Operation, 'method' | 'access'>): boolean {
  const access = accessOf(op);
  return op.method !== 'GET' && (access.kind === 'action' || access.kind === 'admin');
}

export function cliWords(op: Operation): string[] | null {
  if (op.cli === false) return null;
  return op.cli ?? [op.id.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()];
}
