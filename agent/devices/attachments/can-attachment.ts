import { CAN_BROADCAST_NODE, CanReassembler, encodeCanMessage } from '../../../firmware-bridge/can-mapping.js';
import { PROTOCOL_VERSION, SUPPORTED_VERSIONS, type Message } from '../../../firmware-bridge/messages.js';
import { SeqCounter } from '../../../firmware-bridge/session.js';
import type { CanFrame, LinkState } from '../../../hal/index.js';
import { notFound } from '../../core/errors.js';
import type { Attachment, AttachmentSink, CommandOutcome, FirmwareOutcome } from './attachment.js';
import { BridgeEndpoint } from './bridge-endpoint.js';
import { LinkFaultInjector, type LinkFault } from './link-faults.js';

/** What the attachment needs of a CAN transport: SLCAN adapters and SocketCAN links both provide it. */
export interface CanBus {
  send(frame: CanFrame): boolean;
  on(event: 'frame', listener: (frame: CanFrame) => void): unknown;
  on(event: 'state', listener: (to: LinkState, from: LinkState) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  open(options: { timeoutMs?: number }): Promise<void>;
  close(): Promise<void>;
  stats(): object;
}

/** How often the bus is asked who is there (new nodes answer the broadcast HELLO). */
const ROLL_CALL_MS = 5000;

/**
 * One CAN bus with firmware-bridge nodes on it (docs/firmware-bridge.md, CAN mapping): a broadcast
 * HELLO on every open and every few seconds, one endpoint per node that answers, segmented messages
 * reassembled per node.
 */
export class CanAttachment implements Attachment {
  private readonly reassembler = new CanReassembler();
  private readonly nodes = new Map<number, BridgeEndpoint>();
  private readonly seq = new SeqCounter();
  private nonce = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Chaos hooks by node: a corrupted CAN frame fails the controller's CRC and is lost, so noise drops frames. */
  private readonly faults = new Map<number, LinkFaultInjector>();

  constructor(
    readonly transport: 'slcan' | 'socketcan',
    readonly target: string,
    private readonly bus: CanBus,
    private readonly sink: AttachmentSink,
  ) {
    bus.on('frame', (frame) => {
      const fault = this.faults.get(frame.id & 0x3f);
      if (fault && !fault.passes('in')) return;
      const delivery = this.reassembler.push(frame);
      if (!delivery || delivery.direction !== 'from_device') return;
      this.endpointFor(delivery.node).handle(delivery.message);
    });
    bus.on('state', (to) => {
      if (to === 'open') this.rollCall();
      if (to === 'backoff' || to === 'closed') for (const e of this.nodes.values()) e.lost(`CAN bus ${target} ${to === 'closed' ? 'closed' : 'lost; reconnecting'}`);
    });
    bus.on('error', () => undefined);
  }

  private sendTo(node: number, msg: Message): void {
    const fault = this.faults.get(node);
    if (fault && !fault.passes('out')) return;
    for (const f of encodeCanMessage(msg, { node, direction: 'to_device' })) this.bus.send({ ...f, error: false });
  }

  private endpointFor(node: number): BridgeEndpoint {
    let e = this.nodes.get(node);
    if (!e) {
      e = new BridgeEndpoint((m) => this.sendTo(node, m), this.sink, {
        transport: this.transport,
        bus: this.target,
        canId: node,
      });
      e.expectNonce(this.nonce);
      this.nodes.set(node, e);
    }
    return e;
  }

  /** Broadcast HELLO: every node on the bus answers with its IDENTITY. */
  private rollCall(): void {
    this.nonce = (Math.random() * 0x1_0000_0000) >>> 0;
    for (const e of this.nodes.values()) e.expectNonce(this.nonce);
    this.sendTo(CAN_BROADCAST_NODE, { type: 'hello', seq: this.seq.next(), version_min: Math.min(...SUPPORTED_VERSIONS), version_max: PROTOCOL_VERSION, nonce: this.nonce });
  }

  async open(timeoutMs: number): Promise<void> {
    await this.bus.open({ timeoutMs });
    this.rollCall();
    this.timer = setInterval(() => this.rollCall(), ROLL_CALL_MS);
    this.timer.unref();
  }

  devices(): string[] {
    return [...this.nodes.values()].map((e) => e.deviceId).filter((id): id is string => id !== null).sort();
  }

  private endpointOf(deviceId: string): BridgeEndpoint {
    const e = [...this.nodes.values()].find((x) => x.deviceId === deviceId);
    if (!e) throw notFound('device not found');
    return e;
  }

  sendCommand(deviceId: string, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CommandOutcome> {
    return this.endpointOf(deviceId).command(name, args, timeoutMs);
  }

  updateFirmware(deviceId: string, image: Uint8Array, version: string, onProgress?: (sent: number, total: number) => void): Promise<FirmwareOutcome> {
    return this.endpointOf(deviceId).updateFirmware(image, version, onProgress);
  }

  stats(): Record<string, unknown> {
    const injected = Object.fromEntries([...this.faults.entries()].map(([node, f]) => [String(node), f.stats()]));
    return { transport: this.transport, target: this.target, bus: this.bus.stats(), reassembler: { ...this.reassembler.stats }, nodes: this.nodes.size, injected_faults: injected };
  }

  private nodeOf(deviceId: string): number {
    const entry = [...this.nodes.entries()].find(([, e]) => e.deviceId === deviceId);
    if (!entry) throw notFound('device not found');
    return entry[0];
  }

  /**
   * The bus is shared with the other nodes, so one node's reconnect does not reopen the adapter: the
   * node's session is dropped (pending commands cancelled, the device reported lost) and the bus is
   * asked who is there again; the node answers the broadcast HELLO with its IDENTITY.
   */
  async reconnect(deviceId: string, reason: string): Promise<void> {
    this.endpointOf(deviceId).lost(`CAN node session restarted: ${reason}`);
    this.rollCall();
  }

  injectFault(deviceId: string, fault: LinkFault | null): void {
    const node = this.nodeOf(deviceId);
    let f = this.faults.get(node);
    if (!f) this.faults.set(node, (f = new LinkFaultInjector()));
    f.set(fault);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const e of this.nodes.values()) e.close();
    await this.bus.close();
  }
}
