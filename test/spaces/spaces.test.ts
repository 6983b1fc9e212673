import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { ADMIN, deadPort, liveGateway, spacesProject } from './fixture.js';

/** The 13 smart-space routes and the RPC names the official gRPC clients call (docs/spaces.md). */
const ROUTES: Array<[string, string]> = [
  ['/v1/facilities', 'ListFacilities'],
  ['/v1/facilities/{id}/readiness', 'GetFacilityReadiness'],
  ['/v1/facilities/{id}/health', 'GetFacilityHealth'],
  ['/v1/facilities/{id}/security', 'GetFacilitySecurity'],
  ['/v1/facilities/{id}/floor-map', 'GetFacilityFloorMap'],
  ['/v1/zones/{id}/occupancy', 'GetZoneOccupancy'],
  ['/v1/zones/{id}/environment', 'GetZoneEnvironment'],
  ['/v1/energy/systems', 'ListEnergySystems'],
  ['/v1/energy/systems/{id}', 'GetEnergySystem'],
  ['/v1/emergency/status', 'GetEmergencyStatus'],
  ['/v1/smart-spaces/summary', 'GetSmartSpacesSummary'],
  ['/v1/smart-spaces/devices', 'ListSmartSpacesDevices'],
  ['/v1/smart-spaces/gateways', 'ListSmartSpacesGateways'],
];

describe('smart spaces in the contract', () => {
  it.each(ROUTES)('GET %s is an open read served as %s', (path, rpc) => {
    const spec = SPECS.find((s) => s.method === 'GET' && s.path === path);
    expect(spec, path).toBeDefined();
    expect(spec!.rpc?.name).toBe(rpc);
    expect(spec!.access).toEqual({ kind: 'read' });
  });
});

