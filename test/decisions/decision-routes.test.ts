import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';

/**
 * Distributed decisions over real HTTP and gRPC (docs/decisions.md): every answer is read from the
 * loaded program, the trace and cache files, or the persisted escalation and mesh stores.
 */
const OPERATOR = 'op-key-0123456789abcdef';
const AUDITOR = 'aud-key-0123456789abcdef';

const PROGRAM = `module test.decisions;

robot Rover {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    actuator wheels: DifferentialDrive;
    local_decision_authority [slow_down, reroute, hold_position];
    requires_central_approval [continue_mission, update_firmware];
    kill_switch BumperStop { priority: critical; action { wheels.stop(); emergency_stop; } }
    mission Patrol {
        drive_loop;
    }
    behavior main {
        wheels.stop();
    }
}

robot Scout {
    sensor lidar: Lidar on "/dev/ttyUSB1";
    actuator wheels: DifferentialDrive;
    behavior main {
        wheels.stop();
    }
}

decision_tree ObstacleReflex reflex {
    version = "1.0.0";
    when lidar.nearest_distance < 0.5 m { stop_drive; flash_beacon; }
}
decision_tree PartitionLocal local {
    version = "2.0.0";
    when network.partitioned { hold_position; }
}
decision_tree FirmwareFleet fleet {
    when maintenance.window { update_firmware; }
}

offline_policy ShortLeash {
    max_duration = 10 min;
    allowed_actions [hold_position, return_to_base];
    forbidden_actions [continue_mission];
}
`;

