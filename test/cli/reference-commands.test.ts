import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SVC_BIN } from '../helpers/spawn-agent.js';
import { projectCli } from '../helpers/svc-project-cli.js';

/**
 * The reference CLI's commands and flags that the first round left out (docs/program-language.md §29,
 * docs/programs.md "The CLI"): `svc health robot`, `svc readiness|verify --simulate FAULTS`,
 * `svc sim --replay`, `svc sim|run --wall-clock`, `svc control-center serve [--once]`. Runs the
 * built `svc` (`npm run build` first) on our fixtures (test/cli/fixtures: courier.sd, depot-pair.sd, pacer.sd).
 */
const { root, stateDir, svc, json } = projectCli('svc-cli-reference', path.join(__dirname, 'fixtures'));

const lines = (...l: string[]) => `${l.join('\n')}\n`;
const CERTIFY_WARNING = '[warning] certification: Deploy targets declared without certification metadata — add a certify block (e.g. certify ISO3691_4 { level PLd; })';
const KNOWN_FAULTS = 'known: CameraFailure, LidarFailure, ImuFailure, GpsFailure, BatteryDegradation, NetworkOutage, LteOutage, WeakWifi, PacketLoss';

describe('svc health robot FILE', () => {
  it('groups the static health checks by robot, a robot without checks included, then the other targets', () => {
    expect(svc(['health', 'robot', 'depot-pair.sd'])).toEqual({
      code: 0,
      stderr: '',
      stdout: lines(
        'Robot health: overall Healthy (3 check(s) over 2 robot(s))',
        '  Robot Picker: 2 check(s)',
        '    [Unknown] PickerVitals: battery.level >= 30 % is evaluated at runtime',
        '    [Unknown] PickerVitals: lidar.rate >= 5Hz is evaluated at runtime',
        '  Robot Tug: no health checks',
        '  Other targets:',
        '    [Unknown] DepotFleet: require at_least 80 % robots Healthy is evaluated at runtime (fleet depot)',
      ),
    });
    expect(svc(['health', 'robot', 'courier.sd']).stdout).toBe(
      lines('Robot health: overall Healthy (1 check(s) over 1 robot(s))', '  Robot Courier: 1 check(s)', '    [Unknown] CartVitals: battery.level >= 20 % is evaluated at runtime'),
    );
  });

  it('--json prints the health part of the capabilities verification exactly', () => {
    const caps = json(['verify', 'depot-pair.sd', '--capabilities']).body;
    expect(json(['health', 'robot', 'depot-pair.sd']).body).toEqual({ version: 'v1', file: caps.file, health: caps.health });
  });

  it('usage errors exit 2; plain svc health stays the agent health route', () => {
    expect(svc(['health', 'robot'])).toMatchObject({ code: 2, stderr: "svc: 'svc health robot' takes one file (got none)\n" });
    expect(svc(['health', 'robot', 'depot-pair.sd', '--strict'])).toMatchObject({
      code: 2,
      stderr: "svc: unknown option --strict for 'svc health robot' (options: --json, --config FILE, --target HW, --all-targets)\n",
    });
    expect(svc(['health', 'robot', 'missing.sd'])).toMatchObject({ code: 2 });
    const health = svc(['health']);
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toHaveProperty('status');
  });
});

