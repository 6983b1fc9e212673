import { FirmwareUpdater } from '../../../firmware-bridge/firmware-update.js';
import { capabilityNames, CommandId, faultNames, PROTOCOL_VERSION, SUPPORTED_VERSIONS, type Message, type Value } from '../../../firmware-bridge/messages.js';
import { CommandTracker, SeqCounter } from '../../../firmware-bridge/session.js';
import { badRequest } from '../../core/errors.js';
import type { DeviceTransport } from '../device-registry.js';
import type { AttachmentSink, CommandOutcome, FirmwareOutcome } from './attachment.js';

/** Where the device sits, for its identity record. */
export interface EndpointPlace {
  transport: DeviceTransport;
  port?: string;
  bus?: string;
  canId?: number;
}

const HELLO_FIRST_MS = 300;
const HELLO_MAX_MS = 5000;
/** A device silent this long is greeted again: it may have rebooted or been replaced on the line. */
const SILENCE_MS = 2000;

/** Named commands of the bridge protocol, with the argument each takes (docs/firmware-bridge.md). */
function commandFor(name: string, args: Record<string, unknown>): { id: number; values: Value[] } {
  if (/^0x[0-9a-f]{1,4}$/i.test(name)) {
    const values = Array.isArray(args['values']) ? (args['values'] as unknown[]).map(toValue) : [];
    return { id: Number(name), values };
  }
  switch (name) {
    case 'identify':
      return { id: CommandId.identify, values: [{ type: 'u32', value: Number(args['seconds'] ?? 5) >>> 0 }] };
    case 'set_telemetry_period': {
      const ms = Number(args['period_ms']);
      if (!Number.isInteger(ms) || ms < 0) throw badRequest('set_telemetry_period needs args.period_ms (whole milliseconds, 0 stops telemetry)');
      return { id: CommandId.set_telemetry_period, values: [{ type: 'u32', value: ms }] };
    }
    case 'reboot':
    case 'clear_faults':
    case 'read_telemetry':
      return { id: CommandId[name], values: [] };
    default:
      throw badRequest(`unknown command '${name}' for a firmware-bridge device (identify, set_telemetry_period, clear_faults, read_telemetry, reboot, or 0xNNNN)`);
  }
}

function toValue(v: unknown): Value {
  if (typeof v === 'boolean') return { type: 'bool', value: v };
  if (typeof v === 'number' && Number.isInteger(v)) return v >= 0 ? { type: 'u32', value: v } : { type: 'i32', value: v };
  if (typeof v === 'number') return { type: 'f32', value: v };
  throw badRequest('args.values must hold numbers or booleans');
}

/**
 * The gateway's end of one firmware-bridge device: says HELLO (repeating with backoff until the
 * device identifies itself), then turns its messages into sink calls and carries commands and
 * firmware updates to it. Transport-free: the attachment passes frames in and sends frames out.
 */
export class BridgeEndpoint {
  deviceId: string | null = null;
  private readonly seq = new SeqCounter();
  private readonly tracker: CommandTracker;
  private updater: FirmwareUpdater | null = null;
  private nonce = 0;
  private helloTimer: NodeJS.Timeout | null = null;
  private helloDelay = HELLO_FIRST_MS;
  private maxPayload = 504;
  private lastHeardMs = 0;
  private watchdog: NodeJS.Timeout | null = null;
  errorsFromDevice = 0;

  constructor(
    private readonly send: (msg: Message) => void,
    private readonly sink: AttachmentSink,
    private readonly place: EndpointPlace,
  ) {
    this.tracker = new CommandTracker({ send, nextSeq: () => this.seq.next(), timeoutMs: 500, retries: 3 });
  }

  /** Accepts an IDENTITY answering a HELLO someone else sent (a broadcast HELLO on a CAN bus). */
  expectNonce(nonce: number): void {
    this.nonce = nonce;
  }

