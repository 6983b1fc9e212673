// SlcanLink end to end over a socat pty pair; the test plays the USB-CAN adapter on the other end.
import { afterEach, describe, expect, it } from 'vitest';
import { SlcanLink } from '../../hal/can/slcan-link.js';
import { SlcanCommandParser, encodeSlcanFrame, type SlcanHostMessage } from '../../hal/can/slcan.js';
import { CAN_ERR_CRTL, describeCanError, type CanFrame } from '../../hal/can/can-frame.js';
import { SerialLink } from '../../hal/serial/serial-link.js';
import type { LinkState } from '../../hal/core/link.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, waitFor, type SocatPair } from './helpers/socat-pair.js';

if (!socatAvailable) console.warn(`[test/hal/can-slcan-link] ${SOCAT_SKIP_REASON}`);

const fast = { baseMs: 40, maxMs: 200 };

/** A scripted Lawicel adapter on the far end of the pty pair. */
class FakeAdapter {
  readonly serial: SerialLink;
  readonly parser = new SlcanCommandParser();
  /** Every command line received, as text (frames excluded). */
  readonly commands: string[] = [];
  readonly frames: CanFrame[] = [];
  /** Command types to answer with BELL, once each. */
  failOnce = new Set<SlcanHostMessage['type']>();
  /** Stop answering at all (a dead adapter). */
  silent = false;
  statusFlags = 0;
  channelOpen = false;

  constructor(path: string) {
    this.serial = new SerialLink({ path, backoff: fast });
    this.serial.on('data', (chunk) => {
      for (const msg of this.parser.push(chunk)) this.handle(msg);
    });
    this.serial.on('open', () => {
      this.parser.reset();
      this.channelOpen = false;
    });
  }

  private handle(msg: SlcanHostMessage): void {
    if (msg.type !== 'frame') this.commands.push(commandText(msg));
    if (this.silent) return;
    if (this.failOnce.delete(msg.type)) {
      this.serial.write('\x07');
      return;
    }
    switch (msg.type) {
      case 'frame':
        this.frames.push(msg.frame);
        this.serial.write(this.channelOpen ? (msg.frame.extended ? 'Z\r' : 'z\r') : '\x07');
        return;
      case 'close':
        if (!this.channelOpen) return void this.serial.write('\x07'); // Lawicel: C while closed is an error
        this.channelOpen = false;
        return void this.serial.write('\r');
      case 'open':
        this.channelOpen = true;
        return void this.serial.write('\r');
      case 'version':
        return void this.serial.write('V1013\r');
      case 'serial':
        return void this.serial.write('NA1B2\r');
      case 'status':
        return void this.serial.write(`F${this.statusFlags.toString(16).toUpperCase().padStart(2, '0')}\r`);
      default:
        return void this.serial.write('\r');
    }
  }

  sendFrame(frame: CanFrame, timestamp?: number): void {
    this.serial.write(encodeSlcanFrame(frame, timestamp));
  }
}

function commandText(msg: SlcanHostMessage): string {
  switch (msg.type) {
    case 'bitrate':
      return `S${msg.code}`;
    case 'open':
      return msg.listenOnly ? 'L' : 'O';
    case 'close':
      return 'C';
    case 'version':
      return 'V';
    case 'serial':
      return 'N';
    case 'status':
      return 'F';
    case 'timestamps':
      return msg.on ? 'Z1' : 'Z0';
    case 'empty':
      return '';
    case 'btr':
      return `s${msg.value}`;
    case 'command':
      return msg.command;
    default:
      return '?';
  }
}

const std = (id: number, data: number[]): CanFrame => ({ id, extended: false, rtr: false, error: false, data: Uint8Array.from(data) });
const ext = (id: number, data: number[]): CanFrame => ({ id, extended: true, rtr: false, error: false, data: Uint8Array.from(data) });
const remote = (id: number, dlc: number, extended = false): CanFrame => ({ id, extended, rtr: true, error: false, data: new Uint8Array(0), dlc });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