describe('smart spaces from configuration, pool, alerts and gateway probes', () => {
  let a: RunningAgent;
  let grpc: GrpcTestClient;
  let gw: Awaited<ReturnType<typeof liveGateway>>;
  beforeAll(async () => {
    gw = await liveGateway();
    const dead = await deadPort();
    a = await startAgent({ configPath: spacesProject({ live: gw.port, dead }), env: { SVC_API_KEY: ADMIN, SVC_GATEWAY_PROBE_TIMEOUT_MS: '1500' }, grpcBind: '127.0.0.1:0' });
    grpc = connectGrpc(a.agent.grpcAddress!);
  });
  afterAll(async () => {
    grpc?.close();
    await a?.close();
    await gw?.close();
  });

  it('lists facilities with their gateways, zones and the readiness profile (facility_type falls back to type)', async () => {
    const r = await a.json('/v1/facilities');
    expect(r.status).toBe(200);
    expect(r.body.count).toBe(2);
    expect(r.body.readiness_profile).toBe('smart_space');
    expect(r.body.facilities).toEqual([
      { id: 'annex', name: 'Annex', facility_type: 'residential', compliance_profile: null, source: 'facilities' },
      { id: 'tower-demo', name: 'Tower demo', facility_type: 'commercial_tower', compliance_profile: 'commercial', source: 'facilities' },
    ]);
    expect(r.body.gateways.map((g: { id: string }) => g.id)).toEqual(['gw-annex', 'gw-main']);
    expect(r.body.zones).toContainEqual({ id: 'floor-12', name: 'Floor 12', facility: 'tower-demo', parent: 'lobby', type: null, health_zone: false });
  });

  it('F16: facility readiness has 8 factors, factor_chart equal to factors, a score above 0, from its own devices', async () => {
    const r = await a.json('/v1/facilities/tower-demo/readiness');
    expect(r.status).toBe(200);
    expect(r.body.factors).toHaveLength(8);
    expect(r.body.factor_chart).toEqual(r.body.factors);
    expect(r.body.score).toBeGreaterThan(0);
    expect(r.body.minimum_score).toBe(80);
    const f = Object.fromEntries(r.body.factors.map((x: { dimension: string }) => [x.dimension, x]));
    // The live gateway answers the TCP probe.
    expect(f.gateway_availability).toMatchObject({ score: 100, weight: 20, blockers: [] });
    // The required sprinkler is not configured.
    expect(f.critical_sensors).toMatchObject({ score: 50, blockers: ['required_device_missing:sprinkler-9'] });
    // Configured security and life-safety devices, none faulty.
    expect(f.security_status.score).toBe(100);
    expect(f.emergency_systems.score).toBe(100);
    expect(r.body.blocking_dimensions).toEqual(['critical_sensors']);
    expect(r.body.status).not.toBe('ready');
    expect(r.body.mission_ready).toBe(false);
    expect(r.body.zones.map((z: { id: string }) => z.id)).toEqual(['floor-12', 'lobby']);
    expect(r.body.robots).toEqual([{ id: 'cleaner-1', facility: 'tower-demo', type: 'CleaningRobot', provider: null, capabilities: [] }]);
    expect(r.body.continuity_pairs).toEqual([{ primary: 'gw-main', backup: 'gw-backup', on_failure: 'failover', missions: ['night-patrol'] }]);
    // Trust entries: pool devices carry their pool trust; configured-only ones the placeholder.
    expect(r.body.trust_entries).toContainEqual({ id: 'counter-lobby', trust_level: 'trusted', health_status: 'unknown', provider: null });
    expect(r.body.trust_entries).toContainEqual({ id: 'smoke-lobby', trust_level: 'unknown', health_status: 'configured', provider: null });
  });

  it('an unreachable gateway (refused TCP connect) is reported and blocks its facility', async () => {
    const gws = await a.json('/v1/smart-spaces/gateways');
    expect(gws.status).toBe(200);
    const byId = Object.fromEntries(gws.body.gateways.map((g: { gateway: { id: string } }) => [g.gateway.id, g]));
    expect(byId['gw-main']).toMatchObject({ reachable: true, live_probe: true, probe: { probe: 'tcp', reachable: true, error: null } });
    expect(byId['gw-annex']).toMatchObject({ reachable: false, live_probe: true, probe: { probe: 'tcp', reachable: false, error: 'ECONNREFUSED' } });
    const annex = await a.json('/v1/smart-spaces/gateways?facility_id=annex');
    expect(annex.body.facility_id).toBe('annex');
    expect(annex.body.gateways.map((g: { gateway: { id: string } }) => g.gateway.id)).toEqual(['gw-annex']);

    const r = await a.json('/v1/facilities/annex/readiness');
    const gwFactor = r.body.factors.find((x: { dimension: string }) => x.dimension === 'gateway_availability');
    expect(gwFactor).toMatchObject({ score: 60, blockers: ['gateway_unreachable:gw-annex'] });
    // Zigbee hub without battery telemetry: its configuration and pool health decide (both fine).
    expect(r.body.factors.find((x: { dimension: string }) => x.dimension === 'battery_levels').score).toBe(100);
  });

  it('a gateway that stops listening turns unreachable on the next request', async () => {
    const extra = await liveGateway();
    const b = await startAgent({ configPath: spacesProject({ live: extra.port, dead: extra.port }), env: { SVC_GATEWAY_PROBE_TIMEOUT_MS: '1000' } });
    try {
      expect((await b.json('/v1/smart-spaces/gateways?facility_id=tower-demo')).body.gateways[0].reachable).toBe(true);
      await extra.close();
      const after = await b.json('/v1/smart-spaces/gateways?facility_id=tower-demo');
      expect(after.body.gateways[0]).toMatchObject({ reachable: false, probe: { reachable: false } });
    } finally {
      await b.close();
    }
  });

  it('F17: unknown facility, zone and energy system are 404 not_found on every route', async () => {
    for (const path of ['/v1/facilities/nope/readiness', '/v1/facilities/nope/health', '/v1/facilities/nope/security', '/v1/facilities/nope/floor-map']) {
      const r = await a.json(path);
      expect(r.status, path).toBe(404);
      expect(r.body).toMatchObject({ error: 'facility not found', code: 'not_found' });
    }
    for (const path of ['/v1/zones/nope/occupancy', '/v1/zones/nope/environment']) {
      const r = await a.json(path);
      expect(r.status, path).toBe(404);
      expect(r.body).toMatchObject({ error: 'zone not found', code: 'not_found' });
    }
    const e = await a.json('/v1/energy/systems/nope');
    expect(e.status).toBe(404);
    expect(e.body).toMatchObject({ error: 'energy system not found', code: 'not_found' });
  });

  it('F18: a zone without occupancy telemetry reports source none, count 0 and why', async () => {
    const r = await a.json('/v1/zones/floor-12/occupancy');
    expect(r.status).toBe(200);
    expect(r.body.occupancy).toEqual({ present: false, count: 0, flow: 'steady', source: 'none' });
    expect(r.body.explanation).toContain('has no devices');
    expect(r.body.timeline).toHaveLength(12);
    expect(r.body.timeline.map((t: { offset_minutes: number }) => t.offset_minutes)).toEqual([-55, -50, -45, -40, -35, -30, -25, -20, -15, -10, -5, 0]);
    expect(r.body.timeline.every((t: { count: number }) => t.count === 0)).toBe(true);
    expect(r.body.twin).toBeNull();
    const env = await a.json('/v1/zones/floor-12/environment');
    expect(env.body).toMatchObject({ source: 'none', readings: { co2_ppm: null, temperature_c: null, humidity_pct: null, aq_index: null }, within_baseline: null });
    expect(env.body.explanation).toContain('has no devices');
    // The lobby has devices that have not spoken yet: the explanation names them.
    const lobby = await a.json('/v1/zones/lobby/occupancy');
    expect(lobby.body.occupancy.source).toBe('none');
    expect(lobby.body.explanation).toContain('counter-lobby');
    expect(lobby.body.twin).toEqual({ id: 'lobby-twin', mirror: ['occupancy'], replay: null });
    const lobbyEnv = await a.json('/v1/zones/lobby/environment');
    expect(lobbyEnv.body.baselines).toEqual({ co2_ppm: 700, temperature_c: 22, humidity_pct: 45, aq_index: 50 });
  });

  it('floor map, health, security, devices and energy list come from the configuration and the pool', async () => {
    const map = await a.json('/v1/facilities/tower-demo/floor-map');
    expect(map.status).toBe(200);
    expect(map.body.floor_map).toEqual({ layout: 'zone_tree', node_count: 2 });
    expect(map.body.roots.map((z: { zone: { id: string } }) => z.zone.id)).toEqual(['lobby']);
    // lobby: smoke, lock and the four [[devices]] placed there.
    expect(map.body.zones.find((z: { zone: { id: string } }) => z.zone.id === 'lobby').device_count).toBe(6);

    const health = await a.json('/v1/facilities/tower-demo/health');
    expect(health.body.overall_status).toBe('healthy');
    expect(health.body.facility_device_pool.total).toBe(6);
    expect(health.body.device_pool.total).toBe(6);
    expect(health.body.critical_devices).toEqual([]);

    const sec = await a.json('/v1/facilities/tower-demo/security');
    expect(sec.body).toMatchObject({ lockdown_active: false, profile: 'commercial', access_policy: 'badge', package_trust_min: 3, tamper_alerts: [], access_audit_recent: [] });
    expect(sec.body.locks_and_cameras.map((d: { id: string }) => d.id)).toEqual(['lock-lobby']);

    const devices = await a.json('/v1/smart-spaces/devices?facility_id=annex');
    expect(devices.body).toMatchObject({ facility_id: 'annex', count: 1 });
    const all = await a.json('/v1/smart-spaces/devices');
    expect(all.body.count).toBe(12);
    expect(all.body.devices.find((d: { id: string }) => d.id === 'counter-lobby')).toMatchObject({ zone: 'lobby', facility: 'tower-demo', trust_level: 'trusted', readiness_blocked: false });

    const energy = await a.json('/v1/energy/systems');
    expect(energy.body.count).toBe(3);
    const meter = await a.json('/v1/energy/systems/meter-1');
    expect(meter.body).toMatchObject({ source: 'none', detail: { grid_import_kw: null, demand_response_event: null } });
  });

  it('tamper alerts naming a facility device flip security_status and appear in the security panel', async () => {
    a.agent.services.alerts.raise({ alert_type: 'tamper', severity: 'warning', source: 'door-monitor', message: 'lock-lobby enclosure opened' });
    const sec = await a.json('/v1/facilities/tower-demo/security');
    expect(sec.body.tamper_alerts).toHaveLength(1);
    expect(sec.body.tamper_alerts[0]).toMatchObject({ alert_type: 'tamper', message: 'lock-lobby enclosure opened' });
    const r = await a.json('/v1/facilities/tower-demo/readiness');
    const f = r.body.factors.find((x: { dimension: string }) => x.dimension === 'security_status');
    expect(f).toMatchObject({ score: 0, blockers: ['security_fault:lock-lobby'] });
  });

  it('F19: a critical alert mentioning smoke flips emergency status to emergency (one emergency, not also its incident)', async () => {
    const before = await a.json('/v1/emergency/status');
    expect(before.status).toBe(200);
    expect(before.body.active_emergencies).toEqual([]);
    expect(before.body.life_safety_devices).toEqual(['leak-lobby', 'smoke-lobby']);
    // The annex gateway refuses connections: not evacuation-ready, so degraded rather than normal.
    expect(before.body).toMatchObject({ evacuation_ready: false, status: 'degraded' });
    expect(before.body.evacuation_blockers).toEqual(['gateway_unreachable:gw-annex']);

    const alert = a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'critical', source: 'building', message: 'smoke detected on floor 12' })!;
    // The critical alert opened an incident through the bus.
    expect(a.agent.services.incidents.list().some((i) => i.source_alert_id === alert.id)).toBe(true);
    const after = await a.json('/v1/emergency/status');
    expect(after.body.status).toBe('emergency');
    expect(after.body.active_emergencies).toEqual([{ id: alert.id, kind: 'alert', severity: 'critical', message: 'smoke detected on floor 12', created_at_ms: alert.timestamp_ms }]);
    // A warning that mentions smoke is not an emergency; nor is a critical alert about something else.
    a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'warning', source: 'building', message: 'smoke test scheduled' });
    a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'critical', source: 'building', message: 'elevator stuck' });
    expect((await a.json('/v1/emergency/status')).body.active_emergencies).toHaveLength(1);

    const connects = gw.connections();
    const summary = await a.json('/v1/smart-spaces/summary');
    expect(summary.status).toBe(200);
    // Two readiness roll-ups and the emergency status share one probe per gateway.
    expect(gw.connections() - connects).toBe(1);
    expect(summary.body).toMatchObject({ blueprint: 'smart_spaces', readiness_profile: 'smart_space', emergency: { status: 'emergency' } });
    expect(summary.body.readiness_rollups.map((x: { facility_id: string }) => x.facility_id)).toEqual(['annex', 'tower-demo']);
    expect(summary.body.facilities.count).toBe(2);
    expect(summary.body.energy.count).toBe(3);
    expect(summary.body.robots).toHaveLength(1);
  });

  it('answers over gRPC with the same bodies (EntityIdRequest carries the id, QueryRequest the query)', async () => {
    const ready = await callUnary(grpc.client, 'GetFacilityReadiness', { entity_id: 'tower-demo' });
    expect(ready.ok).toBe(true);
    expect(ready.json.factors).toHaveLength(8);
    const missing = await callUnary(grpc.client, 'GetZoneOccupancy', { entity_id: 'nope' });
    expect(missing.ok).toBe(false);
    expect(missing.errorCode).toBe('not_found');
    const gws = await callUnary(grpc.client, 'ListSmartSpacesGateways', { query: 'facility_id=annex' });
    expect(gws.json.gateways[0]).toMatchObject({ reachable: false });
    const list = await callUnary(grpc.client, 'ListFacilities', {});
    expect(list.json.count).toBe(2);
  });
});

