import { type RpcRequest } from '../../api/domains/rpc.js';
import { findRpc, REQUEST_MESSAGE_FIELDS, RPC_METHOD_PREFIX } from '../../api/rpc-contract.js';
import { rpcBindings } from '../../api/spec.js';
import { ApiError, badRequest } from '../core/errors.js';
import type { KernelServices } from '../core/invoke.js';
import type { CallContext, Operation } from '../core/operation.js';
import type { Services } from '../runtime/services.js';
import { API_VERSION } from '../../api/versions.js';
import { invokeRpcOperation, type RpcFields } from './invoke-operation.js';

/**
 * `POST /v1/rpc` (docs/grpc.md § JSON-RPC gateway, docs/wire-decisions.md D5): the request shape is
 * the contract's (`api/domains/rpc.ts`). The inner operation runs with the caller's principal and its
 * parity route's access rule; failures are HTTP errors with the standard envelope (never 200). The
 * `jsonrpc` and `id` members a JSON-RPC 2.0 client sends are echoed on the answer, success or error.
 */

/** What the gateway needs: the bound operation table, and what the invoke kernel needs to run one. */
export type JsonRpcServices = Pick<Services, 'operations'> & KernelServices;

/** The operations the gateway exposes: flagged `jsonRpc` and carrying an RPC. */
export function jsonRpcOperations(operations: readonly Operation[]): Operation[] {
  return operations.filter((o) => o.jsonRpc).flatMap((o) => rpcBindings(o));
}

function resolve(operations: readonly Operation[], method: string): Operation {
  // Legacy fully-qualified names (`svc.v1.SvcService/GetSreSummary`) a spec keeps for older clients.
  const aliased = operations.find((o) => o.rpc && o.jsonRpcAliases?.includes(method));
  if (aliased) return aliased;
  const rpc = findRpc(operations, method);
  const op = rpc?.operation;
  if (!op || !op.jsonRpc) throw badRequest(`unknown rpc method: ${method}`);
  return op;
}

/** `params` → request message fields; every value a string, no field the message lacks. */
function fieldsOf(op: Operation, params: Record<string, unknown> | undefined): RpcFields {
  const allowed = REQUEST_MESSAGE_FIELDS[op.rpc!.request];
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(params ?? {})) {
    if (!allowed.includes(key)) {
      // Reference clients send `body_json: "{}"`, `query: ""` and `entity_id: ""` with every call:
      // empty extras are harmless.
      if (value === '' || value === null || value === undefined) continue;
      if (key === 'body_json' && typeof value === 'string' && /^\s*\{\s*\}\s*$/.test(value)) continue;
      const expected = allowed.length > 0 ? allowed.join(', ') : 'no params';
      throw badRequest(`invalid params: ${op.rpc!.name} takes ${expected}; unexpected '${key}'`);
    }
    if (value === null || value === undefined) continue;
    if (typeof value !== 'string') {
      throw badRequest(`invalid params: '${key}' must be a string${key === 'body_json' ? ' holding the JSON request body' : ''}`);
    }
    fields[key] = value;
  }
  return fields;
}

export async function handleJsonRpc(
  request: RpcRequest,
  call: Pick<CallContext, 'principal' | 'correlationId'>,
  services: JsonRpcServices,
): Promise<Record<string, unknown>> {
  const echo: Record<string, unknown> = request.jsonrpc ? { jsonrpc: request.jsonrpc, id: request.id ?? null } : {};
  try {
    const op = resolve(services.operations, request.method);
    const result = await invokeRpcOperation(
      {
        op,
        fields: fieldsOf(op, request.params),
        principal: call.principal,
        correlationId: call.correlationId,
        transport: 'jsonrpc',
      },
      services,
    );
    return { ...echo, version: API_VERSION, method: request.method, result: result ?? {} };
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(err.status, err.code, err.message, { ...err.extra, method: request.method, ...echo });
    throw err;
  }
}

/** Methods the gateway answers, for documentation and discovery. */
export function jsonRpcMethods(operations: readonly Operation[]): string[] {
  return [
    ...jsonRpcOperations(operations).map((o) => `${RPC_METHOD_PREFIX}${o.rpc!.name}`),
    ...operations.flatMap((o) => (o.rpc ? (o.jsonRpcAliases ?? []) : [])),
  ];
}
