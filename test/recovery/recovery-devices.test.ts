import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { eventually, openStream, type StreamClient } from '../helpers/stream-client.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from '../hal/helpers/socat-pair.js';
import { OPERATOR_KEY, post, recoveryProject, startRecoveryAgent } from './fixture.js';
import { simDevice } from '../helpers/sim-device.js';

/**
 * Recovery acting on real devices (docs/recovery.md § Execute): emulated serial devices
 * (`svc sim-device`, the compiled build: `npm run build`) over real socat ptys, attached through
 * the agent's HAL; the devices are entities of the registry (docs/entities.md: devices of the pool
 * are entities), two of them a redundant group. Every effect goes through the devices domain's
 * DeviceActions; nothing is stood in for.
 */

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const OFFLINE_AFTER_MS = 1200;

function project(): { root: string; config: string; program: string; keys: string } {
  const root = tempDir('svc-recovery-devices-');
  const files: Record<string, string> = {
    'svc.toml': `
[project]
name = "Recovery Devices"
version = "1.0.0"
[config]
fleet = "svc.fleet.toml"
devices = "svc.devices.toml"
recovery = "svc.recovery.toml"
`,
    'svc.fleet.toml': `
[fleet]
id = "yard"
[[fleet.robots]]
id = "robot-1"
hardware_profile = "RoverV2"
`,
    'svc.devices.toml': `
[[devices]]
id = "drive-1"
type = "motor_controller"
robot_id = "robot-1"
[[devices]]
id = "gps-a"
type = "gps"
robot_id = "robot-1"
redundant_group = "gps"
failover_priority = 1
[[devices]]
id = "gps-b"
type = "gps"
robot_id = "robot-1"
redundant_group = "gps"
failover_priority = 2
`,
    'svc.recovery.toml': '[recovery]\n',
    'programs/rover.sd': `robot Rover {
    sensor gps: GPS;
    mission patrol {
        repeat 2 {
            scan gps;
        }
    }
}
`,
  };
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), content);
  }
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
      { key_id: 'adm', token: ADMIN_KEY, role: 'admin' },
    ]),
  );
  return { root, config: path.join(root, 'svc.toml'), program: path.join(root, 'programs', 'rover.sd'), keys };
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const chained = (a: RunningAgent, type: string) => [...a.agent.services.audit.chain.records()].filter((r) => r.event_type === type).map((r) => JSON.parse(r.payload));

