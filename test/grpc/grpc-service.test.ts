import fs from 'node:fs';
import { Status } from 'nice-grpc';
import { ServerReflectionRequest } from 'nice-grpc-server-reflection/lib/proto/grpc/reflection/v1/reflection_pb.js';
import descriptorPb from 'google-protobuf/google/protobuf/descriptor_pb.js';
import { afterEach, describe, expect, it } from 'vitest';
import { platformEvent } from '../../agent/events/platform-events.js';
import { SessionTokens } from '../../agent/security/sessions.js';
import { DropOldestQueue } from '../../agent/transports/grpc/streams.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, metadata, PROTO_PATH, type GrpcTestClient } from '../helpers/grpc-client.js';

const KEY = 'g'.repeat(64);
let agents: RunningAgent[] = [];
let clients: GrpcTestClient[] = [];
afterEach(async () => {
  for (const c of clients) c.close();
  clients = [];
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
});

async function grpcAgent(env: Record<string, string> = {}) {
  const a = await startAgent({ env: { SVC_API_KEY: KEY, ...env }, grpcBind: '127.0.0.1:0' });
  agents.push(a);
  const g = connectGrpc(a.agent.grpcAddress!);
  clients.push(g);
  return { a, g };
}

/** Reads a server stream in the background; `next(n)` waits until n frames arrived. */
function collect(stream: AsyncIterable<any>) {
  const frames: any[] = [];
  let error: unknown = null;
  let ended = false;
  const done = (async () => {
    try {
      for await (const f of stream) frames.push(f);
    } catch (err) {
      error = err;
    } finally {
      ended = true;
    }
  })();
  return {
    frames,
    done,
    get error() {
      return error as any;
    },
    get ended() {
      return ended;
    },
    async next(n: number, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      while (frames.length < n && !ended && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      return frames;
    },
  };
}

describe('gRPC listener', () => {
  it('binds on --grpc-bind, is reported by /v1/instance and /v1/version, and counts the RPCs of the proto', async () => {
    const { a, g } = await grpcAgent();
    const instance = (await a.json('/v1/instance')).body;
    expect(instance.grpc_bind).toBe(a.agent.grpcAddress);
    expect(instance.grpc_bind).toMatch(/^127\.0\.0\.1:\d+$/);
    const rpcLines = fs.readFileSync(PROTO_PATH, 'utf8').split('\n').filter((l) => /^\s*rpc \w+\(/.test(l)).length;
    const version = (await a.json('/v1/version')).body;
    expect(version.grpc).toMatchObject({ proto_semver: '1.0.19', rpc_count: rpcLines, reflection_enabled: true, package: 'svc.v1' });
    expect((await a.json('/v1/health')).body.grpc).toEqual({ proto_semver: '1.0.19', rpc_count: rpcLines });
    const health = await g.client.Health({});
    expect(health.status).toBe(`ok;1.0.19;rpcs=${rpcLines}`);
  });

  it('an agent without --grpc-bind opens no gRPC listener', async () => {
    const a = await startAgent();
    agents.push(a);
    expect(a.agent.grpcAddress).toBeNull();
    expect((await a.json('/v1/instance')).body.grpc_bind).toBeNull();
  });

  it('serves reflection: the service is listed and its file describes every RPC', async () => {
    const { g } = await grpcAgent();
    async function* requests() {
      yield new ServerReflectionRequest().setListServices('*');
      yield new ServerReflectionRequest().setFileContainingSymbol('svc.v1.ControlCenter');
    }
    const responses = [];
    for await (const r of g.reflection.serverReflectionInfo(requests())) responses.push(r);
    const services = responses[0]!.getListServicesResponse()!.getServiceList().map((s) => s.getName());
    expect(services).toContain('svc.v1.ControlCenter');
    const bytes = responses[1]!.getFileDescriptorResponse()!.getFileDescriptorProtoList_asU8()[0]!;
    const file = descriptorPb.FileDescriptorProto.deserializeBinary(bytes);
    expect(file.getName()).toBe('svc/v1/control_center.proto');
    expect(file.getPackage()).toBe('svc.v1');
    const methods = file.getServiceList()[0]!.getMethodList();
    const proto = fs.readFileSync(PROTO_PATH, 'utf8');
    expect(methods.map((m) => m.getName()).sort()).toEqual([...proto.matchAll(/^\s*rpc (\w+)\(/gm)].map((m) => m[1]).sort());
    const stream = methods.find((m) => m.getName() === 'StreamEvents')!;
    expect(stream.getServerStreaming()).toBe(true);
    expect(stream.getInputType()).toBe('.svc.v1.StreamEventsRequest');
  });
});

describe('gRPC guard (docs/grpc.md)', () => {
  it('bad or missing credentials are UNAUTHENTICATED; a valid key in authorization or x-api-key passes', async () => {
    const { g } = await grpcAgent();
    const body = { body_json: JSON.stringify({ title: 'fan failure' }) };
    for (const md of [undefined, bearer('not-a-key'), metadata({ 'x-api-key': 'wrong' })]) {
      const r = await callUnary(g.client, 'CreateSreIncident', body, md);
      expect(r).toMatchObject({ status: Status.UNAUTHENTICATED, message: 'unauthorized', errorCode: 'unauthorized' });
      expect(r.errorEnvelope).toEqual({ ok: false, error: 'unauthorized', code: 'unauthorized' });
    }
    for (const md of [bearer(KEY), metadata({ authorization: `bearer ${KEY}` }), metadata({ 'x-api-key': KEY })]) {
      const r = await callUnary(g.client, 'CreateSreIncident', body, md);
      expect(r.statusName).toBe('OK');
      expect(r.json.incident.title).toBe('fan failure');
    }
  });

  it('the version metadata is trimmed and case-insensitive; another version is INVALID_ARGUMENT', async () => {
    const { g } = await grpcAgent();
    expect((await callUnary(g.client, 'GetTenant', {}, metadata({ 'x-svc-api-version': ' V1 ' }))).statusName).toBe('OK');
    const r = await callUnary(g.client, 'GetTenant', {}, metadata({ 'x-svc-api-version': 'v2' }));
    expect(r).toMatchObject({ status: Status.INVALID_ARGUMENT, message: "unsupported api version 'v2'; supported: v1", errorCode: 'unsupported_api_version' });
    expect(r.errorEnvelope).toMatchObject({ error: 'unsupported api version', requested: 'v2', supported: ['v1'] });
  });

  it('a key or a session of another tenant is PERMISSION_DENIED tenant mismatch (docs/wire-decisions.md D4)', async () => {
    const { a, g } = await grpcAgent({ SVC_TENANT_ID: 'acme' });
    a.agent.services.credentials.addVerifier((t) => (t === 'other-tenant-key' ? { key_id: 'k-other', role: 'administrator', tenant_id: 'other', auth_kind: 'api_key', user_id: null } : null));
    const foreignSessions = new SessionTokens({ ...a.agent.services.credentials.sessions.settings, tenantId: 'other' });
    const { session_token } = await foreignSessions.issue('u-1', 'operator');
    for (const token of ['other-tenant-key', session_token]) {
      const r = await callUnary(g.client, 'GetTenant', {}, bearer(token));
      expect(r).toMatchObject({ status: Status.PERMISSION_DENIED, message: 'tenant mismatch', errorCode: 'tenant_mismatch' });
    }
    const own = await a.agent.services.credentials.sessions.issue('u-2', 'operator');
    expect((await callUnary(g.client, 'GetTenant', {}, bearer(own.session_token))).json.tenant_id).toBe('acme');
  });

  it('the read policy applies through the parity route: sensitive reads need a principal, others stay open', async () => {
    const { g } = await grpcAgent({ SVC_API_REQUIRE_AUTH_READS: '1' });
    expect(await callUnary(g.client, 'ListDevices', {})).toMatchObject({ status: Status.UNAUTHENTICATED, message: 'unauthorized' });
    expect(await callUnary(g.client, 'GetDevice', { device_id: 'x' })).toMatchObject({ status: Status.UNAUTHENTICATED });
    expect((await callUnary(g.client, 'ListAlerts', {})).statusName).toBe('OK');
    expect((await callUnary(g.client, 'ListDevices', {}, bearer(KEY))).json.version).toBe('v1');
    // Health is never guarded.
    expect((await g.client.Health({})).status).toMatch(/^ok;/);
  });

  it('rate limit: the REST buckets, RESOURCE_EXHAUSTED with the wait in message and trailer', async () => {
    const { a, g } = await grpcAgent({ SVC_API_RATE_LIMIT_PER_MINUTE: '2' });
    expect((await a.json('/v1/alerts')).status).toBe(200);
    expect((await callUnary(g.client, 'ListAlerts', {})).statusName).toBe('OK');
    const r = await callUnary(g.client, 'ListAlerts', {});
    expect(r.status).toBe(Status.RESOURCE_EXHAUSTED);
    expect(r.message).toMatch(/^rate limit exceeded; retry after \d+s$/);
    expect(r.errorEnvelope).toMatchObject({ error: 'rate limit exceeded', code: 'rate_limited', retry_after_secs: expect.any(Number) });
    expect((await a.json('/v1/alerts')).status).toBe(429);
    // Health is exempt.
    expect((await g.client.Health({})).status).toMatch(/^ok;/);
  });
});

describe('gRPC errors are real status codes (docs/wire-decisions.md D16)', () => {
  it('malformed body_json, missing fields, unknown ids and conflicts', async () => {
    const { g } = await grpcAgent();
    const md = bearer(KEY);
    const bad = await callUnary(g.client, 'CreateSreIncident', { body_json: '{"title":' }, md);
    expect(bad.status).toBe(Status.INVALID_ARGUMENT);
    expect(bad.message).toMatch(/^invalid JSON body: /);
    expect(bad.errorCode).toBe('bad_request');
    expect(await callUnary(g.client, 'CreateSreIncident', { body_json: '[1]' }, md)).toMatchObject({ status: Status.INVALID_ARGUMENT, message: 'invalid JSON body: expected a JSON object' });
    expect(await callUnary(g.client, 'CreateSreIncident', { body_json: '{}' }, md)).toMatchObject({ status: Status.INVALID_ARGUMENT, message: 'missing title' });
    expect(await callUnary(g.client, 'PatchAdminApiKey', { body_json: '{"role":"operator"}' }, md)).toMatchObject({
      status: Status.INVALID_ARGUMENT,
      message: 'key_id required in body_json',
    });
    expect(await callUnary(g.client, 'GetDevice', { device_id: '' }, md)).toMatchObject({ status: Status.INVALID_ARGUMENT, message: 'missing device_id' });
    const missing = await callUnary(g.client, 'GetDevice', { device_id: 'no-such-device' }, md);
    expect(missing).toMatchObject({ status: Status.NOT_FOUND, errorCode: 'not_found' });
    expect(await callUnary(g.client, 'DeleteAdminUser', { body_json: '{"user_id":"nobody"}' }, md)).toMatchObject({ status: Status.NOT_FOUND });

    const created = await callUnary(g.client, 'CreateSreIncident', { body_json: '{"title":"t"}' }, md);
    const id = created.json.incident.id;
    expect((await callUnary(g.client, 'ResolveSreIncident', { incident_id: id }, md)).json.incident.status).toBe('resolved');
    const conflict = await callUnary(g.client, 'AckSreIncident', { incident_id: id, body_json: '' }, md);
    expect(conflict).toMatchObject({ status: Status.FAILED_PRECONDITION, errorCode: 'conflict' });
  });

  it('GetTrustPackage takes package_name as the query parameter of its parity route', async () => {
    const { a, g } = await grpcAgent();
    const viaGrpc = await callUnary(g.client, 'GetTrustPackage', { package_name: 'nope' });
    const viaRest = await a.json('/v1/trust/package?package_name=nope');
    expect(viaGrpc.json).toEqual(viaRest.body);
    expect(viaGrpc.json.count).toBe(0);
  });

  it('mutations are audited as control_center.grpc.mutation with the RPC and its parity route', async () => {
    const { g } = await grpcAgent();
    const md = bearer(KEY);
    const created = await callUnary(g.client, 'CreateSreIncident', { body_json: '{"title":"audited"}' }, md);
    await callUnary(g.client, 'AckSreIncident', { incident_id: created.json.incident.id }, md);
    await callUnary(g.client, 'ListSreIncidents', {}, md);
    const audit = await callUnary(g.client, 'ListAuditMutations', {}, md);
    const grpcRecords = audit.json.audit.records.filter((r: any) => r.event_type === 'control_center.grpc.mutation').map((r: any) => JSON.parse(r.payload));
    expect(grpcRecords).toHaveLength(2);
    expect(grpcRecords[0]).toMatchObject({ rpc: 'svc.v1.ControlCenter/CreateSreIncident', method: 'POST', path: '/v1/sre/incidents', actor_key_id: 'env-default', actor_role: 'Administrator' });
    expect(grpcRecords[1]).toMatchObject({ rpc: 'svc.v1.ControlCenter/AckSreIncident', path: `/v1/sre/incidents/${created.json.incident.id}/ack` });
  });
});

describe('streaming RPCs', () => {
  it('StreamEvents delivers live bus events that match its filters', async () => {
    const { a, g } = await grpcAgent();
    const s = collect(g.client.StreamEvents({ event_types: ['health_changed'], device_ids: ['imu-1'] }, { metadata: bearer(KEY) }));
    const bus = a.agent.services.bus;
    // The subscription starts once the call reached the server: probe until the first frame arrives.
    while (s.frames.length === 0 && !s.ended) {
      bus.publish(platformEvent('HealthChanged', 'probe', { reason: 'probe' }, 'imu-1'));
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 50));
    s.frames.length = 0;
    bus.publish(platformEvent('HealthChanged', 'svc-hal', { entity_type: 'device', from: 'healthy', to: 'degraded', reason: 'other' }, 'gps-2'));
    bus.publish(platformEvent('EntityCreated', 'svc-hal', { entity_id: 'imu-1' }, 'imu-1'));
    bus.publish(platformEvent('HealthChanged', 'svc-hal', { entity_type: 'device', from: 'healthy', to: 'degraded', reason: 'vibration' }, 'imu-1'));
    bus.publish(platformEvent('HealthChanged', 'svc-hal', { tenant_id: 'someone-else', from: 'a', to: 'b' }, 'imu-1'));
    const frames = await s.next(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ type: 'HealthChanged', stream_name: 'health_changed', source: 'svc-hal', entity_id: 'imu-1', dropped: 0 });
    expect(JSON.parse(frames[0].json)).toMatchObject({ type: 'HealthChanged', entity_id: 'imu-1', payload: { to: 'degraded', reason: 'vibration' } });
    // Closing the agent ends the stream instead of hanging it.
    await a.close();
    await s.done;
    expect(s.ended).toBe(true);
  });

  it('StreamTelemetry replays from an offset, then goes live, filtered by kind and device', async () => {
    const { a, g } = await grpcAgent();
    const t = a.agent.services.telemetry;
    const dev = (device_id: string, value: number) => ({ kind: 'device' as const, device_id, metric: 'temp', value, timestamp_ms: Date.now() });
    const first = t.append(dev('imu-1', 1));
    t.append(dev('gps-2', 2));
    t.append({ kind: 'heartbeat', task_name: 'x', timestamp_ms: Date.now() });
    const s = collect(g.client.StreamTelemetry({ kinds: ['device'], device_ids: ['imu-1'], replay: true, since_offset: first }, { metadata: bearer(KEY) }));
    await s.next(1);
    t.append(dev('imu-1', 3));
    t.append(dev('gps-2', 4));
    t.append({ ...dev('imu-1', 5), robot_id: 'r', tenant_id: 'someone-else' } as never);
    t.append(dev('imu-1', 6));
    const frames = await s.next(3);
    expect(frames.map((f) => JSON.parse(f.json).value)).toEqual([1, 3, 6]);
    expect(frames[0]).toMatchObject({ offset: first, kind: 'device', dropped: 0 });
    expect(frames[1].offset).toBe(first + 3);
  });

  it('refuses a foreign tenant filter, unknown event types, and anonymous callers under the read policy', async () => {
    const { g } = await grpcAgent({ SVC_API_REQUIRE_AUTH_READS: '1' });
    const errorOf = async (stream: AsyncIterable<unknown>) => {
      const s = collect(stream);
      await s.done;
      return s.error;
    };
    expect(await errorOf(g.client.StreamEvents({}))).toMatchObject({ code: Status.UNAUTHENTICATED, details: 'unauthorized' });
    expect(await errorOf(g.client.StreamTelemetry({}))).toMatchObject({ code: Status.UNAUTHENTICATED });
    expect(await errorOf(g.client.StreamEvents({ tenant_id: 'other' }, { metadata: bearer(KEY) }))).toMatchObject({ code: Status.PERMISSION_DENIED, details: 'tenant mismatch' });
    expect(await errorOf(g.client.StreamEvents({ event_types: ['NoSuchEvent'] }, { metadata: bearer(KEY) }))).toMatchObject({
      code: Status.INVALID_ARGUMENT,
      details: "unknown event type 'NoSuchEvent'",
    });
    expect(await errorOf(g.client.StreamTelemetry({ kinds: ['bogus'] }, { metadata: bearer(KEY) }))).toMatchObject({ code: Status.INVALID_ARGUMENT });
  });

  it('a slow subscriber loses the oldest items, and counts them', () => {
    const q = new DropOldestQueue<number>(3);
    for (let i = 1; i <= 5; i++) q.push(i);
    expect(q.dropped).toBe(2);
    expect(q.size).toBe(3);
    const ac = new AbortController();
    const it = q.drain(ac.signal);
    return (async () => {
      const got = [(await it.next()).value, (await it.next()).value, (await it.next()).value];
      expect(got).toEqual([3, 4, 5]);
      ac.abort();
      expect((await it.next()).done).toBe(true);
    })();
  });
});
