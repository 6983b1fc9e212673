import type { OperationSpec } from '../../api/spec.js';
import type { HandlerBinding } from '../core/handlers.js';
import type { OperationContext, OperationInput } from '../core/operation.js';

export type { HttpMethod, OperationContext, RpcRequestKind } from '../core/operation.js';

/**
 * Transitional form of an operation module that still declares its spec and handler together and
 * whose handler sees every service. Domains are moving to a spec in `api/domains/` plus
 * `handlersFor([...])` in the domain folder (docs/architecture.md, "Adding a domain").
 */
export interface Operation<B = unknown, Q = unknown> extends OperationSpec<B, Q> {
  handler(input: OperationInput<B, Q>, ctx: OperationContext): unknown | Promise<unknown>;
}

export function defineOperation<B = Record<string, never>, Q = Record<string, never>>(op: Operation<B, Q>): Operation {
  return op as unknown as Operation;
}

/** The spec part of a combined operation, and a binding whose handler sees every service. */
export function splitOperation(op: Operation): { spec: OperationSpec; binding: HandlerBinding } {
  const { handler, ...spec } = op;
  return { spec, binding: { spec, needs: 'all', run: handler as HandlerBinding['run'] } };
}
