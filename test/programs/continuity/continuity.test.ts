import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../../helpers/agent-harness.js';
import { callUnary, connectGrpc, type GrpcTestClient } from '../../helpers/grpc-client.js';
import { REPO_ROOT, SVC_BIN } from '../../helpers/spawn-agent.js';

/**
 * Mission continuity of a failed robot (docs/program-language.md §30): REST, gRPC and the CLI
 * `svc continuity FILE --failed ROBOT --progress PCT --trigger KIND` answer from the program.
 */
const PROGRAM = `
robot Courier {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    sensor cam: Camera on "/dev/video0";
    exposes capabilities [obstacle_avoidance, indoor_navigation, lift_riding];
    mission ToteRun {
        requires capabilities [indoor_navigation, lift_riding];
    }
}
robot Runner {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    exposes capabilities [indoor_navigation, lift_riding];
}
robot Sweeper {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    exposes capabilities [indoor_navigation];
}
continuity_policy CourierContinuity {
    on central.lost { finish_delivery; return_to_pharmacy; }
}
recovery_policy CourierRecovery {
    on lift.timeout { return_to lobby; }
}
`;

let running: RunningAgent[] = [];
let clients: GrpcTestClient[] = [];
afterEach(async () => {
  clients.forEach((c) => c.close());
  clients = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

function project(): { root: string; file: string } {
  const root = tempDir('svc-continuity-');
  const file = path.join(root, 'courier.sd');
  fs.writeFileSync(file, PROGRAM);
  return { root, file };
}

function svc(args: string[]) {
  const r = spawnSync(process.execPath, [SVC_BIN, ...args], { cwd: REPO_ROOT, env: { PATH: process.env['PATH'] ?? '', SVC_CONTROL_CENTER_STATE_DIR: tempDir() }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('mission continuity', () => {
  it('hands the rest of the mission to the robot that covers what it needs, under the matching continuity rule', async () => {
    const { root, file } = project();
    const a = await startAgent({ cwd: root, programPath: file, grpcBind: '127.0.0.1:0' });
    running.push(a);
    const r = await a.json('/v1/programs/continuity', { method: 'POST', body: JSON.stringify({ failed: 'Courier', progress: 40, trigger: 'central.lost' }) });
    expect(r.status).toBe(200);
    const report = r.body.report;
    expect(report).toMatchObject({ robot: 'Courier', progress_pct: 40, remaining_pct: 60, missions: ['ToteRun'], verdict: 'handoff', covered: true });
    expect(report.policies).toEqual([{ policy: 'CourierContinuity', trigger: 'central.lost', actions: ['finish_delivery', 'return_to_pharmacy'] }]);
    // Runner has both capabilities ToteRun requires; Sweeper lacks lift_riding.
    expect(report.takeover).toEqual({ robot: 'Runner', shared_capabilities: ['indoor_navigation', 'lift_riding'], missing_capabilities: [], coverage: 1 });
    expect(report.candidates.map((c: { robot: string; coverage: number }) => [c.robot, c.coverage])).toEqual([['Runner', 1], ['Sweeper', 0.5]]);

    // The same over gRPC.
    const g = connectGrpc(a.agent.grpcAddress!);
    clients.push(g);
    const viaGrpc = await callUnary(g.client, 'EvaluateProgramContinuity', { body_json: JSON.stringify({ failed: 'Courier', progress: 40, trigger: 'central.lost' }) });
    expect(viaGrpc.ok).toBe(true);
    expect(viaGrpc.json.report).toEqual(report);
  });

  it('an unanswered trigger is uncovered and lists the recovery policies that do answer it; a finished mission needs no takeover', async () => {
    const { root, file } = project();
    const a = await startAgent({ cwd: root, programPath: file });
    running.push(a);
    const post = (body: unknown) => a.json('/v1/programs/continuity', { method: 'POST', body: JSON.stringify(body) });
    const lift = (await post({ failed: 'Courier', progress: 10, trigger: 'lift.timeout' })).body.report;
    expect(lift).toMatchObject({ verdict: 'uncovered', covered: false, policies: [] });
    expect(lift.recovery_fallback).toEqual([{ policy: 'CourierRecovery', trigger: 'lift.timeout', actions: ['return_to lobby'] }]);
    const done = (await post({ failed: 'Courier', progress: 100, trigger: 'central.lost' })).body.report;
    expect(done).toMatchObject({ verdict: 'complete', remaining_pct: 0, takeover: null });
  });

  it('refuses what it cannot evaluate: unknown robot, progress out of range, missing fields, bad JSON', async () => {
    const { root, file } = project();
    const a = await startAgent({ cwd: root, programPath: file });
    running.push(a);
    const post = (body: string) => a.json('/v1/programs/continuity', { method: 'POST', body });
    const unknown = await post(JSON.stringify({ failed: 'Ghost', progress: 10, trigger: 'x' }));
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe("unknown robot 'Ghost' (the program declares Courier, Runner, Sweeper)");
    expect((await post(JSON.stringify({ failed: 'Courier', progress: 140, trigger: 'x' }))).status).toBe(400);
    expect((await post(JSON.stringify({ progress: 10, trigger: 'x' }))).body.error).toBe('missing failed (the robot that failed)');
    expect((await post(JSON.stringify({ failed: 'Courier', progress: 10 }))).body.error).toBe('missing trigger (what happened, e.g. central.lost)');
    expect((await post('{not json')).status).toBe(400);
  });

  it('svc continuity prints the verdict and the takeover, --json the REST body; exit 0 covered, 1 uncovered, 2 bad input', () => {
    const { file } = project();
    const text = svc(['continuity', file, '--failed', 'Courier', '--progress', '40', '--trigger', 'central.lost']);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n').slice(0, 3)).toEqual([
      'Continuity of Courier at 40% (trigger central.lost): handoff',
      '  policy CourierContinuity: on central.lost → finish_delivery, return_to_pharmacy',
      '  takeover: Runner takes the remaining 60% of ToteRun',
    ]);
    const json = svc(['continuity', file, '--failed', 'Courier', '--progress', '40', '--trigger', 'central.lost', '--json']);
    expect(JSON.parse(json.stdout).report.takeover.robot).toBe('Runner');
    expect(svc(['continuity', file, '--failed', 'Courier', '--progress', '40', '--trigger', 'lift.timeout']).code).toBe(1);
    const bad = svc(['continuity', file, '--failed', 'Ghost', '--progress', '40', '--trigger', 'central.lost']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown robot 'Ghost'");
  });
});
