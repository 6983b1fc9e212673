import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

const OPERATOR_KEY = 'people-op-key-0123456789';
const GUEST_KEY = 'people-guest-key-0123456789';

/** Fleet humans and wearables plus flat ones (duplicates resolved fleet-first), twins and the gate. */
function peopleProject(options: { healthTable?: string; program?: string } = {}) {
  const root = tempDir('svc-people-');
  const write = (name: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  };
  write(
    'svc.toml',
    `[project]
name = "People"
version = "1.0.0"
[config]
fleet = "svc.fleet.toml"
security = "svc.security.toml"
readiness = "svc.readiness.toml"
`,
  );
  write(
    'svc.fleet.toml',
    `[fleet]
id = "site"
[[fleet.humans]]
id = "ana"
role = "supervisor"
display_name = "Ana"
capabilities = ["approve_mission", "remote_expert"]
availability = "available"
trust_level = "verified"
location = "control-room"
permissions = ["approve"]
certifications = [{ id = "safety", expires = "2099-12-31", issuer = "TÜV" }]
[[fleet.humans]]
id = "bo"
role = "operator"
capabilities = ["operate_robot"]
availability = "off_shift"
trust_level = "unverified"
certifications = [{ id = "forklift", expires = "2001-01-01" }]
[[fleet.wearables]]
id = "band-ana"
type = "SmartBand"
provider = "acme"
human_id = "ana"
trust_level = "verified"
capabilities = ["heart_rate"]
[[fleet.wearables]]
id = "band-bo"
type = "SmartBand"
human_id = "bo"
`,
  );
  write(
    'svc.security.toml',
    `[security]
profile = "strict"
${options.healthTable ?? ''}
[[humans]]
id = "ana"
role = "guest"
[[humans]]
id = "cy"
role = "remote_expert"
[[twins]]
id = "twin-ana"
entity_id = "ana"
entity_type = "Human"
mirror = ["location", "health_status"]
replay = true
[[twins]]
id = "twin-zone"
entity_id = "zone-1"
entity_type = "zone"
mirror = ["occupancy"]
`,
  );
  write('svc.readiness.toml', `[readiness]\nmin_score = 60\n[readiness.profiles.human_collaboration]\nrequire_supervisor_approval = true\n`);
  write('programs/mission.sd', options.program ?? 'requires_capability remote_expert;\nrequires_capability operate_robot;\nrequires_capability gps_navigation;\n');
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(keys, JSON.stringify([
    { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
    { key_id: 'guest', token: GUEST_KEY, role: 'guest' },
  ]));
  return { root, config: path.join(root, 'svc.toml'), program: path.join(root, 'programs', 'mission.sd'), keys };
}

let agent: RunningAgent | null = null;
afterEach(async () => {
  await agent?.close();
  agent = null;
});

const auth = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });

