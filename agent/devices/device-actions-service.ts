import { failoverOrder, usableForFailover } from '../fleet/failover.js';
import type { DeviceActionOutcome, DeviceActions } from './device-actions.js';
import type { DeviceHub, DeviceSignal } from './device-hub.js';
import type { DevicePool } from './device-pool.js';
import type { DeviceRegistry } from './device-registry.js';
import type { HealthMonitor } from './health-monitor.js';
import { IN_SERVICE } from './lifecycle.js';

/** Longest a single command waits for its acknowledgement inside an action. */
const COMMAND_TIMEOUT_MS = 2000;

/**
 * Records what the hub hears of one device from the moment it is made, so an action can wait for
 * "the next identity" or "a clean heartbeat" without missing one that came while it was sending.
 */
class SignalLog {
  private readonly seen: DeviceSignal[] = [];
  private cursor = 0;
  private wake: (() => void) | null = null;
  private readonly stop: () => void;

  constructor(hub: DeviceHub, deviceId: string) {
    this.stop = hub.watch((s) => {
      if (s.device_id !== deviceId) return;
      this.seen.push(s);
      this.wake?.();
    });
  }

  /** Forget what came so far: the next wait looks only at what arrives from now on. */
  skip(): void {
    this.cursor = this.seen.length;
  }

  /** The first signal (from the cursor on) that `pred` accepts, or null at `deadline`. */
  async until(pred: (s: DeviceSignal) => boolean, deadline: number): Promise<DeviceSignal | null> {
    for (;;) {
      while (this.cursor < this.seen.length) {
        const s = this.seen[this.cursor++]!;
        if (pred(s)) return s;
      }
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = null;
    }
  }

