import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import { openStream, type StreamClient } from '../helpers/stream-client.js';
import { ADMIN, bearer, entityAgent, post, YARD_PROGRAM, type EntityAgent } from './fixture.js';

let running: EntityAgent[] = [];
let streams: StreamClient[] = [];
afterEach(async () => {
  streams.forEach((s) => s.close());
  streams = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(options: Parameters<typeof entityAgent>[0] = {}) {
  const a = await entityAgent(options);
  running.push(a);
  const events: PlatformEvent[] = [];
  a.agent.services.bus.subscribe((e) => events.push(e));
  const of = (type: string, entity: string) => events.filter((e) => e.type === type && e.entity_id === entity);
  return Object.assign(a, { events, of });
}
const quarantine = (a: EntityAgent, id: string, reason: string) => post(a, `/v1/devices/${id}/quarantine`, ADMIN, { reason, override: true });

describe('entity health, readiness and trust', () => {
  it('health follows the device pool and publishes HealthChanged, HealthCheckFailed and DegradedModeEntered on transitions only', async () => {
    const a = await agent();
    const stream = await openStream(a.wsUrl);
    streams.push(stream);
    const first = (await a.json('/v1/entities/insp-01/health')).body;
    expect(first).toEqual({
      version: 'v1',
      entity_id: 'insp-01',
      kind: 'robot',
      // A configured robot none of whose devices has been heard from yet: presumed healthy.
      health_status: 'healthy',
      lifecycle_state: 'active',
      report: {
        entity_id: 'insp-01',
        entity_type: 'robot',
        health_status: 'healthy',
        lifecycle_state: 'active',
        diagnostics: [],
        metrics: { blocked_devices: 0, total_devices: 3, health_checks_passed: 4, health_checks_failed: 0 },
        children_checked: 4,
        sources: ['config', 'device_pool'],
      },
    });
    // The first observation is a transition from unknown.
    expect(a.of('HealthChanged', 'insp-01').map((e) => [e.payload['from'], e.payload['to']])).toEqual([['unknown', 'healthy']]);

    expect((await quarantine(a, 'gps-b', 'position drift')).status).toBe(200);
    const warn = (await a.json('/v1/entities/insp-01/health')).body;
    expect(warn.health_status).toBe('warning');
    expect(warn.report.diagnostics).toEqual([{ category: 'gps', severity: 'warning', message: 'device gps-b is quarantined: position drift' }]);
    expect(warn.report.metrics).toEqual({ blocked_devices: 1, total_devices: 3, health_checks_passed: 3, health_checks_failed: 1 });
    expect(a.of('HealthChanged', 'insp-01').slice(1).map((e) => e.payload)).toEqual([
      { entity_type: 'robot', from: 'healthy', to: 'warning', reason: 'device gps-b is quarantined: position drift', diagnostic_count: 1, sources: ['config', 'device_pool'] },
    ]);
    expect(a.of('HealthCheckFailed', 'insp-01').map((e) => e.payload)).toEqual([{ entity_type: 'robot', failed_checks: 1, passed_checks: 3 }]);
    expect(a.of('DegradedModeEntered', 'insp-01')).toEqual([]);

    // The same status again: no HealthChanged, but the failing check is reported again.
    await a.json('/v1/entities/insp-01/health');
    expect(a.of('HealthChanged', 'insp-01')).toHaveLength(2);
    expect(a.of('HealthCheckFailed', 'insp-01')).toHaveLength(2);

    // A failed device is critical: the robot enters degraded mode, once.
    expect((await a.json('/v1/devices/gps-a', { method: 'PATCH', headers: bearer(ADMIN), body: JSON.stringify({ lifecycle_state: 'failed' }) })).status).toBe(200);
    const critical = (await a.json('/v1/entities/insp-01/health')).body;
    expect(critical.health_status).toBe('critical');
    await a.json('/v1/entities/insp-01/health');
    expect(a.of('HealthChanged', 'insp-01').map((e) => [e.payload['from'], e.payload['to']])).toEqual([
      ['unknown', 'healthy'],
      ['healthy', 'warning'],
      ['warning', 'critical'],
    ]);
    expect(a.of('DegradedModeEntered', 'insp-01').map((e) => e.payload)).toEqual([
      { entity_type: 'robot', trigger: 'entity_health_evaluation', diagnostics: [{ category: 'gps', severity: 'critical', message: 'device gps-a has failed' }] },
    ]);
    expect(a.of('HealthChanged', 'insp-01')[0]!.source).toBe('svc-readiness');
    // The fleet is only as healthy as its robots.
    expect((await a.json('/v1/entities/yard-fleet/health')).body.report.diagnostics).toEqual([
      { category: 'robot', severity: 'critical', message: 'robot insp-01 is critical (device gps-a has failed)' },
    ]);

    const frame = await stream.waitFor((f) => f.event?.kind === 'platform' && f.event.event_type === 'degraded_mode_entered');
    expect(frame.event).toMatchObject({ source: 'svc-readiness', entity_id: 'insp-01', payload: { trigger: 'entity_health_evaluation' } });
    await stream.waitFor((f) => f.event?.event_type === 'health_changed' && f.event.entity_id === 'insp-01' && f.event.payload.to === 'critical');
    await stream.waitFor((f) => f.event?.event_type === 'health_check_failed' && f.event.entity_id === 'insp-01');
    const audit = (await a.json('/v1/audit/mutations', { headers: bearer(ADMIN) })).body.audit.records as Array<{ event_type: string; payload: string }>;
    const health = audit.filter((r) => ['HealthChanged', 'DegradedModeEntered'].includes(r.event_type) && JSON.parse(r.payload).entity_id === 'insp-01');
    expect(health.map((r) => r.event_type)).toEqual(['HealthChanged', 'HealthChanged', 'HealthChanged', 'DegradedModeEntered']);
  });

  it('readiness reports device readiness and publishes ReadinessChanged / ReadinessGateFailed only on transitions', async () => {
    const a = await agent();
    const ready = (await a.json('/v1/entities/insp-01/readiness')).body;
    expect(ready).toEqual({
      version: 'v1',
      entity_id: 'insp-01',
      kind: 'robot',
      readiness_status: 'ready',
      capabilities: ['navigation'],
      mission_ready: true,
      report: { entity_id: 'insp-01', entity_type: 'robot', readiness_status: 'ready', mission_ready: true, score: 100, issues: [], members_checked: 4, sources: ['config', 'device_pool'] },
      device_readiness: { mission_ready: true, blocked_count: 0, total_devices: 3, blocked_devices: [] },
    });
    expect(a.of('ReadinessChanged', 'insp-01').map((e) => e.payload)).toEqual([
      {
        entity_type: 'robot',
        from: { readiness_status: 'unknown', mission_ready: false, score: null },
        to: { readiness_status: 'ready', mission_ready: true, score: 100 },
        issue_count: 0,
        sources: ['config', 'device_pool'],
      },
    ]);
    expect(a.of('ReadinessGateFailed', 'insp-01')).toEqual([]);

    await quarantine(a, 'gps-b', 'antenna cable');
    const partial = (await a.json('/v1/entities/insp-01/readiness')).body;
    expect(partial).toMatchObject({ readiness_status: 'partial', mission_ready: false, report: { score: 75, issues: ['device gps-b is quarantined: antenna cable'] } });
    expect(partial.device_readiness).toEqual({ mission_ready: false, blocked_count: 1, total_devices: 3, blocked_devices: ['gps-b'] });
    await a.json('/v1/entities/insp-01/readiness');
    expect(a.of('ReadinessChanged', 'insp-01').map((e) => (e.payload['to'] as { readiness_status: string }).readiness_status)).toEqual(['ready', 'partial']);
    expect(a.of('ReadinessGateFailed', 'insp-01').map((e) => e.payload)).toEqual([{ entity_type: 'robot', score: 75, issues: ['device gps-b is quarantined: antenna cable'] }]);

    // Trusting the device again brings the robot back; a first observation that is not ready fails the gate.
    expect((await post(a, '/v1/devices/gps-b/trust', ADMIN)).status).toBe(200);
    expect((await a.json('/v1/entities/insp-01/readiness')).body.readiness_status).toBe('ready');
    expect(a.of('ReadinessChanged', 'insp-01').map((e) => (e.payload['to'] as { readiness_status: string }).readiness_status)).toEqual(['ready', 'partial', 'ready']);
    const gps = (await a.json('/v1/entities/gps-b/readiness')).body;
    expect(gps).toMatchObject({ readiness_status: 'ready', mission_ready: true });
    // A configuration entity with no live signal is presumed ready …
    const gateway = await a.json('/v1/entities/wh-gateway/readiness');
    expect(gateway.body).toMatchObject({ readiness_status: 'ready', mission_ready: true, report: { score: 100, issues: [], members_checked: 0 } });
    expect(a.of('ReadinessGateFailed', 'wh-gateway')).toEqual([]);
    // … one an operator registered with nothing to assess is not.
    expect((await post(a, '/v1/entities/register', ADMIN, { id: 'dock-9', entity_type: 'facility' })).status).toBe(200);
    const dock = await a.json('/v1/entities/dock-9/readiness');
    expect(dock.body).toMatchObject({ readiness_status: 'unknown', mission_ready: false, report: { score: null, issues: ['nothing to assess: no devices, members or stated readiness'] } });
    expect(a.of('ReadinessGateFailed', 'dock-9')).toHaveLength(1);
    expect(a.of('ReadinessChanged', 'dock-9')).toEqual([]);
    const audit = (await a.json('/v1/audit/mutations', { headers: bearer(ADMIN) })).body.audit.records as Array<{ event_type: string }>;
    expect(audit.filter((r) => r.event_type === 'ReadinessGateFailed')).toHaveLength(2);
  });

  it('missions: readiness of the robots taking part, mission state, linked missions', async () => {
    const a = await agent({ program: YARD_PROGRAM });
    const mission = (await a.json('/v1/entities/mission:insp-01:patrol/readiness')).body;
    expect(mission).toMatchObject({ kind: 'mission', readiness_status: 'ready', mission_ready: true, mission_state: 'ready', current_step: null, participants: ['insp-01'] });
    const robot = (await a.json('/v1/entities/insp-01/readiness')).body;
    expect(robot.linked_missions).toEqual(['mission:insp-01:patrol']);
    // Program sensors and actuators are members of the robot (no live status, so they do not block).
    expect(robot.report.members_checked).toBe(7);
    const plan = (await a.json('/v1/entities/mission:night-survey/readiness')).body;
    expect(plan).toMatchObject({ readiness_status: 'unknown', mission_ready: false, mission_state: 'planned', participants: [] });
    await quarantine(a, 'insp-01-lidar', 'lens cracked');
    expect((await a.json('/v1/entities/mission:insp-01:patrol/readiness')).body).toMatchObject({ readiness_status: 'partial', mission_ready: false, mission_state: 'planned' });
    expect(a.of('ReadinessGateFailed', 'mission:insp-01:patrol').map((e) => e.payload['issues'])).toEqual([['robot insp-01 is partial (device insp-01-lidar is quarantined: lens cracked)']]);
  });

  it('trust reports identity, certificates and operator trust, and aggregates upwards', async () => {
    const a = await agent();
    expect((await a.json('/v1/entities/cam-gate/trust')).body).toEqual({
      version: 'v1',
      entity_id: 'cam-gate',
      kind: 'camera',
      trust_status: 'trusted',
      lifecycle_state: 'verified',
      security: { identity: 'spiffe://yard/cam-gate', certificates: [], permissions: [] },
      report: {
        entity_id: 'cam-gate',
        entity_type: 'camera',
        trust_status: 'trusted',
        score: 75,
        factors: [
          { factor: 'identity_declared', passed: true, weight: 30 },
          { factor: 'certificate_pinned', passed: false, weight: 25 },
          { factor: 'operator_trust', passed: true, weight: 25 },
          { factor: 'not_quarantined', passed: true, weight: 20 },
        ],
        issues: ['certificate pinned check failed'],
        members_checked: 0,
      },
    });
    const reg = await post(a, '/v1/entities/register', ADMIN, { id: 'cam-dock', entity_type: 'camera', security: { identity: 'spiffe://yard/cam-dock', certificates: ['sha256:ab12'] } });
    expect(reg.status).toBe(200);
    expect((await a.json('/v1/entities/cam-dock/trust')).body).toMatchObject({ trust_status: 'verified', report: { score: 75 } });
    await quarantine(a, 'gps-b', 'spoofed fix');
    expect((await a.json('/v1/entities/gps-b/trust')).body).toMatchObject({ trust_status: 'untrusted', lifecycle_state: 'suspended' });
    expect((await a.json('/v1/entities/insp-01/trust')).body.report).toMatchObject({ trust_status: 'untrusted', issues: ['gps gps-b is untrusted'], members_checked: 4 });
  });
});

describe('entity autonomy, decisions and verification', () => {
  it('autonomy profile with an attention snapshot ranked from live state and alerts', async () => {
    const a = await agent();
    await quarantine(a, 'gps-b', 'position drift');
    a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'warning', source: 'test', message: 'gps-b lost its RTK fix' });
    const r = (await a.json('/v1/entities/insp-01/autonomy')).body;
    expect(r).toMatchObject({
      version: 'v1',
      entity_id: 'insp-01',
      kind: 'robot',
      autonomy: { level: 'conditional', mode: 'nominal', source: 'config', local_decision_authority: ['obstacle_avoidance'], requires_central_approval: ['leave_geofence'] },
    });
    const att = r.autonomy.attention;
    expect(att.focus).toBe('gps-b');
    expect(att.items[0]).toEqual({ entity_id: 'gps-b', kind: 'gps', health_status: 'warning', readiness_status: 'not_ready', trust_status: 'untrusted', score: 135, reason: 'device gps-b is quarantined: position drift' });
    expect(att.items.map((i: { entity_id: string }) => i.entity_id)).toEqual(['gps-b', 'insp-01']);
    expect(att.open_alerts).toBe(1);
    expect(att.recent_alerts[0]).toMatchObject({ severity: 'warning', message: 'gps-b lost its RTK fix' });
    expect((await a.json('/v1/entities/yard-fleet/autonomy')).body.autonomy).toMatchObject({ level: 'supervised', source: 'default' });
    expect((await a.json('/v1/entities/bo/autonomy')).body.autonomy).toMatchObject({ level: 'none', mode: 'manual', attention: { focus: null, load: 0 } });
  });

  it('decisions come from the audit chain and the device pool', async () => {
    const a = await agent();
    await quarantine(a, 'gps-b', 'position drift');
    await post(a, '/v1/entities/gps-b/tags', ADMIN, { add: ['suspect'] });
    await a.json('/v1/entities/gps-b/readiness');
    const d = (await a.json('/v1/entities/gps-b/decisions')).body;
    expect(d.entity_id).toBe('gps-b');
    expect(d.count).toBe(d.decisions.length);
    expect(d.decisions.map((x: { decision: string }) => x.decision)).toEqual([
      'POST /v1/devices/gps-b/quarantine',
      'tags changed (added: suspect; removed: none)',
      'POST /v1/entities/gps-b/tags',
      'readiness unknown -> not_ready',
      'mission-ready gate failed',
    ]);
    expect(d.decisions[0]).toMatchObject({ event_type: 'control_center.api.mutation', actor: 'env-default' });
    expect(d.standing).toEqual([{ decision: 'quarantined: position drift', by: null }]);
    expect((await a.json('/v1/entities/cam-gate/decisions')).body).toMatchObject({ decisions: [], count: 0, standing: [] });
  });

  it('unified verification: graph, health, readiness, trust, lifecycle, identity and capabilities', async () => {
    const a = await agent();
    const ok = (await post(a, '/v1/entities/gps-a/verify', null, {})).body;
    expect(ok).toMatchObject({ version: 'v1', entity_id: 'gps-a', kind: 'gps', verified: true, issues: [], health_status: 'unknown', readiness_status: 'ready', trust_status: 'trusted' });
    expect(ok.checks.map((c: { check: string }) => c.check)).toEqual(['source', 'parent', 'relationships', 'health', 'readiness', 'trust', 'lifecycle', 'identity']);

    await quarantine(a, 'gps-b', 'position drift');
    const robot = (await post(a, '/v1/entities/insp-01/verify', null, { required_capabilities: ['positioning', 'thermal'] })).body;
    expect(robot.verified).toBe(false);
    expect(robot.issues).toEqual([
      'readiness: device gps-b is quarantined: position drift',
      'trust: gps gps-b is untrusted',
      'capabilities: missing capabilities: thermal',
    ]);
    const dangling = (await post(a, '/v1/entities/insp-02/verify', null, {})).body;
    expect(dangling.verified).toBe(false);
    expect(dangling.checks.find((c: { check: string }) => c.check === 'relationships')).toEqual({ check: 'relationships', passed: false, blocking: true, detail: "unresolved: insp-02 depends_on dock-9: no entity 'dock-9'" });
    // Trust is advisory unless asked for.
    expect((await post(a, '/v1/entities/spare-imu/verify', null, {})).body.verified).toBe(true);
    const strict = (await post(a, '/v1/entities/spare-imu/verify', null, { require_trust: true })).body;
    expect(strict).toMatchObject({ verified: false, issues: ['trust: identity declared check failed'] });
    const bad = await post(a, '/v1/entities/gps-a/verify', null, { required_capabilities: 'positioning' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid field 'required_capabilities'/);
    // Anonymous verifications publish no transition (docs/security.md §10); a caller holding Operate
    // publishes the same transition events as the readiness route.
    expect(a.of('ReadinessGateFailed', 'insp-01')).toHaveLength(0);
    expect((await post(a, '/v1/entities/insp-01/verify', ADMIN, {})).status).toBe(200);
    expect(a.of('ReadinessGateFailed', 'insp-01')).toHaveLength(1);
  });
});
