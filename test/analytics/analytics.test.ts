import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { tempDir } from '../helpers/agent-harness.js';
import { callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { demoProject, exampleProject, programProject, startAnalyticsAgent, writeTrace } from './fixture.js';

const NO_PROGRAM = 'no program loaded; use control-center serve --program <file.sd>';
const ROUTES = [
  'readiness',
  'readiness-forecast',
  'what-if',
  'mission-risk',
  'trust-graph',
  'mission-twin',
  'certification-pack',
  'human-teaming',
  'governance',
];

describe('analytics without a loaded program', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    const p = demoProject();
    a = await startAnalyticsAgent({ config: p.config });
  });
  afterAll(() => a.close());

  it('every route answers 400 with the no-program message (acceptance 8)', async () => {
    for (const r of ROUTES) {
      const res = await a.json(`/v1/analytics/${r}`);
      expect(res.status, r).toBe(400);
      expect(res.body, r).toMatchObject({ error: NO_PROGRAM, code: 'bad_request' });
    }
    // Time travel needs the program only to find the trace beside it.
    const tt = await a.json('/v1/analytics/time-travel?at=1000');
    expect(tt.status).toBe(400);
    expect(tt.body.error).toBe(NO_PROGRAM);
  });

  it('time travel reads a trace inside the project without a program', async () => {
    const root = path.dirname(a.agent.services.project.configPath!);
    writeTrace(path.join(root, 'traces', 'run.trace'));
    const res = await a.json('/v1/analytics/time-travel?at=1500&trace=traces/run.trace&inspect=readiness');
    expect(res.status).toBe(200);
    expect(res.body.trace).toBe('traces/run.trace');
    expect(res.body.time_travel.state.frame_count).toBe(4);
    expect(res.body.time_travel.state.readiness_events).toEqual(['t=1500.0ms readiness {"mission_ready":true}']);
  });
});