  close(): void {
    this.stop();
    this.wake?.();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * `DeviceActions` over the device hub (commands, link reconnects, fault injection), the registry and
 * the device pool (lifecycle) and the health monitor (what "healthy" means). See docs/devices.md §
 * Actions. Unknown devices throw `not_found`; everything else that goes wrong is the outcome's detail.
 */
export class DeviceActionsService implements DeviceActions {
  constructor(
    private readonly deps: {
      hub: DeviceHub;
      registry: DeviceRegistry;
      pool: DevicePool;
      health: HealthMonitor;
    },
  ) {}

  private outcome(action: DeviceActionOutcome['action'], deviceId: string, startedAt: number, ok: boolean, detail: string, extra: Partial<DeviceActionOutcome> = {}): DeviceActionOutcome {
    return { ok, action, device_id: deviceId, detail, started_at_ms: startedAt, duration_ms: Date.now() - startedAt, ...extra };
  }

  async reset(deviceId: string, timeoutMs: number): Promise<DeviceActionOutcome> {
    this.deps.registry.require(deviceId);
    const startedAt = Date.now();
    const deadline = startedAt + timeoutMs;
    const log = new SignalLog(this.deps.hub, deviceId);
    const cmdTimeout = (): number => Math.max(200, Math.min(COMMAND_TIMEOUT_MS, deadline - Date.now()));
    const steps: string[] = [];
    try {
      let rebooted = false;
      try {
        const ack = await this.deps.hub.sendCommand(deviceId, 'reboot', {}, cmdTimeout());
        if (ack.status === 'timeout' || ack.status === 'cancelled') {
          return this.outcome('reset', deviceId, startedAt, false, `reboot not acknowledged (${ack.status}${ack.detail ? `: ${ack.detail}` : ''})`);
        }
        rebooted = ack.status === 'ok';
        steps.push(rebooted ? 'rebooted' : `reboot answered ${ack.status}${ack.detail ? ` (${ack.detail})` : ''}`);
      } catch (err) {
        // A device whose command set has no reboot (MQTT devices name their own commands) is still reset by clear_faults.
        const msg = errorText(err);
        if (/unknown command|not implemented|unknown_command/i.test(msg)) steps.push('no reboot command');
        else return this.outcome('reset', deviceId, startedAt, false, `reboot failed: ${msg}`);
      }
      if (rebooted) {
        // The rebooted device announces itself again (IDENTITY) once it has booted.
        const back = await log.until((s) => s.kind === 'identity', deadline);
        if (!back) return this.outcome('reset', deviceId, startedAt, false, `device did not identify itself again within ${timeoutMs} ms of the reboot`);
      }
      try {
        const ack = await this.deps.hub.sendCommand(deviceId, 'clear_faults', {}, cmdTimeout());
        steps.push(ack.status === 'ok' ? `faults cleared${ack.detail ? ` (${ack.detail})` : ''}` : `clear_faults answered ${ack.status}${ack.detail ? ` (${ack.detail})` : ''}`);
      } catch (err) {
        steps.push(`clear_faults failed (${errorText(err)})`);
      }
      log.skip();
      let lastFaults: string[] = [];
      const healthy = await log.until((s) => {
        if (s.kind !== 'heartbeat') return false;
        lastFaults = s.faults;
        return s.faults.length === 0 && this.deps.health.healthOf(deviceId) === 'healthy';
      }, deadline);
      if (!healthy) {
        const why = lastFaults.length > 0 ? `it still reports ${lastFaults.join(', ')}` : `health is ${this.deps.health.healthOf(deviceId)}`;
        return this.outcome('reset', deviceId, startedAt, false, `${steps.join(', ')}; not healthy within ${timeoutMs} ms: ${why}`);
      }
      return this.outcome('reset', deviceId, startedAt, true, `${steps.join(', ')}; healthy again (heartbeat without faults)`);
    } catch (err) {
      return this.outcome('reset', deviceId, startedAt, false, `reset failed: ${errorText(err)}`);
    } finally {
      log.close();
    }
  }

  async reconnect(deviceId: string, timeoutMs: number): Promise<DeviceActionOutcome> {
    this.deps.registry.require(deviceId);
    const startedAt = Date.now();
    const deadline = startedAt + timeoutMs;
    const log = new SignalLog(this.deps.hub, deviceId);
    try {
      await this.deps.hub.reconnect(deviceId, 'reconnect requested');
      const back = await log.until((s) => s.kind === 'identity', deadline);
      if (!back) return this.outcome('reconnect', deviceId, startedAt, false, `link reopened but the device did not identify itself within ${timeoutMs} ms`);
      return this.outcome('reconnect', deviceId, startedAt, true, `link closed and reopened; device identified itself again (health ${this.deps.health.healthOf(deviceId)})`);
    } catch (err) {
      return this.outcome('reconnect', deviceId, startedAt, false, `reconnect failed: ${errorText(err)}`);
    } finally {
      log.close();
    }
  }

  async failover(deviceId: string, reason: string): Promise<DeviceActionOutcome> {
    const failed = this.deps.registry.require(deviceId);
    const startedAt = Date.now();
    const group = failed.redundant_group;
    if (!group) return this.outcome('failover', deviceId, startedAt, false, `device ${deviceId} has no redundant group; nothing to fail over to`, { backup_id: null });
    const members = this.deps.registry.list().filter((d) => d.redundant_group === group);
    const backup = failoverOrder(members).find((d) => d.id !== deviceId && usableForFailover(d)) ?? null;
    if (!backup) {
      return this.outcome('failover', deviceId, startedAt, false, `no device of group ${group} can serve (${members.length - 1} other member(s), none usable); ${deviceId} stays as it is`, {
        backup_id: null,
      });
    }
    try {
      const { robot } = this.deps.pool.failover(deviceId, backup.id, reason);
      return this.outcome('failover', deviceId, startedAt, true, `${deviceId} quarantined; ${backup.id} now serves group ${group}${robot ? ` for robot ${robot}` : ''}`, {
        backup_id: backup.id,
      });
    } catch (err) {
      return this.outcome('failover', deviceId, startedAt, false, `failover to ${backup.id} failed: ${errorText(err)}`, { backup_id: null });
    }
  }

  async quarantine(deviceId: string, reason: string): Promise<DeviceActionOutcome> {
    const d = this.deps.registry.require(deviceId);
    const startedAt = Date.now();
    try {
      // A device in service that misbehaves is taken out by the agent itself; other states follow the lifecycle table.
      const r = this.deps.pool.quarantine(deviceId, reason, IN_SERVICE.has(d.lifecycle_state));
      return this.outcome('quarantine', deviceId, startedAt, r.ok, r.message);
    } catch (err) {
      return this.outcome('quarantine', deviceId, startedAt, false, errorText(err));
    }
  }

  async injectLinkLoss(deviceId: string, durationMs: number): Promise<void> {
    this.deps.registry.require(deviceId);
    await this.withFault(deviceId, { drop: true, corruptShare: 0 }, durationMs);
  }

  async injectNoise(deviceId: string, durationMs: number, share: number): Promise<void> {
    this.deps.registry.require(deviceId);
    await this.withFault(deviceId, { drop: false, corruptShare: Math.min(1, Math.max(0, share)) }, durationMs);
  }

  private async withFault(deviceId: string, fault: { drop: boolean; corruptShare: number }, durationMs: number): Promise<void> {
    this.deps.hub.injectFault(deviceId, fault);
    try {
      // The fault lasts a set time: a timer is what it is.
      await new Promise((r) => setTimeout(r, Math.max(0, durationMs)));
    } finally {
      this.deps.hub.injectFault(deviceId, null);
    }
  }
}
