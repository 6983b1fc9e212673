/**
 * Builds `Program` objects directly (every list present and empty unless given), so the analyses
 * can be tested without the parser.
 */
import { emptyProgram, emptyRobot } from '../../../agent/programs/language/empty.js';
import type {
  ActuatorDecl,
  HardwareProfileDecl,
  Loc,
  MissionDecl,
  Program,
  Quantity,
  RobotDecl,
  SafetyRule,
  SensorDecl,
  Stmt,
  TaskDecl,
} from '../../../agent/programs/language/ast.js';

export const at = (line = 1, column = 1): Loc => ({ line, column });

/** `q('100ms')`, `q('0.5m/s')`, `q('5%')`, `q('8 GB')`. */
export function q(text: string): Quantity {
  const m = /^(-?[0-9]+(?:\.[0-9]+)?)\s*(.*)$/.exec(text);
  if (m === null) throw new Error(`bad quantity ${text}`);
  const unit = m[2] === '' ? null : m[2]!;
  return { value: Number(m[1]), unit, text: `${m[1]}${unit ?? ''}` };
}

export function program(overrides: Partial<Program> = {}): Program {
  return { ...emptyProgram('test.sd'), ...overrides };
}

export function robot(name: string, overrides: Partial<RobotDecl> = {}): RobotDecl {
  return { ...emptyRobot(name, at()), ...overrides };
}

export const sensor = (name: string, type: string, source: string | null = null): SensorDecl => ({ name, type, source, loc: at() });
export const actuator = (name: string, type: string): ActuatorDecl => ({ name, type, loc: at() });

export function mission(overrides: Partial<MissionDecl> = {}): MissionDecl {
  return { name: null, durationHours: null, requiredCapabilities: [], approvals: [], steps: [], loc: at(), ...overrides };
}

export function task(name: string, every: string, overrides: Partial<TaskDecl> = {}): TaskDecl {
  return { name, priority: null, every: q(every), deadline: null, jitter: null, requires: null, budget: [], body: [], loc: at(), ...overrides };
}

export function loopEvery(every: string, body: Stmt[] = []): Stmt {
  return { kind: 'loop', every: q(every), body, loc: at() };
}

export function hardware(name: string, overrides: Partial<HardwareProfileDecl> = {}): HardwareProfileDecl {
  return {
    name,
    cpu: null,
    memoryMb: null,
    storageMb: null,
    gpu: null,
    sensors: [],
    actuators: [],
    connectivity: [],
    batteryWh: null,
    bandwidthMbps: null,
    latencyMs: null,
    minPeriodMs: null,
    powerW: null,
    loc: at(),
    ...overrides,
  };
}

export const killSwitch = (name: string) => ({ name, priority: 'critical', remoteSigned: false, actions: [], body: [], loc: at() });

export function maxSpeed(text: string): SafetyRule {
  return { kind: 'max_speed', value: q(text), loc: at() };
}

export function stopIf(text: string): SafetyRule {
  return { kind: 'stop_if', condition: { kind: 'bool', value: true, loc: at() }, text, loc: at() };
}

/** A robot with the usual rover kit: Lidar, Camera, IMU, GPS, a DifferentialDrive and a kill switch. */
export function rover(name: string, overrides: Partial<RobotDecl> = {}): RobotDecl {
  return robot(name, {
    sensors: [sensor('lidar', 'Lidar'), sensor('cam', 'Camera'), sensor('imu', 'IMU'), sensor('gps', 'GPS')],
    actuators: [actuator('wheels', 'DifferentialDrive')],
    killSwitches: [killSwitch('Stop')],
    ...overrides,
  });
}
