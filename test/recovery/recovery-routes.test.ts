import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { DEVELOPER_KEY, OPERATOR_KEY, post, recoveryProject, startRecoveryAgent } from './fixture.js';

/** The recovery orchestrator over real HTTP (docs/recovery.md): acceptance checks 1–9 and every "Ours" rule of the digest. */
describe('recovery routes', () => {
  const project = recoveryProject({
    recoveryToml: `
[recovery.policies.guarded]
entity_id = "robot-2"
max_escalation_level = 2
safety_constraints = ["switch"]
[[recovery.playbooks]]
name = "yard_drill"
trigger = "drill"
[[recovery.playbooks.steps]]
strategy = "reconnect"
`,
  });
  const stateDir = tempDir('svc-recovery-state-');
  let agent: RunningAgent;
  const events: PlatformEvent[] = [];

  beforeAll(async () => {
    agent = await startRecoveryAgent(project, { stateDir });
    agent.agent.services.bus.subscribe((e) => events.push(e));
  });
  afterAll(async () => {
    await agent.close();
  });

  it('check 1: plan without a program configured → 400 bad_request', async () => {
    const bare = await startAgent({ configPath: project.config, env: { SVC_API_KEYS_FILE: project.keys } });
    try {
      const r = await bare.json('/v1/recovery/plan', post({ entity_id: 'robot-1', failure: 'gps_loss' }));
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('bad_request');
      // One rule for every program route (docs/programs.md): the program service's message.
      expect(r.body.error).toMatch(/^no program file specified/);
      // check 8: metrics without a program: all zero, no `file`.
      const m = await bare.json('/v1/recovery/metrics');
      expect(m.status).toBe(200);
      expect(m.body).not.toHaveProperty('file');
      expect(m.body.metrics).toMatchObject({ total_recoveries: 0, success_rate: 0, recovery_confidence: 0, most_effective_strategies: [], repeated_failures: [], knowledge_priors: [] });
      // explain does not need a program.
      const e = await bare.json('/v1/recovery/explain', post({ entity_id: 'robot-1', failure: 'lte_drop' }));
      expect(e.status).toBe(200);
      expect(e.body.decision.recommended_strategy).toBe('reconnect');
    } finally {
      await bare.close();
    }
  });

  it('a missing body `file` → 404; malformed JSON → 400', async () => {
    const r = await agent.json('/v1/recovery/plan', post({ file: 'programs/nope.sd', entity_id: 'robot-1', failure: 'gps_loss' }));
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
    const bad = await agent.json('/v1/recovery/plan', post('{"entity_id": '));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/invalid JSON/);
  });

  it('check 2: plan robot-1 / gps_loss → SensorFailure, switch_sensor, level 3, no playbook', async () => {
    const r = await agent.json('/v1/recovery/plan', post({ entity_id: 'robot-1', failure: 'gps_loss' }));
    expect(r.status).toBe(200);
    expect(r.body.file).toBe('programs/rover.sd');
    const { report } = r.body;
    expect(report.simulation_mode).toBe('plan');
    expect(report.evidence).toEqual([]);
    expect(report.plans).toHaveLength(1);
    expect(report.plans[0]).toMatchObject({
      plan_id: 'plan-robot-1-gps_loss',
      classification: 'SensorFailure',
      playbook: null,
      strategies: ['switch_sensor'],
      escalation_level: 'level3_recover_device',
    });
    // The heal plan is the program's, for this failure context.
    expect(report.plans[0].legacy_plan.failure).toBe('gps_loss');
    expect(report.legacy_report.contexts.map((c: { issue: string }) => c.issue)).toEqual(['gps.failed']);
  });

  it('check 3: sensor_failure selects the sensor_failure playbook; a configured playbook is selected by its trigger', async () => {
    const r = await agent.json('/v1/recovery/plan', post({ entity_id: 'robot-1', failure: 'sensor_failure' }));
    expect(r.body.report.plans[0].playbook).toBe('sensor_failure');
    expect(r.body.report.plans[0].strategies).toEqual(['retry', 'reinitialize', 'switch_sensor', 'graceful_degradation']);
    const d = await agent.json('/v1/recovery/plan', post({ entity_id: 'robot-1', failure: 'night drill' }));
    expect(d.body.report.plans[0]).toMatchObject({ playbook: 'yard_drill', strategies: ['reconnect'] });
    const books = await agent.json('/v1/recovery/playbooks');
    expect(books.body.playbooks.map((p: { name: string }) => p.name)).toEqual(['battery_low', 'connectivity_loss', 'fleet_member_loss', 'mission_transfer', 'sensor_failure', 'yard_drill']);
  });

  it('policies come from [recovery]: the explicit policy caps and constrains robot-2, which makes switch_sensor unsafe', async () => {
    const p = await agent.json('/v1/recovery/policies');
    const guarded = p.body.policies.find((x: { entity_id: string }) => x.entity_id === 'robot-2');
    expect(guarded).toMatchObject({ max_escalation_level: 'level2_restart_package', safety_constraints: ['switch'], validation_rules: [], source: 'explicit' });
    expect(p.body.policies.find((x: { entity_id: string }) => x.entity_id === 'robot-1').validation_rules).toEqual(['health', 'readiness', 'trust']);
    const e = await agent.json('/v1/recovery/explain', post({ entity_id: 'robot-2', failure: 'gps_loss' }));
    expect(e.body.decision).toMatchObject({ is_safe: false, automatic: false, recommended_strategy: 'switch_sensor' });
    const unknown = await agent.json('/v1/recovery/explain', post({ entity_id: 'ghost' }));
    expect(unknown.body).toMatchObject({ entity_id: 'ghost', failure: 'degraded', decision: null });
  });

  it('graph follows the registry; rooted graphs carry depths; impact lists are computed from it', async () => {
    const g = await agent.json('/v1/recovery/graph?entity_id=Rover');
    expect(g.status).toBe(200);
    const ids = g.body.graph.nodes.map((n: { id: string }) => n.id);
    expect(ids[0]).toBe('Rover');
    expect(ids).toContain('mission:Rover:patrol');
    expect(ids).not.toContain('robot-1');
    expect(g.body.graph.nodes.find((n: { id: string }) => n.id === 'Rover:gps').depth).toBe(1);
    expect(g.body.graph.root_entity_id).toBe('Rover');
    const none = await agent.json('/v1/recovery/graph?entity_id=ghost');
    expect(none.body.graph.nodes).toEqual([]);
    const rec = await agent.json('/v1/recovery/recoverable-entities');
    expect(rec.body.entities.map((e: { id: string }) => e.id)).toEqual(expect.arrayContaining(['Rover', 'robot-1', 'robot-2', 'mission:Rover:patrol']));
    expect(rec.body.count).toBe(rec.body.entities.length);
  });

  it('check 6: execute anonymous → 401, developer key → 403', async () => {
    expect((await agent.json('/v1/recovery/execute', post({ force_execute: true }))).status).toBe(401);
    expect((await agent.json('/v1/recovery/execute', post({ force_execute: true }, DEVELOPER_KEY))).status).toBe(403);
  });

  it('forced execute on an unknown entity → 400 not_found; nothing recorded', async () => {
    const before = (await agent.json('/v1/recovery/history')).body.count;
    const r = await agent.json('/v1/recovery/execute', post({ entity_id: 'ghost', failure: 'gps_loss', force_execute: true }, OPERATOR_KEY));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('not_found');
    expect((await agent.json('/v1/recovery/history')).body.count).toBe(before);
    // Reads skip unknown targets: an empty plan list that does not pass.
    const p = await agent.json('/v1/recovery/plan', post({ entity_id: 'ghost', failure: 'gps_loss' }));
    expect(p.body.report).toMatchObject({ plans: [], passed: false });
  });

  it('check 4: execute without force_execute returns the plan, history unchanged', async () => {
    const before = (await agent.json('/v1/recovery/history')).body.count;
    const r = await agent.json('/v1/recovery/execute', post({ entity_id: 'robot-1', failure: 'gps_loss' }, OPERATOR_KEY));
    expect(r.status).toBe(200);
    expect(r.body.report.simulation_mode).toBe('plan');
    expect(r.body.report.evidence).toEqual([]);
    expect((await agent.json('/v1/recovery/history')).body.count).toBe(before);
  });

  it('check 7: validate is a dry run whose `validation` equals report.evidence; simulate stores nothing', async () => {
    const v = await agent.json('/v1/recovery/validate', post({ entity_id: 'robot-1', failure: 'gps_loss' }));
    expect(v.status).toBe(200);
    expect(v.body.report.simulation_mode).toBe('dry_run');
    expect(v.body.validation).toEqual(v.body.report.evidence);
    expect(v.body.validation).toHaveLength(1);
    expect(v.body.validation[0].validation_gates.map((g: { gate: string }) => g.gate)).toEqual([
      'health_verification', 'capability_verification', 'hardware_verification', 'readiness_verification', 'trust_verification', 'security_verification', 'mission_validation',
    ]);
    const s = await agent.json('/v1/recovery/simulate', post({ failure: 'gps_loss' }));
    expect(s.body.report.simulation_mode).toBe('simulate');
    expect(s.body.report.evidence.length).toBe(s.body.report.plans.length);
    expect(s.body.report.plans.length).toBe(5);
    expect(new Set(s.body.report.evidence.map((e: { evidence_id: string }) => e.evidence_id)).size).toBe(5);
    expect((await agent.json('/v1/recovery/history')).body.count).toBe(0);
  });

  it('check 5 + F1/F2: forced execute applies a real effect, times each phase, persists evidence, emits events and survives restart', async () => {
    events.length = 0;
    const r = await agent.json('/v1/recovery/execute', post({ failure: 'gps_loss', force_execute: true }, OPERATOR_KEY));
    expect(r.status).toBe(200);
    const { report } = r.body;
    expect(report.simulation_mode).toBe('validate');
    expect(report.evidence.length).toBeGreaterThan(1);
    const rover = report.evidence.find((e: { entity_id: string }) => e.entity_id === 'Rover');
    // F1: a robot not backed by a device gets a command record for its fleet agent, not a canned "executed".
    expect(rover.executed).toBe(true);
    expect(rover.effects[0]).toMatchObject({ kind: 'fleet_agent_command', action: 'switch_sensor', target: 'Rover', ok: true });
    // F2: phases in order, each stamped when it happened; durations measured (not duration/5).
    expect(rover.timeline.map((p: { phase: string }) => p.phase)).toEqual(['detect', 'diagnose', 'plan', 'validate', 'execute', 'complete']);
    const stamps = rover.timeline.map((p: { timestamp: string }) => Date.parse(p.timestamp));
    expect([...stamps].sort((a, b) => a - b)).toEqual(stamps);
    const total = Date.parse(rover.timeline.at(-1).timestamp) - Date.parse(rover.timeline[0].timestamp);
    expect(rover.duration_secs).toBeLessThan(5);
    expect(rover.duration_secs * 1000).toBeGreaterThanOrEqual(total - 1);
    const ids = report.evidence.map((e: { evidence_id: string }) => e.evidence_id);
    expect(new Set(ids).size).toBe(ids.length);
    // robot-2's policy forbids switch_* → its plan is unsafe; the evidence still records the heal outcome.
    const h = await agent.json('/v1/recovery/history');
    expect(h.body.count).toBe(ids.length);
    expect(h.body.history.map((e: { evidence_id: string }) => e.evidence_id)).toEqual([...ids].reverse());
    // Events: one RecoveryTriggered per executed plan, one Completed/Failed per evidence.
    expect(events.filter((e) => e.type === 'RecoveryTriggered')).toHaveLength(ids.length);
    expect(events.filter((e) => e.type === 'RecoveryCompleted' || e.type === 'RecoveryFailed')).toHaveLength(ids.length);
    const trig = events.find((e) => e.type === 'RecoveryTriggered' && e.entity_id === 'Rover')!;
    expect(trig).toMatchObject({ source: 'svc-recovery', payload: { plan_id: 'plan-Rover-gps_loss', failure: 'gps_loss', strategy: 'switch_sensor' } });
    // The events are audited (catalogue) → they are in the audit chain.
    const chained = [...agent.agent.services.audit.chain.records()].map((a) => a.event_type);
    expect(chained.filter((t) => t === 'RecoveryTriggered')).toHaveLength(ids.length);
    expect(chained.filter((t) => t === 'RecoveryCompleted' || t === 'RecoveryFailed')).toHaveLength(ids.length);

    // Survives restart: same state dir, new agent.
    await agent.close();
    agent = await startRecoveryAgent(project, { stateDir });
    agent.agent.services.bus.subscribe((e) => events.push(e));
    const again = await agent.json('/v1/recovery/history');
    expect(again.body.history.map((e: { evidence_id: string }) => e.evidence_id)).toEqual([...ids].reverse());
    const file = JSON.parse(fs.readFileSync(path.join(stateDir, 'control-center-recovery.json'), 'utf8'));
    expect(file.history.evidence.map((e: { evidence_id: string }) => e.evidence_id)).toEqual(ids);
  });

  it('F1: a mission strategy records a pause command for the missions concerned, with the backup', async () => {
    // An unknown playbook name selects none: the strategy is the decision's (MissionFailure → transfer_mission).
    const r = await agent.json('/v1/recovery/execute', post({ entity_id: 'Rover', failure: 'mission_abort', playbook: 'none', force_execute: true }, OPERATOR_KEY));
    expect(r.status).toBe(200);
    expect(r.body.report.plans[0]).toMatchObject({ playbook: null, strategies: ['transfer_mission'] });
    const backup = r.body.report.plans[0].decision.backup_entity_id;
    expect(backup).toBe('robot-1');
    expect(r.body.report.evidence[0].effects).toEqual([
      expect.objectContaining({ kind: 'mission_command', action: 'pause', target: 'mission:Rover:patrol', ok: true, backup_id: 'robot-1' }),
    ]);
    // On the mission itself: the mission is the target; its backup is another robot.
    const m = await agent.json('/v1/recovery/execute', post({ entity_id: 'mission:Rover:patrol', failure: 'mission stalled', playbook: 'none', force_execute: true }, OPERATOR_KEY));
    expect(m.body.report.evidence[0].effects[0]).toMatchObject({ kind: 'mission_command', target: 'mission:Rover:patrol', backup_id: 'Rover' });
    // A playbook's earlier non-mission step is a command for the mission's robot, tried first.
    const p = await agent.json('/v1/recovery/execute', post({ entity_id: 'mission:Rover:patrol', failure: 'mission stalled', force_execute: true }, OPERATOR_KEY));
    expect(p.body.report.plans[0].playbook).toBe('mission_transfer');
    expect(p.body.report.evidence[0].effects[0]).toMatchObject({ kind: 'fleet_agent_command', action: 'graceful_degradation', target: 'Rover' });
  });

  it('F1: a device target is acted on through the device actions; a device with no live link does not recover (Failed, warning alert)', async () => {
    events.length = 0;
    const r = await agent.json('/v1/recovery/execute', post({ entity_id: 'yard-gps', failure: 'gps_loss', force_execute: true }, OPERATOR_KEY));
    expect(r.status).toBe(200);
    const ev = r.body.report.evidence[0];
    expect(ev.effects[0]).toMatchObject({ kind: 'device_action', action: 'failover', target: 'yard-gps', ok: false, strategy: 'switch_sensor' });
    expect(ev.status).toBe('Failed');
    expect(r.body.report.passed).toBe(false);
    expect(events.find((e) => e.type === 'RecoveryFailed')).toMatchObject({ entity_id: 'yard-gps', payload: { status: 'Failed' } });
    const alert = agent.agent.services.alerts.ring.latest().find((a) => a.alert_type === 'recovery_failed' && a.message.includes(ev.evidence_id));
    expect(alert).toMatchObject({ severity: 'warning', source: 'recovery-orchestrator' });
  });

  it('F3/F4: metrics are measured from the history only; priors listed apart; downtime and estimates from measured durations', async () => {
    const m = await agent.json('/v1/recovery/metrics');
    expect(m.status).toBe(200);
    const history = (await agent.json('/v1/recovery/history')).body.history;
    const { metrics } = m.body;
    expect(metrics.total_recoveries).toBe(history.length);
    expect(metrics.successful_recoveries).toBe(history.filter((e: { status: string }) => e.status === 'Success').length);
    for (const s of metrics.most_effective_strategies) expect(s.usage_count).toBeLessThanOrEqual(history.length);
    expect(metrics.most_effective_strategies.map((s: { strategy: string }) => s.strategy)).toContain('switch_sensor');
    expect(Array.isArray(metrics.knowledge_priors)).toBe(true);
    expect(metrics.knowledge_priors.map((k: { failure_pattern: string }) => k.failure_pattern)).toEqual(expect.arrayContaining(['gps.failed', 'lidar.failed']));
    // repeated failures: gps_loss × robot-1 appears once; (root cause, entity) pairs with ≥ 2 runs carry the newest evidence time.
    for (const rf of metrics.repeated_failures) {
      const newest = history.filter((e: { root_cause: string; entities_involved: string[] }) => e.root_cause === rf.failure_pattern && e.entities_involved.includes(rf.entity_id))[0];
      expect(rf.last_seen).toBe(newest.timestamp);
    }
    // F3: the recorded switch_sensor runs set the downtime estimate (not the 120 s table value).
    const p = await agent.json('/v1/recovery/plan', post({ entity_id: 'robot-1', failure: 'gps_loss' }));
    const plan = p.body.report.plans[0];
    expect(plan.decision.downtime_source).toBe('history');
    expect(plan.decision.estimated_downtime_secs).toBeLessThan(5);
    expect(plan.estimate_source).toBe('history');
  });

  it('F5: recommend ranks knowledge entries by the success rate learned from history', async () => {
    const before = await agent.json('/v1/recovery/recommend', post({ failure: 'lidar' }));
    expect(before.status).toBe(200);
    expect(before.body.recommendation).toMatchObject({ failure_pattern: 'lidar.failed', rate_source: 'none', samples: 0, success_rate: null });
    const gps = await agent.json('/v1/recovery/recommend', post({ failure: 'gps' }));
    expect(gps.body.recommendation.failure_pattern).toBe('gps.failed');
    expect(gps.body.recommendation.rate_source).toBe('history');
    expect(gps.body.recommendation.samples).toBeGreaterThan(0);
    const none = await agent.json('/v1/recovery/recommend', post({}));
    expect(none.body).toMatchObject({ failure: 'degraded', recommendation: null });
  });

  it('check 9: predictive from posted telemetry', async () => {
    const r = await agent.json('/v1/recovery/predictive', post({ telemetry: { 'robot-1': { memory_leak: 95 } } }));
    expect(r.status).toBe(200);
    const ind = r.body.indicators.find((i: { indicator: string }) => i.indicator === 'memory_leak');
    expect(ind).toMatchObject({ entity_id: 'robot-1', confidence: 0.9, preventative: false, severity: 'warning', recommended_action: 'restart_component' });
    expect(typeof r.body.should_trigger_preventative).toBe('boolean');
  });

  it('F6: predictive without telemetry reads the latest per-device values of the telemetry store', async () => {
    const empty = await agent.json('/v1/recovery/predictive');
    expect(empty.body.indicators.filter((i: { source: string }) => i.source === 'telemetry_store')).toEqual([]);
    const now = Date.now();
    agent.agent.services.telemetry.append({ kind: 'device', device_id: 'imu-7', metric: 'packet_loss', value: 50, timestamp_ms: now - 10 });
    agent.agent.services.telemetry.append({ kind: 'device', device_id: 'imu-7', metric: 'packet_loss', value: 80, timestamp_ms: now });
    const r = await agent.json('/v1/recovery/predictive');
    const ind = r.body.indicators.find((i: { indicator: string }) => i.indicator === 'packet_loss');
    expect(ind).toMatchObject({ entity_id: 'imu-7', confidence: 0.75, preventative: true, recommended_action: 'switch_network', source: 'telemetry_store', value: 80 });
    expect(r.body.should_trigger_preventative).toBe(true);
    const viaPost = await agent.json('/v1/recovery/predictive', post({}));
    expect(viaPost.body.indicators.some((i: { indicator: string }) => i.indicator === 'packet_loss')).toBe(true);
  });

  it('GET plans: default targets against the server program', async () => {
    const r = await agent.json('/v1/recovery/plans');
    expect(r.status).toBe(200);
    expect(r.body.file).toBe('programs/rover.sd');
    expect(r.body.plans.map((p: { plan_id: string }) => p.plan_id)).toEqual([
      'plan-Rover-Rover_health_check', 'plan-Rover:gps-Rover:gps_health_check', 'plan-Rover:lidar-Rover:lidar_health_check', 'plan-mission:Rover:patrol-mission:Rover:patrol_health_check', 'plan-org:Recovery Test-org:Recovery_Test_health_check',
    ]);
  });

  it('an unsafe recovery (safety failure) applies nothing, raises a critical recovery_failed alert and publishes RecoveryFailed', async () => {
    events.length = 0;
    const r = await agent.json('/v1/recovery/execute', post({ entity_id: 'robot-1', failure: 'safety_kill', force_execute: true }, OPERATOR_KEY));
    expect(r.status).toBe(200);
    const ev = r.body.report.evidence[0];
    expect(ev.status).toBe('Unsafe');
    expect(ev.safety_validation).toBe('FAIL');
    expect(ev.effects).toEqual([]);
    expect(r.body.report.passed).toBe(false);
    expect(events.find((e) => e.type === 'RecoveryFailed')).toMatchObject({ entity_id: 'robot-1', payload: { evidence_id: ev.evidence_id, status: 'Unsafe' } });
    const alert = agent.agent.services.alerts.ring.latest().find((a) => a.alert_type === 'recovery_failed' && a.message.includes(ev.evidence_id));
    expect(alert).toMatchObject({ severity: 'critical', source: 'recovery-orchestrator' });
  });
});
