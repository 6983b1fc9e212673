/**
 * Runtime health-fault injection (docs/program-language.md §24.1 step 4, §7.4 `[health]`).
 *
 * Before each robot's entry the driver may inject health faults: `GPSDegraded` (the GPS fix
 * drops to quality 0), `CameraOffline` (cameras read void), `RobotHealthCritical` (the robot's
 * health status becomes Critical), plus whatever the configuration's `[health] inject_faults` and
 * `[health.robots.<id>] inject_faults` lists name. Each fault is recorded as a trace frame; then the
 * robot's `health_policy` handlers run for every status the faults produced (`on Degraded { … }`,
 * `on Critical { … }`), and a Critical robot health fires the robot's (else the program's) first
 * `kill_switch`, whose action block latches the emergency stop. `--inject-failure gps` injects one
 * named failure the same way and then runs the matching `recovery_policy` `on gps.* { … }` actions
 * as `recovery_*` frames.
 *
 * Nothing here reads a clock or a random source, so an injected run is as reproducible as any
 * other; and nothing runs unless injection was asked for, so plain runs are unchanged.
 */
import type { Program, RobotDecl } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';

/** Health statuses an injected fault can produce, mildest first. */
export type InjectedStatus = 'Degraded' | 'Critical';

const STATUS_ORDER: readonly InjectedStatus[] = ['Degraded', 'Critical'];

export interface FaultSpec {
  status: InjectedStatus;
  /** What the fault does to the simulated robot (recorded in the frame). */
  effect: 'gps_quality_degraded' | 'sensor_offline' | 'health_critical' | 'none';
  /** Sensor type failed by a `sensor_offline` fault. */
  sensorType?: string;
}

/** The faults the runtime knows how to inject; any other name is recorded with no effect (Degraded). */
export const HEALTH_FAULTS: Readonly<Record<string, FaultSpec>> = {
  GPSDegraded: { status: 'Degraded', effect: 'gps_quality_degraded' },
  CameraOffline: { status: 'Degraded', effect: 'sensor_offline', sensorType: 'Camera' },
  LidarOffline: { status: 'Degraded', effect: 'sensor_offline', sensorType: 'Lidar' },
  ImuOffline: { status: 'Degraded', effect: 'sensor_offline', sensorType: 'IMU' },
  // `simulate_compatibility` spellings, accepted in the configuration's lists as well.
  CameraFailure: { status: 'Degraded', effect: 'sensor_offline', sensorType: 'Camera' },
  LidarFailure: { status: 'Degraded', effect: 'sensor_offline', sensorType: 'Lidar' },
  ImuFailure: { status: 'Degraded', effect: 'sensor_offline', sensorType: 'IMU' },
  GpsFailure: { status: 'Degraded', effect: 'sensor_offline', sensorType: 'GPS' },
  RobotHealthCritical: { status: 'Critical', effect: 'health_critical' },
};

/** What `inject_health_faults` / `--inject-health-faults` injects before every robot's entry. */
export const DEFAULT_HEALTH_FAULTS: readonly string[] = ['GPSDegraded', 'CameraOffline', 'RobotHealthCritical'];

/** `--inject-failure NAME`: the failure name → the fault it injects. */
export const FAILURE_FAULTS: Readonly<Record<string, string>> = {
  gps: 'GPSDegraded',
  camera: 'CameraOffline',
  lidar: 'LidarOffline',
  imu: 'ImuOffline',
  health: 'RobotHealthCritical',
};

/** Condition prefixes of `recovery_policy` triggers a failure answers to (`on gps.lost`, `on gnss.rtk_float`). */
const FAILURE_CONDITION_PREFIXES: Readonly<Record<string, readonly string[]>> = {
  gps: ['gps', 'gnss'],
  camera: ['camera', 'cam'],
  lidar: ['lidar'],
  imu: ['imu'],
  health: ['health', 'robot'],
};

export function faultSpec(name: string): FaultSpec {
  return HEALTH_FAULTS[name] ?? { status: 'Degraded', effect: 'none' };
}

export function worstStatus(statuses: Iterable<InjectedStatus>): InjectedStatus | null {
  let worst: InjectedStatus | null = null;
  for (const s of statuses) if (worst === null || STATUS_ORDER.indexOf(s) > STATUS_ORDER.indexOf(worst)) worst = s;
  return worst;
}

/** Distinct statuses in severity order (Degraded before Critical). */
export function statusesInOrder(statuses: Iterable<InjectedStatus>): InjectedStatus[] {
  const seen = new Set(statuses);
  return STATUS_ORDER.filter((s) => seen.has(s));
}

/** Whether a recovery trigger condition belongs to a failure: `gps.lost` answers `gps`. */
export function conditionMatchesFailure(condition: string, failure: string): boolean {
  const first = condition.split('.')[0]!.trim().toLowerCase();
  const prefixes = FAILURE_CONDITION_PREFIXES[failure] ?? [failure];
  return prefixes.includes(first);
}

export type FaultSource = 'inject_health_faults' | 'config' | 'inject_failure';

/** What is injected into one robot before its entry. */
export interface RobotInjection {
  faults: { fault: string; source: FaultSource }[];
  /** `[health.robots.<id>] policy`: the one health_policy to run; null runs every health_policy. */
  policy: string | null;
  /** `--inject-failure` name whose recovery policies run after the faults, or null. */
  failure: string | null;
}

