import { afterEach, describe, expect, it } from 'vitest';
import { bearer, callUnary, connectGrpc } from '../helpers/grpc-client.js';
import { ADMIN, audited, get, operatorAgent, post, type OperatorAgent } from './fixture.js';

/**
 * Operator mission controls (docs/operator.md § Mission lifecycle): the state lives in the entity
 * overlay, moves follow the lifecycle table (409 otherwise), every accepted move is an audited event.
 */

let running: OperatorAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(...args: Parameters<typeof operatorAgent>) {
  const a = await operatorAgent(...args);
  running.push(a);
  return a;
}

const PATROL = 'mission:Rover:patrol';

describe('mission pause, resume, cancel', () => {
  it('check 21: pausing patrol shows on the entity mission:Rover:patrol (paused, suspended) and emits MissionPaused', async () => {
    const a = await agent();
    const r = await post(a, '/v1/operator/mission/pause', a.keys.operator, { mission_id: 'patrol', note: 'gate closed' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: 'v1', ok: true, mission_id: 'patrol', mission_state: 'paused', entity_id: PATROL, note: 'gate closed' });

    const entity = await get(a, `/v1/entities/${PATROL}`);
    expect(entity.status).toBe(200);
    expect(entity.body.entity).toMatchObject({ lifecycle_state: 'suspended', health_status: 'warning', readiness_status: 'partial', metadata: { mission_state: 'paused', mission_note: 'gate closed', robot: 'Rover' } });
    const listed = (await get(a, '/v1/entities?kind=mission')).body.entities.find((e: any) => e.id === PATROL);
    expect(listed).toMatchObject({ lifecycle_state: 'suspended' });
    const readiness = await get(a, `/v1/entities/${PATROL}/readiness`);
    expect(readiness.body).toMatchObject({ mission_state: 'paused', readiness_status: 'partial' });

    const missions = await get(a, '/v1/operator/missions');
    expect(missions.body.missions.find((m: any) => m.id === PATROL)).toMatchObject({ mission_state: 'paused', lifecycle_state: 'Suspended', readiness: 'Partial', allowed_moves: ['resume', 'cancel'] });

    const events = audited(a, 'MissionPaused');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ source: 'svc-operator', entity_id: PATROL, mission_id: 'patrol', note: 'gate closed', actor_key_id: a.keyIds.operator, from: 'Pending', to: 'paused' });
  });

  it('F22: the lifecycle table: pause/resume/cancel move, nothing leaves cancelled (409), events for each move, kept across a restart', async () => {
    const a = await agent();
    expect((await post(a, '/v1/operator/mission/resume', a.keys.operator, { mission_id: 'patrol' })).body.mission_state).toBe('running');
    // running → running is not a move.
    const again = await post(a, '/v1/operator/mission/resume', a.keys.operator, { mission_id: 'patrol' });
    expect(again).toMatchObject({ status: 409, body: { code: 'conflict', error: "mission 'patrol' is running" } });
    expect((await post(a, '/v1/operator/mission/pause', a.keys.operator, { mission_id: PATROL })).body.mission_state).toBe('paused');
    expect((await post(a, '/v1/operator/mission/resume', a.keys.operator, { mission_id: 'patrol' })).body.mission_state).toBe('running');
    const cancel = await post(a, '/v1/operator/mission/cancel', a.keys.operator, { mission_id: 'patrol', note: 'weather' });
    expect(cancel.body).toMatchObject({ mission_state: 'cancelled', entity_id: PATROL });
    expect((await get(a, `/v1/entities/${PATROL}`)).body.entity).toMatchObject({ lifecycle_state: 'degraded', health_status: 'critical', readiness_status: 'not_ready' });

    for (const move of ['resume', 'pause', 'cancel']) {
      const r = await post(a, `/v1/operator/mission/${move}`, a.keys.operator, { mission_id: 'patrol' });
      expect(r.status, move).toBe(409);
      expect(r.body).toMatchObject({ code: 'conflict', error: "mission 'patrol' is cancelled" });
    }
    expect(audited(a, 'MissionResumed').map((e) => e.from)).toEqual(['Pending', 'paused']);
    expect(audited(a, 'MissionPaused')).toHaveLength(1);
    expect(audited(a, 'MissionAborted')).toEqual([expect.objectContaining({ mission_id: 'patrol', entity_id: PATROL, note: 'weather', from: 'running', to: 'cancelled', actor_key_id: a.keyIds.operator })]);
    const listed = (await get(a, '/v1/operator/missions')).body.missions.find((m: any) => m.id === PATROL);
    expect(listed).toMatchObject({ mission_state: 'cancelled', allowed_moves: [], last_transition: { move: 'cancel', from: 'running', to: 'cancelled', actor: a.keyIds.operator } });
    await a.close();
    running = [];

    const b = await agent(a.project, a.stateDir);
    expect((await get(b, `/v1/entities/${PATROL}`)).body.entity.metadata.mission_state).toBe('cancelled');
    expect(await post(b, '/v1/operator/mission/resume', b.keys.operator, { mission_id: 'patrol' })).toMatchObject({ status: 409, body: { error: "mission 'patrol' is cancelled" } });
    expect(b.agent.services.operator.transitions(PATROL).map((t) => t.move)).toEqual(['resume', 'pause', 'resume', 'cancel']);
  });

  it('check 22: cancel needs Shutdown: operator 200, developer 403, anonymous 401', async () => {
    const a = await agent();
    expect((await post(a, '/v1/operator/mission/cancel', null, { mission_id: 'patrol' })).status).toBe(401);
    const dev = await post(a, '/v1/operator/mission/cancel', a.keys.developer, { mission_id: 'patrol' });
    expect(dev.status).toBe(403);
    expect(audited(a, 'MissionAborted')).toHaveLength(0);
    // The developer holds Operate: pause is theirs.
    expect((await post(a, '/v1/operator/mission/pause', a.keys.developer, { mission_id: 'patrol' })).status).toBe(200);
    expect((await post(a, '/v1/operator/mission/pause', a.keys.auditor, { mission_id: 'patrol' })).status).toBe(403);
    expect((await post(a, '/v1/operator/mission/cancel', a.keys.operator, { mission_id: 'patrol' })).status).toBe(200);
  });

  it('refusals: unknown mission (400 not_found), bad JSON, missing mission_id; nothing written', async () => {
    const a = await agent();
    expect(await post(a, '/v1/operator/mission/pause', a.keys.operator, { mission_id: 'nope' })).toMatchObject({ status: 400, body: { code: 'not_found', error: "mission 'nope' not found" } });
    const bad = await post(a, '/v1/operator/mission/pause', a.keys.operator, '{"mission_id":');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid JSON body: /);
    expect(await post(a, '/v1/operator/mission/resume', a.keys.operator, {})).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await post(a, '/v1/operator/mission/cancel', a.keys.operator, { mission_id: 7 })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(a.agent.services.entities.overlay.data.entities[PATROL]).toBeUndefined();
    expect(a.agent.services.operator.transitions()).toEqual([]);
  });

  it('gRPC and JSON-RPC reach the same lifecycle', async () => {
    const a = await agent(undefined, undefined, true);
    const grpcAddress = a.agent.services.listen.grpcBind!;
    const g = connectGrpc(grpcAddress);
    try {
      const paused = await callUnary(g.client, 'OperatorMissionPause', { body_json: JSON.stringify({ mission_id: 'patrol' }) }, bearer(a.keys.operator));
      expect(paused).toMatchObject({ ok: true, json: { mission_state: 'paused', entity_id: PATROL } });
      const denied = await callUnary(g.client, 'OperatorMissionCancel', { body_json: JSON.stringify({ mission_id: 'patrol' }) }, bearer(a.keys.developer));
      expect(denied.statusName).toBe('PERMISSION_DENIED');
      const rpc = await a.json('/v1/rpc', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${a.keys.operator}` },
        body: JSON.stringify({ method: 'svc.v1.ControlCenter/OperatorMissionResume', params: { body_json: JSON.stringify({ mission_id: 'patrol' }) } }),
      });
      expect(rpc.status).toBe(200);
      expect(rpc.body.result).toMatchObject({ mission_state: 'running' });
      const list = await callUnary(g.client, 'ListOperatorMissions', {}, bearer(ADMIN));
      expect(list.json.missions.find((m: any) => m.id === PATROL)).toMatchObject({ mission_state: 'running', lifecycle_state: 'Active', readiness: 'Ready' });
      const cancelled = await callUnary(g.client, 'OperatorMissionCancel', { body_json: JSON.stringify({ mission_id: 'patrol' }) }, bearer(a.keys.operator));
      expect(cancelled.ok).toBe(true);
      const refused = await callUnary(g.client, 'OperatorMissionResume', { body_json: JSON.stringify({ mission_id: 'patrol' }) }, bearer(a.keys.operator));
      expect(refused).toMatchObject({ ok: false, errorCode: 'conflict' });
    } finally {
      g.close();
    }
  });

  it('OperatorService.pauseMission is callable by other services (recovery) with a service actor', async () => {
    const a = await agent();
    const r = await a.agent.services.operator.pauseMission('patrol', 'recovery', 'link lost');
    expect(r).toMatchObject({ ok: true, mission_state: 'paused', entity_id: PATROL });
    expect(audited(a, 'MissionPaused')[0]).toMatchObject({ actor_key_id: 'recovery', note: 'link lost' });
  });
});
