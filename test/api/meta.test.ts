import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

const DEMO = path.resolve(__dirname, '../../demo');
const KEY = 'k'.repeat(64);
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function demoAgent(env: Record<string, string> = {}) {
  const a = await startAgent({ env, configPath: path.join(DEMO, 'svc.toml'), programPath: path.join(DEMO, 'programs/patrol.sd') });
  running.push(a);
  return a;
}

describe('meta endpoints', () => {
  it('GET /v1/version carries every key, the exact proto semver and the /v2/ policy', async () => {
    const a = await demoAgent({ SVC_API_RATE_LIMIT_PER_MINUTE: '600' });
    const { status, body } = await a.json('/v1/version');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      version: 'v1',
      api_version: 'v1',
      supported_versions: ['v1'],
      control_center_ui_version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      svc_version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      rate_limit_per_minute: 600,
    });
    expect(body.grpc).toMatchObject({
      package: 'svc.v1',
      proto_semver: '1.0.19',
      proto_file: 'proto/svc/v1/control_center.proto',
      api_version_header: 'x-svc-api-version',
      supported_api_versions: ['v1'],
    });
    expect(body.grpc.rpc_count).toBeGreaterThanOrEqual(1);
    expect(body.policy).toContain('/v2/');
  });

  it('GET /v1/instance is computed from the loaded project and live state', async () => {
    const a = await demoAgent({ SVC_TENANT_ID: 'acme', SVC_API_KEY: KEY });
    const { status, body } = await a.json('/v1/instance', { headers: { Authorization: `Bearer ${KEY}` } });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ok: true,
      service: 'svc-control-center',
      tenant_id: 'acme',
      bind: a.baseUrl.replace('http://', ''),
      grpc_bind: null,
      // Relative to the project root: a public route does not tell where the project sits on disk.
      config_path: 'svc.toml',
      program_path: 'programs/patrol.sd',
      config_loaded: true,
      project_name: 'Warehouse Patrol Demo',
      overall_status: 'healthy',
      api_keys_loaded: 1,
      alert_count: 0,
    });
    const cfg = a.agent.services.project.config!;
    expect(body.fleet_id).toBe(cfg.fleetId);
    // No fleet agent registered yet, although the demo configures two robots.
    expect(cfg.robots.length).toBe(2);
    expect(body.fleet_agent_count).toBe(0);
    expect(body.device_pool.total).toBe(cfg.devices.length);
    expect(body.device_pool.total).toBeGreaterThan(5);
    const sum = ['discovered', 'quarantined', 'verified', 'assigned', 'active', 'healthy', 'degraded', 'offline', 'failed', 'retired']
      .map((k) => body.device_pool.lifecycle[k] as number)
      .reduce((x, y) => x + y, 0);
    expect(sum).toBe(body.device_pool.total);
    const byHealth = ['healthy', 'degraded', 'offline', 'unknown'].map((k) => body.device_pool[k] as number).reduce((x, y) => x + y, 0);
    expect(byHealth).toBe(body.device_pool.total);

    // alert_count follows live state.
    a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'warning', message: 'fan slow', source: 'test' });
    expect((await a.json('/v1/instance')).body.alert_count).toBe(1);
  });

  // Regression: device_pool.healthy/degraded counted lifecycle states, so three devices reporting
  // health_status healthy showed healthy: 0 and overall_status ignored health (docs/api.md § Meta).
  it('GET /v1/instance device_pool counts health, lifecycle apart, and overall_status follows health', async () => {
    const a = await demoAgent();
    const registry = a.agent.services.devices;
    const ids = registry.list().map((d) => d.id);
    expect(ids.length).toBeGreaterThan(5);
    for (const id of ids) registry.setHealth(id, 'unknown');
    for (const id of ids.slice(0, 3)) registry.setHealth(id, 'healthy');
    let body = (await a.json('/v1/instance')).body;
    expect(body.device_pool).toMatchObject({ total: ids.length, healthy: 3, degraded: 0, offline: 0, unknown: ids.length - 3, failed: 0 });
    expect(body.overall_status).toBe('healthy');
    const lifecycleHealthy = registry.list().filter((d) => d.lifecycle_state === 'healthy').length;
    expect(body.device_pool.lifecycle.healthy).toBe(lifecycleHealthy);

    registry.setHealth(ids[3]!, 'degraded');
    registry.setHealth(ids[4]!, 'offline');
    body = (await a.json('/v1/instance')).body;
    expect(body.device_pool).toMatchObject({ healthy: 3, degraded: 1, offline: 1, unknown: ids.length - 5, failed: 0 });
    expect(body.overall_status).toBe('degraded');
    expect((await a.json('/v1/dashboard')).body.device_pool).toEqual(body.device_pool);

    registry.setHealth(ids[3]!, 'healthy');
    registry.transition(ids[5]!, 'failed', { override: true });
    body = (await a.json('/v1/instance')).body;
    expect(body.device_pool).toMatchObject({ healthy: 4, degraded: 0, failed: 1 });
    expect(body.device_pool.lifecycle.failed).toBe(1);
    expect(body.overall_status).toBe('critical');
  });

  // Regression: fleet_agent_count counted the configured robots; it counts the fleet agents the
  // agent knows, the registry GET /v1/fleet/agents lists (docs/api.md § Meta endpoints).
  it('fleet_agent_count in /v1/instance and /v1/dashboard counts the registered fleet agents, read live', async () => {
    const a = await demoAgent({ SVC_API_KEY: KEY });
    const auth = { headers: { Authorization: `Bearer ${KEY}` } };
    const counts = async () => [(await a.json('/v1/instance')).body.fleet_agent_count, (await a.json('/v1/dashboard')).body.fleet_agent_count];
    expect(await counts()).toEqual([0, 0]);

    // Written by another process (the CLI's registration): one robot of the fleet, one robot the
    // configuration does not know, and an entry without a url that the registry skips.
    const file = path.join(a.stateDir, 'fleet-agents.json');
    fs.writeFileSync(
      file,
      JSON.stringify({ agents: [{ robot_name: 'Sentinel', url: 'http://10.0.0.5:7070', token: 't' }, { robot_name: 'Spare', url: 'http://10.0.0.9:7070' }, { robot_name: 'Dockhand' }] }),
    );
    const listed = (await a.json('/v1/fleet/agents', auth)).body.agents as unknown[];
    expect(listed).toHaveLength(2);
    expect(await counts()).toEqual([2, 2]);

    fs.writeFileSync(file, '{not json');
    expect(await counts()).toEqual([0, 0]);
  });

  it('GET /v1/instance without a project reports nulls, not guesses', async () => {
    const a = await startAgent();
    running.push(a);
    const { body } = await a.json('/v1/instance');
    expect(body).toMatchObject({ config_path: null, program_path: null, config_loaded: false, project_name: null, fleet_id: null, fleet_agent_count: 0 });
    expect(body.device_pool.total).toBe(0);
  });

  it('GET /v1/tenant and /v1/dashboard', async () => {
    const a = await demoAgent({ SVC_TENANT_ID: 'north-site', SVC_API_KEY: KEY });
    expect((await a.json('/v1/tenant')).body).toEqual({
      version: 'v1',
      tenant_id: 'north-site',
      isolation: 'api_keys must match SVC_TENANT_ID on this Control Center instance',
    });
    const dash = (await a.json('/v1/dashboard')).body;
    expect(dash).toMatchObject({ version: 'v1', alert_count: 0, rbac_roles: 1 });
    expect(dash.device_pool.total).toBe(a.agent.services.project.config!.devices.length);
  });

  it('tenant defaults to "default" when SVC_TENANT_ID is blank', async () => {
    const a = await startAgent({ env: { SVC_TENANT_ID: '   ' } });
    running.push(a);
    expect((await a.json('/v1/tenant')).body.tenant_id).toBe('default');
  });
});

