/**
 * Hardware profiles a program is checked against (docs/program-language.md §9.1): the built-in catalogue,
 * program-declared `hardware X {}` blocks (which replace a built-in of the same name), and the
 * `simulate_compatibility` faults that degrade a profile before checking (§9.2).
 */
import type { HardwareProfileDecl, Loc, Program } from '../language/ast.js';

export interface HardwareProfile {
  name: string;
  /** True for the built-in catalogue entry, false for a program `hardware` block. */
  builtin: boolean;
  cpu: string | null;
  memoryMb: number | null;
  storageMb: number | null;
  /** `true`, a TOPS figure, or null/false for none. */
  gpu: boolean | number | null;
  sensors: string[];
  actuators: string[];
  connectivity: string[];
  /** Watt-hours; null = no battery / unknown. */
  batteryWh: number | null;
  bandwidthMbps: number | null;
  latencyMs: number | null;
  minPeriodMs: number;
  powerW: number;
  /** Where a program-declared profile was written; null for built-ins. */
  loc: Loc | null;
}

/** Defaults for program-declared profiles that leave these out (docs/program-language.md §9.1). */
export const DECLARED_PROFILE_MIN_PERIOD_MS = 20;
export const DECLARED_PROFILE_POWER_W = 10;

type BuiltinRow = Pick<
  HardwareProfile,
  'name' | 'gpu' | 'sensors' | 'actuators' | 'connectivity' | 'batteryWh' | 'bandwidthMbps' | 'latencyMs' | 'minPeriodMs' | 'powerW'
>;

/** docs/program-language.md §9.1 table, figure for figure. */
const BUILTIN_ROWS: readonly BuiltinRow[] = [
  {
    name: 'RoverV1',
    gpu: null,
    sensors: ['Camera', 'Lidar', 'IMU'],
    actuators: ['DifferentialDrive'],
    connectivity: ['WiFi', 'Ethernet'],
    batteryWh: 100,
    bandwidthMbps: 50,
    latencyMs: 20,
    minPeriodMs: 10,
    powerW: 15,
  },
  {
    name: 'RoverV2',
    gpu: null,
    sensors: ['Camera', 'Lidar', 'IMU', 'GPS'],
    actuators: ['DifferentialDrive', 'RoboticArm'],
    connectivity: ['WiFi6', 'Bluetooth5', 'LTE', 'GPS'],
    batteryWh: 150,
    bandwidthMbps: 100,
    latencyMs: 15,
    minPeriodMs: 8,
    powerW: 20,
  },
  {
    name: 'JetsonOrin',
    gpu: true,
    sensors: ['Camera', 'Lidar', 'IMU'],
    actuators: ['DifferentialDrive'],
    connectivity: ['Ethernet', 'WiFi6', 'FiveG'],
    batteryWh: null,
    bandwidthMbps: 1000,
    latencyMs: 5,
    minPeriodMs: 5,
    powerW: 25,
  },
  {
    name: 'RaspberryPi5',
    gpu: null,
    sensors: ['Camera', 'IMU'],
    actuators: ['DifferentialDrive'],
    connectivity: ['WiFi', 'Bluetooth', 'Ethernet'],
    batteryWh: null,
    bandwidthMbps: 100,
    latencyMs: 30,
    minPeriodMs: 15,
    powerW: 8,
  },
  {
    name: 'ESP32',
    gpu: null,
    sensors: ['IMU'],
    actuators: ['DifferentialDrive'],
    connectivity: ['WiFi', 'BLE'],
    batteryWh: 5,
    bandwidthMbps: 10,
    latencyMs: 100,
    minPeriodMs: 50,
    powerW: 2,
  },
  {
    name: 'SmartSpaceGatewayV1',
    gpu: null,
    sensors: ['Camera', 'IMU'],
    actuators: [],
    connectivity: ['WiFi', 'Ethernet', 'Thread', 'Zigbee'],
    batteryWh: 0,
    bandwidthMbps: 100,
    latencyMs: 20,
    minPeriodMs: 60,
    powerW: 5,
  },
  {
    name: 'BuildingEdgeV1',
    gpu: null,
    sensors: ['Camera', 'IMU'],
    actuators: [],
    connectivity: ['WiFi', 'Ethernet', 'BACnet', 'KNX'],
    batteryWh: null,
    bandwidthMbps: 1000,
    latencyMs: 5,
    minPeriodMs: 10,
    powerW: 15,
  },
];

