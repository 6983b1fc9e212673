import fs from 'node:fs';
import path from 'node:path';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessOf, pathParams, type OperationSpec as Operation } from '../../api/spec.js';
import { SPECS } from '../../api/index.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';

/**
 * Parity GENERATED over the operation table: every operation with an RPC is called through REST,
 * gRPC and (when flagged) JSON-RPC with the same input, and must answer the same JSON or the same
 * refusal. New operations are covered without touching this file: ids default to an unknown id
 * (which must then be the same NOT_FOUND everywhere) and bodies to `{}`; FIXTURES give richer input.
 *
 * Three agents with the same project, key and starting state take the same calls in the same order,
 * one transport each, so mutations keep them in lockstep. Values that legitimately differ between
 * two runs (time, generated ids, the state directory) are masked before comparing.
 */

const DEMO = path.resolve(__dirname, '../../demo');
const ADMIN = 'p'.repeat(64);
const AUDITOR = 'auditor-token-for-parity-tests';
const UNKNOWN_ID = 'parity-unknown-id';
const PREFIX = 'svc.v1.ControlCenter/';

type Fields = Record<string, string>;
interface Fixture {
  /** Request message fields (strings). */
  fields?: Fields;
  /** Builds the fields against one agent (through REST) just before the call, e.g. creates an incident. */
  prepare?: (a: RunningAgent) => Promise<Fields>;
}

