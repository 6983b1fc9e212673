import { defineOperation, type Operation } from './legacy-operation.js';
import { handleJsonRpc, rpcRequestSchema, type RpcRequest } from '../rpc/jsonrpc-gateway.js';

/** The JSON-RPC gateway for clients without a gRPC stack (spec: Transports; api-behaviour §12). */
export const rpcOperations: Operation[] = [
  defineOperation<RpcRequest>({
    id: 'callRpc',
    group: 'rpc',
    summary: 'JSON-RPC gateway: call svc.v1.ControlCenter/<Rpc> with params.body_json (a JSON string), query and ids',
    description:
      'Each inner method applies the access rule of its REST parity route (role, administrator, read-auth policy); refusals are HTTP 401/403 with the standard error envelope. Unknown methods answer 400 `unknown rpc method: <m>`.',
    method: 'POST',
    path: '/v1/rpc',
    // The gateway itself is open; each inner method is checked with the caller's principal (D5).
    access: { kind: 'public' },
    cli: false,
    body: rpcRequestSchema,
    handler: ({ body }, ctx) => handleJsonRpc(body, ctx),
  }),
];
