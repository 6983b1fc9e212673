import path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import type { ServiceDefinition as GrpcJsServiceDefinition } from '@grpc/grpc-js';
import { ClientError, Metadata, Status, createChannel, createClient, type Channel } from 'nice-grpc';
import { ServerReflectionService } from 'nice-grpc-server-reflection';

/** The checked-in contract, loaded the way any client would: from the `.proto` file, not from agent code. */
export const PROTO_PATH = path.resolve(__dirname, '../../proto/svc/v1/control_center.proto');

let definition: GrpcJsServiceDefinition | null = null;
export function controlCenterDefinition(): GrpcJsServiceDefinition {
  if (!definition) {
    const pkg = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: Number, defaults: true, enums: String });
    definition = pkg['svc.v1.ControlCenter'] as GrpcJsServiceDefinition;
  }
  return definition;
}

/** Untyped view of the dynamic client: `client.GetTenant({}, {metadata})`. */
type RpcFn = (request: Record<string, unknown>, options?: { metadata?: Metadata; signal?: AbortSignal }) => any;
export interface DynamicClient {
  Health: RpcFn;
  StreamEvents: RpcFn;
  StreamTelemetry: RpcFn;
  [rpc: string]: RpcFn;
}

export interface GrpcTestClient {
  channel: Channel;
  client: DynamicClient;
  reflection: ReturnType<typeof createClient<typeof ServerReflectionService>>;
  close(): void;
}

export function connectGrpc(address: string): GrpcTestClient {
  const channel = createChannel(address);
  const client = createClient(controlCenterDefinition(), channel) as unknown as DynamicClient;
  const reflection = createClient(ServerReflectionService, channel);
  return { channel, client, reflection, close: () => channel.close() };
}

export function metadata(entries: Record<string, string> = {}): Metadata {
  const m = new Metadata();
  for (const [k, v] of Object.entries(entries)) m.set(k, v);
  return m;
}

export function bearer(token: string, extra: Record<string, string> = {}): Metadata {
  return metadata({ authorization: `Bearer ${token}`, ...extra });
}

export interface GrpcOutcome {
  ok: boolean;
  status: Status;
  statusName: string;
  message: string;
  json: any;
  /** svc-error-code / svc-error-json trailers of a failure. */
  errorCode: string | null;
  errorEnvelope: any;
}

/** Calls a unary RPC and reports the outcome instead of throwing. Trailers come from `onTrailer`. */
export async function callUnary(client: DynamicClient, rpc: string, request: Record<string, unknown>, md?: Metadata): Promise<GrpcOutcome> {
  let trailer: Metadata | undefined;
  try {
    const res = await client[rpc]!(request, { metadata: md ?? new Metadata(), onTrailer: (t: Metadata) => (trailer = t) } as never);
    return { ok: true, status: Status.OK, statusName: 'OK', message: '', json: res.json !== undefined ? JSON.parse(res.json) : res, errorCode: null, errorEnvelope: null };
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    const envelope = trailer?.get('svc-error-json');
    return {
      ok: false,
      status: err.code,
      statusName: Status[err.code],
      message: err.details,
      json: null,
      errorCode: (trailer?.get('svc-error-code') as string | undefined) ?? null,
      errorEnvelope: typeof envelope === 'string' ? JSON.parse(envelope) : null,
    };
  }
}
