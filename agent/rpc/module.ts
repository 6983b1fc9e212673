import { defineModule } from '../core/module.js';
import { rpcHandlers } from './handlers.js';

/**
 * The JSON-RPC gateway (`POST /v1/rpc`). Handler only; opened last, as it calls the operations of
 * every other domain through the bound operation table.
 */
export const rpcModule = defineModule({
  name: 'rpc',
  open: () => ({ handlers: rpcHandlers }),
});