describe('smart spaces without a configuration or with reads closed', () => {
  it('answers 400 no resolved configuration loaded', async () => {
    const a = await startAgent();
    try {
      for (const path of ['/v1/facilities', '/v1/emergency/status', '/v1/zones/x/occupancy', '/v1/smart-spaces/summary']) {
        const r = await a.json(path);
        expect(r.status, path).toBe(400);
        expect(r.body).toMatchObject({ error: 'no resolved configuration loaded', code: 'bad_request' });
      }
    } finally {
      await a.close();
    }
  });

  it('with SVC_API_REQUIRE_AUTH_ALL_READS a read without a credential is 401, with one 200', async () => {
    const gw = await liveGateway();
    const a = await startAgent({ configPath: spacesProject({ live: gw.port, dead: gw.port }), env: { SVC_API_KEY: ADMIN, SVC_API_REQUIRE_AUTH_ALL_READS: '1' } });
    try {
      expect((await a.json('/v1/facilities')).status).toBe(401);
      expect((await a.json('/v1/facilities', { headers: { Authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    } finally {
      await a.close();
      await gw.close();
    }
  });
});

describe('gateway failover requirement', () => {
  it('a primary without a backup is blocked when failover is required; a backup declared by failover_from clears it', async () => {
    const { writeProject } = await import('../helpers/project-fixture.js');
    const configPath = writeProject({
      'svc.toml': '[project]\nname = "f"\nversion = "1.0.0"\n[config]\nfacilities = "svc.facilities.toml"\n',
      'svc.facilities.toml': `
[readiness.profiles.smart_space]
min_score = 90
[readiness.profiles.smart_space.weights]
gateway_availability = 1.0
[readiness.profiles.smart_space.redundancy]
gateway_failover_required = true

[[facilities]]
id = "home"
[[facilities.gateways]]
id = "hub-a"
provider = "svc-zwave"
[[facilities.gateways]]
id = "hub-b"
provider = "svc-zwave"
[[facilities.gateways]]
id = "hub-b-spare"
role = "backup"
failover_from = "hub-b"
`,
    });
    const a = await startAgent({ configPath });
    try {
      const r = await a.json('/v1/facilities/home/readiness');
      expect(r.status).toBe(200);
      const f = r.body.factors.find((x: { dimension: string }) => x.dimension === 'gateway_availability');
      expect(f).toMatchObject({ score: 65, weight: 100, blockers: ['gateway_backup_missing:hub-a'] });
      // Only gateway_availability carries weight: the score is its score.
      expect(r.body.score).toBe(65);
      expect(r.body.status).toBe('not_ready');
      expect(r.body.factors.filter((x: { weight: number }) => x.weight === 0)).toHaveLength(7);
      // Gateways without an endpoint are not probed and count as reachable.
      const g = await a.json('/v1/smart-spaces/gateways');
      expect(g.body.gateways[0]).toMatchObject({ reachable: true, live_probe: false, probe: { probe: 'none' } });
    } finally {
      await a.close();
    }
  });
});
