import type { DeviceTransport, ObservedIdentity } from '../device-registry.js';
import type { LinkFault } from './link-faults.js';

/** What an attachment reports about the devices behind it; implemented by the device hub. */
export interface AttachmentSink {
  identity(identity: ObservedIdentity): void;
  telemetry(deviceId: string, metric: string, value: unknown, unit: string | null, tsMs: number): void;
  heartbeat(deviceId: string, faults: string[]): void;
  /** The device can no longer be reached through this attachment (link down, last will). */
  lost(deviceId: string, reason: string): void;
  /** A non-fatal problem with an attachment (e.g. its port is not there yet). */
  note?(message: string): void;
}

export interface CommandOutcome {
  status: string;
  detail: string | null;
}

export interface FirmwareOutcome {
  result: string;
  version: string | null;
  detail: string;
}

/**
 * One live connection of the HAL to a port, bus or broker, behind which one or more devices speak.
 * Attachments translate their wire protocol into sink calls and carry commands back.
 */
export interface Attachment {
  readonly transport: DeviceTransport;
  /** The port path, interface name or broker URL. */
  readonly target: string;
  /** Devices identified through this attachment so far. */
  devices(): string[];
  sendCommand(deviceId: string, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CommandOutcome>;
  updateFirmware?(deviceId: string, image: Uint8Array, version: string, onProgress?: (sent: number, total: number) => void): Promise<FirmwareOutcome>;
  stats(): Record<string, unknown>;
  /** Drop and reopen the medium that reaches the device (the HAL link's reconnect); resolves once the drop is under way. */
  reconnect?(deviceId: string, reason: string): Promise<void>;
  /** Chaos: set (or lift, with null) a fault on what this attachment carries for one device, both ways. */
  injectFault?(deviceId: string, fault: LinkFault | null): void;
  close(): Promise<void>;
}