async function setup(options: Partial<ConstructorParameters<typeof SlcanLink>[0]> = {}): Promise<{ p: SocatPair; adapter: FakeAdapter; link: SlcanLink }> {
  const p = await startSocatPair();
  cleanups.push(() => p.dispose());
  const adapter = new FakeAdapter(p.b);
  cleanups.push(() => adapter.serial.close());
  await adapter.serial.open({ timeoutMs: 3000 });
  const link = new SlcanLink({ path: p.a, bitrate: 500_000, backoff: fast, commandTimeoutMs: 500, ...options });
  cleanups.push(() => link.close());
  return { p, adapter, link };
}

describe.skipIf(!socatAvailable)(`SlcanLink over a socat pty pair with a scripted adapter${socatAvailable ? '' : ` (skipped: ${SOCAT_SKIP_REASON})`}`, () => {
  it('runs C, S6, O on open and reports the state transitions', async () => {
    const { adapter, link } = await setup();
    const states: LinkState[] = [];
    link.on('state', (to) => states.push(to));
    await link.open({ timeoutMs: 3000 });
    expect(adapter.commands).toEqual(['C', 'S6', 'O']);
    expect(adapter.channelOpen).toBe(true);
    expect(states).toEqual(['connecting', 'open']);
    expect(link.stats()).toMatchObject({ state: 'open', open_sequences: 1, malformed_in: 0 });
    expect(await link.version()).toEqual({ hardware: '10', software: '13', raw: '1013' });
  });

  it('sends standard, extended and remote frames and receives them from the adapter', async () => {
    const { adapter, link } = await setup();
    const got: CanFrame[] = [];
    link.on('frame', (f) => got.push(f));
    await link.open({ timeoutMs: 3000 });

    const out = [std(0x123, [1, 2, 3, 4, 5, 6, 7, 8]), std(0x7ff, []), ext(0x1abcdef0, [0xde, 0xad]), remote(0x321, 4), remote(0x18feef00, 8, true)];
    for (const f of out) expect(link.send(f)).toBe(true);
    await waitFor(() => adapter.frames.length === out.length, 3000, 'frames at the adapter');
    expect(adapter.frames).toEqual(out);
    await waitFor(() => link.stats().tx_acks === out.length, 3000, 'z/Z acknowledgements');

    const inbound = [std(0x010, [0xaa]), ext(0x1fffffff, [1, 2, 3]), remote(0x7ff, 2), remote(0x12345, 0, true)];
    adapter.sendFrame(inbound[0]!);
    adapter.sendFrame(inbound[1]!, 0x1234); // with a timestamp suffix
    adapter.sendFrame(inbound[2]!);
    adapter.sendFrame(inbound[3]!);
    await waitFor(() => got.length === inbound.length, 3000, 'frames from the adapter');
    expect(got).toEqual(inbound);
    expect(link.stats()).toMatchObject({ frames_in: 4, frames_out: 5, tx_errors: 0, malformed_in: 0 });
    expect(() => link.send(std(0x800, []))).toThrow(/exceeds 0x7FF/);
  });

  it('counts garbage from the adapter and keeps going', async () => {
    const { adapter, link } = await setup();
    const got: CanFrame[] = [];
    link.on('frame', (f) => got.push(f));
    await link.open({ timeoutMs: 3000 });
    adapter.serial.write('garbage\rt12\rtXYZ1AA\r\n\n' + 'Q'.repeat(200) + '\r' + 't1231\r');
    adapter.sendFrame(std(0x321, [0x55]));
    await waitFor(() => got.length === 1, 3000, 'the valid frame after the garbage');
    expect(got[0]).toEqual(std(0x321, [0x55]));
    // garbage, t12, tXYZ1AA, the over-long Q line, t1231 (dlc 1 without data)
    expect(link.stats().malformed_in).toBe(5);
    expect(link.state).toBe('open');
  });

  it('queues frames sent before the channel is open and sends them after O', async () => {
    const { adapter, link } = await setup({ queueCapacity: 2 });
    expect(link.send(std(1, [1]))).toBe(true);
    expect(link.send(std(2, [2]))).toBe(true);
    expect(link.send(std(3, [3]))).toBe(false); // oldest dropped
    await link.open({ timeoutMs: 3000 });
    await waitFor(() => adapter.frames.length === 2, 3000, 'queued frames');
    expect(adapter.frames.map((f) => f.id)).toEqual([2, 3]);
    expect(adapter.commands).toEqual(['C', 'S6', 'O']);
    expect(link.stats().dropped_out).toBe(1);
  });

  it('re-runs the open sequence after the serial link reconnects', async () => {
    const { p, adapter, link } = await setup();
    const got: CanFrame[] = [];
    link.on('frame', (f) => got.push(f));
    await link.open({ timeoutMs: 3000 });
    expect(adapter.commands).toEqual(['C', 'S6', 'O']);

    await p.kill(); // adapter unplugged
    await waitFor(() => link.state === 'backoff', 3000, 'SLCAN link in backoff');
    link.send(std(0x77, [7])); // waits for the reconnect

    await p.restart(); // plugged back in: both ends reopen by themselves
    await link.waitOpen(5000);
    expect(adapter.commands).toEqual(['C', 'S6', 'O', 'C', 'S6', 'O']);
    expect(link.stats().open_sequences).toBe(2);
    // Usually 1; 2 when our end reopened before the adapter's end, so the first C went unanswered
    // (a pty discards input that arrives before it is opened) and the sequence was retried.
    expect(link.stats().reconnects).toBeGreaterThanOrEqual(1);
    await waitFor(() => adapter.frames.some((f) => f.id === 0x77), 3000, 'frame queued during the outage');
    adapter.sendFrame(std(0x78, [8]));
    await waitFor(() => got.length === 1, 3000, 'frame after reconnect');
  });

  it('retries the open sequence when the adapter answers with BELL', async () => {
    const { adapter, link } = await setup();
    adapter.failOnce.add('open');
    const errors: string[] = [];
    link.on('error', (e) => errors.push(e.message));
    await link.open({ timeoutMs: 5000 });
    expect(errors.some((m) => /answered "O" with BELL/.test(m))).toBe(true);
    expect(adapter.commands).toEqual(['C', 'S6', 'O', 'C', 'S6', 'O']);
    expect(link.stats().open_sequences).toBe(1);
  });

  it('reports a silent adapter clearly and keeps retrying', async () => {
    const { adapter, link } = await setup({ commandTimeoutMs: 150 });
    adapter.silent = true;
    await expect(link.open({ timeoutMs: 1000 })).rejects.toThrow(/did not open within 1000 ms: .*no answer to "C" within 150 ms/);
    expect(adapter.commands.filter((c) => c === 'C').length).toBeGreaterThanOrEqual(2);
    adapter.silent = false;
    await link.waitOpen(5000);
    expect(link.state).toBe('open');
  });

  it('polls status flags and surfaces them as error frames', async () => {
    const { adapter, link } = await setup({ statusPollMs: 50, bitrate: 125_000, listenOnly: true, timestamps: true });
    const errorFrames: CanFrame[] = [];
    const statuses: string[][] = [];
    link.on('frame', (f) => f.error && errorFrames.push(f));
    link.on('status', (_flags, conditions) => statuses.push(conditions));
    await link.open({ timeoutMs: 3000 });
    expect(adapter.commands.slice(0, 4)).toEqual(['C', 'S4', 'Z1', 'L']);
    adapter.statusFlags = 0x24;
    await waitFor(() => errorFrames.length > 0, 3000, 'an error frame from F');
    expect(statuses[0]).toEqual(['error warning', 'error passive']);
    expect(errorFrames[0]!.id & CAN_ERR_CRTL).toBeTruthy();
    expect(describeCanError(errorFrames[0]!).messages[0]).toMatch(/rx error passive/);
    adapter.statusFlags = 0;
    expect(await link.status()).toEqual({ flags: 0, conditions: [] });
  });

  it('closes the adapter channel on close()', async () => {
    const { adapter, link } = await setup();
    await link.open({ timeoutMs: 3000 });
    await link.close();
    expect(adapter.commands.at(-1)).toBe('C');
    expect(link.state).toBe('closed');
    expect(() => link.send(std(1, []))).toThrow(/closed/);
  });
});