const post = (body: unknown, token?: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
const auth = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

function project(): string {
  const root = tempDir('svc-decisions-');
  fs.mkdirSync(path.join(root, 'programs'));
  fs.writeFileSync(path.join(root, 'programs', 'rover.sd'), PROGRAM);
  fs.writeFileSync(path.join(root, 'programs', 'other.sd'), PROGRAM.replace(/Rover/g, 'Otter'));
  fs.writeFileSync(
    path.join(root, 'keys.json'),
    JSON.stringify([
      { key_id: 'op', token: OPERATOR, role: 'operator' },
      { key_id: 'aud', token: AUDITOR, role: 'auditor' },
    ]),
  );
  return root;
}

async function agentFor(root: string, opts: { stateDir?: string; env?: Record<string, string>; program?: boolean; grpc?: boolean } = {}) {
  return startAgent({
    cwd: root,
    programPath: opts.program === false ? null : path.join(root, 'programs', 'rover.sd'),
    ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
    ...(opts.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
    env: { SVC_API_KEYS_FILE: path.join(root, 'keys.json'), ...(opts.env ?? {}) },
  });
}

describe('decision routes', () => {
  let root: string;
  let agent: RunningAgent;
  let g: GrpcTestClient;

  beforeAll(async () => {
    root = project();
    agent = await agentFor(root, { grpc: true });
    g = connectGrpc(agent.agent.grpcAddress!);
  });
  afterAll(async () => {
    g?.close();
    await agent?.close();
  });

  it('GET /v1/decisions lists authorities, trees and offline policies of the loaded program', async () => {
    const r = await agent.json('/v1/decisions');
    expect(r.status).toBe(200);
    expect(r.body.api_version).toBe('v1');
    expect(r.body.authorities).toEqual([
      { entity_id: 'Rover', local_actions: ['slow_down', 'reroute', 'hold_position'], requires_central_approval: ['continue_mission', 'update_firmware'], layer: 'local_entity' },
    ]);
    expect(r.body.decision_trees.map((t: any) => [t.name, t.scope, t.layer, t.version])).toEqual([
      ['ObstacleReflex', 'reflex', 'reflex', '1.0.0'],
      ['PartitionLocal', 'local', 'local_entity', '2.0.0'],
      ['FirmwareFleet', 'fleet', 'group_fleet', '1'],
    ]);
    expect(r.body.decision_trees[0].branches[0]).toMatchObject({ condition: 'lidar . nearest_distance < 0.5m', actions: ['stop_drive', 'flash_beacon'], nested: [] });
    expect(r.body.decision_trees[0].tree_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.offline_policies).toEqual([
      { name: 'ShortLeash', max_duration_minutes: 10, allowed_actions: ['hold_position', 'return_to_base'], forbidden_actions: ['continue_mission'], policy_version: '1.0.0', signature: null, expires_at_ms: null },
    ]);
    // Another file of the project answers from that file.
    const other = await agent.json('/v1/decisions?file=programs%2Fother.sd');
    expect(other.body.authorities[0].entity_id).toBe('Otter');
  });

  it('GET /v1/decision-policies gives policies and trees; a missing file is 404, a file outside the project 400', async () => {
    const r = await agent.json('/v1/decision-policies');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['api_version', 'decision_trees', 'offline_policies']);
    expect(r.body.offline_policies[0].name).toBe('ShortLeash');
    const missing = await agent.json('/v1/decision-policies?file=programs/nope.sd');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found', error: 'program not found: programs/nope.sd' });
    const escape = await agent.json('/v1/decision-policies?file=../../etc/passwd.sd');
    expect(escape.status).toBe(400);
  });

  it('the tree hash is the one the interpreter writes into decision frames', async () => {
    const { canonicalTreeText } = await import('../../agent/programs/runtime/decision-trees.js');
    const { parseProgram } = await import('../../agent/programs/language/index.js');
    const { createHash } = await import('node:crypto');
    const program = parseProgram(PROGRAM, 'rover.sd');
    const want = createHash('sha256').update(canonicalTreeText(program.decisionTrees[1]!)).digest('hex');
    const r = await agent.json('/v1/decisions');
    expect(r.body.decision_trees[1].tree_hash).toBe(want);
  });

  it('F13: simulate stamps real time and a fresh random nonce per call, defaults to the first robot and checks safety and trust', async () => {
    const before = Date.now();
    const a = await agent.json('/v1/decisions/simulate', post({ network_partition: true }));
    const b = await agent.json('/v1/decisions/simulate', post({ network_partition: true }));
    const after = Date.now();
    expect(a.status).toBe(200);
    const sim = a.body.simulation;
    expect(sim.scenario).toBe('network_partition');
    expect(sim.options.entity_id).toBe('Rover');
    expect(sim.report.mission).toBe('Patrol');
    const tree = sim.report.decisions.find((d: any) => d.decision_type === 'recovery');
    expect(tree.selected_action).toBe('hold_position');
    expect(tree.timestamp_ms).toBeGreaterThanOrEqual(before);
    expect(tree.timestamp_ms).toBeLessThanOrEqual(after);
    expect(tree.security.timestamp_ms).toBe(tree.timestamp_ms);
    expect(tree.security.nonce).toMatch(/^[0-9a-f]{16}$/);
    expect(tree.security.decision_tree_hash).toMatch(/^[0-9a-f]{64}$/);
    const nonces = [...a.body.simulation.report.decisions, ...b.body.simulation.report.decisions].map((d: any) => d.security.nonce);
    expect(new Set(nonces).size).toBe(nonces.length);
    expect(sim.report.messages).toContain("tree 'PartitionLocal' matched condition 'network . partitioned' → [hold_position]");
    // continue_mission needs central approval for Rover: escalation chain to the control center.
    expect(sim.report.passed).toBe(false);
    expect(sim.report.messages).toContain("action 'continue_mission' requires central approval for entity 'Rover'");
    const policy = sim.report.decisions.find((d: any) => d.decision_type === 'policy');
    expect(policy.escalation_path.map((e: any) => e.escalation_id)).toEqual(['esc-Rover-0', 'esc-Rover-1']);

    // Safety is checked for real: a tree action on a safety boundary fails validation.
    const fw = await agent.json('/v1/decisions/simulate', post({ signals: { 'maintenance.window': true } }));
    const fwDecision = fw.body.simulation.report.decisions.find((d: any) => d.selected_action === 'update_firmware');
    expect(fwDecision.safety_validation.passed).toBe(false);
    expect(fwDecision.security.safety_validation_passed).toBe(false);
    expect(tree.safety_validation.passed).toBe(true);

    // Scout has no authority lists and nothing blocks it when nominal.
    const scout = await agent.json('/v1/decisions/simulate', post({ entity_id: 'Scout' }));
    expect(scout.body.simulation.scenario).toBe('nominal');
    expect(scout.body.simulation.report.passed).toBe(true);
    expect(scout.body.simulation.report.decisions).toEqual([]);
  });

  it('governance and trust come from the live entity registry', async () => {
    agent.agent.services.entities.register(
      { id: 'Ghost', entity_type: 'robot', metadata: { 'governance.autonomy_level': 'assisted', 'governance.risk_level': 'high' } },
      'test',
    );
    const r = await agent.json('/v1/decisions/simulate', post({ entity_id: 'Ghost' }));
    expect(r.status).toBe(200);
    expect(r.body.simulation.report.passed).toBe(false);
    expect(r.body.simulation.report.messages).toContain("Autonomy 'assisted' / risk 'high' requires human approval for autonomous actions");
    const policy = r.body.simulation.report.decisions.find((d: any) => d.decision_type === 'policy');
    expect(policy.trust_validation.trust_status).toBe((await agent.json('/v1/entities/Ghost/trust')).body.trust_status);
    // An unknown entity has no registry record: no governance step, trust unknown.
    const nobody = await agent.json('/v1/decisions/simulate', post({ entity_id: 'Nobody' }));
    expect(nobody.body.simulation.report.passed).toBe(true);
  });

  it('acceptance 14: offline beyond the policy maximum fails; offline_minutes is honoured', async () => {
    const r = await agent.json('/v1/decisions/simulate', post({ offline: true, entity_id: 'Scout' }));
    expect(r.status).toBe(200);
    const sim = r.body.simulation;
    expect(sim.scenario).toBe('offline');
    expect(sim.report.passed).toBe(false);
    expect(sim.report.messages).toContain("offline duration 15m exceeds max 10m for policy 'ShortLeash'");
    expect(sim.report.messages).toContain("action 'continue_mission' forbidden while offline");
    expect(sim.notes).toContain('Simulation detected policy or authority violations');
    const short = await agent.json('/v1/decisions/simulate', post({ offline: true, offline_minutes: 5, entity_id: 'Scout' }));
    expect(short.body.simulation.options.offline_minutes).toBe(5);
    expect(short.body.simulation.report.messages.some((m: string) => m.startsWith('offline duration'))).toBe(false);
  });

  it('simulate refuses malformed JSON and a missing program file', async () => {
    const bad = await agent.json('/v1/decisions/simulate', post('{nope'));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid JSON body/);
    const missing = await agent.json('/v1/decisions/simulate', post({ file: 'programs/missing.sd' }));
    expect(missing.status).toBe(404);
  });

  it('gRPC ListDecisions and SimulateDecisions answer from the same program', async () => {
    const meta = bearer(AUDITOR);
    const list = await g.client['ListDecisions']!({ query: 'file=programs%2Fother.sd' }, { metadata: meta });
    expect(JSON.parse(list.json).authorities[0].entity_id).toBe('Otter');
    const sim = await g.client['SimulateDecisions']!({ body_json: JSON.stringify({ offline: true }) }, { metadata: meta });
    const body = JSON.parse(sim.json);
    expect(body.simulation.scenario).toBe('offline');
    expect(body.simulation.report.decisions[0].security.nonce).toMatch(/^[0-9a-f]{16}$/);
  });

  it('GET /v1/decisions/traces keeps the version-3 decision frames of a trace file', async () => {
    const trace = {
      version: 1,
      source: 'rover.sd',
      deterministic: true,
      frames: [
        { sim_time_ms: 100, event: 'behavior_start', payload: { behavior: 'main' } },
        { sim_time_ms: 200, event: 'decision_tree_eval', payload: { version: 3, decision: 'hold_position', layer: 'local_entity' } },
      ],
    };
    fs.writeFileSync(path.join(root, 'programs', 'rover.trace'), JSON.stringify(trace));
    const dflt = await agent.json('/v1/decisions/traces');
    expect(dflt.status).toBe(200);
    expect(dflt.body).toMatchObject({ api_version: 'v1', trace: 'programs/rover.trace', count: 1 });
    expect(dflt.body.frames).toEqual([{ sim_time_ms: 200, event: 'decision_tree_eval', payload: trace.frames[1]!.payload }]);
    const named = await agent.json('/v1/decisions/traces?trace=programs%2Frover.trace');
    expect(named.body.count).toBe(1);
    const viaFile = await agent.json('/v1/decisions/traces?file=programs/rover.sd');
    expect(viaFile.body.trace).toBe('programs/rover.trace');
    expect((await agent.json('/v1/decisions/traces?trace=programs/none.trace')).status).toBe(404);
    expect((await agent.json('/v1/decisions/traces?trace=programs/rover.sd')).status).toBe(400);
    fs.writeFileSync(path.join(root, 'programs', 'broken.trace'), '{not json');
    expect((await agent.json('/v1/decisions/traces?trace=programs/broken.trace')).status).toBe(400);
  });

  it('acceptance 16: the policy cache path is percent-decoded over REST and gRPC; undecoded also works', async () => {
    const dir = tempDir('svc-cache-');
    const file = path.join(dir, 'c.json');
    const enc = encodeURIComponent(file);
    const missing = await agent.json(`/v1/decision-policy-cache?cache=${enc}`);
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({ api_version: 'v1', cache_path: file, policy_count: 0, updated_at_ms: 0, policies: {} });
    fs.writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        updated_at_ms: 1700000000000,
        policies: { ShortLeash: { name: 'ShortLeash', max_duration_minutes: 10, allowed_actions: ['hold_position'], forbidden_actions: [], policy_version: '1.0.0', signature: null, expires_at_ms: null } },
        decision_trees: { X: { name: 'X' } },
      }),
    );
    const raw = await agent.json(`/v1/decision-policy-cache?cache=${file}`);
    expect(raw.body.cache_path).toBe(file);
    expect(raw.body.policy_count).toBe(1);
    expect(raw.body.updated_at_ms).toBe(1700000000000);
    expect(Object.keys(raw.body.policies)).toEqual(['ShortLeash']);
    const grpc = await g.client['ListDecisionPolicyCache']!({ query: `cache=${enc}` }, { metadata: bearer(AUDITOR) });
    expect(JSON.parse(grpc.json).cache_path).toBe(file);
    expect((await agent.json('/v1/decision-policy-cache?cache=%2Ftmp%2Fc.txt')).status).toBe(400);
    // The state directory (keys, secrets) is not readable through this route.
    const inState = await agent.json(`/v1/decision-policy-cache?cache=${encodeURIComponent(path.join(agent.stateDir, 'other.json'))}`);
    expect(inState.status).toBe(400);
    const acceptance = await agent.json('/v1/decision-policy-cache?cache=%2Ftmp%2Fc.json');
    expect(acceptance.body.cache_path).toBe('/tmp/c.json');
  });
});

