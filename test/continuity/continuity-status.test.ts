import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { writeProject } from '../helpers/project-fixture.js';
import { bearer as grpcBearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';

/**
 * `GET /v1/continuity/status` (docs/operator.md § Fleet continuity): which robot takes over whose
 * mission, from the program's continuity declarations, each robot's fleet agent (`GET /v1/status`
 * through the outbound client) and the missions' state in the entity registry. The fleet agents here
 * are a second real agent (Runner, healthy), a local HTTP server reporting `healthy: false`
 * (Sweeper) and a closed port (Courier).
 */
const PROGRAM = `
robot Courier {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    exposes capabilities [indoor_navigation, lift_riding];
    mission ToteRun {
        requires capabilities [indoor_navigation, lift_riding];
    }
    mission Restock {
        requires capabilities [indoor_navigation];
    }
}
robot Runner {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    exposes capabilities [indoor_navigation, lift_riding];
}
robot Sweeper {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    exposes capabilities [indoor_navigation];
    mission Sweep {
        requires capabilities [indoor_navigation];
    }
}
continuity_policy CourierContinuity {
    on robot.unreachable { resume_from_checkpoint; notify_dispatch; }
}
`;

const ADMIN = 'c3'.repeat(32);
const bearer = (t: string) => ({ Authorization: `Bearer ${t}`, 'content-type': 'application/json' });

let running: RunningAgent[] = [];
let servers: http.Server[] = [];
let clients: GrpcTestClient[] = [];
afterEach(async () => {
  clients.forEach((c) => c.close());
  clients = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  servers = [];
});

async function listen(handler: http.RequestListener): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<string> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}

async function fleet(opts: { env?: Record<string, string> } = {}) {
  const root = tempDir('svc-continuity-status-');
  const file = path.join(root, 'couriers.sd');
  fs.writeFileSync(file, PROGRAM);
  // Runner's fleet agent is a real agent (its GET /v1/status reports healthy: true: no offline device).
  const runner = await startAgent({});
  running.push(runner);
  const sweeper = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, healthy: false }));
  });
  const courierUrl = await closedPort();
  const stateDir = tempDir();
  fs.writeFileSync(
    path.join(stateDir, 'fleet-agents.json'),
    JSON.stringify({
      agents: [
        { robot_name: 'Courier', url: courierUrl },
        { robot_name: 'Runner', url: `${runner.baseUrl}/` },
        { robot_name: 'Sweeper', url: sweeper.url, token: 'sweeper-token' },
      ],
    }),
  );
  const a = await startAgent({ cwd: root, programPath: file, stateDir, grpcBind: '127.0.0.1:0', env: { SVC_API_KEY: ADMIN, ...(opts.env ?? {}) } });
  running.push(a);
  return { a, sweeper };
}

