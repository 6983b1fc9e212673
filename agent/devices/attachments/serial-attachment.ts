import { encodeMessage, FrameDecoder } from '../../../firmware-bridge/frame.js';
import type { Message } from '../../../firmware-bridge/messages.js';
import { SerialLink } from '../../../hal/index.js';
import type { Attachment, AttachmentSink, CommandOutcome, FirmwareOutcome } from './attachment.js';
import { BridgeEndpoint } from './bridge-endpoint.js';
import { LinkFaultInjector, type LinkFault } from './link-faults.js';

/**
 * One serial line with one firmware-bridge device on it: COBS frames over the link, a HELLO on
 * every (re)open, the device lost when the line goes away; the link reconnects on its own.
 */
export class SerialAttachment implements Attachment {
  readonly transport = 'serial' as const;
  private readonly link: SerialLink;
  private readonly decoder = new FrameDecoder();
  private readonly endpoint: BridgeEndpoint;
  /** Chaos hook: frames of this line dropped or corrupted in the agent's receive and send paths. */
  private readonly faults = new LinkFaultInjector();

  constructor(readonly target: string, baudRate: number, sink: AttachmentSink) {
    this.link = new SerialLink({ path: target, baudRate });
    this.endpoint = new BridgeEndpoint(
      (m: Message) => {
        const frame = this.faults.outboundFrame(encodeMessage(m));
        if (frame) this.link.write(frame);
      },
      sink,
      { transport: 'serial', port: target },
    );
    this.link.on('open', () => this.endpoint.greet());
    this.link.on('data', (raw) => {
      const chunk = this.faults.inboundBytes(raw);
      if (!chunk) return;
      for (const msg of this.decoder.push(chunk)) this.endpoint.handle(msg);
    });
    this.link.on('state', (to) => {
      if (to === 'backoff' || to === 'closed') this.endpoint.lost(`serial line ${target} ${to === 'closed' ? 'closed' : 'lost; reconnecting'}`);
    });
    this.link.on('error', () => undefined);
  }

  open(timeoutMs: number): Promise<void> {
    return this.link.open({ timeoutMs });
  }

  devices(): string[] {
    return this.endpoint.deviceId ? [this.endpoint.deviceId] : [];
  }

  sendCommand(_deviceId: string, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CommandOutcome> {
    return this.endpoint.command(name, args, timeoutMs);
  }

  updateFirmware(_deviceId: string, image: Uint8Array, version: string, onProgress?: (sent: number, total: number) => void): Promise<FirmwareOutcome> {
    return this.endpoint.updateFirmware(image, version, onProgress);
  }

  stats(): Record<string, unknown> {
    return {
      transport: 'serial',
      target: this.target,
      link: this.link.stats(),
      frames: { ...this.decoder.stats },
      device_errors: this.endpoint.errorsFromDevice,
      injected_faults: this.faults.stats(),
    };
  }

  /** The HAL link drops the port and reopens it after its backoff; the endpoint greets the device again on open. */
  async reconnect(_deviceId: string, reason: string): Promise<void> {
    if (this.link.state === 'closed') throw new Error(`serial line ${this.target} is closed`);
    this.link.restart(reason);
  }

  injectFault(_deviceId: string, fault: LinkFault | null): void {
    this.faults.set(fault);
  }

  async close(): Promise<void> {
    this.endpoint.close();
    await this.link.close();
  }
}
