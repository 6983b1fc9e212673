import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { programCommandFor } from '../../agent/programs/handlers.js';
import { runProgramCommand } from '../../agent/cli/program-command.js';
import { loadSettings } from '../../agent/settings/settings.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * The escalation lifecycle over a real agent (docs/decisions.md § Escalations): a program run whose
 * decision tree acts on a safety boundary or outside the robot's local authority registers a pending
 * escalation; the escalate route grants it; the next run carries the decision out.
 */
const OPERATOR = 'op-key-0123456789abcdef';

// Courier cruises toward the obstacle 2 m ahead (as examples/standalone/reflex_tree.sd): the lidar
// distance shrinks on every scheduler tick, so the trees below match in turn.
const PROGRAM = `module test.escalations;

robot Courier {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    actuator wheels: DifferentialDrive;
    local_decision_authority [slow_to, stop_drive];

    safety {
        max_speed = 0.8 m/s;
        stop_if lidar.read().nearest_distance < 0.25 m;
    }

    task cruise high every 100ms deadline 30ms {
        wheels.drive(linear: 0.5 m/s, angular: 0.0 rad/s);
    }
}

decision_tree CourierReflex reflex {
    version = "1.0.0";
    when lidar.nearest_distance < 0.97 m { stop_drive; }
}
decision_tree Maintenance local {
    version = "1.0.0";
    when lidar.nearest_distance < 1.27 m { update_firmware; }
}
decision_tree Presence local {
    version = "1.0.0";
    when lidar.nearest_distance < 1.47 m { announce_presence; }
}
`;

const post = (body: unknown, token?: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body),
});
const auth = { headers: { authorization: `Bearer ${OPERATOR}` } };
const SIM = { file: 'programs/courier.sd', execute: true };

function project(): string {
  const root = tempDir('svc-escalations-');
  fs.mkdirSync(path.join(root, 'programs'));
  fs.writeFileSync(path.join(root, 'programs', 'courier.sd'), PROGRAM);
  fs.writeFileSync(path.join(root, 'keys.json'), JSON.stringify([{ key_id: 'op', token: OPERATOR, role: 'operator' }]));
  return root;
}

const agentFor = (root: string, stateDir: string) =>
  startAgent({ cwd: root, programPath: path.join(root, 'programs', 'courier.sd'), stateDir, env: { SVC_API_KEYS_FILE: path.join(root, 'keys.json') } });

const decisionFrames = (frames: any[]) => frames.filter((f) => f.payload?.version === 3);
const frameOf = (frames: any[], tree: string) => decisionFrames(frames).find((f) => f.payload.evidence.tree === tree)?.payload;

