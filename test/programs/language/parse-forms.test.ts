import { describe, expect, it } from 'vitest';

import { ProgramSyntaxError, parseProgram, type Program, type RobotDecl } from '../../../agent/programs/language/index.js';

const parse = (source: string): Program => parseProgram(source, 'forms.sd');
const robotOf = (members: string): RobotDecl => parse(`robot R {\n${members}\n}`).robots[0]!;

function strip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === 'loc' ? undefined : v))) as T;
}

function parseError(source: string): ProgramSyntaxError {
  try {
    parseProgram(source, 'broken.sd');
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a syntax error');
}

describe('policy-style forms (docs/program-language.md §5.2)', () => {
  it('health_check for robot and fleet, with checks and requirements', () => {
    const p = parse(`
      health_check FleetVitals for fleet Yard {
        check battery.level >= 20%;
        check comms.latency < 200 ms;
        require at_least 80% robots Healthy;
      }
      health_check Loose { check temp <= 60 celsius; }`);
    expect(strip(p.healthChecks)).toEqual([
      {
        name: 'FleetVitals', targetKind: 'fleet', target: 'Yard',
        checks: [
          { metric: 'battery.level', operator: '>=', threshold: '20 %' },
          { metric: 'comms.latency', operator: '<', threshold: '200ms' },
        ],
        requirements: ['require at_least 80 % robots Healthy'],
      },
      { name: 'Loose', targetKind: null, target: null, checks: [{ metric: 'temp', operator: '<=', threshold: '60celsius' }], requirements: [] },
    ]);
    expect(p.healthChecks[0]!.checks[1]!.loc).toEqual({ line: 4, column: 9 });
  });

  it('health_policy with several statuses', () => {
    const p = parse('health_policy P { on Healthy { log("ok"); } on Unsafe { emergency_stop; notify ops; } }');
    expect(strip(p.healthPolicies[0]!.handlers)).toEqual([
      { status: 'Healthy', actions: ['log ( ok )'] },
      { status: 'Unsafe', actions: ['emergency_stop', 'notify ops'] },
    ]);
  });

  it('requires_capability with the three any_of groups', () => {
    const p = parse('requires_capability gps_navigation { any_of sensors [GPS, GNSS]; any_of actuators [DifferentialDrive]; any_of connectivity [WiFi, LTE,]; }');
    expect(strip(p.requiresCapabilities)).toEqual([
      { capability: 'gps_navigation', sensors: ['GPS', 'GNSS'], actuators: ['DifferentialDrive'], connectivity: ['WiFi', 'LTE'] },
    ]);
  });

  it('kill_switch at top level and in a robot', () => {
    const p = parse(`
      kill_switch Global { priority: critical; remote_signed; action { halt_all(); audit.record("stop"); } }
      robot R { kill_switch Local { priority: high; action { emergency_stop; } } }`);
    expect(strip(p.killSwitches[0])).toMatchObject({
      name: 'Global', priority: 'critical', remoteSigned: true, actions: ['halt_all ( )', 'audit . record ( stop )'],
    });
    expect(p.killSwitches[0]!.body.map((s) => s.kind)).toEqual(['expr', 'expr']);
    expect(strip(p.robots[0]!.killSwitches)).toEqual([
      { name: 'Local', priority: 'high', remoteSigned: false, actions: ['emergency_stop'], body: [{ kind: 'emergency_stop' }] },
    ]);
  });

  it('recovery_policy and continuity_policy keep dotted conditions and join actions', () => {
    const p = parse(`
      recovery_policy RP { on gps.failed { switch_to visual_odometry; reduce_speed 0.5 m/s; } on battery.level < 15% { return_home; } }
      continuity_policy CP { on central.lost { continue_mission locally; } on robot.failed { handoff peer; } }`);
    expect(strip(p.recoveryPolicies)).toEqual([
      {
        name: 'RP',
        triggers: [
          { condition: 'gps.failed', actions: ['switch_to visual_odometry', 'reduce_speed 0.5m/s'] },
          { condition: 'battery . level < 15 %', actions: ['return_home'] },
        ],
      },
    ]);
    expect(strip(p.continuityPolicies)).toEqual([
      { name: 'CP', triggers: [{ condition: 'central.lost', actions: ['continue_mission locally'] }, { condition: 'robot.failed', actions: ['handoff peer'] }] },
    ]);
  });

  it('mitigation, decision_tree (with and without layer), offline_policy', () => {
    const p = parse(`
      mitigation M { if lte.lost { switch_to wifi; buffer telemetry; } }
      decision_tree D group { version = "2.1.0"; when peers.count < 2 and battery.level > 40% { take_lead; } when gps.lost { hold; } }
      decision_tree Plain { when x { y; } }
      offline_policy O { max_duration = 30 min; allowed_actions [return_home, hold_position]; forbidden_actions [enter_zone]; }`);
    expect(strip(p.mitigations)).toEqual([{ name: 'M', rules: [{ condition: 'lte.lost', actions: ['switch_to wifi', 'buffer telemetry'] }] }]);
    expect(strip(p.decisionTrees)).toEqual([
      {
        name: 'D', layer: 'group', version: '2.1.0',
        rules: [
          { condition: 'peers . count < 2 and battery . level > 40 %', actions: ['take_lead'] },
          { condition: 'gps . lost', actions: ['hold'] },
        ],
      },
      { name: 'Plain', layer: null, version: null, rules: [{ condition: 'x', actions: ['y'] }] },
    ]);
    expect(strip(p.offlinePolicies)).toEqual([
      { name: 'O', maxDuration: { value: 30, unit: 'min', text: '30min' }, allowedActions: ['return_home', 'hold_position'], forbiddenActions: ['enter_zone'] },
    ]);
  });

  it('mission_plan, operating_mode, assurance_case, knowledge_model', () => {
    const p = parse(`
      mission_plan MP { step undock; step survey_field; constraint invariant speed <= 2 m/s; constraint battery.level >= 20%; }
      operating_mode Em { emergency; }
      operating_mode Rc { recovery; }
      assurance_case AC { evidence hardware_review; evidence "field trial 3"; }
      knowledge_model KM { component gps; dependency gps_navigation requires [gps, wheels]; dependency empty requires []; }`);
    expect(strip(p.missionPlans)).toEqual([
      { name: 'MP', steps: ['undock', 'survey_field'], constraints: ['invariant speed <= 2m/s', 'battery . level >= 20 %'] },
    ]);
    expect(p.operatingModes.map((m) => [m.name, m.kind])).toEqual([['Em', 'emergency'], ['Rc', 'recovery']]);
    expect(p.assuranceCases[0]!.evidence).toEqual(['hardware_review', 'field trial 3']);
    expect(strip(p.knowledgeModels[0]!.dependencies)).toEqual([
      { capability: 'gps_navigation', requires: ['gps', 'wheels'] },
      { capability: 'empty', requires: [] },
    ]);
  });

  it('state_estimator, anomaly_detector with learned backend, on anomaly, prognostics, resilience_policy', () => {
    const p = parse(`
      state_estimator Pose { inputs [gps.fix, imu]; output PoseEstimate; }
      state_estimator Empty { output Pose; }
      anomaly_detector Vib { learned backend onnx.isolation_forest; expected motor.vibration < 4 g; }
      on anomaly Vib severity High { reduce_speed 0.2 m/s; notify maintenance; }
      prognostics Wear { predict motor.bearing_wear; predict battery.soh; warn_if battery.rul < 30 min; }
      resilience_policy RP { strategy redundant_localization; strategy graceful_degradation; }`);
    expect(strip(p.stateEstimators)).toEqual([
      { name: 'Pose', inputs: ['gps.fix', 'imu'], output: 'PoseEstimate' },
      { name: 'Empty', inputs: [], output: 'Pose' },
    ]);
    expect(strip(p.anomalyDetectors)).toEqual([
      { name: 'Vib', learnedBackend: 'onnx.isolation_forest', expected: [{ metric: 'motor.vibration', operator: '<', threshold: '4g' }] },
    ]);
    expect(strip(p.anomalyHandlers)).toEqual([{ detector: 'Vib', severity: 'High', actions: ['reduce_speed 0.2m/s', 'notify maintenance'] }]);
    expect(strip(p.prognostics)).toEqual([
      { name: 'Wear', predicts: ['motor.bearing_wear', 'battery.soh'], warnings: ['warn_if battery . rul < 30min'] },
    ]);
    expect(p.resiliencePolicies[0]!.strategies).toEqual(['redundant_localization', 'graceful_degradation']);
  });

  it('robot modes and top-level runtime fault handlers', () => {
    const p = parse(`
      robot R { mode normal { } mode safe { wheels.stop(); } }
      on lte.lost { enter degraded; }`);
    expect(p.robots[0]!.modes.map((m) => m.name)).toEqual(['normal', 'safe']);
    expect(strip(p.faultHandlers)).toEqual([{ event: 'lte.lost', body: [{ kind: 'enter', mode: 'degraded' }] }]);
  });
});

describe('core declarations', () => {
  it('hardware: every item, GB/MB, gpu true, battery in kWh, network, timing and resource W', () => {
    const p = parse(`
      hardware Edge {
        cpu: "Cortex A72";
        memory: 512 MB;
        storage: 1 GB;
        gpu: true;
        sensors: [Camera];
        actuators [];
        connectivity [WiFi, Ethernet];
        battery { capacity: 1.2 kWh; }
        network { bandwidth: 1 Gbps; latency: 1 s; }
        timing { min_period: 20 ms; }
        resource: 10 W;
      }
      hardware Tiny { resource: 3; }`);
    expect(strip(p.hardware)).toEqual([
      {
        name: 'Edge', cpu: 'Cortex A72', memoryMb: 512, storageMb: 1024, gpu: true, sensors: ['Camera'], actuators: [],
        connectivity: ['WiFi', 'Ethernet'], batteryWh: 1200, bandwidthMbps: 1000, latencyMs: 1000, minPeriodMs: 20, powerW: 10,
      },
      {
        name: 'Tiny', cpu: null, memoryMb: null, storageMb: null, gpu: null, sensors: [], actuators: [], connectivity: [],
        batteryWh: null, bandwidthMbps: null, latencyMs: null, minPeriodMs: null, powerW: 3,
      },
    ]);
  });

  it('deploy to a list, fleet members, simulate_compatibility faults, requires_connectivity', () => {
    const p = parse(`
      deploy Rover to [RoverV1, JetsonOrin];
      fleet Yard { Rover; Scout; }
      simulate_compatibility { fault CameraFailure; fault BatteryDegradation; }
      simulate_compatibility { fault NetworkOutage; }
      requires_connectivity [WiFi, LTE];
      requires_hardware { memory >= 512 MB; storage >= 16 GB; gpu: true; actuators [DifferentialDrive]; }`);
    expect(strip(p.deploys)).toEqual([{ robot: 'Rover', targets: ['RoverV1', 'JetsonOrin'] }]);
    expect(strip(p.fleets)).toEqual([{ name: 'Yard', members: ['Rover', 'Scout'] }]);
    expect(p.simulateFaults).toEqual(['CameraFailure', 'BatteryDegradation', 'NetworkOutage']);
    expect(strip(p.requiresConnectivity)).toEqual({ bandwidthMbps: null, latencyMs: null, connectivity: ['WiFi', 'LTE'] });
    expect(strip(p.requiresHardware)).toEqual({ memoryGb: 0.5, storageGb: 16, gpu: true, sensors: [], actuators: ['DifferentialDrive'] });
  });

  it('robot members: ai_model config, topic QoS, peers, permissions, requirements, authorities', () => {
    const r = robotOf(`
      ai_model detector: ObjectDetector { provider: "mock"; memory_required: 2 GB; gpu_required: true; threshold: 0.6; input: camera.frame; }
      topic cmd: Twist subscribe on "/cmd_vel" qos { rate: 10 Hz; deadline: 100ms; reliability: reliable; }
      robot Buddy;
      permissions { allow publish cmd; }
      requires_hardware { memory >= 2 GB; sensors [Camera]; }
      requires_network { bandwidth >= 10 Mbps; latency <= 40 ms; }
      requires_connectivity [LTE];
      local_decision_authority [obstacle_stop, reroute];
      requires_central_approval [enter_restricted_zone];`);
    expect(strip(r.aiModels)).toEqual([
      {
        name: 'detector', type: 'ObjectDetector',
        config: { provider: 'mock', memory_required: { value: 2, unit: 'GB', text: '2GB' }, gpu_required: true, threshold: 0.6, input: 'camera.frame' },
      },
    ]);
    expect(strip(r.topics)).toEqual([
      {
        name: 'cmd', type: 'Twist', direction: 'subscribe', channel: '/cmd_vel',
        qos: { rate: { value: 10, unit: 'Hz', text: '10Hz' }, deadline: { value: 100, unit: 'ms', text: '100ms' }, reliability: 'reliable' },
      },
    ]);
    expect(r.peers).toEqual(['Buddy']);
    expect(r.hasPermissions).toBe(true);
    expect(r.generic.map((g) => g.keyword)).toEqual(['permissions']);
    expect(strip(r.requiresHardware)).toEqual({ memoryGb: 2, storageGb: null, gpu: null, sensors: ['Camera'], actuators: [] });
    expect(strip(r.requiresNetwork)).toEqual({ bandwidthMbps: 10, latencyMs: 40, connectivity: [] });
    expect(r.requiresConnectivity!.connectivity).toEqual(['LTE']);
    expect(r.localDecisionAuthority).toEqual(['obstacle_stop', 'reroute']);
    expect(r.requiresCentralApproval).toEqual(['enter_restricted_zone']);
  });

  it('behaviour contracts, typed params, task priority and requires', () => {
    const r = robotOf(`
      behavior go_to(target: Pose, speed: Float) -> Result<Pose, NavError> requires battery.level > 20% ensures arrived invariant speed <= 1 m/s {
        return Ok(target);
      }
      task telemetry high every 10 Hz deadline 50ms requires link.up { publish status(1); }
      task maint priority: 3 every 1 min { }`);
    const b = r.behaviors[0]!;
    expect(b.params).toEqual([{ name: 'target', type: 'Pose' }, { name: 'speed', type: 'Float' }]);
    expect(b.returnType).toBe('Result<Pose, NavError>');
    expect(strip(b.requires)).toMatchObject({ kind: 'binary', op: '>', right: { kind: 'number', value: 20, unit: '%', text: '20%' } });
    expect(strip(b.ensures)).toEqual({ kind: 'ident', name: 'arrived' });
    expect(b.invariant).toMatchObject({ kind: 'binary', op: '<=' });
    expect(b.body[0]).toMatchObject({ kind: 'return', value: { kind: 'call' } });
    expect(r.tasks.map((t) => [t.name, t.priority, t.every!.text, t.deadline?.text ?? null, t.requires?.kind ?? null])).toEqual([
      ['telemetry', 'high', '10Hz', '50ms', 'member'],
      ['maint', '3', '1min', null, null],
    ]);
    expect(r.tasks[0]!.body[0]).toMatchObject({ kind: 'publish', topic: 'status', value: { kind: 'number', value: 1 } });
  });
});

describe('grammar extensions (docs/program-language.md §4.2)', () => {
  it('#1 peer robot, #2 module function with return, #3 test blocks', () => {
    const p = parse(`
      export async fn clamp(v: Float, lo: Float, hi: Float) -> Float { if v < lo { return lo; } return v; }
      fn helper() { }
      test "clamp works" { let x = clamp(5, 0, 3); expect_compile_error { let y: Int = "s"; } }
      robot A { robot B; }`);
    expect(strip(p.functions.map(({ body, ...f }) => ({ ...f, body: body.map((s) => s.kind) })))).toEqual([
      {
        name: 'clamp', exported: true, async: true, returnType: 'Float', body: ['if', 'return'],
        params: [{ name: 'v', type: 'Float' }, { name: 'lo', type: 'Float' }, { name: 'hi', type: 'Float' }],
      },
      { name: 'helper', exported: false, async: false, returnType: null, params: [], body: [] },
    ]);
    expect(p.generic.map((g) => [g.keyword, g.name])).toEqual([['test', 'clamp works']]);
    expect(p.robots[0]!.peers).toEqual(['B']);
  });

  it('#4 enum and match', () => {
    const p = parse(`
      enum Phase { Idle, Moving, Docked }
      robot R { behavior b() { match phase { Idle => { start(); } Moving => stop(), Docked => enter docked; _ => { } } } }`);
    expect(p.generic[0]).toMatchObject({ keyword: 'enum', name: 'Phase', text: 'enum Phase { Idle , Moving , Docked }' });
    const m = p.robots[0]!.behaviors[0]!.body[0]!;
    if (m.kind !== 'match') throw new Error('match');
    expect(m.subject).toMatchObject({ kind: 'ident', name: 'phase' });
    expect(m.arms.map((a) => [a.pattern, a.body.map((s) => s.kind)])).toEqual([
      ['Idle', ['expr']], ['Moving', ['expr']], ['Docked', ['enter']], ['_', []],
    ]);
  });

  it('#5 agent, #6 state machine and enter', () => {
    const r = robotOf(`
      agent planner { uses llm.mock; tools [navigate, inspect]; goal "inspect every rack"; can [move]; plan { navigate(); } }
      state_machine door { initial closed; state open; transition closed -> open; }
      behavior b() { enter open; }`);
    expect(strip(r.agents)).toEqual([{ name: 'planner', uses: ['llm.mock'], tools: ['navigate', 'inspect'], goal: 'inspect every rack' }]);
    expect(strip(r.stateMachines)).toEqual([{ name: 'door', states: ['closed', 'open'], transitions: [{ from: 'closed', to: 'open' }] }]);
    expect(strip(r.behaviors[0]!.body)).toEqual([{ kind: 'enter', mode: 'open' }]);
  });

  it('#7 swarm and #8 extern are kept as generic declarations', () => {
    const p = parse('swarm Hive { fleet Yard; policy consensus; }\nextern "C" fn crc16(data: Bytes) -> Int;\nextern ros2 fn spin();');
    expect(p.generic.map((g) => [g.keyword, g.name])).toEqual([['swarm', 'Hive'], ['extern', 'C'], ['extern', 'ros2']]);
    expect(p.generic[1]!.text).toBe('extern C fn crc16 ( data : Bytes ) -> Int');
    expect(p.functions).toEqual([]);
  });

  it('#9 robot-level triggers, #10 pipeline and run_pipeline', () => {
    const r = robotOf(`
      every 500 ms { ping(); }
      when battery.level < 20% { enter low_power; }
      on obstacle_detected { wheels.stop(); }
      pipeline perception budget 30ms { let f = cam.read(); }
      behavior b() { run_pipeline perception; }`);
    expect(r.triggers.map((t) => t.kind)).toEqual(['every', 'when', 'on']);
    expect(r.triggers[2]).toMatchObject({ kind: 'on', event: 'obstacle_detected' });
    expect(strip(r.pipelines)).toMatchObject([{ name: 'perception', budget: { value: 30, unit: 'ms', text: '30ms' } }]);
    expect(strip(r.behaviors[0]!.body)).toEqual([{ kind: 'run_pipeline', pipeline: 'perception' }]);
  });

  it('#11 discover, #12 navigate and #13 trust boundary / secure comm are kept without breaking the robot', () => {
    const r = robotOf(`
      sensor cam: Camera;
      discover robots where capability includes mapping;
      navigate { goal: pose(x: 1, y: 2, theta: 0); speed: 0.5 m/s; }
      trust_boundary perimeter;
      secure_comm { cipher: aes256; auth: mutual_tls; }
      behavior b() { navigate { goal: home; } discover robots where capability includes lift; }`);
    expect(r.sensors.map((s) => s.name)).toEqual(['cam']);
    expect(r.generic.map((g) => g.keyword)).toEqual(['discover', 'navigate', 'trust_boundary', 'secure_comm']);
    expect(r.generic[0]!.text).toBe('discover robots where capability includes mapping');
    expect(r.behaviors[0]!.body.map((s) => (s.kind === 'opaque' ? s.keyword : s.kind))).toEqual(['navigate', 'discover']);
  });

  it('#14 recovery handlers: recover from, on hardware, on twin', () => {
    const r = robotOf('recover from gps_loss { enter degraded; }\non hardware lidar_fault { wheels.stop(); }\non twin divergence { resync(); }');
    expect(r.triggers.map((t) => (t.kind === 'recover' ? `recover:${t.failure}` : t.kind === 'on' ? `on:${t.event}` : t.kind))).toEqual([
      'recover:gps_loss', 'on:hardware lidar_fault', 'on:twin divergence',
    ]);
  });

  it('further constructs: safety_zone, validate … matches /re/, node/service/action, struct/trait/impl, spawn/parallel/select/channel', () => {
    const p = parse(`
      safety_zone Loading { center (0, 0); radius 5 m; max_speed 0.3 m/s; }
      validate SerialNumber { value matches /^SN-[0-9]{6}$/; }
      struct Reading { value: Float, unit: String }
      trait Sensor { fn read() -> Reading; }
      geofence Yard { polygon [(0, 0), (10, 0), (10, 10)]; }
      connectivity_policy Links { prefer WiFi; fallback LTE; }
      tamper_policy Seal { on tamper { lock; } }
      @policy(kind: "retention") KeepLogs { days: 30; }
      robot R {
        node planner { rate: 10 Hz; }
        service reset: Empty;
        action dock: DockAction;
        impl Sensor for R { fn read() -> Reading { return Reading { value: 1.0, unit: "m" }; } }
        channel events: Channel<Event>;
        behavior b() {
          call reset();
          send_goal dock with { pose: home };
          spawn monitor();
          parallel { scan(); report(); }
          select { on msg => handle(msg); }
          let ok = serial matches /^SN/;
          for i in 0..3 { beep(); }
        }
      }`);
    expect(p.safetyZones).toEqual([{ name: 'Loading', text: 'center ( 0 , 0 ) ; radius 5m ; max_speed 0.3m/s', loc: { line: 2, column: 7 } }]);
    expect(p.generic.map((g) => g.keyword)).toEqual(['validate', 'struct', 'trait']);
    expect(p.generic[0]!.tokens).toContain('/^SN-[0-9]{6}$/');
    expect(p.geofences.map((g) => g.name)).toEqual(['Yard']);
    expect(p.connectivityPolicies.map((g) => g.name)).toEqual(['Links']);
    expect(p.tamperPolicies.map((g) => g.name)).toEqual(['Seal']);
    expect(p.policies.map((g) => [g.keyword, g.name])).toEqual([['policy', 'KeepLogs']]);
    const r = p.robots[0]!;
    expect(r.generic.map((g) => g.keyword)).toEqual(['node', 'service', 'action', 'impl', 'channel']);
    const body = r.behaviors[0]!.body;
    expect(body.map((s) => (s.kind === 'opaque' ? `opaque:${s.keyword}` : s.kind))).toEqual([
      'expr', 'opaque:send_goal', 'expr', 'opaque:parallel', 'opaque:select', 'let', 'opaque:for',
    ]);
    // `call reset();` and `spawn monitor();` are keyword expressions as statements (§4.1 "Forms added in issue 18").
    expect(body[0]).toMatchObject({ kind: 'expr', expr: { kind: 'keyword', keyword: 'call' } });
    expect(body[2]).toMatchObject({ kind: 'expr', expr: { kind: 'keyword', keyword: 'spawn' } });
    expect(body[1]).toMatchObject({ text: 'send_goal dock with { pose : home }' });
    expect(body[5]).toMatchObject({ kind: 'let', value: { kind: 'binary', op: 'matches', right: { kind: 'regex', pattern: '^SN' } } });
  });
});

describe('tolerant layer', () => {
  it('keeps unknown top-level and robot-level blocks as GenericDecl without touching the typed lists', () => {
    const p = parse(`
      message Telemetry { speed: Float; }
      ble_service Beacon { uuid: "180d"; }
      robot R {
        sensor lidar: Lidar;
        world_model { map: occupancy_grid; resolution: 5 cm; }
        heartbeat every 1s;
        retry 3 times { reconnect(); }
        actuator wheels: DifferentialDrive;
      }
      deploy R to RoverV1;`);
    expect(p.generic.map((g) => [g.keyword, g.name, g.loc.line])).toEqual([['message', 'Telemetry', 2], ['ble_service', 'Beacon', 3]]);
    expect(p.generic[0]!.tokens).toEqual(['Telemetry', '{', 'speed', ':', 'Float', ';', '}']);
    const r = p.robots[0]!;
    expect(r.generic.map((g) => g.keyword)).toEqual(['world_model', 'heartbeat', 'retry']);
    expect(r.generic[1]!.text).toBe('heartbeat every 1s');
    expect(r.sensors.map((s) => s.name)).toEqual(['lidar']);
    expect(r.actuators.map((a) => a.name)).toEqual(['wheels']);
    expect(p.deploys).toHaveLength(1);
    expect(p.healthChecks).toEqual([]);
  });

  it('keeps a member that only shares a strict keyword as generic, but not a malformed strict member', () => {
    const r = robotOf('sensor { rate: 10 Hz; }\nsensor ok: IMU;\nwatchdog w { timeout: 1s; }');
    expect(r.sensors.map((s) => s.name)).toEqual(['ok']);
    expect(r.generic.map((g) => g.text)).toEqual(['sensor { rate : 10Hz ; }', 'watchdog w { timeout : 1s ; }']);
    // `sensor lidar Lidar;` is a typo in a sensor declaration: dropping it would hide the sensor.
    const error = parseError('robot R {\n  sensor lidar Lidar;\n  sensor ok: IMU;\n}');
    expect([error.kind, error.line, error.column, error.detail]).toEqual(['parse', 2, 16, "expected ':' after sensor name 'lidar', found 'Lidar'"]);
  });

  it('turns unknown statements into opaque statements', () => {
    const r = robotOf('behavior b() { reduce_speed 0.4 m/s; wheels.stop(); log "x" }');
    expect(strip(r.behaviors[0]!.body)).toEqual([
      { kind: 'opaque', keyword: 'reduce_speed', text: 'reduce_speed 0.4m/s' },
      { kind: 'expr', expr: { kind: 'call', args: [], callee: { kind: 'member', property: 'stop', object: { kind: 'ident', name: 'wheels' } } } },
      { kind: 'opaque', keyword: 'log', text: 'log x' },
    ]);
  });
});

describe('syntax errors', () => {
  it('reports a strict member the tolerant layer cannot absorb, with file, line, column and the line', () => {
    const error = parseError('robot R {\n    sensor lidar: Lidar }\n');
    expect(error.kind).toBe('parse');
    expect([error.file, error.line, error.column]).toEqual(['broken.sd', 2, 25]);
    expect(error.detail).toBe("expected ';' after sensor declaration, found '}'");
    expect(error.message).toBe("broken.sd:2:25: expected ';' after sensor declaration, found '}'\n      sensor lidar: Lidar }\n                          ^");
  });

  it('reports unbalanced braces at the unclosed opener or the stray closer', () => {
    const unclosed = parseError('robot R {\n  sensor s: Lidar;\n');
    expect([unclosed.line, unclosed.column, unclosed.detail]).toEqual([1, 9, "unclosed '{': no matching '}' before end of file"]);
    const stray = parseError('robot R { }\n}\n');
    expect([stray.line, stray.column, stray.detail]).toEqual([2, 1, "unexpected '}' with no matching '{'"]);
    const mismatched = parseError('robot R {\n  behavior b() { f(1]; }\n}');
    expect([mismatched.line, mismatched.detail]).toEqual([2, "expected ')' to close '(' from line 2, found ']'"]);
  });

  it('reports garbage at the top level and inside a robot', () => {
    const top = parseError('robot R { }\n42 + 1;');
    expect([top.line, top.column, top.detail]).toEqual([2, 1, "expected a declaration, found '42'"]);
    expect(top.sourceLine).toBe('42 + 1;');
    const member = parseError('robot R {\n  "oops";\n}');
    expect([member.line, member.column, member.detail]).toEqual([2, 3, 'expected a robot member, found \'"oops"\'']);
    const unterminated = parseError('robot R { }\nfrobnicate the widget');
    expect([unterminated.line, unterminated.detail]).toEqual([2, "expected ';' or a '{ … }' block to end the 'frobnicate' declaration, found end of file"]);
  });

  it('reports a tokenize error with kind tokenize', () => {
    const error = parseError('robot R { sensor s: Lidar on "/dev/x; }');
    expect(error.kind).toBe('tokenize');
    expect(error.detail).toBe('unterminated string literal');
  });
});
