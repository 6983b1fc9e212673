import { CommandTimeoutError, MqttGateway } from '../../../hal/index.js';
import { ApiError } from '../../core/errors.js';
import type { Attachment, AttachmentSink, CommandOutcome } from './attachment.js';
import { LinkFaultInjector, type LinkFault } from './link-faults.js';

/** Devices that follow our MQTT convention (docs/mqtt-devices.md), through one broker. */
export class MqttAttachment implements Attachment {
  readonly transport = 'mqtt' as const;
  private readonly gateway: MqttGateway;
  private readonly seen = new Set<string>();
  /** Chaos hooks by device: over TCP a corrupted message never parses, so noise loses messages. */
  private readonly faults = new Map<string, LinkFaultInjector>();

  constructor(readonly target: string, prefix: string, private readonly sink: AttachmentSink) {
    this.gateway = new MqttGateway({ url: target, prefix });
    this.gateway.on('device-discovered', (e) => {
      if (!this.passes(e.device_id, 'in')) return;
      this.seen.add(e.device_id);
      sink.identity({
        id: e.device_id,
        device_type: e.identity.device_type,
        firmware_version: e.identity.firmware_version,
        hardware_revision: e.identity.hardware_revision,
        serial: e.identity.serial,
        capabilities: e.identity.capabilities,
        protocol: `svc-mqtt/${e.identity.protocol_version}`,
        transport: 'mqtt',
        endpoint_url: target,
      });
    });
    this.gateway.on('device-status', (e) => {
      if (e.status === 'offline' && this.seen.has(e.device_id)) sink.lost(e.device_id, 'the broker reports the device offline (last will or clean stop)');
    });
    this.gateway.on('telemetry', (e) => {
      if (this.passes(e.device_id, 'in')) sink.telemetry(e.device_id, e.metric, e.value, e.unit, e.ts_ms);
    });
    this.gateway.on('heartbeat', (e) => {
      if (this.passes(e.device_id, 'in')) sink.heartbeat(e.device_id, e.faults);
    });
    this.gateway.on('error', () => undefined);
  }

  /** Connects; resolves once subscribed (retained discoveries then arrive as events). */
  start(timeoutMs: number): Promise<void> {
    return this.gateway.start(timeoutMs);
  }

  devices(): string[] {
    return [...this.seen].sort();
  }

  private passes(deviceId: string, direction: 'in' | 'out'): boolean {
    return this.faults.get(deviceId)?.passes(direction) ?? true;
  }

  injectFault(deviceId: string, fault: LinkFault | null): void {
    let f = this.faults.get(deviceId);
    if (!f) this.faults.set(deviceId, (f = new LinkFaultInjector()));
    f.set(fault);
  }

  async sendCommand(deviceId: string, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CommandOutcome> {
    if (!this.passes(deviceId, 'out')) {
      // The command is lost on the way: the device never acknowledges it.
      await new Promise((r) => setTimeout(r, timeoutMs));
      throw new ApiError(504, 'upstream_error', `device ${deviceId} did not acknowledge '${name}' within ${timeoutMs} ms`);
    }
    try {
      const ack = await this.gateway.sendCommand(deviceId, name, args as never, timeoutMs);
      return { status: ack.status, detail: ack.detail ?? null };
    } catch (err) {
      if (err instanceof CommandTimeoutError) throw new ApiError(504, 'upstream_error', `device ${deviceId} did not acknowledge '${name}' within ${timeoutMs} ms`);
      throw err;
    }
  }

  stats(): Record<string, unknown> {
    const injected = Object.fromEntries([...this.faults.entries()].map(([id, f]) => [id, f.stats()]));
    return { transport: 'mqtt', target: this.target, ...this.gateway.stats(), injected_faults: injected };
  }

  close(): Promise<void> {
    return this.gateway.close();
  }
}