describe('analytics of the demo program', () => {
  let a: RunningAgent;
  let p: ReturnType<typeof demoProject>;
  let g: GrpcTestClient;
  beforeAll(async () => {
    p = demoProject();
    a = await startAnalyticsAgent({ config: p.config, program: p.program, grpc: true });
    g = connectGrpc(a.agent.grpcAddress!);
  });
  afterAll(async () => {
    g.close();
    await a.close();
  });

  it('readiness-forecast: all=1 gives 7, 14 and 30 days; without history a heuristic-degradation warning (acceptance 9)', async () => {
    const res = await a.json('/v1/analytics/readiness-forecast?all=1');
    expect(res.status).toBe(200);
    const f = res.body.readiness_forecast;
    expect(res.body.program).toBe('patrol.sd');
    expect(f.predictions.map((x: any) => x.horizon_days)).toEqual([7, 14, 30]);
    expect(f.history_samples).toBe(0);
    expect(f.warnings.some((w: string) => w.startsWith('no readiness history; forecast uses heuristic degradation only'))).toBe(true);
    // Heuristic: mission-ready demo, decay capped at 0.5/day → current + degradation × days.
    for (const x of f.predictions) {
      expect(x.current_score).toBe(f.current_score);
      expect(x.predicted_score).toBe(Math.max(0, Math.min(100, Math.round(f.current_score + f.degradation_per_day * x.horizon_days))));
      expect(x.risk_warning).toBe(x.predicted_score < 80);
    }
    expect(f.degradation_per_day).toBeLessThan(0);
    expect(f.degradation_per_day).toBeGreaterThanOrEqual(-0.5);
    // Agrees with program readiness (same target policy).
    const ready = await a.json('/v1/programs/readiness', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    if (ready.status === 200) expect(f.current_score).toBe(ready.body.report.score.total);

    const one = (await a.json('/v1/analytics/readiness-forecast?horizon=14d')).body.readiness_forecast;
    expect(one.predictions.map((x: any) => x.horizon_days)).toEqual([14]);
    expect((await a.json('/v1/analytics/readiness-forecast')).body.readiness_forecast.predictions[0].horizon_days).toBe(7);
  });

  it('bad query values are 400 naming the parameter', async () => {
    for (const [q, word] of [
      ['readiness-forecast?horizon=soon', 'horizon'],
      ['readiness-forecast?horizon=0', 'horizon'],
      ['readiness-forecast?all=maybe', 'all'],
      ['readiness?forecast_days=-3', 'forecast_days'],
      ['readiness?forecast_days=99999', 'forecast_days'],
      ['certification-pack?strict=yesplease', 'strict'],
      ['what-if?all=2', 'all'],
    ] as const) {
      const res = await a.json(`/v1/analytics/${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.error, q).toContain(word);
    }
  });

  it('trust-graph: json by default, mermaid, dot and text renderings (acceptance 10); device trust from the pool', async () => {
    const json = (await a.json('/v1/analytics/trust-graph')).body;
    const graph = json.trust_graph;
    expect(graph.source).toBe('patrol.sd');
    const ids = graph.nodes.map((n: any) => n.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(['robot:sentinel', 'mission:patrol', 'hardware:roverv2']));
    const edge = (from: string, to: string, relation: string) => graph.dependencies.some((e: any) => e.from === from && e.to === to && e.relation === relation);
    expect(edge('robot:sentinel', 'mission:patrol', 'runs')).toBe(true);
    expect(edge('robot:sentinel', 'hardware:roverv2', 'deploy_to')).toBe(true);
    expect(graph.dependencies.some((e: any) => e.from === 'mission:patrol' && e.relation === 'requires')).toBe(true);
    expect(graph.dependencies.some((e: any) => e.relation === 'requires_component' && e.from.startsWith('capability:') && e.to.startsWith('hardware:'))).toBe(true);
    expect(graph.dependencies.some((e: any) => e.relation === 'has_sensor')).toBe(true);
    expect(graph.dependencies.every((e: any) => e.from !== e.to)).toBe(true);
    expect(new Set(graph.dependencies.map((e: any) => `${e.from} ${e.to} ${e.relation}`)).size).toBe(graph.dependencies.length);
    // Ours: a configured device's node carries that device's trust level (sentinel-gps is trusted in svc.devices.toml).
    const devices = a.agent.services.devices.list();
    const trusted = devices.find((d) => d.trust_level === 'trusted');
    if (trusted) expect(graph.nodes.find((n: any) => n.id === `hardware:${trusted.id.toLowerCase()}`)?.trust_score).toBe(100);
    for (const e of graph.dependencies) expect(e.trust_score).toBe(graph.nodes.find((n: any) => n.id === e.to).trust_score);
    for (const path of graph.paths) {
      expect(path.nodes[0]).toBe(path.start);
      expect(path.nodes.at(-1)).toBe(path.end);
    }
    expect((await a.json('/v1/analytics/trust-graph?format=bogus')).body).toEqual(json);

    const mermaid = (await a.json('/v1/analytics/trust-graph?format=mermaid')).body;
    expect(Object.keys(mermaid).sort()).toEqual(['body', 'format', 'program', 'version']);
    expect(mermaid.format).toBe('mermaid');
    expect(mermaid.body.startsWith('flowchart TD')).toBe(true);
    expect(mermaid.body).toContain('robot_sentinel -->|runs');
    const dot = (await a.json('/v1/analytics/trust-graph?format=graphviz')).body;
    expect(dot.format).toBe('dot');
    expect(dot.body).toMatch(/^digraph trust \{\n {2}rankdir=TB;/);
    const text = (await a.json('/v1/analytics/trust-graph?format=txt')).body;
    expect(text.format).toBe('text');
    expect(text.body.split('\n')[0]).toBe(`trust graph patrol.sd: composite trust ${graph.composite_score}/100 (${graph.composite_tier})`);
  });

  it('what-if: program-inferred scenarios, a single scenario, an unknown one, and scenario-specific readiness', async () => {
    const all = (await a.json('/v1/analytics/what-if?all=1')).body.what_if;
    expect(all.scenarios.map((s: any) => s.scenario)).toContain('gps_failure');
    expect(all.summary.total).toBe(all.scenarios.length);
    expect(all.summary.high_risk).toBe(all.scenarios.filter((s: any) => s.risk === 'high' || s.risk === 'critical').length);
    const gps = (await a.json('/v1/analytics/what-if?scenario=gps_failure')).body.what_if.scenarios;
    expect(gps).toHaveLength(1);
    expect(gps[0]).toMatchObject({ scenario: 'gps_failure', impact: 'navigation_degraded', prior_source: 'constant' });
    expect(gps[0].details[0]).toMatch(/^recovery: (pass|fail) \(plans=\d+, success_rate=\d+%\)$/);
    // Ours: readiness is evaluated with the GPS removed, so it differs from the provider scenario (nothing removed).
    const provider = (await a.json('/v1/analytics/what-if?scenario=provider')).body.what_if.scenarios[0];
    expect(provider.impact).toBe('provider_dispatch_degraded');
    expect(gps[0].details[1]).not.toBe(provider.details[1]);
    const unknown = (await a.json('/v1/analytics/what-if?scenario=meteor_strike')).body.what_if.scenarios[0];
    expect(unknown).toMatchObject({ impact: 'unknown', risk: 'high', recovery_plan: 'none', probability: 0.5, details: ['unknown scenario: meteor_strike'] });
  });

  it('mission-risk: six weighted factors, total = weighted mean, tier from the total', async () => {
    const risk = (await a.json('/v1/analytics/mission-risk')).body.mission_risk;
    const weighted = risk.factors.filter((f: any) => f.weight > 0);
    expect(weighted.map((f: any) => [f.name, f.weight])).toEqual([
      ['readiness', 25], ['safety_coverage', 20], ['recovery_coverage', 20], ['trust', 15], ['mission_contract', 10], ['what_if_scenarios', 10],
    ]);
    const total = Math.floor(weighted.reduce((s: number, f: any) => s + f.score * f.weight, 0) / 100);
    expect(risk.score.total).toBe(total);
    expect(risk.score.tier).toBe(total <= 25 ? 'low' : total <= 50 ? 'medium' : total <= 75 ? 'high' : 'critical');
    expect(risk.mitigations).toEqual([...risk.mitigations].sort());
    const trust = (await a.json('/v1/analytics/trust-graph')).body.trust_graph.composite_score;
    expect(risk.factors.find((f: any) => f.name === 'trust').score).toBe(100 - trust);
  });

  it('mission-twin: robots, missions (robot names) and mission_names, forecast at 7 and 14 days', async () => {
    const twin = (await a.json('/v1/analytics/mission-twin')).body.mission_twin;
    expect(twin.state).toMatchObject({ mission_count: 1, robots: ['Sentinel'], missions: ['Sentinel'], mission_names: ['Patrol'] });
    expect(twin.risks.readiness_score).toBe(twin.readiness.score.total);
    expect(twin.risks.open_issues).toBe(twin.readiness.issues.length);
    expect(twin.readiness.target).toBe('RoverV2');
    expect(twin.forecast.predictions.map((x: any) => x.horizon_days)).toEqual([7, 14]);
  });

  it('certification-pack: hash of the loaded file, strict proof, five evidence rows', async () => {
    const pack = (await a.json('/v1/analytics/certification-pack?strict=1')).body.certification_pack;
    expect(pack.proof.program_hash).toBe(crypto.createHash('sha256').update(fs.readFileSync(p.program)).digest('hex'));
    expect(pack.proof.strict).toBe(true);
    expect(pack.proof.certifications).toEqual([{ standard: 'ISO3691_4', level: 'PLd' }]);
    expect(pack.proof.deploy_targets).toEqual([{ robot_name: 'Sentinel', hardware: 'RoverV2' }]);
    expect(pack.proof.checklist.some((c: any) => c.message === 'No program-level safety_zone declared' && c.severity === 'warning')).toBe(true);
    expect(pack.evidence.map((e: any) => e.kind)).toEqual(['verification', 'readiness', 'safety', 'recovery', 'trust']);
    expect(pack.passed).toBe(pack.proof.passed && pack.evidence.every((e: any) => e.passed));
    const lax = (await a.json('/v1/analytics/certification-pack')).body.certification_pack;
    expect(lax.proof.strict).toBe(false);
    expect(lax.proof.checklist.some((c: any) => c.message === 'No program-level safety_zone declared')).toBe(false);
  });

  it('human-teaming: an approval actor that is neither a robot nor Operator, without an Approval topic, fails', async () => {
    const t = (await a.json('/v1/analytics/human-teaming')).body.human_teaming;
    expect(t.approvals.rows).toEqual([
      { robot: 'Sentinel', actor: 'shift_lead', action: 'reenter_dock_apron', approval_path_exists: false, actor_exists: false, fallback_exists: true, status: 'FAIL' },
      { robot: 'Sentinel', actor: 'shift_lead', action: 'extend_round', approval_path_exists: false, actor_exists: false, fallback_exists: true, status: 'FAIL' },
    ]);
    expect(t.passed).toBe(false);
    expect(t.escalations[0]).toEqual({ policy: 'SentinelRecovery', trigger: 'gps.lost', actions: ['switch_to lidar_localization', 'reduce_speed 0.4m/s', 'enter degraded'] });
    expect(t.fallback_actions).toContain('recovery:lidar.timeout -> enter safe_mode');
  });

  it('governance on a program without policy blocks is 400 (acceptance 13)', async () => {
    const res = await a.json('/v1/analytics/governance');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('no operational policy blocks declared in loaded program');
  });

  it('time travel: a trace beside the program, T+00:01 encoded (acceptance 11), missing at (12), bad at, facets', async () => {
    // Without a trace beside the program.
    const none = await a.json('/v1/analytics/time-travel?at=1000');
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('missing trace query parameter; pass trace=<path> or record a .trace beside the program');

    writeTrace(p.program.replace(/\.sd$/, '.trace'));
    const res = await a.json('/v1/analytics/time-travel?at=T%2B00%3A01&inspect=decisions');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ trace: 'programs/patrol.trace', at: 'T+00:01' });
    const tt = res.body.time_travel;
    expect(tt).toMatchObject({ source: 'patrol.sd', at_ms: 1000, total_frames: 5, inspected_frames: 3 });
    expect(tt.state.frame_count).toBe(3);
    expect(tt.state.latest_event).toBe('health_check');
    expect(tt.state.state.pose.x).toBe(2);
    expect(tt.state.decisions).toEqual([
      { sim_time_ms: 500, event: 'decision', payload: { version: 1, choice: 'sweep_aisles' } },
      { sim_time_ms: 1000, event: 'health_check', decision: 'slow_down' },
    ]);
    expect(tt.state.health_events).toEqual([]);

    const all = (await a.json('/v1/analytics/time-travel?at=00:03&inspect=all')).body.time_travel.state;
    expect(all.frame_count).toBe(5);
    expect(all.safety_events).toEqual(['t=2500.0ms safety_stop {"reason":"kill_switch","recorded_at":"2026-01-01T00:00:03Z"}']);
    expect(all.health_events).toHaveLength(1);
    // An RFC 3339 time maps to the first frame recorded at or after it.
    expect((await a.json('/v1/analytics/time-travel?at=2026-01-01T00:00:00.500Z')).body.time_travel.at_ms).toBe(1000);
    // Unknown facet names are dropped; none left → every facet.
    expect((await a.json('/v1/analytics/time-travel?at=3000&inspect=bogus')).body.time_travel.state.safety_events).toHaveLength(1);

    const missing = await a.json('/v1/analytics/time-travel?inspect=decisions');
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('missing at query parameter');
    const bad = await a.json('/v1/analytics/time-travel?at=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("Invalid --at value 'yesterday'; expected T+mm:ss, HH:MM:SS, milliseconds, or ISO-8601");
  });

  it('time travel refuses trace paths outside the project, in the state directory, or not .trace, with one message', async () => {
    const outside = tempDir('svc-analytics-outside-');
    writeTrace(path.join(outside, 'secret.trace'));
    writeTrace(path.join(a.stateDir, 'kept.trace'));
    fs.writeFileSync(path.join(p.root, 'notes.json'), '{}');
    for (const raw of ['../../../../etc/passwd', path.join(outside, 'secret.trace'), `../${path.basename(outside)}/secret.trace`, path.join(a.stateDir, 'kept.trace'), 'notes.json', 'nope.trace']) {
      const res = await a.json(`/v1/analytics/time-travel?at=1000&trace=${encodeURIComponent(raw)}`);
      expect(res.status, raw).toBe(400);
      expect(res.body.error, raw).toBe(`trace file not found: ${raw}`);
    }
    // Relative to the program's directory works too; a corrupt trace is a 400 with the loader's error.
    expect((await a.json('/v1/analytics/time-travel?at=1000&trace=patrol.trace')).status).toBe(200);
    fs.writeFileSync(path.join(p.root, 'broken.trace'), '{"frames": 3}');
    const broken = await a.json('/v1/analytics/time-travel?at=1000&trace=broken.trace');
    expect(broken.status).toBe(400);
    expect(broken.body.error).toContain('frames must be an array');
  });

  it('gRPC: Query and Empty requests answer what REST answers', async () => {
    const graph = await callUnary(g.client, 'GetAnalyticsTrustGraph', { query: 'format=mermaid' });
    expect(graph.ok).toBe(true);
    expect(graph.json).toEqual((await a.json('/v1/analytics/trust-graph?format=mermaid')).body);
    const twin = await callUnary(g.client, 'GetAnalyticsMissionTwin', {});
    expect(twin.json).toEqual((await a.json('/v1/analytics/mission-twin')).body);
    const tt = await callUnary(g.client, 'GetAnalyticsTimeTravel', { query: 'inspect=decisions' });
    expect(tt.ok).toBe(false);
    expect(JSON.stringify(tt)).toContain('missing at query parameter');
  });
});

const POLICY_PROGRAM = `
kill_switch Stop { remote_signed; action { emergency_stop; } }
robot Cart {
    sensor lidar: Lidar;
    actuator drive: DifferentialDrive;
    exposes capabilities [obstacle_avoidance];
    safety { max_speed = 5 km/h; stop_if lidar.read().nearest_distance < 0.3 m; }
    mission Deliver { requires approval Operator for: open_door; go; }
    mode normal { }
}
policy Ward {
    max_speed = 1.0 m/s;
    requires_kill_switch;
    requires_capability [obstacle_avoidance, elevator_call];
    operation_hours = "0600";
}
policy Yard {
    max_speed = 2 m/s;
    min_readiness_score = 10;
}
`;

describe('analytics of written programs and the examples', () => {
  it('governance: policy rules in declaration order, the default policy, unknown names and malformed rules', async () => {
    const p = programProject(POLICY_PROGRAM);
    const a = await startAnalyticsAgent({ program: p.program });
    try {
      const res = await a.json('/v1/analytics/governance');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.policy).toBe('Ward');
      expect(res.body.governance).toEqual({
        policy: 'Ward',
        program: 'ops.sd',
        passed: false,
        violations: [
          { policy: 'Ward', rule: 'max_speed', severity: 'error', message: "Robot 'Cart' max_speed 1.389 m/s exceeds the cap 1 m/s" },
          { policy: 'Ward', rule: 'requires_capability', severity: 'error', message: "Robot 'Cart' does not expose capability 'elevator_call'" },
          { policy: 'Ward', rule: 'operation_hours', severity: 'warning', message: "Operation hours '0600' are not in HH:MM-HH:MM form" },
        ],
      });
      const yard = (await a.json('/v1/analytics/governance?policy=Yard')).body.governance;
      expect(yard).toMatchObject({ policy: 'Yard', passed: true, violations: [] });
      const nope = await a.json('/v1/analytics/governance?policy=Nope');
      expect(nope.status).toBe(400);
      expect(nope.body.error).toBe("Policy 'Nope' not found in program");
      // Operator approvals pass with a fallback mode.
      const teaming = (await a.json('/v1/analytics/human-teaming')).body.human_teaming;
      expect(teaming.approvals.rows).toEqual([{ robot: 'Cart', actor: 'Operator', action: 'open_door', approval_path_exists: true, actor_exists: true, fallback_exists: true, status: 'PASS' }]);
      expect(teaming.passed).toBe(true);

      fs.writeFileSync(p.program, `${POLICY_PROGRAM}\npolicy Bad { max_speed = fast; }\n`);
      const bad = await a.json('/v1/analytics/governance?policy=Bad');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('allowed rules: max_speed, requires_kill_switch, requires_capability, min_readiness_score, operation_hours');
      // A program that no longer parses is a 400 on every route.
      fs.writeFileSync(p.program, 'robot {{{');
      const broken = await a.json('/v1/analytics/mission-risk');
      expect(broken.status).toBe(400);
      expect(broken.body.error).toMatch(/^(tokenize|parse) failed: /);
    } finally {
      await a.close();
    }
  });

  it.each([
    'examples/ward-courier/programs/med_courier.sd',
    'examples/orchard-rovers/programs/harvest_convoy.sd',
    'examples/standalone/tug_fleet.sd',
    'demo/programs/dock.sd',
  ])('every route answers 200 on %s', async (example) => {
    const p = exampleProject(example);
    const a = await startAnalyticsAgent({ program: p.program });
    try {
      for (const r of ROUTES.filter((x) => x !== 'governance')) {
        const res = await a.json(`/v1/analytics/${r}`);
        expect(res.status, `${example} ${r}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(200);
        expect(res.body.program).toBe(path.basename(example));
      }
      const gov = await a.json('/v1/analytics/governance');
      expect([200, 400]).toContain(gov.status);
    } finally {
      await a.close();
    }
  }, 60_000);
});