describe.skipIf(!socatAvailable)(`recovery on emulated devices over socat ptys ${socatAvailable ? '' : SOCAT_SKIP_REASON}`, () => {
  const children: ChildProcess[] = [];
  const pairs: SocatPair[] = [];
  const streams: StreamClient[] = [];
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
    await Promise.all(pairs.splice(0).map((p) => p.dispose()));
  });

  async function agentOn(p: ReturnType<typeof project>, ports: string[], stateDir: string): Promise<RunningAgent> {
    const a = await startAgent({
      stateDir,
      configPath: p.config,
      programPath: p.program,
      env: { SVC_API_KEYS_FILE: p.keys, SVC_HAL_SERIAL_PORTS: ports.join(','), SVC_HAL_OFFLINE_AFTER_MS: String(OFFLINE_AFTER_MS) },
    });
    agents.push(a);
    await a.agent.services.deviceHub.start(3000);
    return a;
  }

  async function attached(a: RunningAgent, id: string, health: string): Promise<void> {
    const { deviceHub, devices } = a.agent.services;
    await eventually(() => deviceHub.has(id) && devices.get(id)?.health_status === health, (v) => v, 20_000, 50);
  }

  const execute = (a: RunningAgent, body: unknown, key = OPERATOR_KEY) => a.json('/v1/recovery/execute', post({ ...(body as object), force_execute: true }, key));

  it('(a) reset of a faulty device, (b) failover of a dead one to its redundant backup, (c) both in the history after a restart', async () => {
    const p = project();
    const stateDir = tempDir();
    const [p1, p2, p3] = await Promise.all([startSocatPair(), startSocatPair(), startSocatPair()]);
    pairs.push(p1!, p2!, p3!);
    const a = await agentOn(p, [p1!.a, p2!.a, p3!.a], stateDir);
    children.push(simDevice(['--serial', p1!.b, '--id', 'drive-1', '--type', 'motor_controller', '--rate', '10', '--fault', 'overtemperature']));
    const gpsA = simDevice(['--serial', p2!.b, '--id', 'gps-a', '--type', 'gps', '--rate', '5']);
    children.push(gpsA, simDevice(['--serial', p3!.b, '--id', 'gps-b', '--type', 'gps', '--rate', '5']));
    await attached(a, 'drive-1', 'degraded');
    await attached(a, 'gps-a', 'healthy');
    await attached(a, 'gps-b', 'healthy');
    const stream = await openStream(a.wsUrl, auth(ADMIN_KEY));
    streams.push(stream);

    // The devices are entities of the registry: recovery knows them.
    const entities = (await a.json('/v1/recovery/recoverable-entities', { headers: auth(OPERATOR_KEY) })).body.entities.map((e: any) => e.id);
    expect(entities).toEqual(expect.arrayContaining(['drive-1', 'gps-a', 'gps-b']));
    expect((await a.json('/v1/entities/drive-1', { headers: auth(OPERATOR_KEY) })).body.entity).toMatchObject({ health_status: 'degraded' });

    // Refusals: anonymous 401; without force_execute nothing is applied (a plan only); an unknown entity is 400.
    expect((await a.json('/v1/recovery/execute', post({ entity_id: 'drive-1', failure: 'motor overtemperature', force_execute: true }))).status).toBe(401);
    const planOnly = await a.json('/v1/recovery/execute', post({ entity_id: 'drive-1', failure: 'motor overtemperature' }, OPERATOR_KEY));
    expect(planOnly.status).toBe(200);
    expect(planOnly.body.report.evidence).toEqual([]);
    expect((await execute(a, { entity_id: 'nope', failure: 'motor overtemperature' })).status).toBe(400);
    expect(a.agent.services.devices.get('drive-1')!.health_status).toBe('degraded');

    // (a) An actuator failure: the strategy is reinitialize, applied as a reset through DeviceActions.
    const ra = await execute(a, { entity_id: 'drive-1', failure: 'motor overtemperature' });
    expect(ra.status).toBe(200);
    const ea = ra.body.report.evidence;
    expect(ea).toHaveLength(1);
    const reset = ea[0];
    expect(reset.strategy).toBe('reinitialize');
    expect(reset.effects).toHaveLength(1);
    expect(reset.effects[0], reset.effects[0].detail).toMatchObject({ strategy: 'reinitialize', kind: 'device_action', action: 'reset', target: 'drive-1', ok: true });
    expect(reset.effects[0].detail).toMatch(/rebooted, faults cleared; healthy again/);
    // Measured, not the 30 s table estimate: reboot + boot + identity + clear_faults + a heartbeat.
    expect(reset.effects[0].duration_ms).toBeGreaterThanOrEqual(400);
    expect(reset.effects[0].duration_ms).toBeLessThan(10_000);
    expect(reset.executed).toBe(true);
    expect(reset.status).toBe('Success');
    expect(reset.duration_secs).toBeGreaterThanOrEqual(reset.effects[0].duration_ms / 1000);
    expect(reset.duration_secs).toBeLessThan(15);
    expect(reset.timeline.map((t: any) => t.phase)).toEqual(['detect', 'diagnose', 'plan', 'validate', 'execute', 'complete']);
    const execPhase = reset.timeline.find((t: any) => t.phase === 'execute');
    expect(execPhase.duration_ms).toBeGreaterThanOrEqual(reset.effects[0].duration_ms);
    expect(execPhase.description).toBe('reset drive-1: ok');
    expect((await a.json('/v1/devices/drive-1', { headers: auth(OPERATOR_KEY) })).body.device).toMatchObject({ health_status: 'healthy' });
    console.log(`recovery reset drive-1: effect ${reset.effects[0].duration_ms} ms, evidence ${reset.duration_secs} s`);

    // (b) gps-a dies (its emulator is killed): the health monitor sees it offline; a sensor failure switches to gps-b.
    const killedAt = Date.now();
    gpsA.kill('SIGKILL');
    await eventually(() => a.agent.services.devices.get('gps-a')!.health_status, (h) => h === 'offline', 15_000);
    console.log(`gps-a offline ${Date.now() - killedAt} ms after its emulator was killed`);
    // The chain view already skips the offline device; the pool still has gps-a serving robot-1 until the failover.
    const chainBefore = (await a.json('/v1/failover/chains', { headers: auth(OPERATOR_KEY) })).body.chains[0];
    expect(chainBefore.chain[0]).toMatchObject({ device_id: 'gps-a', health_status: 'offline', usable: false });
    expect((await a.json('/v1/devices/gps-a', { headers: auth(OPERATOR_KEY) })).body.device).toMatchObject({ assigned_robot: 'robot-1' });
    expect((await a.json('/v1/devices/gps-a', { headers: auth(OPERATOR_KEY) })).body.device.lifecycle_state).not.toBe('quarantined');
    const rb = await execute(a, { entity_id: 'gps-a', failure: 'gps failed' });
    expect(rb.status).toBe(200);
    const failover = rb.body.report.evidence[0];
    expect(failover.strategy).toBe('switch_sensor');
    expect(failover.effects).toHaveLength(1);
    expect(failover.effects[0], failover.effects[0].detail).toMatchObject({ strategy: 'switch_sensor', kind: 'device_action', action: 'failover', target: 'gps-a', ok: true, backup_id: 'gps-b' });
    expect(failover.status).toBe('Success');
    console.log(`recovery failover gps-a -> gps-b: effect ${failover.effects[0].duration_ms} ms, evidence ${failover.duration_secs} s`);
    const chainAfter = (await a.json('/v1/failover/chains', { headers: auth(OPERATOR_KEY) })).body.chains[0];
    expect(chainAfter).toMatchObject({ group: 'gps', active_device: 'gps-b', exhausted: false });
    expect(chainAfter.chain[0]).toMatchObject({ device_id: 'gps-a', lifecycle_state: 'quarantined', usable: false });
    expect((await a.json('/v1/devices/gps-a', { headers: auth(OPERATOR_KEY) })).body.device).toMatchObject({ lifecycle_state: 'quarantined', assigned_robot: null });
    expect((await a.json('/v1/devices/gps-b', { headers: auth(OPERATOR_KEY) })).body.device).toMatchObject({ lifecycle_state: 'active', assigned_robot: 'robot-1' });

    // Events: one RecoveryTriggered and one RecoveryCompleted per execution, audited (the chain, the route) and streamed.
    expect(chained(a, 'RecoveryTriggered').map((e) => [e.entity_id, e.strategy])).toEqual([['drive-1', 'reinitialize'], ['gps-a', 'switch_sensor']]);
    expect(chained(a, 'RecoveryCompleted').map((e) => [e.entity_id, e.evidence_id, e.status])).toEqual([['drive-1', reset.evidence_id, 'Success'], ['gps-a', failover.evidence_id, 'Success']]);
    expect(chained(a, 'RecoveryFailed')).toEqual([]);
    const audit = await a.json('/v1/audit/mutations', { headers: auth(ADMIN_KEY) });
    expect(audit.status).toBe(200);
    const auditTypes = JSON.stringify(audit.body);
    expect(auditTypes).toContain('RecoveryTriggered');
    expect(auditTypes).toContain(failover.evidence_id);
    expect((await a.json('/v1/audit/mutations', { headers: auth(OPERATOR_KEY) })).status).toBe(403);
    for (const id of [reset.evidence_id, failover.evidence_id])
      await stream.waitFor((f) => f.type === 'telemetry' && f.event?.event_type === 'recovery_completed' && JSON.stringify(f.event).includes(id), 10_000);
    expect(stream.frames.filter((f) => f.type === 'telemetry' && f.event?.event_type === 'recovery_triggered').map((f) => f.event.entity_id)).toEqual(['drive-1', 'gps-a']);

    // (c) The history survives a restart on the same state directory, effects and timelines included.
    const before = (await a.json('/v1/recovery/history', { headers: auth(OPERATOR_KEY) })).body;
    expect(before.history.map((e: any) => e.evidence_id)).toEqual([failover.evidence_id, reset.evidence_id]);
    await a.close();
    agents = [];
    const b = await startRecoveryAgent(p, { stateDir });
    agents.push(b);
    const after = await b.json('/v1/recovery/history', { headers: auth(OPERATOR_KEY) });
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before);
    expect(after.body.history[1]).toEqual(reset);
    expect(after.body.history[0]).toEqual(failover);
    // The failover itself is the device pool's, also kept.
    expect((await b.json('/v1/failover/chains', { headers: auth(OPERATOR_KEY) })).body.chains[0]).toMatchObject({ active_device: 'gps-b' });
    // The measured durations now feed the estimates.
    const metrics = (await b.json('/v1/recovery/metrics', { headers: auth(OPERATOR_KEY) })).body.metrics;
    expect(metrics).toMatchObject({ total_recoveries: 2, successful_recoveries: 2, failed_recoveries: 0 });
  }, 120_000);

  it('(d) a safety failure on a device quarantines it (Unsafe); the lifecycle is kept across a restart', async () => {
    const p = project();
    const stateDir = tempDir();
    const p1 = await startSocatPair();
    pairs.push(p1);
    const a = await agentOn(p, [p1.a], stateDir);
    children.push(simDevice(['--serial', p1.b, '--id', 'drive-1', '--type', 'motor_controller', '--rate', '10']));
    await attached(a, 'drive-1', 'healthy');
    const r = await execute(a, { entity_id: 'drive-1', failure: 'safety interlock violated' });
    expect(r.status).toBe(200);
    const e = r.body.report.evidence[0];
    console.log(`safety: ${JSON.stringify({ status: e.status, effects: e.effects })}`);
    expect(e.status).toBe('Unsafe');
    expect(e.effects).toEqual([expect.objectContaining({ strategy: 'quarantine', kind: 'device_action', action: 'quarantine', target: 'drive-1', ok: true })]);
    expect(e.effects[0].detail).toMatch(/device quarantined: unsafe recovery for 'safety interlock violated'/);
    expect(r.body.report.passed).toBe(false);
    expect(chained(a, 'RecoveryFailed').map((x) => [x.entity_id, x.status])).toEqual([['drive-1', 'Unsafe']]);
    const alerts = (await a.json('/v1/alerts', { headers: auth(OPERATOR_KEY) })).body;
    expect(JSON.stringify(alerts)).toContain(`Recovery ${e.evidence_id} of 'drive-1'`);
    expect((await a.json('/v1/devices/drive-1', { headers: auth(OPERATOR_KEY) })).body.device).toMatchObject({ lifecycle_state: 'quarantined' });
    expect((await a.json('/v1/entities/drive-1', { headers: auth(OPERATOR_KEY) })).body.entity).toMatchObject({ lifecycle_state: 'suspended', trust_status: 'untrusted' });
    await a.close();
    agents = [];
    const b = await startRecoveryAgent(p, { stateDir });
    agents.push(b);
    expect((await b.json('/v1/devices/drive-1', { headers: auth(OPERATOR_KEY) })).body.device).toMatchObject({ lifecycle_state: 'quarantined', quarantine_reason: "unsafe recovery for 'safety interlock violated'" });
    expect((await b.json('/v1/recovery/history', { headers: auth(OPERATOR_KEY) })).body.history[0]).toEqual(e);
  }, 90_000);
});