describe('escalations', () => {
  it('acceptance 15 and F14: grants persist across a restart, a second grant is 409, unknown ids 404, roles enforced', async () => {
    const root = project();
    const stateDir = tempDir('svc-dec-state-');
    // A pending escalation as the robot's run records it.
    fs.writeFileSync(
      path.join(stateDir, 'decision-escalations.json'),
      JSON.stringify({ version: 1, pending: { 'esc-Rover-local': { escalation_id: 'esc-Rover-local', entity_id: 'Rover', action: 'climb_ramp', reason: 'outside local authority', created_at_ms: 1000 } }, granted: {}, updated_at_ms: 1000 }),
    );
    let agent = await agentFor(root, { stateDir });
    try {
      const listed = await agent.json('/v1/decisions/escalations');
      expect(listed.body.pending.map((p: any) => p.escalation_id)).toEqual(['esc-Rover-local']);

      expect((await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-1', approver: 'ops' }))).status).toBe(401);
      expect((await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-1', approver: 'ops' }, AUDITOR))).status).toBe(403);
      expect((await agent.json('/v1/decisions/escalate', post({ approver: 'ops' }, OPERATOR))).status).toBe(400);

      const before = Date.now();
      const direct = await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-1', approver: 'ops' }, OPERATOR));
      expect(direct.status).toBe(200);
      expect(direct.body).toMatchObject({ api_version: 'v1', ok: true, grant: { escalation_id: 'esc-Rover-1', entity_id: 'Rover', approver: 'ops', approved_by_key_id: 'op', direct: true } });
      expect(direct.body.grant.reason).toContain('continue_mission');
      expect(direct.body.grant.approved_at_ms).toBeGreaterThanOrEqual(before);

      const pending = await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-local', approver: 'lead' }, OPERATOR));
      expect(pending.body.grant).toMatchObject({ entity_id: 'Rover', reason: 'outside local authority', direct: false });

      const again = await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-1', approver: 'ops' }, OPERATOR));
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('conflict');

      const unknown = await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Nobody-1', approver: 'ops' }, OPERATOR));
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ code: 'not_found', error: "escalation 'esc-Nobody-1' not found" });
      // Scout has no local authority list: no `esc-Scout-local` to raise.
      expect((await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Scout-local', approver: 'ops' }, OPERATOR))).status).toBe(404);
    } finally {
      await agent.close();
    }
    agent = await agentFor(root, { stateDir });
    try {
      const after = await agent.json('/v1/decisions/escalations');
      expect(after.body.pending).toEqual([]);
      expect(after.body.granted.map((g: any) => `${g.escalation_id}:${g.direct}`)).toEqual(['esc-Rover-1:true', 'esc-Rover-local:false']);
      expect((await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-1', approver: 'ops' }, OPERATOR))).status).toBe(409);
      // The grant is audited by the kernel as a mutation.
      const records = [...agent.agent.services.audit.chain.records()];
      expect(JSON.stringify(records)).toContain('/v1/decisions/escalate');
    } finally {
      await agent.close();
    }
  });

  it('SVC_DECISION_ESCALATION_STORE and SVC_SIM_TIME_MS place the store and stamp the grant', async () => {
    const root = project();
    const store = path.join(tempDir('svc-esc-'), 'esc.json');
    const agent = await agentFor(root, { env: { SVC_DECISION_ESCALATION_STORE: store, SVC_SIM_TIME_MS: '4242' } });
    try {
      const r = await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-1', approver: 'ops' }, OPERATOR));
      expect(r.body.grant.approved_at_ms).toBe(4242);
      expect(JSON.parse(fs.readFileSync(store, 'utf8')).granted['esc-Rover-1'].approver).toBe('ops');
    } finally {
      await agent.close();
    }
  });

  it('SVC_DECISION_REQUIRE_SIGNED_TREES: only trees whose cache signature verifies with the trust key are evaluated', async () => {
    const root = project();
    const stateDir = tempDir('svc-dec-signed-');
    const { canonicalTreeText } = await import('../../agent/programs/runtime/decision-trees.js');
    const { parseProgram } = await import('../../agent/programs/language/index.js');
    const { createHmac } = await import('node:crypto');
    const program = parseProgram(PROGRAM, 'rover.sd');
    const sign = (i: number, key: string) => createHmac('sha256', key).update(canonicalTreeText(program.decisionTrees[i]!)).digest('hex');
    fs.writeFileSync(
      path.join(stateDir, 'decision-policy-cache.json'),
      JSON.stringify({ version: 1, updated_at_ms: 1, policies: {}, decision_trees: { PartitionLocal: { signature: sign(1, 'trust-key') }, ObstacleReflex: { signature: sign(0, 'wrong-key') } } }),
    );
    const agent = await agentFor(root, { stateDir, env: { SVC_DECISION_REQUIRE_SIGNED_TREES: 'yes', SVC_DECISION_POLICY_TRUST_KEY: 'trust-key' } });
    try {
      const trees = (await agent.json('/v1/decisions')).body.decision_trees;
      expect(trees.map((t: any) => t.signature !== null)).toEqual([true, true, false]);
      const r = await agent.json('/v1/decisions/simulate', post({ network_partition: true, signals: { 'lidar.nearest_distance < 0.5m': true, 'maintenance.window': true } }));
      const messages: string[] = r.body.simulation.report.messages;
      expect(messages).toContain("tree 'ObstacleReflex' skipped: signature cannot be verified");
      expect(messages).toContain("tree 'FirmwareFleet' skipped: signature cannot be verified");
      expect(messages.filter((m) => m.includes('matched'))).toEqual(["tree 'PartitionLocal' matched condition 'network . partitioned' → [hold_position]"]);
    } finally {
      await agent.close();
    }
  });

  it('acceptance 13: without a program the program routes answer 400', async () => {
    const root = project();
    const agent = await agentFor(root, { program: false });
    try {
      const r = await agent.json('/v1/decisions');
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('bad_request');
      expect(r.body.error).toMatch(/^no program file specified/);
      expect((await agent.json('/v1/decisions/escalate', post({ escalation_id: 'esc-Rover-1', approver: 'ops' }, OPERATOR))).status).toBe(404);
    } finally {
      await agent.close();
    }
  });
});

describe('fleet decision mesh', () => {
  it('votes and nonces are single-use and persisted; conflicts resolve by layer precedence', async () => {
    const root = project();
    const stateDir = tempDir('svc-mesh-state-');
    let agent = await agentFor(root, { stateDir });
    const vote = (v: Record<string, unknown>, token = OPERATOR) => agent.json('/v1/fleet/decisions/vote/ingest', post(v, token));
    try {
      const unconfigured = await agent.json('/v1/decisions/mesh');
      expect(unconfigured.body).toMatchObject({ api_version: 'v1', configured: false, mesh_url: null, local: { used_nonces: 0, rounds: 0 } });

      expect((await vote({ round_id: 'r1', entity_id: 'Rover', action: 'reroute', layer: 'group_fleet', nonce: 'nonce-0001' }, '')).status).toBe(401);
      expect((await vote({ round_id: 'r1', entity_id: 'Rover', action: 'reroute', layer: 'group_fleet', nonce: 'nonce-0001' }, AUDITOR)).status).toBe(403);
      expect((await vote({ round_id: 'r1', entity_id: 'Rover', action: 'reroute', layer: 'warp', nonce: 'nonce-0001' })).status).toBe(400);

      const v1 = await vote({ round_id: 'r1', entity_id: 'Rover', action: 'reroute', layer: 'group_fleet', nonce: 'nonce-0001', fleet_name: 'yard', timestamp_ms: 10 });
      expect(v1.status).toBe(200);
      expect(v1.body.round).toEqual({ round_id: 'r1', vote_count: 1 });
      const v2 = await vote({ round_id: 'r1', entity_id: 'Scout', action: 'stop_drive', layer: 'reflex', nonce: 'nonce-0002', timestamp_ms: 20 });
      expect(v2.status).toBe(200);

      // Replay: the same nonce again is refused, even in another round or from another robot.
      const replay = await vote({ round_id: 'r2', entity_id: 'Otter', action: 'reroute', layer: 'local_entity', nonce: 'nonce-0001' });
      expect(replay.status).toBe(409);
      expect(replay.body).toMatchObject({ code: 'conflict', error: 'nonce already used: nonce-0001' });
      // A robot votes once per round.
      expect((await vote({ round_id: 'r1', entity_id: 'Rover', action: 'halt', layer: 'reflex', nonce: 'nonce-0003' })).status).toBe(409);

      const reg = await agent.json('/v1/fleet/decisions/nonce/register', post({ nonce: 'nonce-0004', entity_id: 'Rover' }, OPERATOR));
      expect(reg.status).toBe(200);
      expect((await agent.json('/v1/fleet/decisions/nonce/register', post({ nonce: 'nonce-0004' }, OPERATOR))).status).toBe(409);
      expect((await vote({ round_id: 'r3', entity_id: 'Rover', action: 'x', layer: 'reflex', nonce: 'nonce-0004' })).status).toBe(409);

      const c = await agent.json('/v1/fleet/decisions/conflicts?round=r1');
      expect(c.status).toBe(200);
      expect(c.body.conflict).toMatchObject({
        ok: true,
        round_id: 'r1',
        fleet_name: 'yard',
        vote_count: 2,
        resolution: { winner: { layer_precedence: 'reflex', entity_id: 'Scout', action: 'stop_drive' }, precedence_applied: true },
      });
      expect(c.body.conflict.resolution.rejected).toEqual([{ layer_precedence: 'group_fleet', entity_id: 'Rover', action: 'reroute', reason: 'lower precedence than reflex' }]);
      const viaMesh = await agent.json('/v1/decisions/mesh/conflicts?round=r1');
      expect(viaMesh.body).toMatchObject({ configured: false, source: 'local', conflict: { round_id: 'r1' } });
      expect((await agent.json('/v1/decisions/mesh/conflicts')).body.error).toBe('round query parameter required');
      expect((await agent.json('/v1/fleet/decisions/conflicts?round=nope')).status).toBe(404);
    } finally {
      await agent.close();
    }
    // Restart: the used nonces survive, so a replay after a restart is still refused.
    agent = await agentFor(root, { stateDir });
    try {
      const status = await agent.json('/v1/fleet/decisions/nonce/status');
      expect(status.body).toMatchObject({ used_nonces: 3, rounds: 1, last_nonce: { nonce: 'nonce-0004' } });
      expect((await vote({ round_id: 'r9', entity_id: 'Rover', action: 'reroute', layer: 'group_fleet', nonce: 'nonce-0002' })).status).toBe(409);
      expect((await agent.json('/v1/fleet/decisions/conflicts?round=r1')).body.conflict.vote_count).toBe(2);
    } finally {
      await agent.close();
    }
  });

  it('with SVC_FLEET_MESH_URL the mesh routes proxy to the fleet mesh, with the bearer token; failures are 502', async () => {
    const seen: { url: string; auth: string | undefined }[] = [];
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url!, auth: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/fleet/decisions/nonce/status') return res.end(JSON.stringify({ used_nonces: 7 }));
      if (req.url === '/v1/status') return res.end('fleet ok');
      if (req.url === '/v1/fleet/decisions/conflicts?round=r%2F1') {
        return res.end(JSON.stringify({ api_version: 'v1', conflict: { ok: true, round_id: 'r/1', fleet_name: 'yard', resolution: { winner: { layer_precedence: 'reflex', entity_id: 'A', action: 'halt', reason: 'r' }, rejected: [], precedence_applied: false } } }));
      }
      if (req.url === '/v1/fleet/decisions/conflicts?round=bad') return res.end('not json');
      res.statusCode = 500;
      res.end('boom');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const root = project();
    const agent = await agentFor(root, { env: { SVC_FLEET_MESH_URL: `${url}/`, SVC_FLEET_MESH_TOKEN: 'mesh-secret' } });
    const dead = await agentFor(root, { env: { SVC_FLEET_MESH_URL: 'http://127.0.0.1:1' } });
    try {
      const r = await agent.json('/v1/decisions/mesh');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ api_version: 'v1', configured: true, mesh: { ok: true, mesh_url: url, nonce: { used_nonces: 7 }, mesh_status: { raw: 'fleet ok' } } });
      expect(seen.every((s) => s.auth === 'Bearer mesh-secret')).toBe(true);
      const c = await agent.json('/v1/decisions/mesh/conflicts?round=r%2F1');
      expect(c.status).toBe(200);
      expect(c.body.conflict.resolution.winner.entity_id).toBe('A');
      const bad = await agent.json('/v1/decisions/mesh/conflicts?round=bad');
      expect(bad.status).toBe(502);
      expect(bad.body.error).toMatch(/^invalid fleet decision conflict JSON/);
      const http500 = await agent.json('/v1/decisions/mesh/conflicts?round=other');
      expect(http500.status).toBe(502);
      expect(http500.body).toMatchObject({ code: 'upstream_error', error: 'fleet decision conflict HTTP 500: boom' });
      const down = await dead.json('/v1/decisions/mesh');
      expect(down.status).toBe(502);
      expect(down.body).toMatchObject({ ok: false, api_version: 'v1', configured: true, mesh_url: 'http://127.0.0.1:1', code: 'upstream_error' });
    } finally {
      await agent.close();
      await dead.close();
      server.close();
    }
  });

  it('one agent proxies to another agent serving the fleet mesh routes', async () => {
    const root = project();
    const fleet = await agentFor(root);
    const edge = await agentFor(root, { env: { SVC_FLEET_MESH_URL: fleet.baseUrl } });
    try {
      await fleet.json('/v1/fleet/decisions/vote/ingest', post({ round_id: 'r1', entity_id: 'Rover', action: 'reroute', layer: 'local_entity', nonce: 'nonce-abcd' }, OPERATOR));
      const status = await edge.json('/v1/decisions/mesh');
      expect(status.body.mesh.nonce).toMatchObject({ used_nonces: 1, last_nonce: { nonce: 'nonce-abcd', via: 'vote' } });
      const c = await edge.json('/v1/decisions/mesh/conflicts?round=r1');
      expect(c.body.conflict.resolution.winner).toMatchObject({ entity_id: 'Rover', action: 'reroute' });
    } finally {
      await edge.close();
      await fleet.close();
    }
  });
});

describe('decision routes in the API description', () => {
  it('acceptance 27: OpenAPI lists escalations and the decision mesh routes, with their access', async () => {
    const agent = await agentFor(project());
    try {
      const doc = (await agent.json('/v1/openapi.json')).body;
      for (const p of ['/v1/decisions', '/v1/decision-policies', '/v1/decisions/traces', '/v1/decision-policy-cache', '/v1/decisions/escalations', '/v1/decisions/mesh', '/v1/decisions/mesh/conflicts']) {
        expect(doc.paths[p]?.get, p).toBeDefined();
      }
      expect(doc.paths['/v1/decisions/simulate'].post['x-svc-access']).toBe('sensitive-read');
      expect(doc.paths['/v1/decisions/escalate'].post['x-svc-access']).toBe('action:Operate');
      expect(doc.paths['/v1/decision-policies'].get['x-svc-access']).toBe('read');
      expect(doc.paths['/v1/fleet/decisions/vote/ingest'].post['x-svc-access']).toBe('action:Operate');
    } finally {
      await agent.close();
    }
  });

  it('with SVC_API_REQUIRE_AUTH_READS the sensitive decision reads need a principal, the policy list does not', async () => {
    const agent = await agentFor(project(), { env: { SVC_API_REQUIRE_AUTH_READS: '1' } });
    try {
      expect((await agent.json('/v1/decisions')).status).toBe(401);
      expect((await agent.json('/v1/decisions/simulate', post({})) ).status).toBe(401);
      expect((await agent.json('/v1/decision-policies')).status).toBe(200);
      expect((await agent.json('/v1/decisions', auth(AUDITOR))).status).toBe(200);
    } finally {
      await agent.close();
    }
  });
});

describe('grpc refusals', () => {
  it('a missing program file is NOT_FOUND over gRPC', async () => {
    const root = project();
    const agent = await agentFor(root, { grpc: true });
    const g = connectGrpc(agent.agent.grpcAddress!);
    try {
      await expect(g.client['ListDecisions']!({ query: 'file=programs/none.sd' }, { metadata: bearer(AUDITOR) })).rejects.toMatchObject({ code: Status.NOT_FOUND });
    } finally {
      g.close();
      await agent.close();
    }
  });
});
