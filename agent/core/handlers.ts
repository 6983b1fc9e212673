import type { OperationSpec } from '../../api/spec.js';
import type { Services } from '../runtime/services.js';
import type { CallContext, HandlerContext, Operation, OperationInput } from './operation.js';

export type ServiceName = keyof Services;

/** One handler bound to one spec of the contract, with the services it may use. */
export interface HandlerBinding {
  readonly spec: OperationSpec;
  /** The services the handler may use; `'all'` only for transitional combined operations. */
  readonly needs: readonly ServiceName[] | 'all';
  run(input: OperationInput<unknown, unknown>, ctx: HandlerContext<Partial<Services>>): unknown | Promise<unknown>;
}

export type Handler<B, Q, S> = (input: OperationInput<B, Q>, ctx: HandlerContext<S>) => unknown | Promise<unknown>;

/**
 * A domain's handler factory: the domain names the services its handlers use once, and each handler
 * is typed by its spec's body and query and sees only those services.
 *
 *     const on = handlersFor(['devices', 'project']);
 *     export const fleetHandlers = [on(getDeviceTree, (_input, ctx) => ctx.services.devices.list())];
 */
export function handlersFor<K extends ServiceName>(needs: readonly K[]) {
  return <B, Q>(spec: OperationSpec<B, Q>, run: Handler<B, Q, Pick<Services, K>>): HandlerBinding => ({
    spec: spec as OperationSpec,
    needs,
    run: run as HandlerBinding['run'],
  });
}

/**
 * The services a handler declared, as a plain object built on the first call (every module has
 * opened and `operations` is bound by then). Plain data properties keep the hot path (health,
 * device reads) as fast as reading the container itself; the values are the container's own objects.
 */
function narrowServices(services: Services, needs: readonly ServiceName[] | 'all'): () => Partial<Services> {
  if (needs === 'all') return () => services;
  let view: Partial<Services> | null = null;
  return () => (view ??= Object.freeze(Object.fromEntries(needs.map((name) => [name, services[name]])) as Partial<Services>));
}

/**
 * Joins the contract with the handlers: every spec gets exactly one handler, and every handler names
 * a spec of the contract (the same object, so a handler cannot drift from its spec). The result, in
 * contract order, is the only list the transports see.
 */
export function bindOperations(specs: readonly OperationSpec[], bindings: readonly HandlerBinding[], services: Services): Operation[] {
  const byId = new Map<string, HandlerBinding>();
  for (const b of bindings) {
    if (byId.has(b.spec.id)) throw new Error(`operation ${b.spec.id} has two handlers`);
    byId.set(b.spec.id, b);
  }
  const bound = specs.map((spec): Operation => {
    const b = byId.get(spec.id);
    if (!b) throw new Error(`operation ${spec.id} has no handler`);
    if (b.spec !== spec) throw new Error(`the handler of ${spec.id} is bound to another spec object than the contract's`);
    byId.delete(spec.id);
    const view = narrowServices(services, b.needs);
    return {
      ...spec,
      handler: (input, ctx: CallContext) =>
        b.run(input as OperationInput<unknown, unknown>, { principal: ctx.principal, correlationId: ctx.correlationId, transport: ctx.transport, services: view() }),
    };
  });
  if (byId.size > 0) throw new Error(`handlers for operations not in the contract: ${[...byId.keys()].join(', ')}`);
  return bound;
}
