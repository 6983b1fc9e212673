import { callRpc } from '../../api/domains/rpc.js';
import { handlersFor } from '../core/handlers.js';
import { handleJsonRpc } from './jsonrpc-gateway.js';

// The gateway resolves the inner method in the bound operation table and runs it through the invoke
// kernel, which needs the settings and event bus (access), the audit chain and the trace ring.
const on = handlersFor(['operations', 'settings', 'bus', 'traces', 'audit']);

/** `POST /v1/rpc`: the JSON-RPC gateway (docs/grpc.md § JSON-RPC gateway). */
export const rpcHandlers = [on(callRpc, ({ body }, ctx) => handleJsonRpc(body, ctx, ctx.services))];