describe('people routes', () => {
  it('lists humans fleet-first with certification and wearable counts, in registry order', async () => {
    const p = peopleProject();
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys } });
    const r = await agent.json('/v1/humans');
    expect(r.status).toBe(200);
    expect(r.body.count).toBe(3);
    expect(r.body.humans.map((h: any) => h.id)).toEqual(['ana', 'bo', 'cy']);
    // The fleet entry of "ana" wins over the flat one (role supervisor, not guest).
    expect(r.body.humans[0]).toEqual({
      id: 'ana',
      role: 'supervisor',
      display_name: 'Ana',
      capabilities: ['approve_mission', 'remote_expert'],
      availability: 'available',
      trust_level: 'verified',
      certification_count: 1,
      wearable_count: 1,
    });
    expect(r.body.humans[2]).toMatchObject({ id: 'cy', display_name: null, availability: null, certification_count: 0, wearable_count: 0 });
  });

  it('team readiness from the program’s operator capabilities, the profile and each human', async () => {
    const p = peopleProject();
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys } });
    const r = await agent.json('/v1/humans/readiness');
    expect(r.status).toBe(200);
    expect(r.body.operator_count).toBe(3);
    expect(r.body.operators[1]).toEqual({ id: 'bo', role: 'operator', display_name: null, available: false, certifications_valid: false, trust_level: 'unverified', wearable_count: 1 });
    const team = r.body.team_readiness;
    // gps_navigation is a robot capability, not an operator one.
    expect(team.required_capabilities).toEqual(['operate_robot', 'remote_expert']);
    expect(team.profile).toBe('human_collaboration');
    expect(team.minimum_score).toBe(60);
    const byId = Object.fromEntries(team.operators.map((o: any) => [o.human_id, o]));
    // ana: everything 100 except capability (lacks operate_robot → 30): (25*100+20*30+15*100+15*100+10*100+10*100+5*100)/100 = 86
    expect(byId.ana.score).toBe(86);
    // bo: cert 40, capability 30, availability 0, trust 50, location 80, permissions 90, wearable (unset trust, never heard) 100
    expect(byId.bo.score).toBe(Math.floor((25 * 40 + 20 * 30 + 0 + 15 * 50 + 10 * 80 + 10 * 90 + 5 * 100) / 100));
    expect(team.total_score).toBe(Math.floor((byId.ana.score + byId.bo.score + byId.cy.score) / 3));
    expect(team.operator_ready).toBe(team.total_score >= 60);
    // ana is an available, verified supervisor; nobody available holds operate_robot.
    expect(team.issues.some((i: any) => i.factor === 'Team')).toBe(false);
    expect(team.issues).toContainEqual(expect.objectContaining({ factor: 'Mission', severity: 'High', message: expect.stringContaining('operate_robot') }));
    expect(team.issues).toContainEqual(expect.objectContaining({ factor: 'Operator', severity: 'Medium', message: "operator 'bo' has expired or missing certifications" }));
    expect(team.mission_ready).toBe(false);
    expect(team.dimensions).toEqual([{ dimension: 'Operator', score: team.total_score, weight_percent: 100, passed: team.operator_ready, detail: '3 operator(s) evaluated' }]);
  });

  it('omits team readiness without a program or when it does not parse', async () => {
    const p = peopleProject({ program: 'robot {{{ broken' });
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys } });
    const r = await agent.json('/v1/humans/readiness');
    expect(r.status).toBe(200);
    expect(r.body.operator_count).toBe(3);
    expect(r.body).not.toHaveProperty('team_readiness');
    await agent.close();
    agent = await startAgent({ configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys } });
    expect((await agent.json('/v1/humans/readiness')).body).not.toHaveProperty('team_readiness');
  });

  it('one human’s readiness; an unknown human is 404; the literal routes win over {id}', async () => {
    const p = peopleProject();
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys } });
    const r = await agent.json('/v1/humans/ana/readiness');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      human_id: 'ana',
      role: 'supervisor',
      available: true,
      certifications_valid: true,
      trust_level: 'verified',
      wearables: [{ id: 'band-ana', type: 'SmartBand', provider: 'acme', capabilities: ['heart_rate'], link: 'unknown' }],
      team_readiness: { profile: 'human_collaboration', minimum_score: 60, operator_score: 86 },
    });
    const missing = await agent.json('/v1/humans/nobody/readiness');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ ok: false, error: 'human not found', code: 'not_found' });
    // /v1/humans/readiness and /v1/humans/twins are their own routes, not a human called "readiness".
    expect((await agent.json('/v1/humans/readiness')).body).toHaveProperty('operators');
    expect((await agent.json('/v1/humans/twins')).body).toHaveProperty('twins');
    expect((await agent.json('/v1/humans/readiness', { method: 'POST' })).status).toBe(404);
  });

  it('gate closed: wearables withhold health readings, human twins drop the health mirror', async () => {
    const p = peopleProject({ healthTable: '[security.human_health]\nenabled = true\nretention_days = 7\n' });
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys } });
    const now = Date.now();
    agent.agent.services.telemetry.append({ kind: 'device', device_id: 'band-ana', metric: 'heart_rate', value: 72, timestamp_ms: now });
    agent.agent.services.telemetry.append({ kind: 'device', device_id: 'band-ana', metric: 'battery_percent', value: 81, timestamp_ms: now });
    const w = await agent.json('/v1/wearables');
    expect(w.status).toBe(200);
    expect(w.body.human_health).toEqual({ config_enabled: true, env_enabled: false, active: false, require_consent: true, audit_health_reads: true, retention_days: 7 });
    const band = w.body.wearables.find((x: any) => x.id === 'band-ana');
    expect(band).toMatchObject({ health_telemetry_allowed: false, link: 'connected', last_seen_ms: now, device_readings: { battery_percent: 81 }, health_readings: null });
    const t = await agent.json('/v1/humans/twins');
    expect(t.body).toEqual({
      version: 'v1',
      twins: [{ id: 'twin-ana', entity_id: 'ana', entity_type: 'Human', mirror: ['location'], replay: true, telemetry_sync: false, training_session_id: null }],
      count: 1,
      health_mirror_gated: true,
    });
    const policy = await agent.json('/v1/human-health/policy');
    expect(policy.body.policy.active).toBe(false);
    expect(policy.body.hint).toContain('SVC_HUMAN_HEALTH_ENABLED=1');
  });

  it('gate open (configuration and environment): health readings and the health mirror are shown', async () => {
    const p = peopleProject({ healthTable: '[security.human_health]\nenabled = true\n' });
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys, SVC_HUMAN_HEALTH_ENABLED: 'TRUE' } });
    agent.agent.services.telemetry.append({ kind: 'device', device_id: 'band-ana', metric: 'heart_rate', value: 72, timestamp_ms: Date.now() });
    const w = await agent.json('/v1/wearables');
    expect(w.body.human_health.active).toBe(true);
    expect(w.body.wearables.every((x: any) => x.health_telemetry_allowed === true)).toBe(true);
    expect(w.body.wearables.find((x: any) => x.id === 'band-ana').health_readings).toEqual({ heart_rate: 72 });
    const t = await agent.json('/v1/humans/twins');
    expect(t.body.health_mirror_gated).toBe(false);
    expect(t.body.twins[0].mirror).toEqual(['location', 'health_status']);
  });

  it('without a [security.human_health] table every switch is off, even with the environment set', async () => {
    const p = peopleProject();
    agent = await startAgent({ configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys, SVC_HUMAN_HEALTH_ENABLED: '1' } });
    const policy = await agent.json('/v1/human-health/policy');
    expect(policy.body.policy).toEqual({ config_enabled: false, env_enabled: true, active: false, require_consent: false, audit_health_reads: false, retention_days: 0 });
  });

  it('a wearable whose telemetry went stale lowers its human’s wearable connectivity', async () => {
    const p = peopleProject();
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys } });
    const before = (await agent.json('/v1/humans/readiness')).body.team_readiness.operators.find((o: any) => o.human_id === 'ana');
    expect(before.scores.wearable_connectivity).toBe(100);
    agent.agent.services.telemetry.append({ kind: 'device', device_id: 'band-ana', metric: 'battery_percent', value: 40, timestamp_ms: Date.now() - 20 * 60_000 });
    const w = await agent.json('/v1/wearables');
    expect(w.body.wearables.find((x: any) => x.id === 'band-ana').link).toBe('stale');
    const after = (await agent.json('/v1/humans/readiness')).body.team_readiness.operators.find((o: any) => o.human_id === 'ana');
    expect(after.scores.wearable_connectivity).toBe(50);
    expect(after.score).toBeLessThan(before.score);
  });

  it('a wearable the device pool reports offline is offline, whatever its last telemetry', async () => {
    const p = peopleProject();
    fs.writeFileSync(path.join(p.root, 'svc.security.toml'), fs.readFileSync(path.join(p.root, 'svc.security.toml'), 'utf8') + '\n[[devices]]\nid = "band-ana"\ntype = "SmartBand"\nprotocol = "mqtt"\n');
    agent = await startAgent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys } });
    agent.agent.services.telemetry.append({ kind: 'device', device_id: 'band-ana', metric: 'battery_percent', value: 90, timestamp_ms: Date.now() });
    expect((await agent.json('/v1/wearables')).body.wearables[0].link).toBe('connected');
    agent.agent.services.devices.setHealth('band-ana', 'offline');
    expect((await agent.json('/v1/wearables')).body.wearables[0].link).toBe('offline');
    const ana = (await agent.json('/v1/humans/readiness')).body.team_readiness.operators.find((o: any) => o.human_id === 'ana');
    expect(ana.scores.wearable_connectivity).toBe(50);
    expect((await agent.json('/v1/humans/ana/readiness')).body.wearables[0].link).toBe('offline');
  });

  it('needs a configuration (400); /v1/humans is a sensitive read under SVC_API_REQUIRE_AUTH_READS, wearables are not', async () => {
    agent = await startAgent();
    for (const route of ['/v1/humans', '/v1/humans/readiness', '/v1/humans/x/readiness', '/v1/humans/twins', '/v1/wearables', '/v1/human-health/policy']) {
      const r = await agent.json(route);
      expect(r.status, route).toBe(400);
      expect(r.body).toMatchObject({ error: 'no resolved configuration loaded', code: 'bad_request' });
    }
    await agent.close();
    const p = peopleProject();
    agent = await startAgent({ configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys, SVC_API_REQUIRE_AUTH_READS: '1' } });
    expect((await agent.json('/v1/humans')).status).toBe(401);
    expect((await agent.json('/v1/humans/ana/readiness')).status).toBe(401);
    expect((await agent.json('/v1/humans', auth(GUEST_KEY))).status).toBe(200);
    expect((await agent.json('/v1/humans', auth('wrong-token-0000000000'))).status).toBe(401);
    expect((await agent.json('/v1/wearables')).status).toBe(200);
    expect((await agent.json('/v1/human-health/policy')).status).toBe(200);
    const stateDir = agent.stateDir;
    await agent.close();
    // Under the all-reads flag the open reads need a principal too (same state directory: the keys
    // file was re-written with hashes peppered by it).
    agent = await startAgent({ configPath: p.config, stateDir, env: { SVC_API_KEYS_FILE: p.keys, SVC_API_REQUIRE_AUTH_ALL_READS: 'true' } });
    expect((await agent.json('/v1/wearables')).status).toBe(401);
    expect((await agent.json('/v1/human-health/policy')).status).toBe(401);
    expect((await agent.json('/v1/wearables', auth(OPERATOR_KEY))).status).toBe(200);
  });
});
