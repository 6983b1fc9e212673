import { describe, expect, it } from 'vitest';
import {
  applySimulatedFaults,
  builtinProfiles,
  declaredProfile,
  profileCatalog,
} from '../../../agent/programs/analysis/hardware-profiles.js';
import { hardware, program } from './program-factory.js';

describe('built-in hardware profiles (docs/program-language.md §9.1)', () => {
  it('has the seven profiles with the exact figures', () => {
    const byName = new Map(builtinProfiles().map((p) => [p.name, p]));
    expect([...byName.keys()]).toEqual(['RoverV1', 'RoverV2', 'JetsonOrin', 'RaspberryPi5', 'ESP32', 'SmartSpaceGatewayV1', 'BuildingEdgeV1']);
    expect(byName.get('RoverV2')).toMatchObject({
      sensors: ['Camera', 'Lidar', 'IMU', 'GPS'],
      actuators: ['DifferentialDrive', 'RoboticArm'],
      connectivity: ['WiFi6', 'Bluetooth5', 'LTE', 'GPS'],
      batteryWh: 150,
      bandwidthMbps: 100,
      latencyMs: 15,
      minPeriodMs: 8,
      powerW: 20,
    });
    expect(byName.get('JetsonOrin')).toMatchObject({ gpu: true, batteryWh: null, bandwidthMbps: 1000, latencyMs: 5, minPeriodMs: 5, powerW: 25 });
    expect(byName.get('ESP32')).toMatchObject({ sensors: ['IMU'], connectivity: ['WiFi', 'BLE'], batteryWh: 5, minPeriodMs: 50, powerW: 2 });
    expect(byName.get('SmartSpaceGatewayV1')).toMatchObject({ actuators: [], batteryWh: 0, minPeriodMs: 60, powerW: 5 });
    expect(byName.get('BuildingEdgeV1')).toMatchObject({ connectivity: ['WiFi', 'Ethernet', 'BACnet', 'KNX'], batteryWh: null });
    expect(byName.get('RaspberryPi5')).toMatchObject({ sensors: ['Camera', 'IMU'], latencyMs: 30, minPeriodMs: 15, powerW: 8 });
    expect(byName.get('RoverV1')).toMatchObject({ batteryWh: 100, bandwidthMbps: 50, latencyMs: 20, minPeriodMs: 10, powerW: 15 });
  });

  it('fills program-declared defaults: min period 20 ms, power 10 W', () => {
    const p = declaredProfile(hardware('Custom', { sensors: ['Lidar'], batteryWh: 50 }));
    expect(p).toMatchObject({ name: 'Custom', builtin: false, minPeriodMs: 20, powerW: 10, batteryWh: 50, sensors: ['Lidar'] });
    expect(declaredProfile(hardware('Fast', { minPeriodMs: 2, powerW: 40 }))).toMatchObject({ minPeriodMs: 2, powerW: 40 });
  });

  it('lets a program block replace the built-in of the same name', () => {
    const catalog = profileCatalog(program({ hardware: [hardware('RoverV2', { sensors: ['Lidar'], batteryWh: 180 })] }));
    expect(catalog.get('RoverV2')).toMatchObject({ builtin: false, sensors: ['Lidar'], batteryWh: 180, powerW: 10, minPeriodMs: 20 });
    expect(catalog.get('RoverV1')?.builtin).toBe(true);
    expect(catalog.size).toBe(7);
  });
});

describe('simulate_compatibility faults (docs/program-language.md §9.2)', () => {
  const rover = builtinProfiles().find((p) => p.name === 'RoverV2')!;

  it('removes failed sensors, halves the battery and cuts the network', () => {
    const degraded = applySimulatedFaults(rover, ['CameraFailure', 'LidarFailure', 'BatteryDegradation', 'NetworkOutage']);
    expect(degraded.sensors).toEqual(['IMU', 'GPS']);
    expect(degraded.batteryWh).toBe(75);
    expect(degraded.bandwidthMbps).toBe(0);
    expect(degraded.latencyMs).toBe(10000);
    expect(applySimulatedFaults(rover, ['ImuFailure']).sensors).toEqual(['Camera', 'Lidar', 'GPS']);
    expect(applySimulatedFaults(rover, ['LteOutage']).connectivity).toEqual(['WiFi6', 'Bluetooth5', 'GPS']);
  });

  it('leaves the original profile untouched and ignores unknown faults', () => {
    applySimulatedFaults(rover, ['CameraFailure']);
    expect(rover.sensors).toContain('Camera');
    expect(applySimulatedFaults(rover, ['SolarFlare'])).toEqual(rover);
  });
});
