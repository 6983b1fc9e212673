import { FirmwareReceiver, FirmwareSlots } from '../firmware-update.js';
import {
  capabilityBits,
  CommandId,
  faultBits,
  faultNames,
  FAULT_BITS,
  PROTOCOL_VERSION,
  type FaultName,
  type Message,
  type Reading,
  type Value,
} from '../messages.js';
import { CommandReplayCache, SeqCounter } from '../session.js';
import { systemScheduler, type Scheduler, type TimerHandle } from '../timers.js';

function knownFaults(names: readonly string[]): FaultName[] {
  return names.filter((f): f is FaultName => (FAULT_BITS as readonly string[]).includes(f));
}

function faultNamesOf(bits: number): string {
  return faultNames(bits).join(', ');
}

export interface EmulatedFirmwareOptions {
  deviceId: string;
  deviceType: string;
  firmwareVersion: string;
  hardwareRevision?: string;
  serialNumber?: string;
  /** Produces one set of readings per telemetry period. */
  sample: () => Array<{ name: string; value: number; unit?: string }>;
  telemetryPeriodMs: number;
  heartbeatPeriodMs?: number;
  /** Fault names (docs/firmware-bridge.md fault bits) latched from the start; `clear_faults` and a reboot clear them. */
  faults?: string[];
  /** Hardware faults that survive `clear_faults` and reboots (a stuck sensor, a burnt driver): only a replacement helps. */
  persistentFaults?: string[];
  /** How long a `reboot` keeps the MCU silent before it boots again (default 400 ms). */
  bootTimeMs?: number;
  /** `false` makes every firmware update fail its post-activation self-test and roll back. */
  selfTestPasses?: boolean;
  /** Corrupts every byte written to staging flash, so the image digest never verifies. */
  flashFault?: boolean;
  send: (msg: Message) => void;
  scheduler?: Scheduler;
}

/**
 * What a microcontroller running the bridge firmware does, in TypeScript: answers HELLO with its
 * identity, streams telemetry, sends heartbeats with its fault bits, executes commands (once per
 * seq), and receives firmware updates into a staging slot with verification and rollback. The
 * emulators wrap it with a real transport; tests drive it directly.
 */
export class EmulatedFirmware {
  private seq = new SeqCounter();
  private replay = new CommandReplayCache();
  private readonly receiver: FirmwareReceiver;
  private readonly scheduler: Scheduler;
  private startedAt: number;
  private faults: number;
  private readonly persistentFaults: number;
  /** Between a `reboot` and the end of the boot: the MCU hears nothing and says nothing. */
  private booting: TimerHandle | null = null;
  /** Reboots done since power-on. */
  reboots = 0;
  private telemetryPeriodMs: number;
  private telemetryTimer: TimerHandle | null = null;
  private heartbeatTimer: TimerHandle | null = null;
  private running = false;
  /** Set once a gateway said HELLO: until then the device stays quiet (it may be someone else's line). */
  private greeted = false;

  constructor(private readonly o: EmulatedFirmwareOptions) {
    this.scheduler = o.scheduler ?? systemScheduler;
    this.startedAt = this.scheduler.now();
    this.telemetryPeriodMs = o.telemetryPeriodMs;
    this.persistentFaults = faultBits(knownFaults(o.persistentFaults ?? []));
    this.faults = faultBits(knownFaults(o.faults ?? [])) | this.persistentFaults;
    const flash = new FirmwareSlots({ version: o.firmwareVersion, image: new Uint8Array(64) });
    if (o.flashFault) {
      const write = flash.writeStaging.bind(flash);
      flash.writeStaging = (offset, data) => write(offset, data.map((b) => b ^ 0x5a));
    }
    this.receiver = new FirmwareReceiver({
      send: (m) => o.send(m),
      flash,
      nextSeq: () => this.seq.next(),
      scheduler: this.scheduler,
      selfTest: () => (o.selfTestPasses === false ? 'self-test failed after activation' : true),
    });
  }

  get activeVersion(): string {
    return this.receiver.activeVersion;
  }

  start(): void {
    this.running = true;
    this.scheduleHeartbeat();
    this.scheduleTelemetry();
  }

  stop(): void {
    this.running = false;
    if (this.booting) this.scheduler.clearTimeout(this.booting);
    this.booting = null;
    if (this.telemetryTimer) this.scheduler.clearTimeout(this.telemetryTimer);
    if (this.heartbeatTimer) this.scheduler.clearTimeout(this.heartbeatTimer);
    this.telemetryTimer = this.heartbeatTimer = null;
  }

  setFaults(names: string[]): void {
    this.faults = faultBits(knownFaults(names)) | this.persistentFaults;
  }

  /** Whether the MCU is between a reboot and the end of its boot. */
  get isBooting(): boolean {
    return this.booting !== null;
  }

