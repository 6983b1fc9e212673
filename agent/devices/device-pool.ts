import type { AlertService } from '../observability/alerts.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import type { DeviceRecord, DeviceRegistry } from './device-registry.js';
import type { HealthMonitor } from './health-monitor.js';
import { evaluateProvisioning, type ProvisioningReport } from './provisioning.js';

export interface LifecycleResult {
  ok: boolean;
  device_id: string;
  lifecycle_state: string;
  message: string;
}

export interface ReadinessImpact {
  mission_ready: boolean;
  impact: {
    total_devices: number;
    blocked_count: number;
    blocked_devices: Array<{ device_id: string; lifecycle_state: string; health_status: string; assigned_robot: string | null; reason: string }>;
  };
}

const BLOCKING_STATES = new Set(['quarantined', 'failed', 'offline', 'degraded', 'retired', 'discovered']);

/** The device pool's workflows: provisioning, assignment, quarantine, trust, and readiness impact. */
export class DevicePool {
  constructor(
    readonly registry: DeviceRegistry,
    readonly health: HealthMonitor,
    private readonly alerts: AlertService,
    private readonly config: ResolvedConfig | null,
  ) {}

  provision(deviceId: string, robotId: string | null, actor: string): { report: ProvisioningReport; device: DeviceRecord } {
    const device = this.registry.require(deviceId);
    const robot = robotId ?? device.assigned_robot ?? device.robot_id;
    const report = evaluateProvisioning(device, robot, this.config, this.health.offlineAfterMs);
    if (!report.ready) {
      this.registry.transition(deviceId, 'quarantined', {
        override: true,
        changes: { quarantine_reason: `provisioning failed: ${report.blockers.join('; ')}`, provisioning_id: report.provisioning_id },
      });
      this.alerts.raise({
        alert_type: 'readiness_failed',
        severity: 'critical',
        source: 'provisioning',
        message: `provisioning of device ${deviceId} failed: ${report.blockers.join('; ')}`,
      });
    } else {
      // Provisioning is the workflow that takes a device through verified and assigned into service.
      this.registry.transition(deviceId, 'active', {
        override: true,
        changes: { assigned_robot: robot, provisioning_id: report.provisioning_id, quarantine_reason: null, trusted_by: device.trusted_by ?? actor },
      });
    }
    return { report, device: this.registry.require(deviceId) };
  }

  assign(deviceId: string, robotId: string, override = false): LifecycleResult {
    const robots = this.config?.robots.map((r) => r.id) ?? [];
    if (robots.length > 0 && !robots.includes(robotId)) {
      return { ok: false, device_id: deviceId, lifecycle_state: this.registry.require(deviceId).lifecycle_state, message: `robot ${robotId} is not in the fleet configuration` };
    }
    const d = this.registry.transition(deviceId, 'assigned', { override, changes: { assigned_robot: robotId } });
    return { ok: true, device_id: deviceId, lifecycle_state: d.lifecycle_state, message: `device assigned to robot ${robotId}` };
  }

  quarantine(deviceId: string, reason: string, override = false): LifecycleResult {
    const d = this.registry.transition(deviceId, 'quarantined', { override, changes: { quarantine_reason: reason } });
    return { ok: true, device_id: deviceId, lifecycle_state: d.lifecycle_state, message: `device quarantined: ${reason}` };
  }

  /**
   * Failover: `failedId` leaves service (quarantined with the reason, released from its robot) and
   * `backupId` serves the robot in its place (`active`, or `degraded` when it reports faults). Both
   * moves are the agent's own decision on a device that stopped serving, so they bypass the table.
   */
  failover(failedId: string, backupId: string, reason: string): { failed: DeviceRecord; backup: DeviceRecord; robot: string | null } {
    const failed = this.registry.require(failedId);
    const backup = this.registry.require(backupId);
    const robot = failed.assigned_robot ?? backup.assigned_robot ?? failed.robot_id ?? backup.robot_id;
    this.registry.transition(failedId, 'quarantined', { override: true, changes: { quarantine_reason: `failover to ${backupId}: ${reason}`, assigned_robot: null } });
    const serving = backup.health_status === 'degraded' ? 'degraded' : 'active';
    this.registry.transition(backupId, serving, { override: true, changes: { assigned_robot: robot, quarantine_reason: null } });
    this.alerts.raise({
      alert_type: 'custom',
      severity: 'warning',
      source: 'device-failover',
      message: `device ${failedId} failed over to ${backupId}${robot ? ` (robot ${robot})` : ''}: ${reason}`,
    });
    return { failed: this.registry.require(failedId), backup: this.registry.require(backupId), robot };
  }

  trust(deviceId: string, actor: string): LifecycleResult {
    const current = this.registry.require(deviceId);
    const promote = current.lifecycle_state === 'discovered' || current.lifecycle_state === 'quarantined';
    const d = promote
      ? this.registry.transition(deviceId, 'verified', { changes: { trust_level: 'trusted', trusted_by: actor, quarantine_reason: null } })
      : this.registry.update(deviceId, { trust_level: 'trusted', trusted_by: actor });
    return { ok: true, device_id: deviceId, lifecycle_state: d.lifecycle_state, message: `device trusted by ${actor}` };
  }

  /** Devices serving a robot that cannot do their job now block the mission (POST /v1/readiness/run). */
  readinessImpact(): ReadinessImpact {
    const devices = this.registry.list();
    const blocked = devices
      .filter((d) => d.assigned_robot !== null && (BLOCKING_STATES.has(d.lifecycle_state) || d.health_status === 'offline'))
      .map((d) => ({
        device_id: d.id,
        lifecycle_state: d.lifecycle_state,
        health_status: d.health_status,
        assigned_robot: d.assigned_robot,
        reason: d.health_status === 'offline' ? 'device is offline' : `device is ${d.lifecycle_state}`,
      }));
    return { mission_ready: blocked.length === 0, impact: { total_devices: devices.length, blocked_count: blocked.length, blocked_devices: blocked } };
  }
}
