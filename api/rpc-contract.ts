import { accessOf, isMutation, pathParams, rpcBindings, type Access, type OperationSpec as Operation, type RpcRequestKind } from './spec.js';
import { PROTO_FILE, PROTO_PACKAGE, PROTO_SEMVER } from './versions.js';

/**
 * The gRPC contract, derived from the contract (docs/architecture.md rule 1): one unary RPC per operation that
 * names an `rpc`, plus `Health` and the two server-streaming RPCs. The checked-in
 * `proto/svc/v1/control_center.proto` is `renderProto(buildRpcContract(OPERATIONS))`; the gRPC server
 * builds its service from the same contract at start, and the JSON-RPC gateway resolves its methods
 * here. Nothing in this file knows a particular operation.
 */

export const SERVICE_NAME = 'ControlCenter';
export const SERVICE_FULL_NAME = `${PROTO_PACKAGE}.${SERVICE_NAME}`;
/** JSON-RPC and gRPC method paths: `svc.v1.ControlCenter/<Rpc>`. */
export const RPC_METHOD_PREFIX = `${SERVICE_FULL_NAME}/`;

export type ProtoScalar = 'string' | 'uint64' | 'bool';

export interface ProtoField {
  name: string;
  number: number;
  type: ProtoScalar;
  repeated?: boolean;
  comment?: string;
}

export interface ProtoMessage {
  name: string;
  comment: string;
  fields: ProtoField[];
}

export type StreamKind = 'events' | 'telemetry';

export interface ProtoRpc<T extends Operation = Operation> {
  name: string;
  request: string;
  response: string;
  serverStream: boolean;
  comment: string;
  /** The operation behind a unary RPC (null for `Health` and the streams). */
  operation: T | null;
  stream: StreamKind | null;
}

export interface RpcContract<T extends Operation = Operation> {
  package: string;
  service: string;
  semver: string;
  messages: ProtoMessage[];
  rpcs: ProtoRpc<T>[];
}

/** Fields of each request message kind, numbered in this order (docs/grpc.md § The contract). */
export const REQUEST_MESSAGE_FIELDS: Record<RpcRequestKind, readonly string[]> = {
  Empty: [],
  JsonBodyRequest: ['body_json'],
  ReadinessRequest: ['body_json'],
  QueryRequest: ['query'],
  DeviceIdRequest: ['device_id'],
  DeviceBodyRequest: ['device_id', 'body_json'],
  EntityIdRequest: ['entity_id'],
  EntityBodyRequest: ['entity_id', 'body_json'],
  IncidentIdRequest: ['incident_id'],
  IncidentBodyRequest: ['incident_id', 'body_json'],
  ApprovalBodyRequest: ['approval_id', 'body_json'],
  TrustPackageRequest: ['package_name'],
  DriftRequest: ['baseline_id'],
};

const FIELD_COMMENTS: Record<string, string> = {
  body_json: 'The JSON request body of the REST parity route, as text ("" counts as {}).',
  query: 'The query string of the REST parity route, without "?" (e.g. "file=a.sd&target=x").',
};

/** Fields of a request kind that are identifiers (everything but `body_json` and `query`). */
export function idFields(kind: RpcRequestKind): string[] {
  return REQUEST_MESSAGE_FIELDS[kind].filter((f) => f !== 'body_json' && f !== 'query');
}

/**
 * Where each path parameter of an RPC-bearing operation comes from: a field of `body_json`
 * (`rpc.bodyParams`), the message field of the same name, or the message's only id field when the
 * path has only one parameter left. Throws for an operation whose declaration cannot be served.
 */
export function pathParamSources(op: Operation): Record<string, { from: 'field' | 'body'; name: string }> {
  const rpc = op.rpc!;
  const params = pathParams(op.path);
  const ids = idFields(rpc.request);
  const fromBody = rpc.bodyParams ?? {};
  const out: Record<string, { from: 'field' | 'body'; name: string }> = {};
  for (const [param, field] of Object.entries(fromBody)) {
    if (!params.includes(param)) throw new Error(`operation ${op.id}: rpc.bodyParams names '${param}', which is not a parameter of ${op.path}`);
    if (!REQUEST_MESSAGE_FIELDS[rpc.request].includes('body_json')) {
      throw new Error(`operation ${op.id}: rpc.bodyParams needs a request message with body_json, not ${rpc.request}`);
    }
    out[param] = { from: 'body', name: field };
  }
  const open = params.filter((p) => !(p in out));
  for (const p of open) {
    if (ids.includes(p)) out[p] = { from: 'field', name: p };
  }
  const still = open.filter((p) => !(p in out));
  const unusedIds = ids.filter((f) => !Object.values(out).some((s) => s.from === 'field' && s.name === f));
  if (still.length === 1 && unusedIds.length >= 1) out[still[0]!] = { from: 'field', name: unusedIds[0]! };
  else if (still.length > 0) {
    throw new Error(`operation ${op.id}: ${rpc.request} cannot supply path parameter(s) ${still.join(', ')} of ${op.path}; set rpc.bodyParams or pick another request message`);
  }
  return out;
}