  /**
   * What a `reboot` does to a microcontroller: everything stops (no heartbeat, no telemetry, nothing
   * heard) for the boot time; RAM is lost (latched faults, the telemetry period set by command, the
   * sequence counter, the replay cache, the gateway's greeting); hardware faults stay. After the boot
   * it announces itself with an unsolicited IDENTITY (nonce 0, docs/firmware-bridge.md § 7), the
   * gateway answers with HELLO, and it resumes.
   */
  private reboot(): void {
    this.stop();
    this.reboots++;
    this.booting = this.scheduler.setTimeout(() => {
      this.booting = null;
      this.seq = new SeqCounter();
      this.replay = new CommandReplayCache();
      this.startedAt = this.scheduler.now();
      this.faults = this.persistentFaults;
      this.telemetryPeriodMs = this.o.telemetryPeriodMs;
      this.greeted = false;
      this.o.send(this.identity(0));
      this.start();
    }, this.o.bootTimeMs ?? 400);
  }

  private identity(nonce: number, versionMin = PROTOCOL_VERSION, versionMax = PROTOCOL_VERSION): Message {
    return {
      type: 'identity',
      seq: this.seq.next(),
      protocol_version: Math.min(Math.max(PROTOCOL_VERSION, versionMin), versionMax),
      nonce,
      max_payload: 504,
      capabilities: capabilityBits(['telemetry', 'commands', 'heartbeat', 'fw_update', 'fw_sha256', 'fw_crc32', 'fw_rollback', 'fw_resume']),
      device_id: this.o.deviceId,
      device_type: this.o.deviceType,
      firmware_version: this.receiver.activeVersion,
      hardware_revision: this.o.hardwareRevision ?? 'sim-1',
      serial_number: this.o.serialNumber ?? `SIM-${this.o.deviceId}`,
      features: [],
    };
  }

  handle(msg: Message): void {
    if (this.booting) return;
    if (this.receiver.handle(msg)) return;
    switch (msg.type) {
      case 'hello':
        this.greeted = true;
        this.o.send(this.identity(msg.nonce, msg.version_min, msg.version_max));
        return;
      case 'command':
        this.onCommand(msg.seq, msg.command_id, msg.args);
        return;
      default:
        return;
    }
  }

  private onCommand(seq: number, id: number, args: Value[]): void {
    const cached = this.replay.get(seq);
    if (cached) {
      this.o.send({ type: 'command_ack', seq: this.seq.next(), ref_seq: seq, status: cached.status, detail: cached.detail });
      return;
    }
    let status: 'ok' | 'unknown_command' | 'bad_args' = 'ok';
    let detail = '';
    switch (id) {
      case CommandId.identify:
        detail = `${this.o.deviceId} blinking`;
        break;
      case CommandId.clear_faults:
        this.faults = this.persistentFaults;
        if (this.persistentFaults) detail = `cannot clear ${faultNamesOf(this.persistentFaults)}: hardware fault`;
        break;
      case CommandId.set_telemetry_period: {
        const v = args[0];
        if (!v || v.type !== 'u32') {
          status = 'bad_args';
          detail = 'expects one u32 (milliseconds)';
        } else {
          this.telemetryPeriodMs = v.value;
          this.scheduleTelemetry();
        }
        break;
      }
      case CommandId.read_telemetry:
        this.sendTelemetry();
        break;
      case CommandId.reboot:
        detail = 'rebooting';
        break;
      default:
        status = 'unknown_command';
        detail = `command 0x${id.toString(16)} is not implemented by this firmware`;
    }
    this.replay.remember(seq, { status, detail });
    this.o.send({ type: 'command_ack', seq: this.seq.next(), ref_seq: seq, status, detail });
    // Acknowledge first, then go down (docs/firmware-bridge.md: "acknowledge, then reboot").
    if (id === CommandId.reboot) this.reboot();
  }

  private scheduleTelemetry(): void {
    if (this.telemetryTimer) this.scheduler.clearTimeout(this.telemetryTimer);
    this.telemetryTimer = null;
    if (!this.running || this.telemetryPeriodMs <= 0) return;
    this.telemetryTimer = this.scheduler.setTimeout(() => {
      this.sendTelemetry();
      this.scheduleTelemetry();
    }, this.telemetryPeriodMs);
  }

  private scheduleHeartbeat(): void {
    if (!this.running) return;
    this.heartbeatTimer = this.scheduler.setTimeout(() => {
      if (this.greeted && !this.receiver.updating) {
        this.o.send({ type: 'heartbeat', seq: this.seq.next(), uptime_ms: this.uptime(), status: this.faults ? 'degraded' : 'ok', faults: this.faults });
      }
      this.scheduleHeartbeat();
    }, this.o.heartbeatPeriodMs ?? 1000);
  }

  private sendTelemetry(): void {
    if (!this.greeted || this.receiver.updating) return;
    const readings: Reading[] = this.o.sample().map((r) => ({ type: 'f32', value: r.value, name: r.name, ...(r.unit ? { unit: r.unit } : {}) }));
    this.o.send({ type: 'telemetry', seq: this.seq.next(), timestamp_ms: this.uptime(), readings });
  }

  private uptime(): number {
    return Math.floor(this.scheduler.now() - this.startedAt) >>> 0;
  }
}
