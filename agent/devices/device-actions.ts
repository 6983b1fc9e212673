/**
 * What the agent can do to a device of the pool, beyond reading it: the effects recovery applies
 * (docs/recovery.md) and the faults a chaos experiment injects. Implemented over the device hub
 * (HAL links and the firmware bridge) and the device pool (lifecycle); each call measures itself.
 */
export interface DeviceActionOutcome {
  /** The effect happened and the device reached the state the action aims for. */
  ok: boolean;
  action: 'reset' | 'reconnect' | 'failover' | 'quarantine';
  device_id: string;
  /** What happened, in a sentence an operator reads in the recovery history. */
  detail: string;
  started_at_ms: number;
  duration_ms: number;
  /** Failover only: the device that took over, or null when the group has none able to serve. */
  backup_id?: string | null;
}

export interface DeviceActions {
  /** Reset by command (firmware `reboot` then `clear_faults`), then wait until the device reports healthy again or `timeoutMs` passes. */
  reset(deviceId: string, timeoutMs: number): Promise<DeviceActionOutcome>;
  /** Close and reopen the device's link (HAL reconnect), then wait for its identity again or `timeoutMs`. */
  reconnect(deviceId: string, timeoutMs: number): Promise<DeviceActionOutcome>;
  /** Take the device out of service and put the next device of its redundant group (one failover ordering, agent/fleet/failover.ts) in. */
  failover(deviceId: string, reason: string): Promise<DeviceActionOutcome>;
  /** Quarantine through the device pool's lifecycle (persisted, like `POST /v1/devices/{id}/quarantine`). */
  quarantine(deviceId: string, reason: string): Promise<DeviceActionOutcome>;
  /** Chaos: drop everything the device's link carries, both ways, for `durationMs`, then restore it. */
  injectLinkLoss(deviceId: string, durationMs: number): Promise<void>;
  /** Chaos: corrupt a share (0–1) of the frames the device's link carries for `durationMs`. */
  injectNoise(deviceId: string, durationMs: number, share: number): Promise<void>;
}
