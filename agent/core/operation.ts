import type { OperationSpec } from '../../api/spec.js';
import type { Principal } from '../security/principal.js';

export type { Access, HttpMethod, OperationSpec, RpcRequestKind } from '../../api/spec.js';
export { accessLabel, accessOf, cliWords, isAudited, isMutation, pathParams, WRITE_ACCESS_FOR_MUTATES_WHEN, writesOn } from '../../api/spec.js';

export type Transport = 'rest' | 'grpc' | 'jsonrpc' | 'cli';

export interface OperationInput<B, Q> {
  body: B;
  query: Q;
  params: Record<string, string>;
}

/** Who is calling and how: what the invoke kernel hands every handler besides its services. */
export interface CallContext {
  principal: Principal | null;
  correlationId: string;
  transport: Transport;
}

/** A handler's context: the call plus only the services its domain declared (`agent/core/handlers.ts`). */
export interface HandlerContext<S> extends CallContext {
  services: S;
}

/**
 * A spec with the handler bound to it: what the invoke kernel (`agent/core/invoke.ts`) runs. Built
 * at start by `bindOperations` from the contract and the domains' handler sets; the transports only
 * ever see this list.
 */
export interface Operation<B = unknown, Q = unknown> extends OperationSpec<B, Q> {
  handler(input: OperationInput<B, Q>, ctx: CallContext): unknown | Promise<unknown>;
}
