import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineSpec } from '../../api/spec.js';
import { bindOperations, handlersFor } from '../../agent/core/handlers.js';
import { invoke } from '../../agent/core/invoke.js';
import type { Principal } from '../../agent/security/principal.js';
import type { Services } from '../../agent/runtime/services.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';

/**
 * The invoke kernel (agent/core/invoke.ts) is the only caller of a handler: REST, gRPC, JSON-RPC and
 * the in-process CLI all reach it, so a state change is audited exactly once and a read never,
 * whichever transport carried it (docs/architecture.md rule 3; docs/security.md §10).
 */
const REPO = path.resolve(__dirname, '../..');
const ADMIN = 'c4'.repeat(32);
const auth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

let running: RunningAgent[] = [];
let clients: GrpcTestClient[] = [];
afterEach(async () => {
  clients.forEach((c) => c.close());
  clients = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function demoAgent() {
  const root = tempDir('svc-kernel-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  const a = await startAgent({
    configPath: path.join(root, 'svc.toml'),
    programPath: path.join(root, 'programs', 'patrol.sd'),
    grpcBind: '127.0.0.1:0',
    env: { SVC_API_KEY: ADMIN },
  });
  running.push(a);
  const g = connectGrpc(a.agent.grpcAddress!);
  clients.push(g);
  return { a, g, root };
}

/** Mutation records of the chain, by event type. */
function mutationRecords(a: RunningAgent): { event_type: string; payload: Record<string, unknown> }[] {
  return [...a.agent.services.audit.chain.records()]
    .filter((r) => r.event_type.endsWith('.mutation'))
    .map((r) => ({ event_type: r.event_type, payload: JSON.parse(r.payload) as Record<string, unknown> }));
}

const localPrincipal = (s: Services): Principal => ({ key_id: 'local-cli', role: 'administrator', tenant_id: s.settings.tenantId, auth_kind: 'local', user_id: os.userInfo().username });

/** What `svc <words>` without --url does after building its input: the kernel with the local principal. */
function viaCli(a: RunningAgent, id: string, body: Record<string, unknown> = {}) {
  const s = a.agent.services;
  const op = s.operations.find((o) => o.id === id)!;
  return invoke(op, { principal: localPrincipal(s), correlationId: `cli-${id}`, transport: 'cli', params: {}, query: {}, body: () => body }, s);
}

describe('invoke kernel: one path for every transport', () => {
  it('one mutation per transport adds exactly one record in that transport’s form; one read adds none', async () => {
    const { a, g } = await demoAgent();
    const start = mutationRecords(a).length;

    // REST
    expect((await a.fetch('/v1/admin/api-keys', { method: 'POST', headers: auth, body: '{"role":"auditor"}' })).status).toBe(200);
    expect((await a.fetch('/v1/admin/api-keys', { headers: auth })).status).toBe(200);
    // gRPC
    expect((await callUnary(g.client, 'CreateAdminApiKey', { body_json: '{"role":"auditor"}' }, bearer(ADMIN))).ok).toBe(true);
    expect((await callUnary(g.client, 'ListAdminApiKeys', {}, bearer(ADMIN))).ok).toBe(true);
    // JSON-RPC
    const rpc = (method: string, params: Record<string, string>) =>
      a.fetch('/v1/rpc', { method: 'POST', headers: auth, body: JSON.stringify({ method: `svc.v1.ControlCenter/${method}`, params }) });
    expect((await rpc('CreateAdminApiKey', { body_json: '{"role":"auditor"}' })).status).toBe(200);
    expect((await rpc('ListAdminApiKeys', {})).status).toBe(200);
    // CLI, in-process
    await viaCli(a, 'createAdminApiKey', { role: 'auditor' });
    await viaCli(a, 'listAdminApiKeys');

    const added = mutationRecords(a).slice(start);
    expect(added.map((r) => r.event_type)).toEqual([
      'control_center.api.mutation',
      'control_center.grpc.mutation',
      'control_center.api.mutation',
      'control_center.cli.mutation',
    ]);
    expect(added[0]!.payload).toMatchObject({ method: 'POST', path: '/v1/admin/api-keys', actor_role: 'Administrator' });
    expect(added[1]!.payload).toMatchObject({ rpc: 'svc.v1.ControlCenter/CreateAdminApiKey', path: '/v1/admin/api-keys' });
    expect(added[2]!.payload).toMatchObject({ path: '/v1/rpc', rpc: 'svc.v1.ControlCenter/CreateAdminApiKey', parity_path: '/v1/admin/api-keys' });
    expect(added[3]!.payload).toMatchObject({ path: '/v1/admin/api-keys', actor_key_id: 'local-cli' });
  });

  it('a read-like operation that writes on request (simulation with record_trace) needs Operate and is audited once, on every transport', async () => {
    const { a, g } = await demoAgent();
    const record = { execute: true, record_trace: true };
    const start = mutationRecords(a).length;

    // Anonymous: refused before anything runs, nothing recorded; without record_trace it is an open read.
    const anon = await a.fetch('/v1/programs/simulation', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(record) });
    expect(anon.status).toBe(401);
    expect((await callUnary(g.client, 'RunProgramSimulation', { body_json: JSON.stringify(record) })).statusName).toBe('UNAUTHENTICATED');
    expect((await a.fetch('/v1/programs/simulation', { method: 'POST', body: '{"execute":true}' })).status).toBe(200);
    expect(mutationRecords(a).length).toBe(start);

    expect((await a.fetch('/v1/programs/simulation', { method: 'POST', headers: auth, body: JSON.stringify(record) })).status).toBe(200);
    expect((await callUnary(g.client, 'RunProgramSimulation', { body_json: JSON.stringify(record) }, bearer(ADMIN))).ok).toBe(true);
    const viaRpc = await a.fetch('/v1/rpc', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ method: 'svc.v1.ControlCenter/RunProgramSimulation', params: { body_json: JSON.stringify(record) } }),
    });
    expect(viaRpc.status).toBe(200);
    await viaCli(a, 'runProgramSimulation', record);
    const added = mutationRecords(a).slice(start);
    expect(added.map((r) => r.event_type)).toEqual([
      'control_center.api.mutation',
      'control_center.grpc.mutation',
      'control_center.api.mutation',
      'control_center.cli.mutation',
    ]);
    // One record per call, never two with one correlation id.
    const ids = added.map((r) => r.payload['correlation_id']);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gRPC calls are traced by the kernel (REST requests by the HTTP pipeline), refusals included', async () => {
    const { a, g } = await demoAgent();
    expect((await callUnary(g.client, 'GetTenant', {})).ok).toBe(true);
    expect((await callUnary(g.client, 'CreateAdminApiKey', { body_json: '{"role":"auditor"}' })).ok).toBe(false);
    const traces = a.agent.services.traces.all().filter((t) => t.method === 'GRPC');
    expect(traces.map((t) => [t.path, t.status])).toEqual([
      ['/svc.v1.ControlCenter/GetTenant', 200],
      ['/svc.v1.ControlCenter/CreateAdminApiKey', 401],
    ]);
  });
});