/** Decides, per robot, what to inject (null: nothing for this robot). */
export type InjectionPlan = (robot: RobotDecl) => RobotInjection | null;

export interface InjectionRequest {
  /** `inject_health_faults`: the default faults plus the configured lists. */
  healthFaults: boolean;
  /** `--inject-failure NAME` (a key of FAILURE_FAULTS), or null. */
  failure: string | null;
  config: ResolvedConfig | null;
}

/** `[health]` of the merged configuration, read leniently (wrong types are ignored). */
function healthSection(config: ResolvedConfig | null): { faults: string[]; robots: Record<string, { faults: string[]; policy: string | null }> } {
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);
  const table = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  const health = table(config?.tree['health']);
  const robots: Record<string, { faults: string[]; policy: string | null }> = {};
  for (const [id, entry] of Object.entries(table(health['robots']))) {
    const t = table(entry);
    robots[id] = { faults: strings(t['inject_faults']), policy: typeof t['policy'] === 'string' && t['policy'] !== '' ? t['policy'] : null };
  }
  return { faults: strings(health['inject_faults']), robots };
}

/**
 * The injection plan of a simulation request, or null when nothing is to be injected (the run is
 * then exactly the plain one). With `healthFaults`, each robot gets the defaults, then the
 * `[health] inject_faults` list, then its `[health.robots.<name>] inject_faults` list (duplicates
 * dropped); `failure` adds its fault last. The configured `policy` of the robot picks its
 * health_policy.
 */
export function injectionPlan(request: InjectionRequest): InjectionPlan | null {
  if (!request.healthFaults && request.failure === null) return null;
  const section = healthSection(request.config);
  return (robot) => {
    const faults: RobotInjection['faults'] = [];
    const add = (fault: string, source: FaultSource): void => {
      if (!faults.some((f) => f.fault === fault)) faults.push({ fault, source });
    };
    const robotSection = section.robots[robot.name];
    if (request.healthFaults) {
      for (const fault of DEFAULT_HEALTH_FAULTS) add(fault, 'inject_health_faults');
      for (const fault of section.faults) add(fault, 'config');
      for (const fault of robotSection?.faults ?? []) add(fault, 'config');
    }
    if (request.failure !== null) add(FAILURE_FAULTS[request.failure] ?? request.failure, 'inject_failure');
    return { faults, policy: robotSection?.policy ?? null, failure: request.failure };
  };
}

/**
 * Rebuild the injection of a recorded run from its frames, so a deterministic replay of an
 * injected trace re-injects the same faults (the trace names them; docs/program-language.md §27 compares events and times).
 */
export function injectionPlanFromFrames(frames: readonly { event: string; payload: Record<string, unknown> }[]): InjectionPlan | null {
  const byRobot = new Map<string, RobotInjection>();
  for (const frame of frames) {
    const robot = frame.payload['robot'];
    if (typeof robot !== 'string') continue;
    if (frame.event === FAULT_EVENT && typeof frame.payload['fault'] === 'string') {
      const entry = byRobot.get(robot) ?? { faults: [], policy: null, failure: null };
      const source = frame.payload['source'];
      entry.faults.push({ fault: frame.payload['fault'], source: source === 'config' || source === 'inject_failure' ? source : 'inject_health_faults' });
      if (typeof frame.payload['failure'] === 'string') entry.failure = frame.payload['failure'];
      byRobot.set(robot, entry);
    } else if (frame.event === STATUS_EVENT && typeof frame.payload['policy'] === 'string') {
      const entry = byRobot.get(robot);
      if (entry) entry.policy = frame.payload['policy'];
    }
  }
  if (byRobot.size === 0) return null;
  return (robot) => byRobot.get(robot.name) ?? null;
}

/** Frame events (docs/program-language.md §26). */
export const FAULT_EVENT = 'health_fault_injected';
export const STATUS_EVENT = 'health_status';
export const POLICY_ACTION_EVENT = 'health_policy_action';
export const KILL_SWITCH_EVENT = 'kill_switch_triggered';
export const RECOVERY_TRIGGER_EVENT = 'recovery_triggered';
export const RECOVERY_ACTION_EVENT = 'recovery_action';

/** The health_policy declarations that apply to a robot (the configured one, else all). */
export function applicablePolicies(program: Program, policy: string | null) {
  if (policy === null) return program.healthPolicies;
  const named = program.healthPolicies.filter((p) => p.name === policy);
  return named.length > 0 ? named : program.healthPolicies;
}

/** The summary a simulation result carries under `health` when faults were injected. */
export interface HealthOutcome {
  status: 'Healthy' | InjectedStatus;
  injected: { robot: string; fault: string; status: InjectedStatus; effect: string; source: FaultSource }[];
  policy_actions: { robot: string; policy: string; status: InjectedStatus; action: string; executed: boolean }[];
  kill_switches: { robot: string; name: string; fault: string }[];
  recovery: { robot: string; failure: string; policy: string; condition: string; action: string; executed: boolean }[];
}

export function emptyHealthOutcome(): HealthOutcome {
  return { status: 'Healthy', injected: [], policy_actions: [], kill_switches: [], recovery: [] };
}
