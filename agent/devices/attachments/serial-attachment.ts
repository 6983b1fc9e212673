import { encodeMessage, FrameDecoder } from '../../../firmware-bridge/frame.js';
import type { Message } from '../../../firmware-bridge/messages.js';
import { SerialLink } from '../../../hal/index.js';
import type { Attachment, AttachmentSink, CommandOutcome, FirmwareOutcome } from './attachment.js';
import { BridgeEndpoint } from './bridge-endpoint.js';

/**
 * One serial line with one firmware-bridge device on it: COBS frames over the link, a HELLO on
 * every (re)open, the device lost when the line goes away; the link reconnects on its own.
 */
export class SerialAttachment implements Attachment {
  readonly transport = 'serial' as const;
  private readonly link: SerialLink;
  private readonly decoder = new FrameDecoder();
  private readonly endpoint: BridgeEndpoint;

  constructor(readonly target: string, baudRate: number, sink: AttachmentSink) {
    this.link = new SerialLink({ path: target, baudRate });
    this.endpoint = new BridgeEndpoint((m: Message) => this.link.write(encodeMessage(m)), sink, { transport: 'serial', port: target });
    this.link.on('open', () => this.endpoint.greet());
    this.link.on('data', (chunk) => {
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
    return { transport: 'serial', target: this.target, link: this.link.stats(), frames: { ...this.decoder.stats }, device_errors: this.endpoint.errorsFromDevice };
  }

  async close(): Promise<void> {
    this.endpoint.close();
    await this.link.close();
  }
}
