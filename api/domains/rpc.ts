import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * The body of `POST /v1/rpc` (docs/grpc.md § JSON-RPC gateway, docs/wire-decisions.md D5):
 * `{method, params}` where `method` is `svc.v1.ControlCenter/<Rpc>` of an operation flagged `jsonRpc`
 * and `params` holds the fields of the RPC's request message as strings (`body_json`, `query`,
 * `entity_id`, `device_id`, …). JSON-RPC 2.0 clients may add `jsonrpc` and `id`, which are echoed on
 * the answer, success or error.
 */
export const rpcRequestSchema = z.lazy(() => z.object({
  method: z.string().max(200),
  params: z.record(z.string(), z.unknown()).optional(),
  jsonrpc: z.literal('2.0').optional(),
  id: z.union([z.string().max(200), z.number(), z.null()]).optional(),
}));
export type RpcRequest = z.infer<typeof rpcRequestSchema>;

/** The JSON-RPC gateway for clients without a gRPC stack (docs/grpc.md § JSON-RPC gateway). */
export const callRpc = defineSpec<RpcRequest>({
  id: 'callRpc',
  group: 'rpc',
  summary: 'JSON-RPC gateway: call svc.v1.ControlCenter/<Rpc> with params.body_json (a JSON string), query and ids',
  description:
    'Each inner method applies the access rule of its REST parity route (role, administrator, read-auth policy); refusals are HTTP 401/403 with the standard error envelope. Unknown methods answer 400 `unknown rpc method: <m>`.',
  method: 'POST',
  path: '/v1/rpc',
  // The gateway itself is open; each inner method is checked with the caller's principal (docs/wire-decisions.md D5).
  access: { kind: 'public' },
  cli: false,
  body: rpcRequestSchema,
});

export const rpcSpecs = [callRpc];