/** Fresh copies of the built-in profiles (callers may degrade them with faults). */
export function builtinProfiles(): HardwareProfile[] {
  return BUILTIN_ROWS.map((row) => ({
    ...row,
    builtin: true,
    cpu: null,
    memoryMb: null,
    storageMb: null,
    sensors: [...row.sensors],
    actuators: [...row.actuators],
    connectivity: [...row.connectivity],
    loc: null,
  }));
}

export function builtinProfileNames(): string[] {
  return BUILTIN_ROWS.map((row) => row.name);
}

/** A program `hardware X {}` block as a profile, with the docs/program-language.md §9.1 defaults filled in. */
export function declaredProfile(decl: HardwareProfileDecl): HardwareProfile {
  return {
    name: decl.name,
    builtin: false,
    cpu: decl.cpu,
    memoryMb: decl.memoryMb,
    storageMb: decl.storageMb,
    gpu: decl.gpu,
    sensors: [...decl.sensors],
    actuators: [...decl.actuators],
    connectivity: [...decl.connectivity],
    batteryWh: decl.batteryWh,
    bandwidthMbps: decl.bandwidthMbps,
    latencyMs: decl.latencyMs,
    minPeriodMs: decl.minPeriodMs ?? DECLARED_PROFILE_MIN_PERIOD_MS,
    powerW: decl.powerW ?? DECLARED_PROFILE_POWER_W,
    loc: decl.loc,
  };
}

/**
 * Every profile the program can be checked against, by name: built-ins, then program blocks
 * replacing or adding (the first block of a name wins, as the parser keeps them in order).
 */
export function profileCatalog(program: Program): Map<string, HardwareProfile> {
  const catalog = new Map<string, HardwareProfile>();
  for (const profile of builtinProfiles()) catalog.set(profile.name, profile);
  const declared = new Set<string>();
  for (const decl of program.hardware) {
    if (declared.has(decl.name)) continue;
    declared.add(decl.name);
    catalog.set(decl.name, declaredProfile(decl));
  }
  return catalog;
}

/** Program-declared profiles only (capability inference reads `uses hardware H` through these). */
export function declaredProfiles(program: Program): Map<string, HardwareProfile> {
  const out = new Map<string, HardwareProfile>();
  for (const decl of program.hardware) if (!out.has(decl.name)) out.set(decl.name, declaredProfile(decl));
  return out;
}

/** The `simulate_compatibility` faults that change a profile (the cases of `applySimulatedFaults`). */
export const PROFILE_FAULTS = [
  'CameraFailure', 'LidarFailure', 'ImuFailure', 'GpsFailure', 'BatteryDegradation', 'NetworkOutage', 'LteOutage', 'WeakWifi', 'PacketLoss',
] as const;

/**
 * Apply `simulate_compatibility` faults to a copy of the profile (docs/program-language.md §9.2). Faults not listed here
 * are ignored. Our figures for the faults the reference only names: `LteOutage` removes LTE and
 * FiveG, `WeakWifi` halves the bandwidth and adds 50 ms latency, `PacketLoss` doubles latency,
 * `GpsFailure` removes GPS/GNSS.
 */
export function applySimulatedFaults(profile: HardwareProfile, faults: readonly string[]): HardwareProfile {
  if (faults.length === 0) return profile;
  const out: HardwareProfile = {
    ...profile,
    sensors: [...profile.sensors],
    actuators: [...profile.actuators],
    connectivity: [...profile.connectivity],
  };
  const without = (list: string[], names: readonly string[]): string[] => list.filter((item) => !names.includes(item));
  for (const fault of faults) {
    switch (fault) {
      case 'CameraFailure':
        out.sensors = without(out.sensors, ['Camera']);
        break;
      case 'LidarFailure':
        out.sensors = without(out.sensors, ['Lidar']);
        break;
      case 'ImuFailure':
        out.sensors = without(out.sensors, ['IMU']);
        break;
      case 'GpsFailure':
        out.sensors = without(out.sensors, ['GPS', 'GNSS']);
        break;
      case 'BatteryDegradation':
        if (out.batteryWh !== null) out.batteryWh = out.batteryWh / 2;
        break;
      case 'NetworkOutage':
        out.bandwidthMbps = 0;
        out.latencyMs = 10_000;
        break;
      case 'LteOutage':
        out.connectivity = without(out.connectivity, ['LTE', 'FiveG']);
        break;
      case 'WeakWifi':
        if (out.bandwidthMbps !== null) out.bandwidthMbps = out.bandwidthMbps / 2;
        out.latencyMs = (out.latencyMs ?? 0) + 50;
        break;
      case 'PacketLoss':
        if (out.latencyMs !== null) out.latencyMs = out.latencyMs * 2;
        break;
      default:
        break;
    }
  }
  return out;
}
