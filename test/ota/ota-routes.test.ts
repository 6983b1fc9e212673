import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { ADMIN, bearer, DEVELOPER, OPERATOR, otaAgent, post, SOIL_PROGRAM } from './fixture.js';

const FOUR = [
  { robot_name: 'r1', hardware: 'Pi' },
  { robot_name: 'r2', hardware: 'Pi' },
  { robot_name: 'r3', hardware: 'Pi' },
  { robot_name: 'r4', hardware: 'Pi' },
];

describe('OTA plan, execute and status routes', () => {
  const agents: RunningAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
  });

  const events = (a: RunningAgent) => {
    const seen: PlatformEvent[] = [];
    a.agent.services.bus.subscribe((e) => {
      if (e.type.startsWith('OtaRollout')) seen.push(e);
    });
    return seen;
  };

  it('F11: a canary plan over 4 assignments at 50 % reports 2 pending steps, 2 skipped with phase 0, and emits Started + Completed', async () => {
    const a = await otaAgent();
    agents.push(a);
    const seen = events(a);
    const r = await a.json('/v1/ota/plan', post({ strategy: 'canary', version: '2.0', canary_percent: 50, assignments: FOUR }, DEVELOPER));
    expect(r.status).toBe(200);
    expect(r.body.require_certify).toBe(false);
    expect(r.body.rollout).toMatchObject({ strategy: 'canary', version: '2.0', dry_run: false, success: true });
    expect(r.body.rollout.steps.map((s: any) => [s.robot_name, s.status, s.phase_percent])).toEqual([
      ['r1', 'pending', 50],
      ['r2', 'pending', 50],
      ['r3', 'skipped', 0],
      ['r4', 'skipped', 0],
    ]);
    // The execution schedule: canary batch, then the promotion batch.
    expect(r.body.rollout.batches).toEqual([
      { index: 1, phase_percent: 50, targets: 2 },
      { index: 2, phase_percent: 100, targets: 2, condition: expect.stringContaining('canary') },
    ]);
    expect(r.body.rollout.phases).toEqual([50, 100]);
    expect(r.body.program).toBe('control-center');
    expect(seen.map((e) => e.type)).toEqual(['OtaRolloutStarted', 'OtaRolloutCompleted']);
    expect(seen[0]).toMatchObject({ source: 'svc-ota', entity_id: 'ota/control-center', payload: { fleet_id: 'ota/control-center', artifact: '2.0', targets: 4, strategy: 'canary', dry_run: false } });
    expect(seen[1]!.payload).toMatchObject({ artifact: '2.0', status: 'success', deployed_targets: 2, step_count: 4, dry_run: false });
  });

  it('staged plans echo their phases and cut real batches; blue_green deploys the green half; unknown strategies are all', async () => {
    const a = await otaAgent();
    agents.push(a);
    const ten = Array.from({ length: 10 }, (_, i) => ({ robot_name: `r${i}`, hardware: 'Pi' }));
    const staged = await a.json('/v1/ota/plan', post({ strategy: 'Phased', version: '3', assignments: ten }, ADMIN));
    expect(staged.body.rollout.phases).toEqual([10, 50, 100]);
    expect(staged.body.rollout.batches.map((b: any) => [b.phase_percent, b.targets])).toEqual([[10, 1], [50, 4], [100, 5]]);
    expect(staged.body.rollout.steps.every((s: any) => s.status === 'pending' && s.phase_percent === 100)).toBe(true);
    const custom = await a.json('/v1/ota/plan', post({ strategy: 'staged', version: '3', assignments: ten, phases: [100, 25] }, ADMIN));
    expect(custom.body.rollout.phases).toEqual([25, 100]);
    expect(custom.body.rollout.batches.map((b: any) => b.targets)).toEqual([3, 7]);
    const bg = await a.json('/v1/ota/plan', post({ strategy: 'bluegreen', version: '3', assignments: FOUR.slice(0, 3) }, ADMIN));
    expect(bg.body.rollout).toMatchObject({ strategy: 'blue_green', phases: [50] });
    expect(bg.body.rollout.steps.map((s: any) => [s.status, s.phase_percent])).toEqual([['pending', 50], ['skipped', 0], ['skipped', 0]]);
    const all = await a.json('/v1/ota/plan', post({ strategy: 'whatever', version: '3', assignments: FOUR, dry_run: true }, ADMIN));
    expect(all.body.rollout).toMatchObject({ strategy: 'all', dry_run: true, phases: [100] });
    expect(all.body.rollout.steps.every((s: any) => s.status === 'pending' && s.phase_percent === 100)).toBe(true);
    const empty = await a.json('/v1/ota/plan', post({ strategy: 'canary', version: '3' }, ADMIN));
    expect(empty.body.rollout).toMatchObject({ steps: [], success: true });
  });

  it('F12: require_certify with a program that deploys without certify is blocked; the env and production policy force the gate', async () => {
    const a = await otaAgent({ programPath: SOIL_PROGRAM });
    agents.push(a);
    const r = await a.json('/v1/ota/plan', post({ strategy: 'all', version: '1', require_certify: true }, ADMIN));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('bad_request');
    expect(r.body.error).toMatch(/^Deploy blocked — strict certification proof failed: Certification proof failed with \d+ error\(s\) and \d+ warning\(s\)$/);
    // Without the gate the plan goes through, with the program's label, hash, derived assignments and proof.
    const ok = await a.json('/v1/ota/plan', post({ strategy: 'all', version: '1' }, ADMIN));
    expect(ok.status).toBe(200);
    expect(ok.body.program).toBe('soil_station.sd');
    expect(ok.body.program_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(ok.body.rollout.steps).toEqual([expect.objectContaining({ robot_name: 'SoilStation', hardware: 'ESP32', status: 'pending', phase_percent: 100 })]);
    expect(ok.body.certification_proof).toMatchObject({ passed: true, passed_strict: false });
    for (const env of [{ SVC_OTA_REQUIRE_CERTIFY: 'yes' }, { SVC_PRODUCTION_POLICY: 'Production' }] as Record<string, string>[]) {
      const b = await otaAgent({ programPath: SOIL_PROGRAM, env });
      agents.push(b);
      const blocked = await b.json('/v1/ota/plan', post({ strategy: 'all', version: '1' }, ADMIN));
      expect(blocked.status).toBe(400);
      expect(blocked.body.error).toMatch(/^Deploy blocked — strict certification proof failed:/);
    }
    // No program at all: the gate has no proof to read.
    const none = await otaAgent({ env: { SVC_OTA_REQUIRE_CERTIFY: '1' } });
    agents.push(none);
    const missing = await none.json('/v1/ota/plan', post({ strategy: 'all', version: '1' }, ADMIN));
    expect(missing.body.error).toBe('Deploy plan missing certification proof summary');
  });

  it('F13: execute with no registered agents fails both steps, success false, deploy state unchanged; one Started and one Completed', async () => {
    const a = await otaAgent();
    agents.push(a);
    const seen = events(a);
    const before = await a.json('/v1/ota/status');
    expect(before.body.state).toEqual({ current_version: {}, previous_version: {}, history: [] });
    const r = await a.json('/v1/ota/execute', post({ strategy: 'all', version: '9', assignments: FOUR.slice(0, 2) }, DEVELOPER));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ executed: true, rollout: { success: false, dry_run: false } });
    expect(r.body.rollout.steps.map((s: any) => s.status)).toEqual(['failed', 'failed']);
    expect(r.body.rollout.steps[0].detail).toBe('no deploy agent registered for r1@Pi');
    expect(fs.existsSync(path.join(a.stateDir, 'deploy-state.json'))).toBe(false);
    const after = await a.json('/v1/ota/status');
    expect(after.body.state).toEqual(before.body.state);
    expect(after.body.rollout).toMatchObject({ status: 'failed', rollout: { success: false } });
    expect(seen.map((e) => e.type)).toEqual(['OtaRolloutStarted', 'OtaRolloutCompleted']);
    expect(seen[1]!.payload).toMatchObject({ status: 'failed', deployed_targets: 0, step_count: 2, dry_run: false });
    // A dry run is the plan: pending steps, nothing contacted.
    const dry = await a.json('/v1/ota/execute', post({ strategy: 'all', version: '9', assignments: FOUR.slice(0, 2), dry_run: true }, DEVELOPER));
    expect(dry.body).toMatchObject({ dry_run: true, rollout: { success: true } });
    expect(dry.body.rollout.steps.map((s: any) => s.status)).toEqual(['pending', 'pending']);
  });

  it('401 without a credential, 403 without Deploy, 400 on bad bodies; status is a sensitive read', async () => {
    const a = await otaAgent({ env: { SVC_API_REQUIRE_AUTH_READS: '1' } });
    agents.push(a);
    const body = { strategy: 'all', version: '1' };
    for (const p of ['/v1/ota/plan', '/v1/ota/execute', '/v1/rollout', '/v1/rollback']) {
      expect((await a.json(p, post(body))).status).toBe(401);
      const denied = await a.json(p, post({ ...body, target: 'x@y' }, OPERATOR));
      expect(denied.status).toBe(403);
      expect(denied.body.code).toBe('forbidden');
    }
    expect((await a.json('/v1/ota/status')).status).toBe(401);
    expect((await a.json('/v1/ota/status', bearer(OPERATOR))).status).toBe(200);
    const missing = await a.json('/v1/ota/plan', post({ version: '1' }, ADMIN));
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: 'bad_request', error: 'missing field `strategy`' });
    expect((await a.json('/v1/ota/execute', post({ strategy: 'all' }, ADMIN))).body.error).toBe('missing field `version`');
    expect((await a.json('/v1/ota/plan', post({ strategy: 7, version: '1' }, ADMIN))).body.error).toMatch(/^invalid field 'strategy'/);
    const badJson = await a.json('/v1/ota/plan', post('{"strategy":', ADMIN));
    expect(badJson.status).toBe(400);
    const badAssign = await a.json('/v1/ota/plan', post({ strategy: 'all', version: '1', assignments: [{ robot_name: 'r1' }] }, ADMIN));
    expect(badAssign.body.error).toBe('missing assignments.0.hardware');
    const badPhase = await a.json('/v1/ota/plan', post({ strategy: 'staged', version: '1', phases: [0] }, ADMIN));
    expect(badPhase.status).toBe(400);
    const noDevices = await a.json('/v1/ota/plan', post({ strategy: 'all', version: '1', firmware: { version: '2', image_base64: 'AAAA' } }, ADMIN));
    expect(noDevices.body.error).toBe('firmware needs device_type or device_ids to choose the devices');
    const unknown = await a.json('/v1/ota/execute', post({ strategy: 'all', version: '1', firmware: { version: '2', image_base64: 'AAAA', device_ids: ['ghost'] } }, ADMIN));
    expect(unknown.body).toMatchObject({ code: 'bad_request', error: "firmware.device_ids: unknown device 'ghost'" });
  });

  it('deploy-state.json: a corrupt file reads as empty state; history is bounded', async () => {
    const stateDir = tempDir('svc-ota-state-');
    fs.writeFileSync(path.join(stateDir, 'deploy-state.json'), '{not json');
    const a = await otaAgent({ stateDir });
    agents.push(a);
    const r = await a.json('/v1/ota/status', bearer(ADMIN));
    expect(r.status).toBe(200);
    expect(r.body.state).toEqual({ current_version: {}, previous_version: {}, history: [] });
    expect(r.body.rollout).toBeNull();
  });
});