describe('operations through the pipeline', () => {
  it('POST /v1/alerts/test: 401 anonymous, 403 for a role without Operate, 200 for an operator', async () => {
    const a = await demoAgent({ SVC_API_KEY: KEY });
    a.agent.services.credentials.addVerifier((t) =>
      t === 'auditor-key' ? { key_id: 'k-aud', role: 'auditor', tenant_id: 'default', auth_kind: 'api_key', user_id: null } : t === 'op-key' ? { key_id: 'k-op', role: 'operator', tenant_id: 'default', auth_kind: 'api_key', user_id: null } : null,
    );
    const reasons: string[] = [];
    a.agent.services.bus.subscribe((e) => e.type === 'AuthFailed' && reasons.push(String(e.payload['reason'])));

    const anon = await a.json('/v1/alerts/test', { method: 'POST', body: '{' });
    expect(anon.status).toBe(401); // access before body: an unauthenticated malformed POST gets 401
    expect(anon.body.code).toBe('unauthorized');
    const auditor = await a.json('/v1/alerts/test', { method: 'POST', headers: { Authorization: 'Bearer auditor-key' } });
    expect(auditor.status).toBe(403);
    expect(auditor.body).toEqual({ ok: false, error: 'forbidden', code: 'forbidden' });
    expect(reasons).toEqual(['missing_or_invalid_token', 'insufficient_role']);

    const ok = await a.json('/v1/alerts/test', { method: 'POST', headers: { Authorization: 'Bearer op-key' }, body: JSON.stringify({ message: 'hello bench' }) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, alert: { alert_type: 'custom', severity: 'info', source: 'control-center', message: 'hello bench' } });
    const list = await a.json('/v1/alerts');
    expect(list.body.alerts.map((x: { id: string }) => x.id)).toContain(ok.body.alert.id);
  });

  it('docs/wire-decisions.md D3: malformed JSON, non-object JSON and invalid fields are 400 bad_request with the detail', async () => {
    const a = await demoAgent({ SVC_API_KEY: KEY });
    const auth = { Authorization: `Bearer ${KEY}` };
    const bad = await a.json('/v1/alerts/test', { method: 'POST', headers: auth, body: '{"message": ' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('bad_request');
    expect(bad.body.error).toMatch(/^invalid JSON body: /);
    for (const body of ['[]', '"text"', '42', 'null']) {
      const r = await a.json('/v1/alerts/test', { method: 'POST', headers: auth, body });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid JSON body: expected a JSON object');
    }
    const deep = await a.json('/v1/alerts/test', { method: 'POST', headers: auth, body: '{"a":' + '['.repeat(100) + ']'.repeat(100) + '}' });
    expect(deep.status).toBe(400);
    expect(deep.body.error).toMatch(/nested deeper than 64 levels/);
    const wrongType = await a.json('/v1/alerts/test', { method: 'POST', headers: auth, body: JSON.stringify({ message: 12 }) });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error).toMatch(/^invalid field 'message'/);
    const empty = await a.json('/v1/alerts/test', { method: 'POST', headers: auth });
    expect(empty.status).toBe(200); // an empty body counts as {}
  });
});