describe('svc readiness|verify FILE --simulate FAULTS', () => {
  it('verify: the faults degrade the profile on top of the program’s own simulate_compatibility faults', () => {
    const picker = (lidar: string) => [
      lidar,
      "[pass] sensor: Sensor 'cam' (Camera) supported by RoverV1",
      "[pass] actuator: Actuator 'wheels' (DifferentialDrive) supported by RoverV1",
      "[pass] timing: Loop in behavior 'pick' period 100 ms meets RoverV1 minimum period 10 ms",
      '[pass] timing: Aggregate CPU load 5% on RoverV1',
      "[error] sensor: Sensor 'imu' (IMU) not supported by RoverV1",
      "[pass] actuator: Actuator 'wheels' (DifferentialDrive) supported by RoverV1",
      CERTIFY_WARNING,
    ];
    expect(svc(['verify', 'depot-pair.sd'])).toEqual({
      code: 1,
      stderr: '',
      stdout: lines(
        'Hardware compatible: NO (target RoverV1)',
        ...picker("[pass] sensor: Sensor 'lidar' (Lidar) supported by RoverV1"),
        "Deployment not compatible: sensor: Sensor 'imu' (IMU) not supported by RoverV1",
      ),
    });
    expect(svc(['verify', 'depot-pair.sd', '--simulate', 'LidarFailure'])).toEqual({
      code: 1,
      stderr: '',
      stdout: lines(
        'Simulated faults: LidarFailure',
        'Hardware compatible: NO (target RoverV1)',
        ...picker("[error] sensor: Sensor 'lidar' (Lidar) not supported by RoverV1"),
        "Deployment not compatible: sensor: Sensor 'lidar' (Lidar) not supported by RoverV1 (and 1 more error(s))",
      ),
    });
  });

  it('verify: a compatible program becomes incompatible under a fault, and --json adds simulated_faults', () => {
    expect(svc(['verify', 'courier.sd']).code).toBe(0);
    const r = json(['compatibility', 'courier.sd', '--simulate', 'GpsFailure, BatteryDegradation,GpsFailure']);
    expect(r.code).toBe(1);
    expect(Object.keys(r.body)).toEqual(['version', 'file', 'report', 'simulated_faults']);
    expect(r.body.simulated_faults).toEqual(['GpsFailure', 'BatteryDegradation']);
    const messages = r.body.report.items.map((i: { severity: string; message: string }) => `[${i.severity}] ${i.message}`);
    expect(messages).toContain("[error] Sensor 'gps' (GPS) not supported by YardCart");
    expect(messages).toContain("[pass] Mission 'Deliver' needs 5 Wh of YardCart battery capacity 60 Wh (margin 91.67%)");
  });

  it('readiness: the degraded profile feeds the Hardware factor and its issues', () => {
    expect(svc(['readiness', 'depot-pair.sd', '--simulate', 'LidarFailure'])).toEqual({
      code: 1,
      stderr: '',
      stdout: lines(
        'Simulated faults: LidarFailure',
        'Mission Ready: NO',
        'Score: 88/100',
        'Status: Degraded',
        '',
        'Issues:',
        "* Sensor 'lidar' (Lidar) not supported by RoverV1",
        "* Sensor 'imu' (IMU) not supported by RoverV1",
      ),
    });
    expect(svc(['readiness', 'depot-pair.sd']).stdout).toBe(
      lines('Mission Ready: NO', 'Score: 92/100', 'Status: Degraded', '', 'Issues:', "* Sensor 'imu' (IMU) not supported by RoverV1"),
    );
    const body = json(['readiness', 'depot-pair.sd', '--simulate', 'LidarFailure']).body;
    expect(body.simulated_faults).toEqual(['LidarFailure']);
    expect(body.report.score.total).toBe(88);
    // The other outputs stay what they are: Markdown starts with its title, --agent-json is its summary.
    expect(svc(['readiness', 'depot-pair.sd', '--simulate', 'LidarFailure', '--markdown']).stdout.startsWith('# Readiness: depot-pair.sd\n')).toBe(true);
    expect(JSON.parse(svc(['readiness', 'depot-pair.sd', '--simulate', 'LidarFailure', '--agent-json']).stdout).score).toBe(88);
  });

  it('usage errors exit 2: no fault names, an unknown fault, a command without the flag', () => {
    expect(svc(['verify', 'depot-pair.sd', '--simulate'])).toMatchObject({
      code: 2,
      stderr: `svc: --simulate needs fault names, comma-separated (e.g. --simulate LidarFailure,NetworkOutage; ${KNOWN_FAULTS})\n`,
    });
    expect(svc(['readiness', 'depot-pair.sd', '--simulate', 'LidarFailure,Gremlins'])).toMatchObject({
      code: 2,
      stderr: `svc: --simulate: unknown fault 'Gremlins', comma-separated (e.g. --simulate LidarFailure,NetworkOutage; ${KNOWN_FAULTS})\n`,
    });
    expect(svc(['verify', 'depot-pair.sd', '--simulate', ','])).toMatchObject({ code: 2 });
    expect(svc(['readiness', 'depot-pair.sd', '--simulate', 'LidarFailure', '--record'])).toMatchObject({
      code: 2,
      stderr: 'svc: --record keeps the readiness history; a readiness under --simulate faults is a what-if and is not recorded\n',
    });
    for (const args of [['sim', 'depot-pair.sd'], ['assure', 'depot-pair.sd'], ['verify', 'depot-pair.sd', '--capabilities']]) {
      expect(svc([...args, '--simulate', 'LidarFailure']), args.join(' ')).toMatchObject({ code: 2, stderr: "svc: --simulate is an option of 'svc readiness' and 'svc verify'\n" });
    }
  });
});

