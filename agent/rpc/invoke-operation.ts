import { idFields, pathParamSources, REQUEST_MESSAGE_FIELDS } from '../../api/rpc-contract.js';
import { badRequest, payloadTooLarge } from '../core/errors.js';
import { parseJsonObject } from '../core/json-body.js';
import { invoke, type KernelServices } from '../core/invoke.js';
import { accessOf, type Operation } from '../core/operation.js';
import type { Services } from '../runtime/services.js';
import { enforceAccess } from '../security/access.js';
import type { Principal } from '../security/principal.js';

/**
 * Running an operation from an RPC request message — shared by the gRPC service and the JSON-RPC
 * gateway, so both apply exactly what REST applies: the access rule of the parity route (read
 * policy evaluated on the concrete path), body parsing of docs/wire-decisions.md D3, the operation's schemas, the handler,
 * and the mutation audit. Transport-neutral: callers map the thrown `ApiError` onto their wire.
 */

/** The string fields of a request message (`body_json`, `query`, ids); absent and "" are the same. */
export type RpcFields = Readonly<Record<string, string | undefined>>;

export interface RpcCall {
  op: Operation;
  fields: RpcFields;
  principal: Principal | null;
  correlationId: string;
  transport: 'grpc' | 'jsonrpc';
}

/** Path parameters carried by message fields; those read from `body_json` stay `{name}` here. */
function paramsFromFields(op: Operation, fields: RpcFields): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [param, source] of Object.entries(pathParamSources(op))) {
    if (source.from !== 'field') continue;
    const value = fields[source.name] ?? '';
    if (value === '') throw badRequest(`missing ${source.name}`);
    params[param] = value;
  }
  return params;
}

/** Query parameters: the `query` text (first value of a repeated key, as REST) plus unused id fields. */
function queryFromFields(op: Operation, fields: RpcFields): Record<string, string> {
  const kind = op.rpc!.request;
  const query: Record<string, string> = {};
  if (REQUEST_MESSAGE_FIELDS[kind].includes('query')) {
    const text = (fields['query'] ?? '').replace(/^\?/, '');
    for (const [k, v] of new URLSearchParams(text)) if (!(k in query)) query[k] = v;
  }
  const usedForPath = new Set(Object.values(pathParamSources(op)).filter((s) => s.from === 'field').map((s) => s.name));
  for (const f of idFields(kind)) {
    const v = fields[f] ?? '';
    if (!usedForPath.has(f) && v !== '') query[f] = v;
  }
  return query;
}

/** docs/wire-decisions.md D3 on `body_json`, then the path parameters the operation reads from it (`rpc.bodyParams`). */
function bodyFromFields(op: Operation, fields: RpcFields, params: Record<string, string>, maxBodyBytes: number): Record<string, unknown> {
  const kind = op.rpc!.request;
  if (!REQUEST_MESSAGE_FIELDS[kind].includes('body_json')) return {};
  const text = fields['body_json'] ?? '';
  if (Buffer.byteLength(text, 'utf8') > maxBodyBytes) throw payloadTooLarge();
  const body = parseJsonObject(text);
  for (const [param, source] of Object.entries(pathParamSources(op))) {
    if (source.from !== 'body') continue;
    const value = body[source.name];
    if (typeof value !== 'string' || value === '') throw badRequest(`${source.name} required in body_json`);
    params[param] = value;
    delete body[source.name];
  }
  return body;
}

/**
 * Checks everything that does not need the body: field-carried ids and the access rule. Split out
 * so a transport can run it before spending a rate-limit token (order of checks: docs/api.md § Errors, docs/architecture.md "A request, step by step").
 */
export function checkRpcAccess(call: Pick<RpcCall, 'op' | 'fields' | 'principal'>, services: Services): void {
  const params = paramsFromFields(call.op, call.fields);
  enforceAccess(accessOf(call.op), call.principal, services, { operation: call.op.id, rpc: call.op.rpc!.name });
}

/** Runs the operation through the invoke kernel and returns its JSON body (the same value REST serialises). */
export async function invokeRpcOperation(call: RpcCall, services: KernelServices): Promise<unknown> {
  const { op, fields } = call;
  // Access first (an unauthenticated malformed call is refused as unauthenticated, as on REST): the
  // ids carried as fields are checked here, the body and the ids it carries only after access.
  const params = paramsFromFields(op, fields);
  return invoke(
    op,
    {
      principal: call.principal,
      correlationId: call.correlationId,
      transport: call.transport,
      params,
      query: queryFromFields(op, fields),
      body: () => bodyFromFields(op, fields, params, services.settings.maxBodyBytes),
      accessDetail: { rpc: op.rpc!.name },
    },
    services,
  );
}