function describeAccess(access: Access, method: string): string {
  switch (access.kind) {
    case 'public':
      return 'public';
    case 'read':
      return method === 'GET' ? 'read (read-auth policy)' : 'read-like (read-auth policy)';
    case 'sensitive-read':
      return method === 'GET' ? 'sensitive read (read-auth policy)' : 'sensitive read-like (read-auth policy)';
    case 'action':
      return `role with ${access.action}`;
    case 'admin':
      return 'administrator';
  }
}

function unaryComment(op: Operation): string {
  const parts = [`${op.method} ${op.path}`, describeAccess(accessOf(op), op.method)];
  if (isMutation(op)) parts.push('audited');
  if (op.jsonRpc) parts.push('JSON-RPC');
  const sources = pathParamSources(op);
  const fromBody = Object.entries(sources).filter(([, s]) => s.from === 'body');
  if (fromBody.length > 0) parts.push(fromBody.map(([p, s]) => `{${p}} = body_json.${s.name} (required)`).join(', '));
  return `${parts.join(' · ')}. ${op.summary}`;
}

const STREAM_MESSAGES: ProtoMessage[] = [
  {
    name: 'StreamEventsRequest',
    comment: 'Filters of StreamEvents; an empty list means no filter on that dimension.',
    fields: [
      { name: 'event_types', number: 1, type: 'string', repeated: true, comment: 'Platform event names, PascalCase (HealthChanged) or snake_case (health_changed).' },
      { name: 'device_ids', number: 2, type: 'string', repeated: true, comment: "Only events about these ids: the event's entity_id, or payload.device_id / payload.entity_id." },
      { name: 'tenant_id', number: 3, type: 'string', comment: 'When set it must be the instance tenant (PERMISSION_DENIED otherwise). Events of other tenants are never sent.' },
    ],
  },
  {
    name: 'PlatformEventFrame',
    comment: 'One platform event (docs/events.md § Platform events).',
    fields: [
      { name: 'type', number: 1, type: 'string', comment: 'PascalCase event name, e.g. HealthChanged.' },
      { name: 'stream_name', number: 2, type: 'string', comment: 'The snake_case name WebSocket clients see, e.g. health_changed.' },
      { name: 'timestamp', number: 3, type: 'string', comment: 'RFC 3339.' },
      { name: 'source', number: 4, type: 'string' },
      { name: 'entity_id', number: 5, type: 'string' },
      { name: 'json', number: 6, type: 'string', comment: 'The whole event envelope {type, timestamp, source, entity_id?, payload} as JSON.' },
      { name: 'dropped', number: 7, type: 'uint64', comment: 'Events dropped for this subscriber so far because it read too slowly (0 when none).' },
    ],
  },
  {
    name: 'StreamTelemetryRequest',
    comment: 'Filters of StreamTelemetry; an empty list means no filter on that dimension.',
    fields: [
      { name: 'kinds', number: 1, type: 'string', repeated: true, comment: 'Telemetry kinds: device, sensor, heartbeat, device_heartbeat, health, session, runtime_metrics, platform.' },
      { name: 'device_ids', number: 2, type: 'string', repeated: true, comment: 'Only telemetry of these devices (device_id, health target, or platform entity_id).' },
      { name: 'tenant_id', number: 3, type: 'string', comment: 'When set it must be the instance tenant (PERMISSION_DENIED otherwise).' },
      { name: 'replay', number: 4, type: 'bool', comment: 'First replay what the telemetry ring still holds from since_offset, then go live.' },
      { name: 'since_offset', number: 5, type: 'uint64', comment: 'With replay: the first offset wanted (older items that were evicted count as dropped).' },
    ],
  },
  {
    name: 'TelemetryFrame',
    comment: 'One telemetry event, the same JSON the WebSocket stream carries in `event`.',
    fields: [
      { name: 'offset', number: 1, type: 'uint64', comment: 'Absolute offset in the telemetry backlog (resume with since_offset = offset + 1).' },
      { name: 'kind', number: 2, type: 'string' },
      { name: 'json', number: 3, type: 'string' },
      { name: 'dropped', number: 4, type: 'uint64', comment: 'Frames dropped for this subscriber so far (slow reader or ring overrun).' },
    ],
  },
];

const contracts = new WeakMap<readonly Operation[], RpcContract<Operation>>();

