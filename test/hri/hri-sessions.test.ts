import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { AUDITOR, bearer, FOREIGN_OPERATOR, OPERATOR, post, startTwinAgent, SUPERVISOR, twinProject } from '../twins/fixture.js';

/**
 * HRI sessions over real HTTP (docs/twins.md § HRI sessions): persisted starts and annotations
 * (F21 survives a restart), the Approve gate (F22), 404/409 for unknown and not-started sessions,
 * and the replay built from what was recorded for the session's robot and devices.
 */
let a: RunningAgent | null = null;
afterEach(async () => {
  await a?.close();
  a = null;
});

describe('HRI sessions', () => {
  it('start, annotate twice, restart: still active with both annotations, and the replay returns them (F21)', async () => {
    const p = twinProject();
    const stateDir = tempDir('svc-hri-state-');
    a = await startTwinAgent(p, { stateDir });
    const started = await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 's1', robot_id: 'Sentinel', camera_device_id: 'cam-hri' }));
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ version: 'v1', ok: true });
    expect(started.body.session).toMatchObject({
      id: 's1',
      session_type: 'remote_expert',
      status: 'active',
      robot_id: 'Sentinel',
      camera_device_id: 'cam-hri',
      field_human_id: null,
      ar_device_id: null,
      annotations: [],
      capabilities: [],
      replay_url: '/v1/hri/sessions/s1/replay',
    });
    const n1 = await a.json('/v1/hri/sessions/s1/annotate', post(SUPERVISOR, { layer: 'ar', text: 'check the left wheel', author_human_id: 'op-priya' }));
    expect(n1.status).toBe(200);
    const n2 = await a.json('/v1/hri/sessions/s1/annotate', post(SUPERVISOR, { layer: 'video', text: 'lidar smudged' }));
    expect(n2.body.session.annotations).toHaveLength(2);
    expect(n2.body.session.annotations[1]).toMatchObject({ layer: 'video', text: 'lidar smudged', author_human_id: null });
    await a.close();

    const onDisk = JSON.parse(fs.readFileSync(path.join(stateDir, 'control-center-hri-sessions.json'), 'utf8'));
    expect(onDisk.sessions.map((s: any) => [s.id, s.annotations.length])).toEqual([['s1', 2]]);

    a = await startTwinAgent(p, { stateDir });
    const list = await a.json('/v1/hri/sessions');
    const s1 = list.body.sessions.find((s: any) => s.id === 's1');
    expect(s1).toMatchObject({ status: 'active', annotations: [{ text: 'check the left wheel' }, { text: 'lidar smudged' }] });
    const replay = await a.json('/v1/hri/sessions/s1/replay');
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ version: 'v1', session_id: 's1', replay_url: '/v1/hri/sessions/s1/replay', status: 'active', annotation_count: 2 });
    expect(replay.body.annotations.map((x: any) => x.text)).toEqual(['check the left wheel', 'lidar smudged']);
    // The session's own events were recorded (telemetry history) and come back after the restart.
    const names = replay.body.events.filter((e: any) => e.kind === 'platform').map((e: any) => e.event_type);
    expect(names).toEqual(['hri_session_started', 'hri_annotation_added', 'hri_annotation_added']);
    expect(replay.body.events.every((e: any) => e.entity_id === 'hri-session/s1')).toBe(true);
  });

  it('the replay holds the telemetry of the session’s devices and robot since it started, and nothing else', async () => {
    const p = twinProject();
    a = await startTwinAgent(p);
    const hub = a.agent.services.deviceHub;
    hub.telemetry('cam-hri', 'frame_rate', 12, 'fps', 0); // before the session: not part of it
    await new Promise((r) => setTimeout(r, 5));
    await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'live', camera_device_id: 'cam-hri', ar_device_id: 'ar-hri' }));
    hub.telemetry('cam-hri', 'frame_rate', 30, 'fps', 0);
    hub.telemetry('ar-hri', 'battery', 81, '%', 0);
    hub.telemetry('unrelated-imu', 'accel_x', 0.1, 'm/s2', 0);
    const r = await a.json('/v1/hri/sessions/live/replay');
    const device = r.body.events.filter((e: any) => e.kind === 'device');
    expect(device.map((e: any) => [e.device_id, e.metric, e.value])).toEqual([
      ['cam-hri', 'frame_rate', 30],
      ['ar-hri', 'battery', 81],
    ]);
    expect(r.body.event_count).toBe(r.body.events.length);
    expect(r.body.events.every((e: any) => e.timestamp_ms >= r.body.started_at_ms)).toBe(true);
    const limited = await a.json('/v1/hri/sessions/live/replay?limit=1');
    expect(limited.body.events).toHaveLength(1);
    expect(limited.body.events_truncated).toBe(r.body.events.length - 1);
  });

  it('Approve gate: none → 401, operator → 403 (F22), another tenant → 403; reads are open', async () => {
    a = await startTwinAgent(twinProject());
    expect((await a.json('/v1/hri/sessions', post(undefined, { id: 'x' }))).status).toBe(401);
    expect((await a.json('/v1/hri/sessions', post(OPERATOR, { id: 'x' }))).status).toBe(403);
    expect((await a.json('/v1/hri/sessions', post(AUDITOR, { id: 'x' }))).status).toBe(403);
    expect((await a.json('/v1/hri/sessions', post(FOREIGN_OPERATOR, { id: 'x' }))).body.code).toBe('tenant_mismatch');
    await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'x' }));
    expect((await a.json('/v1/hri/sessions/x/annotate', post(undefined, { layer: 'a', text: 'b' }))).status).toBe(401);
    expect((await a.json('/v1/hri/sessions/x/annotate', post(OPERATOR, { layer: 'a', text: 'b' }))).status).toBe(403);
    expect((await a.json('/v1/hri/sessions')).status).toBe(200);
    expect((await a.json('/v1/hri/sessions/x/replay')).body.annotation_count).toBe(0);
  });

  it('configured sessions: listed, startable once (409 when active), annotate 404 unknown / 409 not started; replay 404 unknown', async () => {
    a = await startTwinAgent(twinProject());
    const list = await a.json('/v1/hri/sessions');
    expect(list.body.count).toBe(1);
    expect(list.body.sessions[0]).toEqual({
      id: 'cfg-1',
      session_type: 'remote_expert',
      field_human_id: 'field-ana',
      expert_human_id: 'op-priya',
      robot_id: 'Sentinel',
      ar_device_id: 'ar-1',
      camera_device_id: 'cam-9',
      status: 'configured',
      capabilities: ['annotate', 'video'],
      annotations: [],
      replay_url: null,
    });
    expect((await a.json('/v1/hri/sessions/cfg-1/replay')).body).toEqual({
      version: 'v1',
      session_id: 'cfg-1',
      replay_url: '/v1/hri/sessions/cfg-1/replay',
      status: 'configured',
      annotation_count: 0,
    });
    const notStarted = await a.json('/v1/hri/sessions/cfg-1/annotate', post(SUPERVISOR, { layer: 'ar', text: 't' }));
    expect(notStarted.status).toBe(409);
    expect(notStarted.body).toMatchObject({ error: 'session not found or not active', code: 'conflict' });
    const unknown = await a.json('/v1/hri/sessions/ghost/annotate', post(SUPERVISOR, { layer: 'ar', text: 't' }));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('session not found or not active');
    expect((await a.json('/v1/hri/sessions/ghost/replay')).status).toBe(404);

    // Starting the configured session keeps its configured fields unless the body overrides them.
    const started = await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'cfg-1', camera_device_id: 'cam-10' }));
    expect(started.body.session).toMatchObject({ id: 'cfg-1', status: 'active', field_human_id: 'field-ana', camera_device_id: 'cam-10', capabilities: ['annotate', 'video'] });
    const again = await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'cfg-1' }));
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('session already active');
    // Default ids; others listed after the configured ones, sorted by id.
    const auto = await a.json('/v1/hri/sessions', post(SUPERVISOR, {}));
    expect(auto.body.session.id).toMatch(/^hri-session-\d+$/);
    await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'aaa' }));
    expect((await a.json('/v1/hri/sessions')).body.sessions.map((s: any) => s.id)).toEqual(['cfg-1', 'aaa', auto.body.session.id]);
  });

  it('bad bodies → 400: not JSON, missing layer or text, wrong types', async () => {
    a = await startTwinAgent(twinProject());
    await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'b' }));
    const badJson = await a.json('/v1/hri/sessions', post(SUPERVISOR, '[1,2]'));
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toMatch(/^invalid JSON body: /);
    expect((await a.json('/v1/hri/sessions', post(SUPERVISOR, { capabilities: 'all' }))).status).toBe(400);
    expect((await a.json('/v1/hri/sessions/b/annotate', post(SUPERVISOR, { text: 'x' }))).body.error).toBe('missing layer');
    expect((await a.json('/v1/hri/sessions/b/annotate', post(SUPERVISOR, { layer: 'x' }))).body.error).toBe('missing text');
    expect((await a.json('/v1/hri/sessions/b/annotate', post(SUPERVISOR, '{'))).status).toBe(400);
  });

  it('collaboration graph and spatial context from the configuration; 400 without one (sessions still listed)', async () => {
    const p = twinProject();
    const stateDir = tempDir('svc-hri-state-');
    a = await startTwinAgent(p, { stateDir });
    await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'adhoc', robot_id: 'Sentinel', expert_human_id: 'op-ines' }));
    const g = await a.json('/v1/hri/collaboration');
    expect(g.status).toBe(200);
    expect(g.body.node_count).toBe(g.body.nodes.length);
    expect(g.body.edge_count).toBe(g.body.edges.length);
    expect(g.body.active_session_count).toBe(1);
    expect(g.body.nodes).toEqual(
      expect.arrayContaining([
        { id: 'field-ana', kind: 'human', role: 'technician', availability: 'on_shift' },
        { id: 'Sentinel', kind: 'robot', model: 'Sentinel patrol rover, rev B' },
        { id: 'cfg-1', kind: 'session', session_type: 'remote_expert' },
        { id: 'adhoc', kind: 'session', session_type: 'remote_expert' },
      ]),
    );
    expect(g.body.edges).toEqual(
      expect.arrayContaining([
        { from: 'field-ana', to: 'Sentinel', relation: 'assignment' },
        { from: 'field-ana', to: 'Patrol', relation: 'mission' },
        { from: 'field-ana', to: 'cfg-1', relation: 'field_operator' },
        { from: 'op-priya', to: 'cfg-1', relation: 'remote_expert' },
        { from: 'cfg-1', to: 'Sentinel', relation: 'session_robot' },
        { from: 'op-ines', to: 'adhoc', relation: 'remote_expert' },
        { from: 'adhoc', to: 'active', relation: 'live_status' },
      ]),
    );
    const ctx = await a.json('/v1/hri/context');
    expect(ctx.body).toEqual({
      version: 'v1',
      hazard_zone_count: 1,
      hazard_zones: [
        { id: 'dock-edge', type: 'drop', severity: 'high', center: { x: 4, y: 2.5 }, radius_m: 1.5, linked_robots: ['Sentinel'], alert_on_entry: true, description: 'loading dock edge' },
      ],
      human_locations: [{ human_id: 'field-ana', role: 'technician', location: 'building-c/dock' }],
      spatial_session_count: 1,
      active_hri_sessions: 1,
    });
    await a.close();

    // Same keys (hashed with this state directory's pepper) and sessions; no configuration.
    a = await startAgent({ stateDir, env: { SVC_API_KEYS_FILE: p.keys } });
    for (const url of ['/v1/hri/collaboration', '/v1/hri/context']) {
      const r = await a.json(url);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('no resolved configuration loaded');
    }
    expect((await a.json('/v1/hri/sessions')).body).toMatchObject({ version: 'v1', count: 1, sessions: [{ id: 'adhoc', status: 'active' }] });
    expect((await a.json('/v1/hri/sessions', post(SUPERVISOR, { id: 'solo' }))).status).toBe(200);
    expect((await a.json('/v1/hri/sessions', bearer(SUPERVISOR))).body.sessions.map((s: any) => s.id)).toEqual(['adhoc', 'solo']);
  });
});