describe('svc sim FILE --replay', () => {
  it('records the run and replays the trace deterministically at once', () => {
    const r = svc(['sim', 'courier.sd', '--replay', '--trace-out', 'runs/courier.trace']);
    expect(r.code).toBe(0);
    const trace = path.join(root, 'runs', 'courier.trace');
    expect(fs.existsSync(trace)).toBe(true);
    expect(r.stdout.endsWith(lines(`Trace written to ${trace}`, `Deterministic replay of ${path.join(root, 'courier.sd')}: MATCH (21/21 frames matched)`))).toBe(true);
    const body = json(['sim', 'courier.sd', '--replay']).body;
    expect(Object.keys(body)).toEqual(['version', 'file', 'simulation', 'replay']);
    expect(body.simulation.trace_path).toBe(path.join(root, 'courier.trace'));
    expect(body.replay).toEqual({
      mode: 'deterministic',
      source: path.join(root, 'courier.sd'),
      frame_count: 21,
      verification: { ok: true, matched: 21, mismatches: [] },
      loaded: true,
    });
  });

  it('usage errors exit 2: svc run runs 10 iterations, deterministic replay 20; not a flag of other commands', () => {
    expect(svc(['run', 'courier.sd', '--replay'])).toMatchObject({
      code: 2,
      stderr: "svc: --replay checks the recording against a deterministic replay, which runs svc sim's 20 loop iterations: use 'svc sim --replay'\n",
    });
    expect(svc(['readiness', 'courier.sd', '--replay'])).toMatchObject({ code: 2, stderr: "svc: --replay is an option of 'svc sim' and 'svc run'\n" });
  });
});

describe('svc sim|run FILE --wall-clock', () => {
  it('each loop interval and scheduler tick passes for real; what the run prints is the same', () => {
    const simulated = svc(['sim', 'pacer.sd', '--trace-scheduler']);
    const started = Date.now();
    const paced = svc(['sim', 'pacer.sd', '--trace-scheduler', '--wall-clock']);
    // Two robots, 20 iterations of 25 ms each: one behavior loop, one multiplexed scheduler.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(paced).toEqual(simulated);
    expect(paced.code).toBe(0);
    expect(paced.stdout).toContain('Scheduler: 2 multiplexed task(s), base tick 25 ms, 20 tick(s), 0 emergency stop(s)\n');
    const runStarted = Date.now();
    expect(svc(['run', 'pacer.sd', '--wall-clock'])).toEqual(svc(['run', 'pacer.sd']));
    expect(Date.now() - runStarted).toBeGreaterThanOrEqual(500);
  });

  it('is refused by the analyses (exit 2)', () => {
    expect(svc(['readiness', 'pacer.sd', '--wall-clock'])).toMatchObject({ code: 2, stderr: "svc: --wall-clock is an option of 'svc replay' and 'svc sim' and 'svc run'\n" });
  });
});

describe('svc control-center serve', () => {
  const serve = (args: string[]) => {
    const r = spawnSync(process.execPath, [SVC_BIN, ...args], {
      cwd: root,
      env: { PATH: process.env['PATH'] ?? '', SVC_CONTROL_CENTER_STATE_DIR: stateDir },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('is svc serve; --once starts the agent, prints where it listens, stops and exits 0', () => {
    const r = serve(['control-center', 'serve', '--bind', '127.0.0.1:0', '--program', 'courier.sd', '--once']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^svc agent listening on http://127\\.0\\.0\\.1:\\d+ \\(tenant default, state ${stateDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)\nsvc agent started and stopped \\(--once\\)\n$`));
    expect(serve(['serve', '--bind', '127.0.0.1:0', '--once']).code).toBe(0);
  });

  it('usage errors exit 2', () => {
    expect(serve(['control-center', 'serve', 'extra', '--once'])).toMatchObject({ code: 2, stderr: "svc: unexpected argument 'extra' for serve\n" });
    expect(serve(['control-center', 'serve', '--once=yes'])).toMatchObject({ code: 2, stderr: "svc: --once takes no value (got 'yes')\n" });
    expect(serve(['control-center', 'serve', '--bind', 'nowhere', '--once'])).toMatchObject({ code: 2 });
  });
});

describe('svc help', () => {
  it('lists the added commands and flags', () => {
    const help = svc(['help']).stdout;
    for (const text of ['svc health robot FILE.sd', '[--simulate FAULTS]', '[--wall-clock] [--replay]', '[--once]', 'alias: svc control-center serve']) expect(help, text).toContain(text);
  });
});
