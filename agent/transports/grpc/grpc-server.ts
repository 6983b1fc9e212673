import { createServer, type CallContext, type Server } from 'nice-grpc';
import { ServerReflection, ServerReflectionService } from 'nice-grpc-server-reflection';
import { correlationIdOf } from '../../../api/correlation-id.js';
import { buildRpcContract, RPC_METHOD_PREFIX, SERVICE_FULL_NAME, type ProtoRpc } from '../../../api/rpc-contract.js';
import { accessOf, type Operation } from '../../core/operation.js';
import { checkRpcAccess, invokeRpcOperation } from '../../rpc/invoke-operation.js';
import { formatBindAddress, parseBindAddress } from '../../runtime/bind-address.js';
import type { Services } from '../../runtime/services.js';
import { PROTO_SEMVER } from '../../../api/versions.js';
import { encodeDescriptorSet } from './descriptor-set.js';
import { toServerError } from './grpc-errors.js';
import { checkStreamAccess, guardCall, takeRateLimit } from './grpc-guard.js';
import { buildServiceDefinition } from './service-definition.js';
import { openEventStream, openTelemetryStream, type StreamEventsRequest, type StreamTelemetryRequest } from './streams.js';

/** Room for the message framing around the largest body a REST request may carry. */
const MESSAGE_OVERHEAD_BYTES = 64 * 1024;
/** How long `close()` lets unary calls in flight finish before cancelling them. */
const GRACEFUL_SHUTDOWN_MS = 2000;

type Handler = (request: Record<string, unknown>, context: CallContext) => unknown;

/**
 * The gRPC transport: the `svc.v1.ControlCenter` service built from the operation table, plus
 * server reflection (`grpc.reflection.v1.ServerReflection`). A thin adapter: every unary RPC runs the
 * guard (docs/grpc.md, "Authentication and metadata") and then the shared RPC invocation (`agent/rpc`), exactly the security code REST runs.
 */
export class GrpcServer {
  private readonly streams = new Set<AbortController>();

  private constructor(
    private readonly server: Server,
    readonly address: string,
  ) {}

  static async start(services: Services, bind: string, log: (line: string) => void): Promise<GrpcServer> {
    const { host, port } = parseBindAddress(bind);
    const contract = buildRpcContract(services.operations);
    const server = createServer({
      'grpc.max_receive_message_length': services.settings.maxBodyBytes + MESSAGE_OVERHEAD_BYTES,
    });
    // The instance is created before listening so stream handlers can register with it.
    const holder: { self: GrpcServer | null } = { self: null };
    const implementation: Record<string, Handler> = {};
    for (const rpc of contract.rpcs) implementation[rpc.name] = handlerFor(rpc, services, log, () => holder.self!);
    server.add(buildServiceDefinition(contract), implementation as never);
    server.add(ServerReflectionService, ServerReflection(encodeDescriptorSet(contract), [SERVICE_FULL_NAME]));
    const boundPort = await server.listen(formatBindAddress(host, port));
    const self = new GrpcServer(server, formatBindAddress(host, boundPort));
    holder.self = self;
    return self;
  }

  /** Ends open streams, lets unary calls finish (bounded), then stops. Safe to call twice. */
  async close(): Promise<void> {
    for (const s of this.streams) s.abort();
    this.streams.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.server.shutdown(),
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.server.forceShutdown();
          resolve();
        }, GRACEFUL_SHUTDOWN_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Open streaming calls (diagnostics and tests). */
  get openStreams(): number {
    return this.streams.size;
  }

  /** A signal that aborts when the client goes away or the server closes. */
  trackStream(context: CallContext): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    const onClientAbort = () => controller.abort();
    context.signal.addEventListener('abort', onClientAbort);
    this.streams.add(controller);
    return {
      signal: controller.signal,
      done: () => {
        context.signal.removeEventListener('abort', onClientAbort);
        this.streams.delete(controller);
      },
    };
  }
}

function callContext(context: CallContext): string {
  const id = correlationIdOf(context.metadata.get('x-correlation-id') as string | undefined);
  context.header.set('x-correlation-id', id);
  return id;
}

function handlerFor(rpc: ProtoRpc<Operation>, services: Services, log: (line: string) => void, server: () => GrpcServer): Handler {
  if (rpc.name === 'Health') {
    const count = buildRpcContract(services.operations).rpcs.length;
    return () => ({ status: `ok;${PROTO_SEMVER};rpcs=${count}` });
  }
  if (rpc.operation) return unaryHandler(rpc.operation, services, log);
  const open = rpc.stream === 'events' ? openEventStream : openTelemetryStream;
  return async function* (request: Record<string, unknown>, context: CallContext) {
    callContext(context);
    let frames: (signal: AbortSignal) => AsyncGenerator<unknown>;
    try {
      const principal = await guardCall(context.metadata, services);
      checkStreamAccess(principal, rpc.name, services);
      takeRateLimit(principal, services);
      frames = (open as (r: unknown, s: Services) => typeof frames)(request as unknown as StreamEventsRequest & StreamTelemetryRequest, services);
    } catch (err) {
      throw toServerError(err, context.trailer, log);
    }
    const tracked = server().trackStream(context);
    try {
      yield* frames(tracked.signal);
    } finally {
      tracked.done();
    }
  } as unknown as Handler;
}

function unaryHandler(op: Operation, services: Services, log: (line: string) => void): Handler {
  const method = `${RPC_METHOD_PREFIX}${op.rpc!.name}`;
  return async (request, context) => {
    const correlationId = callContext(context);
    try {
      const principal = await guardCall(context.metadata, services);
      const fields = request as Record<string, string>;
      // Read policy before the rate limit (guard steps 5, 6 in docs/grpc.md); roles are checked with the handler.
      if (['read', 'sensitive-read'].includes(accessOf(op).kind)) checkRpcAccess({ op, fields, principal }, services);
      takeRateLimit(principal, services);
      const result = await invokeRpcOperation({ op, fields, principal, correlationId, transport: 'grpc' }, services);
      return { json: JSON.stringify(result ?? {}) };
    } catch (err) {
      throw toServerError(err, context.trailer, log);
    }
  };
}