describe('binding the contract to handlers', () => {
  const one = defineSpec({ id: 'probeOne', group: 'probe', summary: 'one', method: 'GET', path: '/v1/probe/one', access: { kind: 'read' } });
  const two = defineSpec({ id: 'probeTwo', group: 'probe', summary: 'two', method: 'GET', path: '/v1/probe/two', access: { kind: 'read' } });
  const services = { settings: { tenantId: 't' }, alerts: { count: 3 } } as unknown as Services;

  it('every spec gets exactly one handler, and no handler names a spec outside the contract', () => {
    const on = handlersFor([]);
    expect(() => bindOperations([one, two], [on(one, () => 1)], services)).toThrow(/probeTwo has no handler/);
    expect(() => bindOperations([one], [on(one, () => 1), on(one, () => 2)], services)).toThrow(/probeOne has two handlers/);
    expect(() => bindOperations([one], [on(one, () => 1), on(two, () => 2)], services)).toThrow(/not in the contract: probeTwo/);
    // A handler bound to a look-alike spec object (a copy that could drift) is refused.
    expect(() => bindOperations([one], [on({ ...one }, () => 1)], services)).toThrow(/another spec object/);
  });

  it('a handler sees only the services its domain declared', async () => {
    const on = handlersFor(['alerts']);
    const [bound] = bindOperations([one], [on(one, (_i, ctx) => Object.keys(ctx.services))], services);
    expect(await bound!.handler({ body: {}, query: {}, params: {} }, { principal: null, correlationId: 'c', transport: 'rest' })).toEqual(['alerts']);
  });
});
