import { describe, expect, it } from 'vitest';
import { blankDeviceRecord, type DeviceRecord } from '../../agent/devices/device-registry.js';
import { failoverOrder } from '../../agent/fleet/failover.js';
import { FleetService, robotHealth } from '../../agent/fleet/fleet-service.js';
import type { ResolvedConfig } from '../../agent/project/resolve-config.js';

function device(id: string, fields: Partial<DeviceRecord> = {}): DeviceRecord {
  return { ...blankDeviceRecord(id, 0), device_type: 'gps', lifecycle_state: 'active', health_status: 'healthy', source: 'config', ...fields };
}

function config(tree: Record<string, unknown>, robots: string[] = []): ResolvedConfig {
  return {
    tree,
    fleetId: 'yard',
    robots: robots.map((id) => ({ id, hardware_profile: null, model: null, compute: null, devices: [] })),
  } as unknown as ResolvedConfig;
}

function service(devices: DeviceRecord[], cfg: ResolvedConfig | null = config({})) {
  return new FleetService({ devices: () => devices, config: () => cfg, linkStats: () => [], now: () => 10_000 });
}

describe('failover ordering', () => {
  it('orders by priority, devices without one last, ties by id', () => {
    const order = failoverOrder([
      { id: 'gps-z', failover_priority: null },
      { id: 'gps-b', failover_priority: 2 },
      { id: 'gps-a', failover_priority: 2 },
      { id: 'gps-p', failover_priority: 1 },
    ]);
    expect(order.map((d) => d.id)).toEqual(['gps-p', 'gps-a', 'gps-b', 'gps-z']);
  });

  it('a degraded primary still serves; an offline or quarantined one hands over to the next in order', () => {
    const primary = device('gps-a', { redundant_group: 'gps', failover_priority: 1, health_status: 'degraded', robot_id: 'rover-1' });
    const backup = device('gps-b', { redundant_group: 'gps', failover_priority: 2, robot_id: 'rover-1' });
    const spare = device('gps-c', { redundant_group: 'gps', robot_id: 'rover-1' });
    const imu = device('imu-1', { device_type: 'imu', redundant_group: 'imu', failover_priority: 1, lifecycle_state: 'retired' });
    // Registry order is not failover order.
    const fleet = service([spare, imu, backup, primary], config({}, ['rover-1']));

    expect(fleet.failoverChains()).toEqual({
      chains: [
        {
          group: 'gps',
          chain: [
            { device_id: 'gps-a', priority: 1, lifecycle_state: 'active', health_status: 'degraded', usable: true },
            { device_id: 'gps-b', priority: 2, lifecycle_state: 'active', health_status: 'healthy', usable: true },
            { device_id: 'gps-c', priority: null, lifecycle_state: 'active', health_status: 'healthy', usable: true },
          ],
          active_device: 'gps-a',
          exhausted: false,
        },
        { group: 'imu', chain: [{ device_id: 'imu-1', priority: 1, lifecycle_state: 'retired', health_status: 'healthy', usable: false }], active_device: null, exhausted: true },
      ],
      count: 2,
    });
    // The robot is only as healthy as its worst device.
    expect(fleet.robots()[0]).toMatchObject({ id: 'rover-1', device_count: 3, health_status: 'degraded' });

    primary.health_status = 'offline';
    expect(fleet.failoverChains().chains[0]).toMatchObject({ active_device: 'gps-b', exhausted: false });
    expect(fleet.robots()[0]!.health_status).toBe('offline');

    primary.health_status = 'healthy';
    primary.lifecycle_state = 'quarantined';
    backup.lifecycle_state = 'failed';
    expect(fleet.failoverChains().chains[0]).toMatchObject({ active_device: 'gps-c' });
  });

  it('robot health: worst of offline, degraded, unknown, healthy', () => {
    expect(robotHealth([device('a'), device('b', { health_status: 'unknown' })])).toBe('unknown');
    expect(robotHealth([device('a'), device('b', { lifecycle_state: 'degraded' })])).toBe('degraded');
    expect(robotHealth([device('a', { lifecycle_state: 'failed' }), device('b', { health_status: 'degraded' })])).toBe('offline');
    expect(robotHealth([device('a')])).toBe('healthy');
  });
});

describe('package trust', () => {
  const tree = {
    providers: { ublox: { package: 'gnss-driver' } },
    dependencies: { 'gnss-driver': '2.1.0', vision: '^1.0', planner: { version: '=0.4.2-rc.1' }, loose: { git: 'https://example.com/x' } },
  };
  const devices = [device('gps-a', { provider: 'ublox' }), device('gps-b', { provider: 'ublox' }), device('cam', { provider: 'other' })];

  it('scores declared (30), pinned (40) and provider-backed (30) versions; 70 and up is trusted', () => {
    const report = service(devices, config(tree)).packageTrust();
    expect(report.packages.map((p) => [p.package, p.version, p.score, p.trusted])).toEqual([
      ['gnss-driver', '2.1.0', 100, true],
      ['loose', null, 0, false],
      ['planner', '=0.4.2-rc.1', 70, true],
      ['vision', '^1.0', 30, false],
    ]);
    expect(report.packages[0]).toMatchObject({ provider: 'ublox', used_by_devices: ['gps-a', 'gps-b'] });
    expect(report.packages[0]!.factors).toEqual([
      { factor: 'version_declared', passed: true, weight: 30 },
      { factor: 'version_pinned', passed: true, weight: 40 },
      { factor: 'provider_known', passed: true, weight: 30 },
    ]);
    // (100 + 0 + 70 + 30) / 4 = 50
    expect(report).toMatchObject({ score: 50, trusted: false, count: 4 });
  });

  it('one package by name; no packages means no score', () => {
    expect(service(devices, config(tree)).packageTrust('planner')).toMatchObject({ count: 1, score: 70, trusted: true });
    expect(service(devices, null).packageTrust()).toEqual({ packages: [], score: null, trusted: false, count: 0 });
  });
});

describe('policies and reports', () => {
  it('diagnosis keys: [diagnosis] over [assurance] over defaults', () => {
    const fleet = service([], config({ assurance: { minimum_score: 85, require_anomaly_handlers: true }, diagnosis: { require_anomaly_handlers: false } }));
    expect(fleet.assuranceSummary()).toEqual({
      policy: { minimum_score: 85, require_recovery: true, require_resilience: true, require_mitigations: false, require_anomaly_handlers: true },
      configured: ['minimum_score', 'require_anomaly_handlers'],
      config_loaded: true,
    });
    expect(fleet.diagnosisSummary()).toEqual({
      policy: { require_mitigations: false, require_anomaly_handlers: false },
      sources: { require_mitigations: 'default', require_anomaly_handlers: 'diagnosis' },
      config_loaded: true,
    });
  });

  it('device reports list issues and freshness', () => {
    const fleet = service([device('gps-a', { lifecycle_state: 'quarantined', quarantine_reason: 'spoofing', trust_level: 'trusted', last_seen_ms: 7_500 }), device('imu', { transport: 'serial', health_status: 'offline' })]);
    expect(fleet.deviceReports().reports.map((r) => [r.device_id, r.age_ms, r.issues])).toEqual([
      ['gps-a', 2_500, ['quarantined: spoofing']],
      ['imu', null, ['offline', 'firmware version unknown', 'no trust level']],
    ]);
  });
});
