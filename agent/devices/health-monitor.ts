import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { AlertService } from '../observability/alerts.js';
import type { TelemetryStore } from '../telemetry/telemetry-store.js';
import type { DeviceHealth, DeviceRegistry } from './device-registry.js';
import { IN_SERVICE, type DeviceLifecycleState } from './lifecycle.js';

interface Watch {
  lastHeardMs: number;
  faults: string[];
  health: DeviceHealth;
}

/**
 * Device health from heartbeats and telemetry freshness. A watched device is healthy while heard
 * within half the offline timeout and reporting no faults, degraded when late or faulty, offline
 * past the timeout (`SVC_HAL_OFFLINE_AFTER_MS`). Only transitions are announced: `HealthChanged`,
 * a `health` telemetry event, the lifecycle move of an in-service device, and alerts (an offline
 * device serving a robot is critical, which opens an incident).
 */
export class HealthMonitor {
  private readonly watches = new Map<string, Watch>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: { devices: DeviceRegistry; bus: EventBus; alerts: AlertService; telemetry: TelemetryStore },
    readonly offlineAfterMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  start(intervalMs = Math.max(50, Math.min(1000, Math.floor(this.offlineAfterMs / 10)))): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.evaluate(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The device spoke (heartbeat, telemetry, identity). `faults` comes from heartbeats only. */
  heard(deviceId: string, faults?: string[]): void {
    const now = this.now();
    const w = this.watches.get(deviceId);
    if (w) {
      w.lastHeardMs = now;
      if (faults) w.faults = faults;
    } else {
      this.watches.set(deviceId, { lastHeardMs: now, faults: faults ?? [], health: 'unknown' });
    }
    this.deps.devices.touch(deviceId, now);
    this.evaluateOne(deviceId, now);
  }

  /** The link to the device is gone (unplugged, broker says offline): no need to wait for the timeout. */
  lost(deviceId: string, reason: string): void {
    const w = this.watches.get(deviceId);
    if (!w) return;
    w.lastHeardMs = -Infinity;
    this.apply(deviceId, w, 'offline', reason);
  }

  unwatch(deviceId: string): void {
    this.watches.delete(deviceId);
  }

  healthOf(deviceId: string): DeviceHealth {
    return this.watches.get(deviceId)?.health ?? 'unknown';
  }

  evaluate(): void {
    const now = this.now();
    for (const id of this.watches.keys()) this.evaluateOne(id, now);
  }

  private evaluateOne(id: string, now: number): void {
    const w = this.watches.get(id)!;
    const age = now - w.lastHeardMs;
    let next: DeviceHealth;
    let reason: string;
    if (age > this.offlineAfterMs) {
      next = 'offline';
      reason = `no heartbeat or telemetry for ${Number.isFinite(age) ? age : this.offlineAfterMs} ms`;
    } else if (w.faults.length > 0) {
      next = 'degraded';
      reason = `device reports faults: ${w.faults.join(', ')}`;
    } else if (age > this.offlineAfterMs / 2) {
      next = 'degraded';
      reason = `last heard ${age} ms ago`;
    } else {
      next = 'healthy';
      reason = 'heartbeats and telemetry are fresh';
    }
    this.apply(id, w, next, reason);
  }

  private apply(id: string, w: Watch, next: DeviceHealth, reason: string): void {
    if (w.health === next) return;
    const from = w.health;
    w.health = next;
    const { devices, bus, alerts, telemetry } = this.deps;
    devices.setHealth(id, next);
    const device = devices.get(id);
    // In-service devices follow their health through the lifecycle.
    if (device && IN_SERVICE.has(device.lifecycle_state)) {
      const target: DeviceLifecycleState = next === 'healthy' ? 'active' : next === 'degraded' ? 'degraded' : 'offline';
      if (target !== device.lifecycle_state) devices.transition(id, target, { override: true });
    }
    bus.publish(
      platformEvent('HealthChanged', 'svc-hal', { entity_type: 'device', from, to: next, reason, diagnostic_count: w.faults.length, sources: ['hal'] }, id),
    );
    telemetry.append({ kind: 'health', target: id, status: next, from, reason, timestamp_ms: this.now() });
    if (next === 'offline') {
      const serving = device?.assigned_robot ?? null;
      alerts.raise({
        alert_type: 'health_critical',
        severity: serving ? 'critical' : 'warning',
        source: 'device-health',
        message: `device ${id} is offline${serving ? ` (serves robot ${serving})` : ''}: ${reason}`,
      });
    } else if (from === 'offline') {
      alerts.raise({ alert_type: 'custom', severity: 'info', source: 'device-health', message: `device ${id} is back (${next})` });
    }
  }
}