describe('fleet continuity status', () => {
  it('names the robot that takes over each down robot’s missions, from the continuity rule and live state', async () => {
    const { a, sweeper } = await fleet();
    // Restock is cancelled by an operator: it needs no hand-over, and counts as progress.
    const cancel = await a.json('/v1/operator/mission/cancel', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ mission_id: 'mission:Courier:Restock' }) });
    expect(cancel.status).toBe(200);

    const r = await a.json('/v1/continuity/status');
    expect(r.status).toBe(200);
    const body = r.body;
    expect(body).toMatchObject({ version: 'v1', program: 'couriers.sd', status: 'degraded', continuity_policies: ['CourierContinuity'] });
    expect(body.summary).toEqual({ robots: 3, up: 1, down: 2, unknown: 0, handoffs: 2, taken_over: 1, uncovered: 1 });

    const robots = Object.fromEntries(body.robots.map((x: { robot: string }) => [x.robot, x]));
    expect(robots.Courier).toMatchObject({ state: 'down', source: 'fleet_agent' });
    expect(robots.Courier.reason).toMatch(/unreachable/);
    expect(robots.Courier.missions).toEqual([
      { entity_id: 'mission:Courier:ToteRun', name: 'ToteRun', mission_state: 'Pending' },
      { entity_id: 'mission:Courier:Restock', name: 'Restock', mission_state: 'cancelled' },
    ]);
    expect(robots.Runner).toMatchObject({ state: 'up', source: 'fleet_agent', missions: [] });
    expect(robots.Sweeper).toMatchObject({ state: 'down', source: 'fleet_agent', reason: 'its fleet agent reports healthy: false' });
    // The stored token is sent to the agent, and never shown.
    expect(sweeper.hits).toContain('GET /v1/status Bearer sweeper-token');
    expect(JSON.stringify(body)).not.toContain('sweeper-token');

    const [courier, sweep] = body.handoffs;
    expect(courier).toMatchObject({
      failed_robot: 'Courier',
      trigger: 'robot.unreachable',
      progress_pct: 50,
      missions: [{ entity_id: 'mission:Courier:ToteRun', name: 'ToteRun', mission_state: 'Pending' }],
      verdict: 'handoff',
      status: 'taken_over',
      covered: true,
      policies: [{ policy: 'CourierContinuity', trigger: 'robot.unreachable', actions: ['resume_from_checkpoint', 'notify_dispatch'] }],
      takeover_robot: 'Runner',
      takeover_state: 'up',
    });
    // Sweeper is unhealthy, and no continuity rule answers robot.unhealthy.
    expect(sweep).toMatchObject({ failed_robot: 'Sweeper', trigger: 'robot.unhealthy', verdict: 'uncovered', status: 'uncovered', covered: false, policies: [] });
    expect(sweep.explanation.join(' ')).toMatch(/no continuity policy answers 'robot.unhealthy'/);

    // Another trigger for every down robot: the rule then answers Sweeper's too, and Runner (alive) takes it.
    const forced = await a.json('/v1/continuity/status?trigger=robot.unreachable');
    expect(forced.status).toBe(200);
    expect(forced.body.status).toBe('covered');
    expect(forced.body.handoffs[1]).toMatchObject({ failed_robot: 'Sweeper', status: 'taken_over', takeover_robot: 'Runner' });

    // The same answer over gRPC (QueryRequest carries the query string).
    const g = connectGrpc(a.agent.grpcAddress!);
    clients.push(g);
    const viaGrpc = await callUnary(g.client, 'GetContinuityStatus', { query: 'trigger=robot.unreachable' }, grpcBearer(ADMIN));
    expect(viaGrpc.ok).toBe(true);
    expect(viaGrpc.json.handoffs.map((h: { status: string }) => h.status)).toEqual(['taken_over', 'taken_over']);
  });

  it('a down takeover robot takes over nothing: the hand-over then has no robot', async () => {
    const { a } = await fleet();
    const stateFile = path.join(a.stateDir, 'fleet-agents.json');
    const agents = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    // Runner now answers nothing either.
    agents.agents[1].url = await closedPort();
    fs.writeFileSync(stateFile, JSON.stringify(agents));
    const r = await a.json('/v1/continuity/status');
    expect(r.body.summary).toMatchObject({ up: 0, down: 3, taken_over: 0 });
    const courier = r.body.handoffs.find((h: { failed_robot: string }) => h.failed_robot === 'Courier');
    expect(courier).toMatchObject({ verdict: 'policy_only', status: 'no_takeover_robot', takeover_robot: null, takeover_state: null });
  });

  it('without a program: no continuity declarations, said plainly', async () => {
    const a = await startAgent({});
    running.push(a);
    const r = await a.json('/v1/continuity/status');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ program: null, status: 'no_program', robots: [], handoffs: [] });
    expect(r.body.note).toMatch(/no program loaded/);
  });

  it('is a sensitive read: 401 without a credential under the read policy; bad query 400', async () => {
    const { a } = await fleet({ env: { SVC_API_REQUIRE_AUTH_READS: '1' } });
    expect((await a.json('/v1/continuity/status')).status).toBe(401);
    expect((await a.json('/v1/continuity/status', { headers: bearer(ADMIN) })).status).toBe(200);
    expect((await a.json('/v1/continuity/status?trigger=', { headers: bearer(ADMIN) })).status).toBe(400);
  });

  it('without fleet agents, a robot’s devices in the pool tell whether it is down; an unconfirmed takeover says so', async () => {
    const configPath = writeProject({
      'svc.toml': '[project]\nname = "Continuity"\nversion = "1.0.0"\n[config]\ndevices = "svc.devices.toml"\n',
      'svc.devices.toml': [
        '[[devices]]\nid = "courier-lidar"\ntype = "lidar"\nrobot_id = "Courier"\n',
        '[[devices]]\nid = "runner-lidar"\ntype = "lidar"\nrobot_id = "Runner"\n',
      ].join(''),
      'couriers.sd': `
robot Courier {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    exposes capabilities [indoor_navigation];
    mission ToteRun { requires capabilities [indoor_navigation]; }
}
robot Runner {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    exposes capabilities [indoor_navigation];
}
robot Spare {
    exposes capabilities [indoor_navigation];
}
continuity_policy Fallback {
    on robot.offline { resume_from_checkpoint; }
}
`,
    });
    const root = path.dirname(configPath);
    const a = await startAgent({ cwd: root, configPath, programPath: path.join(root, 'couriers.sd'), env: { SVC_API_KEY: ADMIN } });
    running.push(a);
    const retire = (id: string) => a.json(`/v1/devices/${id}`, { method: 'PATCH', headers: bearer(ADMIN), body: JSON.stringify({ lifecycle_state: 'retired', override: true }) });

    const before = (await a.json('/v1/continuity/status')).body;
    expect(before.status).toBe('nominal');
    expect(before.robots.map((r: { robot: string; state: string; source: string }) => [r.robot, r.state, r.source])).toEqual([
      ['Courier', 'up', 'device_pool'],
      ['Runner', 'up', 'device_pool'],
      ['Spare', 'unknown', 'none'],
    ]);

    expect((await retire('courier-lidar')).status).toBe(200);
    const one = (await a.json('/v1/continuity/status')).body;
    expect(one.status).toBe('covered');
    expect(one.handoffs).toHaveLength(1);
    expect(one.handoffs[0]).toMatchObject({ failed_robot: 'Courier', trigger: 'robot.offline', status: 'taken_over', takeover_robot: 'Runner', takeover_state: 'up' });
    expect(one.robots[0].reason).toMatch(/courier-lidar/);

    // Runner goes too: Spare (no agent, no device: state unknown) is the only robot left that covers the mission.
    expect((await retire('runner-lidar')).status).toBe(200);
    const two = (await a.json('/v1/continuity/status')).body;
    expect(two.status).toBe('degraded');
    const courier = two.handoffs.find((h: { failed_robot: string }) => h.failed_robot === 'Courier');
    expect(courier).toMatchObject({ status: 'handoff_unconfirmed', takeover_robot: 'Spare', takeover_state: 'unknown' });
    expect(courier.explanation.join(' ')).toMatch(/not confirmed/);
  });

  it('a fleet agent that accepts the connection and never answers is down after 5 s, not 30', async () => {
    const root = tempDir('svc-continuity-silent-');
    fs.writeFileSync(path.join(root, 'couriers.sd'), PROGRAM);
    const silent = await listen(() => undefined);
    const stateDir = tempDir();
    fs.writeFileSync(path.join(stateDir, 'fleet-agents.json'), JSON.stringify({ agents: [{ robot_name: 'Courier', url: silent.url }] }));
    const a = await startAgent({ cwd: root, programPath: path.join(root, 'couriers.sd'), stateDir });
    running.push(a);
    const started = Date.now();
    const r = await a.json('/v1/continuity/status');
    const took = Date.now() - started;
    expect(r.status).toBe(200);
    expect(took).toBeGreaterThanOrEqual(4500);
    expect(took).toBeLessThan(9000);
    expect(r.body.robots[0]).toMatchObject({ robot: 'Courier', state: 'down', source: 'fleet_agent' });
    expect(silent.hits).toEqual(['GET /v1/status ']);
  }, 20_000);
});