describe('mission strategies pause through the operator service', () => {
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
  });
  const PATROL = 'mission:Rover:patrol';
  const playbook = `[recovery]
[[recovery.playbooks]]
name = "mission_handover"
trigger = "mission stalled"
[[recovery.playbooks.steps]]
strategy = "delegate_mission"
`;

  it('a forced execute pauses the mission entity (suspended, MissionPaused by recovery); a second one reports the refused move (409) and fails', async () => {
    const p = recoveryProject({ recoveryToml: playbook });
    const stateDir = tempDir();
    const a = await startRecoveryAgent(p, { stateDir });
    agents.push(a);
    const r = await a.json('/v1/recovery/execute', post({ entity_id: PATROL, failure: 'mission stalled', playbook: 'mission_handover', force_execute: true }, OPERATOR_KEY));
    expect(r.status).toBe(200);
    const e = r.body.report.evidence[0];
    expect(e.strategy).toBe('delegate_mission');
    expect(e.effects).toEqual([expect.objectContaining({ strategy: 'delegate_mission', kind: 'mission_command', action: 'pause', target: PATROL, ok: true })]);
    expect(e.effects[0].detail).toMatch(new RegExp(`^${PATROL} paused \\(paused\\)`));
    expect(e.status).toBe('Success');
    const entity = (await a.json(`/v1/entities/${PATROL}`, { headers: auth(OPERATOR_KEY) })).body.entity;
    expect(entity).toMatchObject({ lifecycle_state: 'suspended', metadata: { mission_state: 'paused', mission_state_by: 'recovery' } });
    expect(entity.metadata.mission_note).toContain(`recovery plan-${PATROL}-mission_stalled: delegate_mission`);
    expect(chained(a, 'MissionPaused')).toEqual([expect.objectContaining({ source: 'svc-operator', entity_id: PATROL, from: 'Pending', to: 'paused', actor_key_id: 'recovery' })]);
    expect(a.agent.services.operator.transitions(PATROL).map((t) => [t.move, t.actor])).toEqual([['pause', 'recovery']]);

    // Paused already: the operator service refuses the move, and the evidence says so.
    const again = await a.json('/v1/recovery/execute', post({ entity_id: PATROL, failure: 'mission stalled', playbook: 'mission_handover', force_execute: true }, OPERATOR_KEY));
    expect(again.status).toBe(200);
    const f = again.body.report.evidence[0];
    expect(f.effects).toEqual([expect.objectContaining({ kind: 'mission_command', action: 'pause', target: PATROL, ok: false })]);
    expect(f.effects[0].detail).toContain(`${PATROL} not paused (409): mission '${PATROL}' is paused`);
    expect(f.status).toBe('Failed');
    expect(again.body.report.passed).toBe(false);
    expect(chained(a, 'MissionPaused')).toHaveLength(1);
    expect(chained(a, 'RecoveryFailed').map((x) => x.evidence_id)).toEqual([f.evidence_id]);

    // Cancelled: still refused, with the mission's state.
    expect((await a.json('/v1/operator/mission/cancel', post({ mission_id: 'patrol' }, OPERATOR_KEY))).status).toBe(200);
    const third = await a.json('/v1/recovery/execute', post({ entity_id: PATROL, failure: 'mission stalled', playbook: 'mission_handover', force_execute: true }, OPERATOR_KEY));
    expect(third.body.report.evidence[0].effects[0].detail).toContain(`mission '${PATROL}' is cancelled`);

    // The evidence and the mission's state are kept across a restart.
    await a.close();
    agents = [];
    const b = await startRecoveryAgent(p, { stateDir });
    agents.push(b);
    const history = (await b.json('/v1/recovery/history', { headers: auth(OPERATOR_KEY) })).body.history;
    expect(history.map((x: any) => [x.effects[0].ok, x.status])).toEqual([[false, 'Failed'], [false, 'Failed'], [true, 'Success']]);
    expect((await b.json(`/v1/entities/${PATROL}`, { headers: auth(OPERATOR_KEY) })).body.entity.metadata.mission_state).toBe('cancelled');
  });
});
