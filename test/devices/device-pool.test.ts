import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { fleetProject } from '../helpers/project-fixture.js';

const ADMIN = 'd0'.repeat(32);
const bearer = (t: string) => ({ Authorization: `Bearer ${t}`, 'content-type': 'application/json' });
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function agent(stateDir = tempDir(), configPath = fleetProject()) {
  const a = await startAgent({ stateDir, configPath, env: { SVC_API_KEY: ADMIN, SVC_HAL_OFFLINE_AFTER_MS: '2000' } });
  running.push(a);
  return a;
}
async function keyFor(a: RunningAgent, role: string) {
  const r = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ role }) });
  return r.body.token as string;
}
const post = (a: RunningAgent, path: string, token: string, body: unknown = {}) => a.json(path, { method: 'POST', headers: bearer(token), body: JSON.stringify(body) });

describe('device pool registry and lifecycle', () => {
  it('lists configured devices (top-level and fleet compute) and answers 404 for unknown ids', async () => {
    const a = await agent();
    const list = await a.json('/v1/devices');
    expect(list.status).toBe(200);
    expect(list.body.devices.map((d: { id: string }) => d.id)).toEqual(['gps-a', 'gps-b', 'rover-1-lidar', 'spare-imu']);
    expect(list.body.devices.find((d: { id: string }) => d.id === 'rover-1-lidar')).toMatchObject({ lifecycle_state: 'active', assigned_robot: 'rover-1', device_type: 'lidar' });
    expect(list.body.devices.find((d: { id: string }) => d.id === 'spare-imu')).toMatchObject({ lifecycle_state: 'verified', assigned_robot: null });
    const one = await a.json('/v1/devices/gps-a');
    expect(one.body.device).toMatchObject({ id: 'gps-a', redundant_group: 'gps', failover_priority: 1, provider: 'ublox', trust_level: 'trusted', source: 'config' });
    for (const key of ['serial', 'mac_address', 'firmware_version', 'can_id', 'port', 'bus', 'capabilities', 'last_seen_ms']) expect(one.body.device).toHaveProperty(key);
    const missing = await a.json('/v1/devices/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ ok: false, error: 'device not found', code: 'not_found' });
  });

  it('PATCH follows the lifecycle table: allowed moves, 409 for refused ones, override, and roles', async () => {
    const a = await agent();
    const operator = await keyFor(a, 'operator');
    const patch = (token: string | null, body: unknown) =>
      a.json('/v1/devices/spare-imu', { method: 'PATCH', headers: token ? bearer(token) : { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await patch(null, { lifecycle_state: 'assigned' })).status).toBe(401);
    expect((await patch(operator, { lifecycle_state: 'assigned' })).status).toBe(403);
    const ok = await patch(ADMIN, { lifecycle_state: 'assigned' });
    expect(ok.body).toEqual({ version: 'v1', ok: true, device_id: 'spare-imu', lifecycle_state: 'assigned' });
    const refused = await patch(ADMIN, { lifecycle_state: 'discovered' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('conflict');
    expect(refused.body.error).toContain('assigned -> discovered is not allowed');
    expect((await patch(ADMIN, { lifecycle_state: 'discovered', override: true })).body.lifecycle_state).toBe('discovered');
    expect((await patch(ADMIN, { lifecycle_state: 'sleeping' })).status).toBe(400);
    expect((await patch(ADMIN, { lifecycle_state: 'retired' })).body.lifecycle_state).toBe('retired');
    expect((await patch(ADMIN, { lifecycle_state: 'active' })).status).toBe(409);
  });

  it('assign, quarantine and trust, with their roles, persist across a restart', async () => {
    const stateDir = tempDir();
    const config = fleetProject();
    const a = await agent(stateDir, config);
    const operator = await keyFor(a, 'operator');
    const safety = await keyFor(a, 'safety_officer');
    expect((await post(a, '/v1/devices/spare-imu/assign', operator, { robot_id: 'rover-2' })).status).toBe(403);
    const assigned = await post(a, '/v1/devices/spare-imu/assign', ADMIN, { robot_id: 'rover-2' });
    expect(assigned.body).toMatchObject({ version: 'v1', persisted: true, result: { ok: true, device_id: 'spare-imu', lifecycle_state: 'assigned' }, mapping: { robot_id: 'rover-2' } });
    expect((await post(a, '/v1/devices/gps-b/assign', ADMIN, { robot_id: 'ghost' })).status).toBe(400);
    expect((await post(a, '/v1/devices/gps-b/assign', ADMIN, {})).body.error).toMatch(/missing robot_id/);
    // Quarantine an in-service device needs override; then trust (Approve) brings it back to verified.
    expect((await post(a, '/v1/devices/gps-b/quarantine', ADMIN, { reason: 'drift' })).status).toBe(409);
    const q = await post(a, '/v1/devices/gps-b/quarantine', ADMIN, { reason: 'position drift', override: true });
    expect(q.body.result).toMatchObject({ ok: true, lifecycle_state: 'quarantined', message: 'device quarantined: position drift' });
    expect((await post(a, '/v1/devices/gps-b/trust', operator)).status).toBe(403);
    const t = await post(a, '/v1/devices/gps-b/trust', safety);
    expect(t.body.result).toMatchObject({ ok: true, lifecycle_state: 'verified' });
    expect(t.body.result.message).toMatch(/^device trusted by key-/);
    await a.close();
    running = [];

    const b = await agent(stateDir, config);
    const after = (await b.json('/v1/devices')).body.devices;
    expect(after.find((d: { id: string }) => d.id === 'spare-imu')).toMatchObject({ lifecycle_state: 'assigned', assigned_robot: 'rover-2' });
    expect((await b.json('/v1/devices/gps-b')).body.device).toMatchObject({ lifecycle_state: 'verified', trust_level: 'trusted', quarantine_reason: null });
  });

  it('provisioning: ready devices go active; a device that is not ready is quarantined with a critical alert and an incident', async () => {
    const a = await agent();
    const ok = await post(a, '/v1/devices/spare-imu/provision', ADMIN, { robot_id: 'rover-2' });
    expect(ok.status).toBe(200);
    expect(ok.body.ok).toBe(true);
    expect(ok.body.report).toMatchObject({ device_id: 'spare-imu', robot_id: 'rover-2', ready: true, blockers: [] });
    expect(ok.body.device).toMatchObject({ lifecycle_state: 'active', assigned_robot: 'rover-2' });

    // A device that never identified itself, for a robot that does not exist.
    a.agent.services.devices.observe({ id: 'mystery-1', protocol: 'fw-bridge/1', transport: 'serial', port: '/dev/ttyS9' });
    const bad = await post(a, '/v1/provision', ADMIN, { device_id: 'mystery-1', robot_id: 'ghost' });
    expect(bad.status).toBe(200);
    expect(bad.body.ok).toBe(false);
    expect(bad.body.report.blockers.join(' | ')).toMatch(/identity: .*robot: robot ghost is not in the fleet/s);
    expect((await a.json('/v1/devices/mystery-1')).body.device.lifecycle_state).toBe('quarantined');
    const alerts = (await a.json('/v1/alerts')).body.alerts;
    const alert = alerts.find((x: { alert_type: string }) => x.alert_type === 'readiness_failed');
    expect(alert).toMatchObject({ severity: 'critical', source: 'provisioning' });
    const incidents = (await a.json('/v1/sre/incidents')).body.incidents;
    expect(incidents).toContainEqual(expect.objectContaining({ title: 'Alert: ReadinessFailed', source_alert_id: alert.id, status: 'open', severity: 'critical' }));
    expect((await post(a, '/v1/provision', ADMIN, { robot_id: 'x' })).status).toBe(400);
    expect((await post(a, '/v1/provision', ADMIN, { device_id: 'nope' })).status).toBe(404);
  });

  it('readiness run: devices serving robots that are out of service block the mission', async () => {
    const a = await agent();
    const first = await a.json('/v1/readiness/run', { method: 'POST' });
    expect(first.body).toEqual({ version: 'v1', mission_ready: true, impact: { total_devices: 4, blocked_count: 0, blocked_devices: [] } });
    await post(a, '/v1/devices/gps-a/quarantine', ADMIN, { reason: 'test', override: true });
    const second = await a.json('/v1/readiness/run', { method: 'POST' });
    expect(second.body.mission_ready).toBe(false);
    expect(second.body.impact.blocked_devices).toEqual([
      { device_id: 'gps-a', lifecycle_state: 'quarantined', health_status: 'unknown', assigned_robot: 'rover-1', reason: 'device is quarantined' },
    ]);
  });

  it('fleet views: device tree, failover chains, robots, fleets, map, device reports', async () => {
    const a = await agent();
    await post(a, '/v1/devices/gps-a/quarantine', ADMIN, { reason: 'test', override: true });
    const tree = (await a.json('/v1/device-tree')).body;
    expect(tree.tree).toMatchObject({ id: 'test-fleet', kind: 'fleet' });
    expect(tree.tree.children.map((r: { id: string }) => r.id)).toEqual(['rover-1', 'rover-2']);
    expect(tree.tree.children[0].children.map((d: { id: string }) => d.id)).toEqual(['gps-a', 'gps-b', 'rover-1-lidar']);
    expect(tree.unassigned.map((d: { id: string }) => d.id)).toEqual(['spare-imu']);
    const chains = (await a.json('/v1/failover/chains')).body.chains;
    expect(chains).toEqual([
      expect.objectContaining({ group: 'gps', active_device: 'gps-b', exhausted: false, chain: [expect.objectContaining({ device_id: 'gps-a', usable: false }), expect.objectContaining({ device_id: 'gps-b', usable: true })] }),
    ]);
    const robots = (await a.json('/v1/robots')).body.robots;
    expect(robots.map((r: { id: string; device_count: number }) => [r.id, r.device_count])).toEqual([['rover-1', 3], ['rover-2', 0]]);
    const fleets = (await a.json('/v1/fleets')).body.fleets;
    expect(fleets[0]).toMatchObject({ id: 'test-fleet', robot_count: 2, robots: ['rover-1', 'rover-2'], device_count: 4 });
    expect((await a.json('/v1/fleet/map')).body).toMatchObject({ fleet_id: 'test-fleet', robots: [{ id: 'rover-1' }, { id: 'rover-2' }] });
    const reports = (await a.json('/v1/device-reports')).body.reports;
    expect(reports.find((r: { device_id: string }) => r.device_id === 'gps-a').issues).toEqual(['quarantined: test']);
  });

  it('trust package, assurance and diagnosis summaries come from the configuration', async () => {
    const a = await agent();
    const pkg = (await a.json('/v1/trust/package')).body;
    expect(pkg.packages.map((p: { package: string; score: number }) => [p.package, p.score])).toEqual([['gnss-driver', 100], ['vision', 30]]);
    expect(pkg.packages[0]).toMatchObject({ provider: 'ublox', used_by_devices: ['gps-a', 'gps-b'], trusted: true });
    expect(pkg.score).toBe(65);
    expect((await a.json('/v1/trust/package?package_name=vision')).body.count).toBe(1);
    const assurance = (await a.json('/v1/assurance/summary')).body;
    expect(assurance.policy).toEqual({ minimum_score: 70, require_recovery: true, require_resilience: true, require_mitigations: false, require_anomaly_handlers: false });
    const diagnosis = (await a.json('/v1/diagnosis/summary')).body;
    expect(diagnosis.sources).toEqual({ require_mitigations: 'default', require_anomaly_handlers: 'default' });
  });

  it('incidents: create, acknowledge, resolve; resolved ones cannot be acknowledged', async () => {
    const a = await agent();
    const op = await keyFor(a, 'operator');
    expect((await post(a, '/v1/sre/incidents', op, {})).status).toBe(400);
    const created = await post(a, '/v1/sre/incidents', op, { title: 'Lidar dropouts', severity: 'bogus' });
    expect(created.body.incident).toMatchObject({ title: 'Lidar dropouts', severity: 'warning', status: 'open' });
    const id = created.body.incident.id;
    const ack = await post(a, `/v1/sre/incidents/${id}/ack`, op, { assignee: 'ines' });
    expect(ack.body.incident).toMatchObject({ status: 'acknowledged', assignee: 'ines' });
    expect((await post(a, `/v1/sre/incidents/${id}/resolve`, op)).body.incident.status).toBe('resolved');
    const again = await post(a, `/v1/sre/incidents/${id}/ack`, op);
    expect(again.status).toBe(409);
    expect((await post(a, '/v1/sre/incidents/incident-1/ack', op)).status).toBe(404);
  });
});