  /** (Re)starts the HELLO exchange, e.g. after the link (re)opened. */
  greet(): void {
    this.stopHello();
    this.helloDelay = HELLO_FIRST_MS;
    this.sayHello();
    if (!this.watchdog) {
      this.watchdog = setInterval(() => {
        if (this.deviceId && !this.helloTimer && !this.updater && Date.now() - this.lastHeardMs > SILENCE_MS) this.sayHello();
      }, SILENCE_MS / 2);
      this.watchdog.unref();
    }
  }

  private sayHello(): void {
    this.nonce = (Math.random() * 0x1_0000_0000) >>> 0;
    this.send({ type: 'hello', seq: this.seq.next(), version_min: Math.min(...SUPPORTED_VERSIONS), version_max: PROTOCOL_VERSION, nonce: this.nonce });
    this.helloTimer = setTimeout(() => {
      this.helloDelay = Math.min(HELLO_MAX_MS, this.helloDelay * 2);
      this.sayHello();
    }, this.helloDelay);
    this.helloTimer.unref();
  }

  private stopHello(): void {
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = null;
  }

  handle(msg: Message): void {
    this.lastHeardMs = Date.now();
    if (this.updater?.handle(msg)) return;
    if (this.tracker.handle(msg)) return;
    switch (msg.type) {
      case 'identity': {
        // A device announcing itself after a boot (unsolicited, nonce 0): greet it (docs/firmware-bridge.md § 7).
        if (msg.nonce === 0 && this.nonce !== 0) {
          if (!this.updater) this.greet();
          return;
        }
        if (msg.nonce !== this.nonce) return; // an answer to an older or someone else's HELLO
        this.stopHello();
        this.deviceId = msg.device_id;
        this.maxPayload = msg.max_payload;
        this.sink.identity({
          id: msg.device_id,
          device_type: msg.device_type,
          firmware_version: msg.firmware_version,
          hardware_revision: msg.hardware_revision,
          serial: msg.serial_number,
          capabilities: [...capabilityNames(msg.capabilities), ...msg.features],
          protocol: `svc-fw-bridge/${msg.protocol_version}`,
          transport: this.place.transport,
          ...(this.place.port !== undefined ? { port: this.place.port } : {}),
          ...(this.place.bus !== undefined ? { bus: this.place.bus } : {}),
          ...(this.place.canId !== undefined ? { can_id: this.place.canId } : {}),
        });
        return;
      }
      case 'telemetry':
        if (!this.deviceId) return;
        for (const r of msg.readings) this.sink.telemetry(this.deviceId, r.name, r.value, r.unit ?? null, msg.timestamp_ms);
        return;
      case 'heartbeat':
        if (this.deviceId) this.sink.heartbeat(this.deviceId, faultNames(msg.faults));
        return;
      case 'error':
        this.errorsFromDevice++;
        return;
      default:
        return;
    }
  }

  /** The link is gone: the device cannot be reached until it answers a HELLO again. */
  lost(reason: string): void {
    this.stopHello();
    this.tracker.cancelAll(reason);
    this.updater?.abort(reason);
    if (this.deviceId) this.sink.lost(this.deviceId, reason);
  }

  async command(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CommandOutcome> {
    const { id, values } = commandFor(name, args);
    const r = await this.tracker.execute(id, values, { timeoutMs: Math.max(100, Math.floor(timeoutMs / 4)), retries: 3 });
    return { status: r.status, detail: r.detail || null };
  }

  async updateFirmware(image: Uint8Array, version: string, onProgress?: (sent: number, total: number) => void): Promise<FirmwareOutcome> {
    if (this.updater) throw badRequest('a firmware update is already running for this device');
    const updater = new FirmwareUpdater({ send: this.send, image, version, nextSeq: () => this.seq.next(), chunkSize: Math.min(256, this.maxPayload - 6) });
    this.updater = updater;
    if (onProgress) updater.on('progress', ((p: { acked_bytes: number; total_bytes: number }) => onProgress(p.acked_bytes, p.total_bytes)) as never);
    try {
      const outcome = await updater.start();
      return { result: outcome.result, version: outcome.active_version, detail: outcome.detail };
    } finally {
      this.updater = null;
    }
  }

  close(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    this.stopHello();
    this.tracker.cancelAll('closed');
    this.updater?.abort('closed');
  }
}
