import fs from 'node:fs';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

export const DEPLOY_KEY = 'dev-key-reports-0123456789';
export const OPERATOR_KEY = 'op-key-reports-0123456789';

/** A fleet program with `robots` scouts (Scout1…ScoutN): sensors, a drive, a mission and capabilities each. */
export function fleetProgram(robots: number): string {
  const parts = [
    'module test.fleet;',
    'import positioning.gps;',
    'hardware FieldRover {',
    '    cpu: CortexA72;',
    '    memory: 8 GB;',
    '    storage: 128 GB;',
    '    sensors [Lidar, GPS, IMU];',
    '    actuators [DifferentialDrive];',
    '    connectivity [WiFi, LTE];',
    '    battery { capacity: 480 Wh; }',
    '}',
    'kill_switch FleetStop { priority: critical; remote_signed; action { emergency_stop; } }',
    'health_check FleetVitals for fleet Scouts { check battery.level >= 30%; }',
    'requires_capability gps_navigation { any_of sensors [GPS, GNSS]; any_of actuators [DifferentialDrive]; }',
    'recovery_policy HomeRecovery { on gps.lost { reduce_speed 0.3 m/s; } on battery.low { return_home; } }',
  ];
  for (let i = 1; i <= robots; i++) {
    parts.push(
      `robot Scout${i} {`,
      '    uses hardware FieldRover;',
      `    sensor lidar${i}: Lidar on "/dev/ttyUSB${i}";`,
      `    sensor gnss${i}: GPS on "/dev/ttyACM${i}";`,
      `    actuator drive${i}: DifferentialDrive;`,
      '    exposes capabilities [obstacle_avoidance, gps_navigation, emergency_stop];',
      '    safety {',
      '        max_speed = 1.0 m/s;',
      `        stop_if lidar${i}.read().nearest_distance < 0.3 m;`,
      '    }',
      `    mission Patrol${i} {`,
      '        duration: 1 h;',
      '        requires capabilities [gps_navigation, obstacle_avoidance];',
      '        leave_dock; patrol; return_dock;',
      '    }',
      '    mode normal { }',
      '}',
      `deploy Scout${i} to FieldRover;`,
    );
  }
  return parts.join('\n') + '\n';
}

export interface ReportsProject {
  root: string;
  config: string;
  program: string;
  keys: string;
}

/** A project with the fleet program, three registry devices (one retired, on Scout3) and API keys. */
export function reportsProject(options: { robots?: number; program?: string } = {}): ReportsProject {
  const root = tempDir('svc-reports-');
  const files: Record<string, string> = {
    'svc.toml': '[project]\nname = "Reports Test"\nversion = "1.0.0"\n[config]\ndevices = "svc.devices.toml"\nproviders = "svc.providers.toml"\n',
    'svc.devices.toml': [
      '[[devices]]\nid = "scout-gps"\ntype = "gps"\nrobot_id = "Scout1"\nprovider = "gps_nmea"\ntrust_level = "trusted"\n',
      '[[devices]]\nid = "scout-lidar"\ntype = "Lidar"\nrobot_id = "Scout2"\ntrust_level = "trusted"\n',
      '[[devices]]\nid = "old-cam"\ntype = "camera"\nrobot_id = "Scout3"\nlifecycle_state = "retired"\n',
    ].join('\n'),
    'svc.providers.toml': '[providers.gps_nmea]\npackage = "positioning.gps"\n',
    'programs/fleet.sd': options.program ?? fleetProgram(options.robots ?? 3),
  };
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), content);
  }
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'dev', token: DEPLOY_KEY, role: 'developer' },
      { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
    ]),
  );
  return { root, config: path.join(root, 'svc.toml'), program: path.join(root, 'programs', 'fleet.sd'), keys };
}

export function startReportsAgent(
  p: ReportsProject,
  extra: { stateDir?: string; program?: string | null; config?: boolean; env?: Record<string, string>; grpc?: boolean } = {},
): Promise<RunningAgent> {
  return startAgent({
    configPath: extra.config === false ? null : p.config,
    programPath: extra.program === undefined ? p.program : extra.program,
    env: { SVC_API_KEYS_FILE: p.keys, ...(extra.env ?? {}) },
    ...(extra.stateDir ? { stateDir: extra.stateDir } : {}),
    ...(extra.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
  });
}

export const auth = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });

export const post = (body: unknown, key?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
