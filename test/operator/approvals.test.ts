import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { audited, get, operatorAgent, post, type OperatorAgent } from './fixture.js';

/** Mission approvals (docs/operator.md § Approvals): a persisted queue, resolved once, by a named approver, reflected on the mission entity. */

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

describe('mission approvals', () => {
  it('configuration seeds are in the queue from the start; the GET writes nothing', async () => {
    const a = await agent();
    const file = path.join(a.stateDir, 'mission-approvals.json');
    const before = fs.readFileSync(file, 'utf8');
    const r = await get(a, '/v1/operator/mission/approvals');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', count: 2, pending: 1 });
    expect(r.body.approvals).toEqual([
      expect.objectContaining({ id: 'appr-survey', mission_id: 'survey', requested_by: 'planner', status: 'pending', origin: 'config' }),
      expect.objectContaining({ id: 'appr-inspect', mission_id: 'inspect', status: 'approved' }),
    ]);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect((await get(a, '/v1/operator/missions')).body.pending_approvals).toBe(1);
    // The seed mission is an entity awaiting approval; it cannot start yet.
    expect((await get(a, '/v1/entities/mission:survey')).body.entity).toMatchObject({ lifecycle_state: 'assigned', readiness_status: 'not_ready', metadata: { mission_state: 'PendingApproval' } });
    expect(await post(a, '/v1/operator/mission/resume', a.keys.operator, { mission_id: 'survey' })).toMatchObject({ status: 409, body: { error: "mission 'survey' is PendingApproval" } });
  });

  it('F21: approval names the approver, shows on the mission entity, lets it start, and is not resolved twice (409, also after a restart)', async () => {
    const a = await agent();
    // Approve is not the operator's action.
    expect((await post(a, '/v1/operator/mission/approve', a.keys.operator, { mission_id: 'survey', approved: true })).status).toBe(403);
    expect((await post(a, '/v1/operator/mission/approve', null, { mission_id: 'survey', approved: true })).status).toBe(401);

    const r = await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { mission_id: 'survey', approved: true, note: 'route checked' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, mission_id: 'survey', approval_id: 'appr-survey', approved: true, status: 'approved', entity_id: 'mission:survey' });
    expect(r.body.record).toMatchObject({ status: 'approved', resolver: a.keyIds.supervisor, resolver_role: 'supervisor', note: 'route checked' });
    expect(r.body.record.resolved_at_ms).toBeGreaterThan(0);

    const entity = (await get(a, '/v1/entities/mission:survey')).body.entity;
    expect(entity).toMatchObject({ lifecycle_state: 'assigned', readiness_status: 'partial', metadata: { mission_state: 'Pending', approval_status: 'approved', approval_resolver: a.keyIds.supervisor, approval_id: 'appr-survey' } });
    expect(audited(a, 'MissionApproved')).toEqual([expect.objectContaining({ source: 'svc-operator', entity_id: 'mission:survey', approval_id: 'appr-survey', actor_key_id: a.keyIds.supervisor })]);
    expect((await get(a, '/v1/operator/mission/approvals')).body.pending).toBe(0);

    const twice = await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { mission_id: 'survey', approved: false });
    expect(twice).toMatchObject({ status: 409, body: { code: 'conflict', error: `approval 'appr-survey' is already approved by ${a.keyIds.supervisor}` } });
    expect(await post(a, '/v1/operator/mission/resume', a.keys.operator, { mission_id: 'survey' })).toMatchObject({ status: 200, body: { mission_state: 'running' } });
    await a.close();
    running = [];

    const b = await agent(a.project, a.stateDir);
    const queue = (await get(b, '/v1/operator/mission/approvals')).body;
    expect(queue.approvals.find((x: any) => x.id === 'appr-survey')).toMatchObject({ status: 'approved', resolver: a.keyIds.supervisor });
    expect(queue.count).toBe(2); // seeds are not added twice
    expect((await post(b, '/v1/operator/mission/approve', b.keys.supervisor, { mission_id: 'survey', approval_id: 'appr-survey', approved: true })).status).toBe(409);
    expect((await get(b, '/v1/entities/mission:survey')).body.entity.metadata).toMatchObject({ mission_state: 'running', approval_status: 'approved' });
  });

  it('rejection (approved omitted) cancels the mission; a mission without a request gets one, resolved', async () => {
    const a = await agent();
    const r = await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { mission_id: 'patrol', note: 'not tonight' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ approval_id: 'mission-patrol', approved: false, status: 'rejected', entity_id: 'mission:Rover:patrol' });
    expect(r.body.record).toMatchObject({ requested_by: null, origin: 'operator', resolver: a.keyIds.supervisor });
    expect((await get(a, '/v1/entities/mission:Rover:patrol')).body.entity).toMatchObject({ lifecycle_state: 'degraded', metadata: { mission_state: 'cancelled', approval_status: 'rejected' } });
    expect(audited(a, 'MissionRejected')).toEqual([expect.objectContaining({ mission_id: 'patrol', note: 'not tonight' })]);
    expect((await post(a, '/v1/operator/mission/resume', a.keys.operator, { mission_id: 'patrol' })).status).toBe(409);
    expect((await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { mission_id: 'patrol', approved: true })).status).toBe(409);
  });

  it('unknown mission or approval id: 400 not_found, nothing appended; missing mission_id: 400', async () => {
    const a = await agent();
    expect(await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { mission_id: 'ghost', approved: true })).toMatchObject({ status: 400, body: { code: 'not_found', error: "mission 'ghost' not found" } });
    expect(await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { mission_id: 'survey', approval_id: 'appr-x', approved: true })).toMatchObject({ status: 400, body: { code: 'not_found', error: "approval 'appr-x' not found" } });
    expect(await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { approved: true })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect(await post(a, '/v1/operator/mission/approve', a.keys.supervisor, { mission_id: 'survey', approved: 'yes' })).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    expect((await get(a, '/v1/operator/mission/approvals')).body.count).toBe(2);
  });
});