async function restJson(a: RunningAgent, method: string, p: string, body?: unknown) {
  return a.json(p, { method, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
}

// In this order PatchDevice quarantines sentinel-gps, so DeviceAssign of it and DeviceQuarantine of
// the configured air probe answer 409 — which checks conflict ↔ FAILED_PRECONDITION on the way.
const FIXTURES: Record<string, Fixture> = {
  // Entities and programs of the demo project (robot Sentinel from --program patrol.sd).
  GetEntity: { fields: { entity_id: 'Sentinel' } },
  GetEntityHealth: { fields: { entity_id: 'Sentinel' } },
  GetEntityReadiness: { fields: { entity_id: 'Sentinel' } },
  GetEntityTrust: { fields: { entity_id: 'Sentinel' } },
  GetEntityAutonomy: { fields: { entity_id: 'Sentinel' } },
  GetEntityRelationships: { fields: { entity_id: 'mission:Sentinel:Patrol' } },
  VerifyEntity: { fields: { entity_id: 'Sentinel', body_json: '{}' } },
  TagEntity: { fields: { entity_id: 'Sentinel', body_json: JSON.stringify({ add: ['parity'] }) } },
  RegisterEntity: { fields: { body_json: JSON.stringify({ id: 'parity-dock', entity_type: 'facility', name: 'Parity dock' }) } },
  RelateEntities: { fields: { body_json: JSON.stringify({ from_id: 'Sentinel', to_id: 'mission:NightRound', kind: 'participates_in' }) } },
  EvaluateProgramReadiness: { fields: { body_json: JSON.stringify({ file: 'programs/dock.sd', all_targets: true }) } },
  VerifyProgramCapabilities: { fields: { body_json: JSON.stringify({ traceability: true }) } },
  RunProgramSimulation: { fields: { body_json: JSON.stringify({ execute: true }) } },
  GetTrustProgram: { fields: { query: 'file=programs/patrol.sd' } },
  GetProgramSource: { fields: { query: 'file=programs/dock.sd' } },
  GetDevice: { fields: { device_id: 'sentinel-imu' } },
  PatchDevice: { fields: { device_id: 'sentinel-gps', body_json: JSON.stringify({ lifecycle_state: 'quarantined', override: true }) } },
  DeviceTrust: { fields: { device_id: 'sentinel-gps' } },
  DeviceQuarantine: { fields: { device_id: 'sentinel-air-probe' } },
  DeviceAssign: { fields: { device_id: 'sentinel-gps', body_json: JSON.stringify({ robot_id: 'Sentinel' }) } },
  DeviceProvision: { fields: { device_id: 'sentinel-aisle-cam', body_json: '{}' } },
  ProvisionDevice: { fields: { body_json: JSON.stringify({ device_id: 'sentinel-imu' }) } },
  RunDiscovery: { fields: { body_json: JSON.stringify({ transports: ['serial'], timeout_ms: 100 }) } },
  DiscoverDevices: { fields: { query: 'transport=serial&timeout_ms=100' } },
  GetTrustPackage: { fields: { package_name: 'does-not-exist' } },
  // The entity mesh over the demo registry (robot Sentinel and its devices).
  GetMeshRoutes: { fields: { query: 'source=Sentinel&target=Sentinel' } },
  DiscoverMesh: { fields: { body_json: JSON.stringify({ sources: ['local_runtime', 'entity_graph'] }) } },
  FindMeshCapability: { fields: { body_json: JSON.stringify({ capability: 'navigation' }) } },
  SimulateMeshPartition: { fields: { body_json: JSON.stringify({ entity_ids: ['Sentinel'] }) } },
  CreateSreIncident: { fields: { body_json: JSON.stringify({ title: 'parity incident', severity: 'warning' }) } },
  AckSreIncident: {
    prepare: async (a) => {
      const r = await restJson(a, 'POST', '/v1/sre/incidents', { title: 'to ack' });
      return { incident_id: r.body.incident.id, body_json: JSON.stringify({ assignee: 'ops-1' }) };
    },
  },
  ResolveSreIncident: {
    prepare: async (a) => {
      const r = await restJson(a, 'POST', '/v1/sre/incidents', { title: 'to resolve' });
      return { incident_id: r.body.incident.id };
    },
  },
  CreateAdminApiKey: { fields: { body_json: JSON.stringify({ role: 'operator', label: 'parity' }) } },
  PatchAdminApiKey: {
    prepare: async (a) => {
      const r = await restJson(a, 'POST', '/v1/admin/api-keys', { role: 'operator', label: 'to patch' });
      return { body_json: JSON.stringify({ key_id: r.body.key_id, role: 'auditor' }) };
    },
  },
  DeleteAdminApiKey: {
    prepare: async (a) => {
      const r = await restJson(a, 'POST', '/v1/admin/api-keys', { role: 'operator', label: 'to delete' });
      return { body_json: JSON.stringify({ key_id: r.body.key_id }) };
    },
  },
  CreateAdminUser: { fields: { body_json: JSON.stringify({ user_id: 'parity-user', display_name: 'Parity', role: 'operator' }) } },
  PatchAdminUser: { fields: { body_json: JSON.stringify({ user_id: 'parity-user', display_name: 'Parity Two' }) } },
  DeleteAdminUser: { fields: { body_json: JSON.stringify({ user_id: 'parity-user' }) } },
  // Operator controls on the demo's mission Sentinel/Patrol: started through REST, then paused,
  // resumed and cancelled; NightRound (a plan with no approval request) is approved directly.
  OperatorMissionPause: {
    prepare: async (a) => {
      await restJson(a, 'POST', '/v1/operator/mission/resume', { mission_id: 'Patrol' });
      return { body_json: JSON.stringify({ mission_id: 'Patrol', note: 'parity pause' }) };
    },
  },
  OperatorMissionResume: { fields: { body_json: JSON.stringify({ mission_id: 'Patrol' }) } },
  OperatorMissionCancel: { fields: { body_json: JSON.stringify({ mission_id: 'Patrol' }) } },
  OperatorMissionApprove: { fields: { body_json: JSON.stringify({ mission_id: 'NightRound', approved: true, note: 'parity' }) } },
  OperatorQuarantine: { fields: { body_json: JSON.stringify({ device_id: 'sentinel-air-probe', reason: 'parity' }) } },
  // Configuration approvals on a snapshot of the demo: the requester's own vote on a two-approver
  // request is refused (400 ↔ INVALID_ARGUMENT); the requester may reject it (200).
  ApproveConfigApproval: { prepare: (a) => configApproval(a) },
  RejectConfigApproval: { prepare: (a) => configApproval(a) },
};

async function configApproval(a: RunningAgent): Promise<Fields> {
  const snapshot = (await restJson(a, 'POST', '/v1/config/snapshots', { label: 'parity' })).body.snapshot.id as string;
  const approval = (await restJson(a, 'POST', '/v1/config/approvals', { snapshot_id: snapshot, required_approvals: 2 })).body.approval.id as string;
  return { approval_id: approval, body_json: JSON.stringify({ note: 'parity' }) };
}

/**
 * Operations whose JSON is compared only in part, with the reason. Nothing is skipped outright.
 * - ListAuditMutations: its records are the audit of the earlier calls, and an audit record names
 *   the transport that made the call (control_center.api.mutation for REST, .grpc.mutation for gRPC,
 *   POST /v1/rpc for JSON-RPC) and carries per-request correlation ids and hashes. The count and the
 *   chain verdict must still agree.
 */
const PARTIAL: Record<string, (body: any) => unknown> = {
  ListAuditMutations: (b) => ({ version: b.version, record_count: b.record_count, chain_valid: b.chain_valid }),
  // Autonomy views read live figures: this process's CPU, memory and event-loop delay, the host's
  // load, and ages (seconds since a reading, recency of a change) that grow between two calls. What
  // is compared is everything the figures do not move: which metrics and entities, their sources,
  // the set points, the items and their priorities.
  GetAutonomyHomeostasis: (b) => ({
    version: b.version,
    policy_source: b.policy_source,
    set_points: b.set_points,
    platform: b.platform?.metrics?.map((m: any) => [m.name, m.unit, m.source]),
    reports: b.reports?.map((r: any) => [r.entity_id, r.kind, r.metrics.map((m: any) => m.name)]),
  }),
  GetAutonomyAttention: (b) => ({
    version: b.version,
    policy_source: b.policy_source,
    items: [...(b.attention?.items ?? [])].map((i: any) => [i.event_id, i.label, i.priority, i.suppressed]).sort((x: string[], y: string[]) => (x[0]! < y[0]! ? -1 : x[0]! > y[0]! ? 1 : 0)),
  }),
  // The trace ring records each transport's own calls (a gRPC call is traced as method GRPC with its
  // RPC path) with per-request correlation ids: what is compared is the document's shape.
  GetObservabilityTraces: (b) => ({ version: b.version, traces: Array.isArray(b.traces) }),
  GetOtlpTraces: (b) => ({
    version: b.version,
    span_count: typeof b.span_count,
    resource: b.otlp?.resourceSpans?.[0]?.resource,
    scope: b.otlp?.resourceSpans?.[0]?.scopeSpans?.[0]?.scope,
  }),
  GetOtlpMetrics: (b) => ({
    version: b.version,
    metric_count: b.metric_count,
    names: b.otlp?.resourceMetrics?.[0]?.scopeMetrics?.[0]?.metrics?.map((m: any) => m.name),
  }),
  // traces_recorded is the size of that ring.
  GetSreSummary: (b) => ({ ...b, traces_recorded: typeof b.traces_recorded }),
  GetAutonomyFusion: (b) => ({
    version: b.version,
    entities_evaluated: b.entities_evaluated,
    fusion: b.fusion?.map((f: any) => [f.entity_id, f.group, f.source_labels, f.quantities.map((q: any) => q.metric)]),
  }),
};

/** The default message for a request kind: `{}` bodies, empty query, an unknown id. */
function defaultFields(op: Operation): Fields {
  const kind = op.rpc!.request;
  const f: Fields = {};
  if (/Body|Readiness/.test(kind)) f['body_json'] = '{}';
  if (kind === 'QueryRequest') f['query'] = '';
  for (const id of ['device_id', 'entity_id', 'incident_id', 'approval_id']) if (kind.toLowerCase().startsWith(id.split('_')[0]!)) f[id] = UNKNOWN_ID;
  return f;
}

/** The REST request for the same input, derived here independently of the agent's own mapping. */
function restRequest(op: Operation, fields: Fields): { method: string; url: string; body?: string } {
  const body = fields['body_json'] !== undefined && fields['body_json'] !== '' ? (JSON.parse(fields['body_json']) as Record<string, unknown>) : {};
  const idFields = Object.keys(fields).filter((k) => k !== 'body_json' && k !== 'query');
  const params = pathParams(op.path);
  let url = op.path;
  const usedIds = new Set<string>();
  for (const p of params) {
    let value: string;
    const fromBody = op.rpc!.bodyParams?.[p];
    if (fromBody) {
      value = String(body[fromBody]);
      delete body[fromBody];
    } else {
      const id = idFields.find((f) => f === p) ?? idFields.find((f) => !usedIds.has(f))!;
      usedIds.add(id);
      value = fields[id]!;
    }
    url = url.replace(`{${p}}`, encodeURIComponent(value));
  }
  const query = new URLSearchParams(fields['query'] ?? '');
  for (const id of idFields) if (!usedIds.has(id) && fields[id]) query.set(id, fields[id]!);
  const qs = query.toString();
  return { method: op.method, url: qs ? `${url}?${qs}` : url, ...(op.method === 'GET' ? {} : { body: JSON.stringify(body) }) };
}

/** Masks what differs between two runs of the same calls: time, generated ids, paths of the agent. */
function normalise(value: unknown, a: RunningAgent): unknown {
  const walk = (v: unknown, key: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    if (typeof v === 'number' && (/_ms$/.test(key) || key === 'uptime')) return '<ms>';
    if (typeof v === 'string') {
      if (key === 'token') return '<token>';
      // Decision simulation draws a fresh random nonce per decision (docs/decisions.md).
      if (key === 'nonce') return '<nonce>';
      return v
        .split(a.stateDir)
        .join('<state>')
        .split(projectRoots.get(a) ?? a.stateDir)
        .join('<project>')
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
        .replace(/\d{13}/g, '<ms>');
    }
    return v;
  };
  return walk(value, '');
}

const EXPECTED_STATUS: Record<number, Status> = {
  400: Status.INVALID_ARGUMENT,
  401: Status.UNAUTHENTICATED,
  403: Status.PERMISSION_DENIED,
  404: Status.NOT_FOUND,
  409: Status.FAILED_PRECONDITION,
  413: Status.RESOURCE_EXHAUSTED,
  429: Status.RESOURCE_EXHAUSTED,
};

const RPC_OPS = SPECS.filter((o) => o.rpc);

let rest: RunningAgent;
let grpcAgent: RunningAgent;
let jsonrpc: RunningAgent;
let g: GrpcTestClient;

/** Project directory of each agent: every agent gets its own copy, since some RPCs write to it (SyncEntities). */
const projectRoots = new Map<RunningAgent, string>();

async function demoAgent(extraEnv: Record<string, string> = {}) {
  const project = tempDir('svc-parity-project-');
  fs.cpSync(DEMO, project, { recursive: true });
  const a = await startAgent({
    env: { SVC_API_KEY: ADMIN, ...extraEnv },
    configPath: path.join(project, 'svc.toml'),
    programPath: path.join(project, 'programs/patrol.sd'),
    grpcBind: '127.0.0.1:0',
  });
  projectRoots.set(a, project);
  a.agent.services.credentials.addVerifier((t) =>
    t === AUDITOR ? { key_id: 'auditor-key', role: 'auditor', tenant_id: a.agent.services.settings.tenantId, auth_kind: 'api_key', user_id: null } : null,
  );
  return a;
}

async function viaRest(a: RunningAgent, op: Operation, fields: Fields, token: string | null) {
  const r = restRequest(op, fields);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  const res = await a.json(r.url, { method: r.method, headers, ...(r.body !== undefined ? { body: r.body } : {}) });
  return res.status === 200 ? { ok: true as const, status: 200, json: res.body } : { ok: false as const, status: res.status, envelope: res.body };
}

async function viaJsonRpc(a: RunningAgent, op: Operation, fields: Fields, token: string | null) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  const method = `${PREFIX}${op.rpc!.name}`;
  const res = await a.json('/v1/rpc', { method: 'POST', headers, body: JSON.stringify({ method, params: fields }) });
  if (res.status === 200) {
    expect(res.body).toMatchObject({ version: 'v1', method });
    return { ok: true as const, status: 200, json: res.body.result };
  }
  const { method: m, ...envelope } = res.body;
  expect(m).toBe(method);
  return { ok: false as const, status: res.status, envelope };
}

beforeAll(async () => {
  [rest, grpcAgent, jsonrpc] = await Promise.all([demoAgent(), demoAgent(), demoAgent()]);
  g = connectGrpc(grpcAgent.agent.grpcAddress!);
});
afterAll(async () => {
  g?.close();
  await Promise.all([rest, grpcAgent, jsonrpc].filter(Boolean).map((a) => a.close()));
});

describe('REST ↔ gRPC ↔ JSON-RPC parity, generated from the operation table', () => {
  it('covers every operation that names an RPC', () => {
    expect(RPC_OPS.length).toBeGreaterThan(30);
    for (const name of Object.keys(FIXTURES)) expect(RPC_OPS.some((o) => o.rpc!.name === name), `fixture for unknown RPC ${name}`).toBe(true);
  });

  it('the same input gives the same JSON (or the same refusal) on every transport', async () => {
    const compared: string[] = [];
    for (const op of RPC_OPS) {
      const name = op.rpc!.name;
      const fixture = FIXTURES[name] ?? {};
      const fieldsFor = async (a: RunningAgent) => (fixture.prepare ? await fixture.prepare(a) : (fixture.fields ?? defaultFields(op)));

      const r = await viaRest(rest, op, await fieldsFor(rest), ADMIN);
      const gr = await callUnary(g.client, name, await fieldsFor(grpcAgent), bearer(ADMIN));
      const j = op.jsonRpc ? await viaJsonRpc(jsonrpc, op, await fieldsFor(jsonrpc), ADMIN) : null;
      if (!op.jsonRpc) {
        // Keep the JSON-RPC agent in lockstep through REST for operations the gateway does not expose.
        await viaRest(jsonrpc, op, await fieldsFor(jsonrpc), ADMIN);
      }

      const pick = PARTIAL[name] ?? ((b: unknown) => b);
      if (r.ok) {
        expect(gr.statusName, `${name}: gRPC failed where REST succeeded: ${gr.message}`).toBe('OK');
        expect(normalise(pick(gr.json), grpcAgent), `${name}: gRPC JSON`).toEqual(normalise(pick(r.json), rest));
        if (j) {
          expect(j.ok, `${name}: JSON-RPC failed where REST succeeded: ${JSON.stringify(j)}`).toBe(true);
          expect(normalise(pick(j.json), jsonrpc), `${name}: JSON-RPC result`).toEqual(normalise(pick(r.json), rest));
        }
      } else {
        expect(gr.status, `${name}: gRPC status for REST ${r.status} ${JSON.stringify(r.envelope)}`).toBe(EXPECTED_STATUS[r.status]);
        expect(normalise(gr.errorEnvelope, grpcAgent), `${name}: gRPC error envelope`).toEqual(normalise(r.envelope, rest));
        if (j) {
          expect(j.status, `${name}: JSON-RPC status`).toBe(r.status);
          expect(normalise(j.envelope, jsonrpc), `${name}: JSON-RPC envelope`).toEqual(normalise(r.envelope, rest));
        }
      }
      compared.push(`${name}:${r.ok ? 'ok' : r.status}`);
    }
    // The fixtures make most calls succeed; unknown ids of new operations may be refusals.
    expect(compared.filter((c) => c.endsWith(':ok')).length).toBeGreaterThan(RPC_OPS.length * 0.7);
  });
});

describe('refusal parity: the same missing credential or role is the same refusal everywhere', () => {
  let strict: RunningAgent;
  let sg: GrpcTestClient;
  beforeAll(async () => {
    strict = await demoAgent({ SVC_API_REQUIRE_AUTH_ALL_READS: '1' });
    sg = connectGrpc(strict.agent.grpcAddress!);
  });
  afterAll(async () => {
    sg.close();
    await strict.close();
  });

  const guarded = RPC_OPS.filter((o) => accessOf(o).kind !== 'public');

  it('no credential: 401 ↔ UNAUTHENTICATED ↔ 401, for every non-public RPC (reads under the all-reads policy)', async () => {
    expect(guarded.length).toBeGreaterThan(25);
    for (const op of guarded) {
      const fields = FIXTURES[op.rpc!.name]?.fields ?? defaultFields(op);
      const r = await viaRest(strict, op, fields, null);
      expect(r, op.rpc!.name).toMatchObject({ ok: false, status: 401, envelope: { ok: false, error: 'unauthorized', code: 'unauthorized' } });
      const gr = await callUnary(sg.client, op.rpc!.name, fields);
      expect(gr.statusName, op.rpc!.name).toBe('UNAUTHENTICATED');
      expect(gr.message).toBe('unauthorized');
      expect(gr.errorEnvelope).toEqual(r.ok ? null : r.envelope);
      if (op.jsonRpc) {
        const j = await viaJsonRpc(strict, op, fields, null);
        expect(j).toMatchObject({ ok: false, status: 401, envelope: r.ok ? {} : r.envelope });
      }
    }
  });

  it('a role without the action: 403 ↔ PERMISSION_DENIED ↔ 403 with the same message', async () => {
    const roleGated = guarded.filter((o) => ['action', 'admin'].includes(accessOf(o).kind));
    expect(roleGated.length).toBeGreaterThan(15);
    for (const op of roleGated) {
      const fields = FIXTURES[op.rpc!.name]?.fields ?? defaultFields(op);
      const r = await viaRest(strict, op, fields, AUDITOR);
      expect(r, op.rpc!.name).toMatchObject({ ok: false, status: 403, envelope: { ok: false, error: 'forbidden', code: 'forbidden' } });
      const gr = await callUnary(sg.client, op.rpc!.name, fields, bearer(AUDITOR));
      expect(gr.statusName, op.rpc!.name).toBe('PERMISSION_DENIED');
      expect(gr.message).toBe('forbidden');
      expect(gr.errorCode).toBe('forbidden');
      if (op.jsonRpc) {
        const j = await viaJsonRpc(strict, op, fields, AUDITOR);
        expect(j).toMatchObject({ ok: false, status: 403, envelope: { ok: false, error: 'forbidden', code: 'forbidden' } });
      }
    }
  });

  it('operations the gateway does not expose are unknown methods there, whatever the credential', async () => {
    for (const op of RPC_OPS.filter((o) => !o.jsonRpc)) {
      const res = await strict.json('/v1/rpc', {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
        body: JSON.stringify({ method: `${PREFIX}${op.rpc!.name}`, params: {} }),
      });
      expect(res.status, op.rpc!.name).toBe(400);
      expect(res.body).toMatchObject({ ok: false, error: `unknown rpc method: ${PREFIX}${op.rpc!.name}`, code: 'bad_request' });
    }
  });
});