/** The gRPC contract of a list of specs (cached per list: the list is fixed for a process). */
export function buildRpcContract<T extends Operation>(operations: readonly T[]): RpcContract<T> {
  const cached = contracts.get(operations) as RpcContract<T> | undefined;
  if (cached) return cached;

  const messages: ProtoMessage[] = [];
  for (const [kind, fields] of Object.entries(REQUEST_MESSAGE_FIELDS)) {
    messages.push({
      name: kind,
      comment: fields.length === 0 ? 'No input.' : `Carries ${fields.join(', ')}.`,
      fields: fields.map((name, i) => ({ name, number: i + 1, type: 'string' as const, ...(FIELD_COMMENTS[name] ? { comment: FIELD_COMMENTS[name] } : {}) })),
    });
  }
  messages.push({
    name: 'JsonResponse',
    comment: 'Every unary RPC but Health answers with the REST body of its parity route.',
    fields: [{ name: 'json', number: 1, type: 'string', comment: 'Exactly the JSON text REST returns for the same input.' }],
  });
  messages.push({
    name: 'HealthResponse',
    comment: 'Liveness for gRPC health probes.',
    fields: [{ name: 'status', number: 1, type: 'string', comment: '"ok;<proto_semver>;rpcs=<rpc count>".' }],
  });
  messages.push(...STREAM_MESSAGES);

  const rpcs: ProtoRpc<T>[] = [
    { name: 'Health', request: 'Empty', response: 'HealthResponse', serverStream: false, comment: 'Public; never guarded, never rate limited.', operation: null, stream: null },
  ];
  const seen = new Map<string, string>([['Health', '(built in)']]);
  for (const op of operations.flatMap((o) => rpcBindings(o))) {
    const { name, request } = op.rpc!;
    if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new Error(`operation ${op.id}: rpc name '${name}' is not a PascalCase identifier`);
    const previous = seen.get(name);
    if (previous) throw new Error(`rpc ${name} is declared twice (operations ${previous} and ${op.id})`);
    seen.set(name, op.id);
    rpcs.push({ name, request, response: 'JsonResponse', serverStream: false, comment: unaryComment(op), operation: op, stream: null });
  }
  for (const s of [
    { name: 'StreamEvents', request: 'StreamEventsRequest', response: 'PlatformEventFrame', stream: 'events' as const, comment: 'Live platform events from the event bus. Access: like WS /v1/stream/telemetry.' },
    {
      name: 'StreamTelemetry',
      request: 'StreamTelemetryRequest',
      response: 'TelemetryFrame',
      stream: 'telemetry' as const,
      comment: 'Live telemetry (optionally replayed from an offset). Access: like WS /v1/stream/telemetry.',
    },
  ]) {
    if (seen.has(s.name)) throw new Error(`rpc ${s.name} is reserved for the streaming RPC; operation ${seen.get(s.name)} may not use it`);
    rpcs.push({ ...s, serverStream: true, operation: null });
  }

  const contract: RpcContract<T> = { package: PROTO_PACKAGE, service: SERVICE_NAME, semver: PROTO_SEMVER, messages, rpcs };
  contracts.set(operations, contract as RpcContract<Operation>);
  return contract;
}

/** RPCs of the ControlCenter service (unary, Health and streams): what /v1/version and /v1/health report. */
export function rpcCount(operations: readonly Operation[]): number {
  return buildRpcContract(operations).rpcs.length;
}

/** `svc.v1.ControlCenter/<Rpc>` → the RPC, or null. */
export function findRpc<T extends Operation>(operations: readonly T[], method: string): ProtoRpc<T> | null {
  if (!method.startsWith(RPC_METHOD_PREFIX)) return null;
  const name = method.slice(RPC_METHOD_PREFIX.length);
  return buildRpcContract(operations).rpcs.find((r) => r.name === name) ?? null;
}

function commentLines(text: string, indent: string): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && line.length + w.length + 1 > 96) {
      lines.push(`${indent}// ${line}`);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(`${indent}// ${line}`);
  return lines;
}

/** The `.proto` text of a contract: deterministic, so the checked-in file can be diffed against it. */
export function renderProto(contract: RpcContract): string {
  const out: string[] = [
    `// ${PROTO_FILE}`,
    '// GENERATED from the contract (api/) by `npm run proto:generate`. Do not edit:',
    '// change the table and regenerate; a test fails when this file and the table differ.',
    '//',
    `// proto_semver ${contract.semver} (reported by GET /v1/version as grpc.proto_semver).`,
    '// Metadata: authorization: Bearer <API key or session token> (or x-api-key: <key>), optional',
    '// x-svc-api-version: v1. Failures are gRPC status codes; the REST error code travels in the',
    '// svc-error-code trailer and the REST error envelope in svc-error-json. See docs/grpc.md.',
    '',
    'syntax = "proto3";',
    '',
    `package ${contract.package};`,
    '',
  ];
  for (const m of contract.messages) {
    out.push(...commentLines(m.comment, ''));
    if (m.fields.length === 0) {
      out.push(`message ${m.name} {}`, '');
      continue;
    }
    out.push(`message ${m.name} {`);
    for (const f of m.fields) {
      if (f.comment) out.push(...commentLines(f.comment, '  '));
      out.push(`  ${f.repeated ? 'repeated ' : ''}${f.type} ${f.name} = ${f.number};`);
    }
    out.push('}', '');
  }
  out.push(`service ${contract.service} {`);
  contract.rpcs.forEach((r, i) => {
    if (i > 0) out.push('');
    out.push(...commentLines(r.comment, '  '));
    out.push(`  rpc ${r.name}(${r.request}) returns (${r.serverStream ? 'stream ' : ''}${r.response});`);
  });
  out.push('}', '');
  return out.join('\n');
}
