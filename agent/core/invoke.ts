import { RPC_METHOD_PREFIX } from '../../api/rpc-contract.js';
import type { Services } from '../runtime/services.js';
import { enforceAccess } from '../security/access.js';
import { sharedSecretPresented } from '../security/shared-secrets.js';
import { commitState } from '../state/commit.js';
import { ApiError } from './errors.js';
import { accessOf, WRITE_ACCESS_FOR_MUTATES_WHEN, writesOn, type CallContext, type Operation } from './operation.js';
import { parseInput } from './validate.js';

/** The services the kernel itself uses: access (settings, bus for `AuthFailed`), the audit chain and the gRPC trace ring. */
export type KernelServices = Pick<Services, 'settings' | 'bus' | 'traces' | 'audit'>;

/** What a transport hands the kernel: the caller, and the raw input as it arrived on its wire. */
export interface Invocation extends CallContext {
  /** Path parameters, already taken from the URL or the request message. */
  params: Record<string, string>;
  query: Record<string, string>;
  /**
   * The raw body object, read only once access has passed (REST reads the request stream here, so an
   * unauthenticated caller cannot make the agent read a body). Parsing rules are the transport's.
   */
  body(): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** The path the audit record names: REST gives the request path; others get the concrete spec path. */
  auditPath?: string;
  /** Extra fields for the `AuthFailed` event of a refused call (e.g. the RPC name). */
  accessDetail?: Record<string, string>;
  /** A request header (REST only): what a shared-secret access rule reads (`api/spec.ts#SharedSecretAccess`). */
  header?(name: string): string | undefined;
}

/** `/v1/devices/{id}` with `{id: 'cam-1'}` → `/v1/devices/cam-1` (unfilled parameters stay as they are). */
export function concretePath(path: string, params: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (whole, name: string) => (params[name] !== undefined ? encodeURIComponent(params[name]!) : whole));
}

/**
 * The invoke kernel: the only code that calls a handler, for REST, gRPC, JSON-RPC and the in-process
 * CLI (docs/architecture.md rule 3). In order:
 *  1. the spec's access rule (and, for a `mutatesWhen` call that writes, the write access);
 *  2. body and query validation against the spec's schemas;
 *  3. the handler, with only the services its domain declared;
 *  4. durability: a call that changes state is answered only once it is on disk (docs/security.md §10);
 *  5. audit, decided by the spec and nothing else: a state change exactly once, a read never;
 *  6. trace: gRPC calls go into the trace ring here (REST and JSON-RPC requests are traced by the
 *     HTTP pipeline, which also sees requests that reach no operation; the CLI serves no request).
 */
export function invoke(op: Operation, call: Invocation, services: KernelServices): Promise<unknown> {
  return call.transport === 'grpc' ? traced(op, call, services) : run(op, call, services);
}

async function traced(op: Operation, call: Invocation, services: KernelServices): Promise<unknown> {
  const startedAt = performance.now();
  const timestampMs = Date.now();
  let status = 200;
  try {
    return await run(op, call, services);
  } catch (err) {
    status = err instanceof ApiError ? err.status : 500;
    throw err;
  } finally {
    services.traces.append({
      correlation_id: call.correlationId,
      method: 'GRPC',
      path: `/${RPC_METHOD_PREFIX}${op.rpc?.name ?? op.id}`,
      status,
      timestamp_ms: timestampMs,
      duration_ms: Math.round((performance.now() - startedAt) * 1000) / 1000,
    });
  }
}

async function run(op: Operation, call: Invocation, services: KernelServices): Promise<unknown> {
  const detail = () => ({ operation: op.id, ...call.accessDetail });
  const access = accessOf(op);
  // An integration's shared secret stands in for the role; without it the action rule decides (401/403).
  const bySecret = access.kind === 'action' && access.orSharedSecret !== undefined && sharedSecretPresented(access.orSharedSecret, call.header?.(access.orSharedSecret.header), services.settings);
  if (!bySecret) enforceAccess(access, call.principal, services, detail);
  const rawBody = op.method === 'GET' ? {} : await call.body();
  const writes = writesOn(op, rawBody);
  if (writes && op.mutatesWhen) enforceAccess(WRITE_ACCESS_FOR_MUTATES_WHEN, call.principal, services, detail);
  const input = {
    body: parseInput(op.body, rawBody, 'body'),
    query: parseInput(op.query, call.query, 'query'),
    params: call.params,
  };
  // The invocation is the call context (principal, correlation id, transport); the bound handler adds its services.
  const result = await op.handler(input, call);
  // A read-like POST may still have touched a store; either way nothing is answered before the disk has it.
  if (op.method !== 'GET') await commitState();
  if (writes) {
    services.audit.recordMutation({
      transport: call.transport,
      method: op.method,
      path: call.auditPath ?? concretePath(op.path, call.params),
      correlationId: call.correlationId,
      principal: call.principal,
      ...(op.rpc ? { rpc: `${RPC_METHOD_PREFIX}${op.rpc.name}` } : {}),
    });
    // The record too is on disk before the answer (one group fsync of the chain).
    await commitState();
  }
  return result;
}
