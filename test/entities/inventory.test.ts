import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, bearer, entityAgent, ids, YARD_PROGRAM, type EntityAgent } from './fixture.js';

let running: EntityAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(options: Parameters<typeof entityAgent>[0] = {}) {
  const a = await entityAgent(options);
  running.push(a);
  return a;
}
const list = async (a: EntityAgent, qs = '') => {
  const r = await a.json(`/v1/entities${qs}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.count).toBe(r.body.entities.length);
  return ids(r.body.entities);
};

const CONFIG_IDS = [
  'ana',
  'bo',
  'cam-gate',
  'gps-a',
  'gps-b',
  'hz-forklifts',
  'insp-01',
  'insp-01-cpu',
  'insp-01-lidar',
  'insp-02',
  'north-yard',
  'north-yard:bay-1',
  'north-yard:gate',
  'org:Yard Inspection',
  'ouster',
  'package:gnss-driver',
  'package:lidar-kit',
  'spare-imu',
  'team:night-shift',
  'ublox',
  'wh-gateway',
  'yard-fleet',
];

describe('entity inventory derived from the layered configuration and the device pool', () => {
  it('lists every source as one inventory sorted by id, with the summary shape', async () => {
    const a = await agent();
    const r = await a.json('/v1/entities');
    expect(r.body.version).toBe('v1');
    expect(ids(r.body.entities)).toEqual(CONFIG_IDS);
    const byId = Object.fromEntries(r.body.entities.map((e: { id: string }) => [e.id, e]));
    expect(byId['gps-a']).toEqual({
      id: 'gps-a',
      kind: 'gps',
      entity_type: 'gps',
      display_name: 'gps-a',
      name: 'gps-a',
      health_status: 'unknown',
      readiness_status: 'ready',
      trust_status: 'trusted',
      lifecycle_state: 'active',
      parent_id: 'insp-01',
      capabilities: ['positioning'],
      tags: ['critical'],
      governance: null,
      autonomy: null,
    });
    // Kinds come from the source: imu → sensor, lidar → sensor, jetson compute, zones, hazards, people, teams.
    const kinds = Object.fromEntries(r.body.entities.map((e: { id: string; kind: string }) => [e.id, e.kind]));
    expect(kinds).toMatchObject({
      'spare-imu': 'sensor',
      'insp-01-lidar': 'sensor',
      'insp-01-cpu': 'compute',
      'cam-gate': 'camera',
      'north-yard': 'facility',
      'north-yard:bay-1': 'zone',
      'hz-forklifts': 'hazard',
      ana: 'human',
      'team:night-shift': 'team',
      'org:Yard Inspection': 'organization',
      'yard-fleet': 'fleet',
      'ublox': 'provider',
      'package:lidar-kit': 'package',
      'wh-gateway': 'gateway',
    });
    // Layers: the environment layer wins over the base one; humans are appended by the [merge] rule.
    expect(byId['yard-fleet'].name).toBe('North yard fleet');
    expect((await a.json('/v1/entities/package:gnss-driver')).body.entity.version).toBe('2.1.0');
    expect(byId['ana'].display_name).toBe('Ana Ruiz');
    expect(byId['insp-01'].autonomy).toEqual({ level: 'conditional', local_decision_authority: ['obstacle_avoidance'], requires_central_approval: ['leave_geofence'] });
  });

  it('returns the full record of one entity, with children and security, and 404 for unknown ids on every entity route', async () => {
    const a = await agent();
    const gps = (await a.json('/v1/entities/gps-a')).body.entity;
    expect(gps).toEqual({
      id: 'gps-a',
      entity_type: 'gps',
      parent_id: 'insp-01',
      labels: ['gps', 'outdoor'],
      tags: ['critical'],
      firmware_version: '1.2.0',
      provider: 'ublox',
      package: 'gnss-driver',
      capabilities: ['positioning'],
      health_status: 'unknown',
      readiness_status: 'ready',
      trust_status: 'trusted',
      security: { identity: 'spiffe://yard/gps-a' },
      lifecycle_state: 'active',
      metadata: expect.objectContaining({ device_type: 'gps', device_lifecycle: 'active', trust_level: 'trusted', redundant_group: 'gps', source: 'config' }),
      audit: expect.objectContaining({ source: 'configuration', updated_at: expect.any(String) }),
    });
    const robot = (await a.json('/v1/entities/insp-01')).body.entity;
    expect(robot).toMatchObject({ id: 'insp-01', entity_type: 'robot', parent_id: 'yard-fleet', model: 'Rover', children_ids: ['gps-a', 'gps-b', 'insp-01-cpu', 'insp-01-lidar'], metadata: { hardware_profile: 'RoverV2' } });
    expect((await a.json('/v1/entities/insp-01-cpu')).body.entity).toMatchObject({ serial_number: 'CPU-0001', metadata: { compute_type: 'jetson' } });
    // Empty arrays and maps are left out of the full record.
    expect((await a.json('/v1/entities/bo')).body.entity).not.toHaveProperty('tags');

    for (const path of ['', '/relationships', '/health', '/readiness', '/trust', '/autonomy', '/decisions']) {
      const r = await a.json(`/v1/entities/nope${path}`);
      expect(r.status, path).toBe(404);
      expect(r.body).toEqual({ ok: false, error: "entity 'nope' not found", code: 'not_found' });
    }
    const verify = await a.json('/v1/entities/ghost/verify', { method: 'POST' });
    expect(verify.status).toBe(404);
    expect(verify.body.error).toBe("entity 'ghost' not found");
    const tags = await a.json('/v1/entities/ghost/tags', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ add: ['x'] }) });
    expect(tags.status).toBe(404);
    expect(tags.body.error).toBe("entity 'ghost' not found");
  });

  it('applies every inventory filter, long and short names, lists and any case', async () => {
    const a = await agent({ program: YARD_PROGRAM });
    expect(await list(a, '?kind=gps')).toEqual(['gps-a', 'gps-b']);
    expect(await list(a, '?entity_type=sensor')).toEqual(['insp-01-lidar', 'insp-01:bumper', 'spare-imu']);
    expect(await list(a, '?kind=HUMAN,camera')).toEqual(['ana', 'bo', 'cam-gate', 'insp-01:front_cam']);
    expect(await list(a, '?tag=critical')).toEqual(['gps-a']);
    expect(await list(a, '?label=outdoor')).toEqual(['gps-a']);
    expect(await list(a, '?label=gps')).toEqual(['gps-a', 'gps-b']);
    expect(await list(a, '?capability=positioning')).toEqual(['gps-a', 'gps-b']);
    expect(await list(a, '?provider=ublox')).toEqual(['gps-a', 'gps-b']);
    expect(await list(a, '?package=gnss-driver')).toEqual(['gps-a', 'gps-b', 'ublox']);
    expect(await list(a, '?firmware=1.2.0')).toEqual(['gps-a']);
    expect(await list(a, '?firmware_version=1.1.0')).toEqual(['gps-b']);
    expect(await list(a, '?assigned_to=insp-01')).toEqual(['gps-a', 'gps-b', 'insp-01-lidar']);
    expect(await list(a, '?depends_on=ouster')).toEqual(['insp-01-lidar']);
    expect(await list(a, '?participates_in=mission:insp-01:patrol')).toEqual(['insp-01']);
    expect(await list(a, '?parent_id=north-yard')).toEqual(['north-yard:bay-1', 'north-yard:gate']);
    expect(await list(a, '?search=lind')).toEqual(['bo']);
    expect(await list(a, '?q=YARD')).toEqual(['north-yard', 'north-yard:bay-1', 'north-yard:gate', 'org:Yard Inspection', 'yard-fleet']);
    expect(await list(a, '?lifecycle=verified')).toEqual(['cam-gate']);
    expect(await list(a, '?kind=gps&provider=ublox&tag=critical')).toEqual(['gps-a']);

    // Statuses follow the device pool live: quarantine gps-b and the robot, fleet and organisation follow.
    const q = await a.json('/v1/devices/gps-b/quarantine', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ reason: 'position drift', override: true }) });
    expect(q.status).toBe(200);
    expect(await list(a, '?lifecycle_state=suspended')).toEqual(['gps-b']);
    expect(await list(a, '?readiness=not_ready')).toEqual(['gps-b']);
    expect(await list(a, '?readiness_status=partial')).toEqual(['insp-01', 'mission:insp-01:patrol', 'org:Yard Inspection', 'yard-fleet']);
    expect(await list(a, '?health=WARNING')).toEqual(['gps-b', 'insp-01', 'mission:insp-01:patrol', 'org:Yard Inspection', 'yard-fleet']);
    // Configuration entities nothing live reports on are presumed healthy (docs/entities.md § Kinds and statuses);
    // so is a robot whose only device has never been heard from, and the mission it takes part in.
    expect(await list(a, '?health_status=healthy')).toEqual([
      'ana', 'bo', 'hz-forklifts', 'insp-01-cpu', 'insp-02', 'mission:insp-02:mission', 'north-yard', 'north-yard:bay-1', 'north-yard:gate',
      'ouster', 'package:gnss-driver', 'package:lidar-kit', 'team:night-shift', 'ublox', 'wh-gateway',
    ]);
    // Devices never heard from stay unknown.
    expect(await list(a, '?health_status=unknown&kind=gps,camera,sensor')).toEqual(['cam-gate', 'gps-a', 'insp-01-lidar', 'insp-01:bumper', 'insp-01:front_cam', 'spare-imu']);
    expect(await list(a, '?trust=untrusted')).toEqual(['gps-b', 'insp-01', 'mission:insp-01:patrol', 'org:Yard Inspection', 'yard-fleet']);
    expect(await list(a, '?trust_status=verified,trusted&kind=camera')).toEqual(['cam-gate']);
  });

  it('answers 400 with the parameter name for a bad filter value', async () => {
    const a = await agent();
    const r = await a.json('/v1/entities?health=bogus');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('bad_request');
    expect(r.body.error).toMatch(/^invalid query parameter 'health': expected one of healthy, warning, degraded, offline, critical, unknown$/);
    expect((await a.json('/v1/entities?readiness_status=ready,maybe')).body.error).toContain("'readiness_status'");
    expect((await a.json('/v1/entities?lifecycle=zombie')).status).toBe(400);
    expect((await a.json('/v1/entities?trust=kinda')).status).toBe(400);
  });

  it('obeys the read-auth policy: /v1/entities is a sensitive prefix, read-like POSTs included', async () => {
    const a = await agent({ env: { SVC_API_REQUIRE_AUTH_READS: '1' } });
    for (const [path, method] of [
      ['/v1/entities', 'GET'],
      ['/v1/entities/graph', 'GET'],
      ['/v1/entities/gps-a/health', 'GET'],
      ['/v1/entities/query', 'POST'],
      ['/v1/entities/gps-a/verify', 'POST'],
    ] as const) {
      const anonymous = await a.json(path, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(anonymous.status, path).toBe(401);
      expect(anonymous.body.code).toBe('unauthorized');
      const authed = await a.json(path, { method, headers: bearer(ADMIN), ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(authed.status, path).toBe(200);
    }
  });

  it('works without a configuration: the device pool and the overlay still make an inventory', async () => {
    const a = await agent({ configPath: null });
    expect(await list(a)).toEqual([]);
    a.agent.services.devices.observe({ id: 'probe-1', device_type: 'temperature', protocol: 'fw-bridge/1', transport: 'serial', port: '/dev/ttyS1' });
    const r = await a.json('/v1/entities');
    expect(r.body.entities).toEqual([expect.objectContaining({ id: 'probe-1', kind: 'sensor', lifecycle_state: 'discovered', readiness_status: 'not_ready' })]);
    const sync = await a.json('/v1/entities/sync', { method: 'POST', headers: bearer(ADMIN) });
    expect(sync.status).toBe(400);
    expect(sync.body.error).toBe('no resolved configuration loaded; use --config');
  });
});