describe('escalation lifecycle', () => {
  let root: string;
  let stateDir: string;
  let agent: RunningAgent;

  beforeAll(async () => {
    root = project();
    stateDir = tempDir('svc-esc-state-');
    agent = await agentFor(root, stateDir);
  });
  afterAll(async () => {
    await agent?.close();
  });

  it('an anonymous run reports the escalations its decisions wait on and writes nothing', async () => {
    const r = await agent.json('/v1/programs/simulation', post({ ...SIM, decision_trace: true }));
    expect(r.status).toBe(200);
    const sim = r.body.simulation;
    expect(sim.escalations_registered).toBe(false);
    expect(sim.escalations.map((e: any) => [e.escalation_id, e.entity_id, e.action, e.layer, e.tree, e.status])).toEqual([
      ['esc-Courier-local', 'Courier', 'announce_presence', 'local_entity', 'Presence', 'pending'],
      ['esc-Courier-1', 'Courier', 'update_firmware', 'local_entity', 'Maintenance', 'pending'],
    ]);
    // The reflex decision (stop_drive) is within the robot's authority: no escalation.
    expect(sim.escalations.some((e: any) => e.tree === 'CourierReflex')).toBe(false);
    // Recording (which would register) needs Operate.
    expect((await agent.json('/v1/programs/simulation', post({ ...SIM, record_trace: true }))).status).toBe(401);
    const list = await agent.json('/v1/decisions/escalations', auth);
    expect(list.status).toBe(200);
    expect(list.body.pending).toEqual([]);
    expect(list.body.granted).toEqual([]);
    expect(fs.existsSync(path.join(stateDir, 'decision-escalations.json'))).toBe(false);
  });

  it('a recording run by an operator registers them; the decision frames say the action waits', async () => {
    const r = await agent.json('/v1/programs/simulation', post({ ...SIM, record_trace: true }, OPERATOR));
    expect(r.status).toBe(200);
    expect(r.body.simulation.escalations_registered).toBe(true);
    const list = await agent.json('/v1/decisions/escalations', auth);
    const byId = (a: any, b: any) => a.escalation_id.localeCompare(b.escalation_id);
    expect([...list.body.pending].sort(byId).map((p: any) => [p.escalation_id, p.entity_id, p.action])).toEqual([
      ['esc-Courier-1', 'Courier', 'update_firmware'],
      ['esc-Courier-local', 'Courier', 'announce_presence'],
    ]);
    const firmware = list.body.pending.find((p: any) => p.escalation_id === 'esc-Courier-1');
    expect(firmware.reason).toContain('safety boundary');
    expect(firmware).toMatchObject({ layer: 'local_entity', tree: 'Maintenance', condition: expect.stringContaining('1.27') });
    expect(firmware.created_at_ms).toBeGreaterThan(0);
    expect(list.body.pending.find((p: any) => p.escalation_id === 'esc-Courier-local').reason).toContain('outside local_decision_authority');

    const traces = await agent.json('/v1/decisions/traces?file=programs%2Fcourier.sd', auth);
    expect(traces.status).toBe(200);
    const frame = frameOf(traces.body.frames, 'Maintenance');
    expect(frame.result).toBe('pending_approval');
    expect(frame.escalation_path).toEqual([
      expect.objectContaining({ escalation_id: 'esc-Courier-1', from_layer: 'local_entity', to_layer: 'control_center', pending_approval: true, granted: false, action: 'update_firmware' }),
    ]);
    // Decisions without an escalation keep the plain layer path.
    expect(frameOf(traces.body.frames, 'CourierReflex')).toMatchObject({ result: 'executed', escalation_path: ['reflex', 'local_entity', 'group_fleet', 'control_center'] });
    // The decision audit (`svc audit decisions`, same route) explains why the action waits.
    const audit = await agent.json('/v1/programs/audit/decisions', post({ file: 'programs/courier.trace', explain: true }));
    expect(audit.status).toBe(200);
    expect(audit.body.explanation).toContain("decided to 'update_firmware' because decision_tree Maintenance matched");
    expect(audit.body.explanation).toContain('waiting for approval of esc-Courier-1');
    // The neighbouring frame of §25.
    const trace = JSON.parse(fs.readFileSync(path.join(root, 'programs', 'courier.trace'), 'utf8'));
    expect(trace.frames.filter((f: any) => f.event === 'decision_escalation_pending').map((f: any) => f.payload.escalation_id)).toEqual(['esc-Courier-local', 'esc-Courier-1']);
  });

  it('the escalate route grants a pending id (direct:false); the next run performs the action and registers nothing new', async () => {
    const before = (await agent.json('/v1/decisions/escalations', auth)).body;
    const g = await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Courier-1', approver: 'alice' }, OPERATOR));
    expect(g.status).toBe(200);
    expect(g.body.grant).toMatchObject({ escalation_id: 'esc-Courier-1', entity_id: 'Courier', approver: 'alice', direct: false, approved_by_key_id: 'op' });

    const r = await agent.json('/v1/programs/simulation', post({ ...SIM, record_trace: true }, OPERATOR));
    expect(r.status).toBe(200);
    expect(r.body.simulation.escalations.map((e: any) => [e.escalation_id, e.status])).toEqual([
      ['esc-Courier-local', 'pending'],
      ['esc-Courier-1', 'granted'],
    ]);
    const traces = await agent.json('/v1/decisions/traces?file=programs%2Fcourier.sd', auth);
    const frame = frameOf(traces.body.frames, 'Maintenance');
    expect(frame.result).toBe('executed');
    expect(frame.escalation_path).toEqual([expect.objectContaining({ escalation_id: 'esc-Courier-1', pending_approval: false, granted: true })]);
    expect(frame.reason).toContain('approved by esc-Courier-1');

    const after = (await agent.json('/v1/decisions/escalations', auth)).body;
    // esc-Courier-local stays pending as first registered (same time), esc-Courier-1 is granted, not pending again.
    expect(after.pending).toEqual(before.pending.filter((p: any) => p.escalation_id !== 'esc-Courier-1'));
    expect(after.granted.map((x: any) => x.escalation_id)).toEqual(['esc-Courier-1']);

    // The recorded trace replays deterministically: the re-run sees the grant the trace recorded.
    const replay = await agent.json('/v1/programs/replay', post({ file: 'programs/courier.trace', deterministic: true }));
    expect(replay.status).toBe(200);
    expect(replay.body.replay.verification).toMatchObject({ ok: true, mismatches: [] });
  });

  it('a restart keeps pending and granted escalations', async () => {
    const before = (await agent.json('/v1/decisions/escalations', auth)).body;
    await agent.close();
    agent = await agentFor(root, stateDir);
    const after = (await agent.json('/v1/decisions/escalations', auth)).body;
    expect(after.pending).toEqual(before.pending);
    expect(after.granted).toEqual(before.granted);
    expect(after.pending.map((p: any) => p.escalation_id)).toEqual(['esc-Courier-local']);
    // Granted again → 409.
    expect((await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Courier-1', approver: 'bob' }, OPERATOR))).status).toBe(409);
  });
});

describe('escalations from the CLI (svc sim)', () => {
  it('registers into the store file of its settings and honours its grants', async () => {
    const root = project();
    const stateDir = tempDir('svc-esc-cli-');
    const settings = loadSettings({ SVC_CONTROL_CENTER_STATE_DIR: stateDir }, root);
    const spec = programCommandFor({ id: 'runProgramSimulation' })!;
    const file = path.join(root, 'programs', 'courier.sd');
    const sim = async () => JSON.parse((await runProgramCommand(spec, [file], new Map<string, string | true>([['decision-trace', true], ['json', true]]), settings, root)).stdout);

    const first = await sim();
    expect(first.simulation.escalations_registered).toBe(true);
    const storeFile = path.join(stateDir, 'decision-escalations.json');
    const doc = JSON.parse(fs.readFileSync(storeFile, 'utf8'));
    expect(Object.keys(doc.pending).sort()).toEqual(['esc-Courier-1', 'esc-Courier-local']);

    // The agent over the same state directory grants it; the next CLI run performs the action.
    const agent = await agentFor(root, stateDir);
    try {
      const g = await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Courier-1', approver: 'alice' }, OPERATOR));
      expect(g.body.grant.direct).toBe(false);
    } finally {
      await agent.close();
    }
    const second = await sim();
    expect(second.simulation.escalations.find((e: any) => e.escalation_id === 'esc-Courier-1').status).toBe('granted');
    const doc2 = JSON.parse(fs.readFileSync(storeFile, 'utf8'));
    expect(Object.keys(doc2.pending)).toEqual(['esc-Courier-local']);
    expect(doc2.pending['esc-Courier-local'].created_at_ms).toBe(doc.pending['esc-Courier-local'].created_at_ms);
    expect(Object.keys(doc2.granted)).toEqual(['esc-Courier-1']);
  });
});
