import { describe, expect, it } from 'vitest';
import {
  FirmwareReceiver,
  FirmwareSlots,
  FirmwareUpdater,
  ManualScheduler,
  SeqCounter,
  imageDigest,
  type FirmwareReceiverOptions,
  type FirmwareUpdaterOptions,
  type FwResult,
  type Message,
  type UpdatePhase,
  type UpdateProgress,
} from '../../firmware-bridge/index.js';
import { prng, randomBytes, sameBytes, SerialLink } from './helpers.js';

const OLD = { version: '1.0.0', image: randomBytes(prng(1), 3000) };

interface Rig {
  scheduler: ManualScheduler;
  link: SerialLink;
  receiver: FirmwareReceiver;
  results: FwResult[];
  identityVersion: () => Promise<string>;
  updater: (image: Uint8Array, version: string, opts?: Partial<FirmwareUpdaterOptions>) => FirmwareUpdater;
}

/**
 * Gateway and device in memory, joined by a simulated serial line (real frames through real
 * decoders). The "device" also answers HELLO with an IDENTITY carrying its running version.
 */
function rig(receiverOptions: Partial<FirmwareReceiverOptions> = {}): Rig {
  const scheduler = new ManualScheduler();
  const link = new SerialLink(scheduler, 3);
  const deviceSeq = new SeqCounter(100);
  const gatewaySeq = new SeqCounter(500);
  const receiver = new FirmwareReceiver({
    send: link.toGateway,
    flash: new FirmwareSlots(OLD, 64 * 1024),
    nextSeq: () => deviceSeq.next(),
    scheduler,
    ...receiverOptions,
  });
  const results: FwResult[] = [];
  receiver.on('result', (r) => results.push(r));
  let gatewayHandlers: ((m: Message) => boolean)[] = [];
  link.onDevice = (msg) => {
    if (receiver.handle(msg)) return;
    if (msg.type === 'hello') {
      link.toGateway({
        type: 'identity', seq: deviceSeq.next(), protocol_version: 1, nonce: msg.nonce, max_payload: 504, capabilities: 0,
        device_id: 'dev-1', device_type: 'servo', firmware_version: receiver.activeVersion, hardware_revision: 'A',
        serial_number: '1', features: [],
      });
    }
  };
  link.onGateway = (msg) => {
    for (const h of gatewayHandlers) if (h(msg)) return;
  };
  return {
    scheduler,
    link,
    receiver,
    results,
    identityVersion: async () => {
      let version = '';
      const handler = (m: Message) => (m.type === 'identity' ? ((version = m.firmware_version), true) : false);
      gatewayHandlers.push(handler);
      link.toDevice({ type: 'hello', seq: gatewaySeq.next(), version_min: 1, version_max: 1, nonce: 77 });
      scheduler.advance(50);
      gatewayHandlers = gatewayHandlers.filter((h) => h !== handler);
      return version;
    },
    updater: (image, version, opts = {}) => {
      const up = new FirmwareUpdater({ send: link.toDevice, image, version, transferId: 0x0a0b, scheduler, nextSeq: () => gatewaySeq.next(), ...opts });
      gatewayHandlers.push((m) => up.handle(m));
      return up;
    },
  };
}

async function run(r: Rig, up: FirmwareUpdater) {
  const done = up.start();
  r.scheduler.runUntilIdle();
  expect(up.phase).toBe('done');
  return done;
}

describe('firmware update, gateway <-> device in memory', () => {
  it('transfers, verifies and activates a new image (SHA-256)', async () => {
    const r = rig();
    const image = randomBytes(prng(2), 10_000);
    const up = r.updater(image, '2.0.0', { chunkSize: 256, window: 8 });
    const progress: UpdateProgress[] = [];
    const phases: UpdatePhase[] = [];
    up.on('progress', (p) => progress.push(p));
    up.on('phase', (to) => phases.push(to));
    const outcome = await run(r, up);
    expect(outcome).toMatchObject({ result: 'activated', source: 'device', active_version: '2.0.0', total_bytes: 10_000, acked_bytes: 10_000, retransmits: 0 });
    expect(outcome.chunks_sent).toBe(Math.ceil(10_000 / 256));
    expect(phases).toEqual(['begin', 'transfer', 'end', 'done']);
    expect(progress.map((p) => p.acked_bytes)).toEqual([...progress.map((p) => p.acked_bytes)].sort((a, b) => a - b));
    expect(progress.at(-1)!.acked_bytes).toBe(10_000);
    expect(r.receiver.activeVersion).toBe('2.0.0');
    expect(sameBytes(r.receiver.flash.active.image, image)).toBe(true);
    expect(r.receiver.flash.previous?.version).toBe('1.0.0');
    expect(await r.identityVersion()).toBe('2.0.0');
    expect(r.link.gatewayDecoder.stats.malformed + r.link.deviceDecoder.stats.malformed).toBe(0);
  });

  it('keeps the window: never more than min(gateway, device) chunks in flight', async () => {
    const r = rig({ window: 3 });
    const image = randomBytes(prng(3), 4000);
    const up = r.updater(image, '2.0.0', { chunkSize: 100, window: 16 });
    let maxInFlight = 0;
    let acked = 0;
    r.link.hooks.toDevice = (m) => {
      if (m.type === 'fw_chunk') maxInFlight = Math.max(maxInFlight, (m.offset + m.data.length - acked) / 100);
      return m;
    };
    up.on('progress', (p) => (acked = p.acked_bytes));
    await run(r, up);
    expect(maxInFlight).toBeLessThanOrEqual(3);
  });

  it('works with a CRC-32 image digest and an image that is not a multiple of the chunk size', async () => {
    const r = rig();
    const image = randomBytes(prng(4), 1001);
    const outcome = await run(r, r.updater(image, '1.1.0', { chunkSize: 64, digestAlg: 'crc32' }));
    expect(outcome.result).toBe('activated');
    expect(sameBytes(r.receiver.flash.active.image, image)).toBe(true);
  });

  it('a chunk corrupted before framing fails verification: rolled back, the device still runs 1.0.0', async () => {
    const r = rig();
    const image = randomBytes(prng(5), 5000);
    r.link.hooks.toDevice = (m) => {
      if (m.type === 'fw_chunk' && m.offset === 512) {
        const data = m.data.slice();
        data[10]! ^= 0xff;
        return { ...m, data };
      }
      return m;
    };
    const outcome = await run(r, r.updater(image, '2.0.0', { chunkSize: 256 }));
    expect(outcome).toMatchObject({ result: 'rolled_back', source: 'device', active_version: '1.0.0' });
    expect(outcome.detail).toMatch(/sha256 mismatch/);
    expect(r.receiver.activeVersion).toBe('1.0.0');
    expect(sameBytes(r.receiver.flash.active.image, OLD.image)).toBe(true);
    expect(r.receiver.flash.activations).toBe(0);
    expect(r.results.map((x) => x.result)).toEqual(['rolled_back']);
    expect(await r.identityVersion()).toBe('1.0.0');
  });

  it('a new image that fails its self-test after activation is rolled back to the previous slot', async () => {
    const r = rig({ selfTest: (img) => (img.version === '2.0.0' ? 'watchdog reset on boot' : true) });
    const outcome = await run(r, r.updater(randomBytes(prng(6), 2000), '2.0.0'));
    expect(outcome).toMatchObject({ result: 'rolled_back', active_version: '1.0.0' });
    expect(outcome.detail).toMatch(/watchdog reset on boot/);
    expect(r.receiver.flash.activations).toBe(1);
    expect(r.receiver.flash.rollbacks).toBe(1);
    expect(sameBytes(r.receiver.flash.active.image, OLD.image)).toBe(true);
    expect(await r.identityVersion()).toBe('1.0.0');
  });

  it('a lost chunk is reported out of order and retransmitted (go-back-N)', async () => {
    const r = rig();
    const image = randomBytes(prng(7), 6000);
    r.link.hooks.toDevice = (m) => (m.type === 'fw_chunk' && m.offset === 1024 && !lost++ ? null : m);
    let lost = 0;
    const outcome = await run(r, r.updater(image, '2.0.0', { chunkSize: 256 }));
    expect(outcome.result).toBe('activated');
    expect(outcome.retransmits).toBeGreaterThanOrEqual(1);
    expect(r.link.sent.toGateway.some((m) => m.type === 'fw_chunk_ack' && m.status === 'out_of_order' && m.next_offset === 1024)).toBe(true);
    // Fast retransmission: no timeout was needed.
    expect(outcome.duration_ms).toBeLessThan(1000);
    expect(sameBytes(r.receiver.flash.active.image, image)).toBe(true);
  });

  it('with a window of 1 a lost chunk is retransmitted after the ack timeout', async () => {
    const r = rig({ window: 1 });
    const image = randomBytes(prng(8), 1000);
    let lost = 0;
    r.link.hooks.toDevice = (m) => (m.type === 'fw_chunk' && m.offset === 200 && lost++ < 2 ? null : m);
    const outcome = await run(r, r.updater(image, '2.0.0', { chunkSize: 100, chunkTimeoutMs: 400 }));
    expect(outcome.result).toBe('activated');
    expect(outcome.retransmits).toBe(2);
    expect(outcome.duration_ms).toBeGreaterThanOrEqual(800);
  });

  it('lost acks are covered by later cumulative acks; a lost FW_BEGIN and FW_END are retransmitted', async () => {
    const r = rig();
    const image = randomBytes(prng(9), 3000);
    r.link.hooks.toGateway = (m, n) => (m.type === 'fw_chunk_ack' && n % 3 === 1 ? null : m);
    let begins = 0;
    let ends = 0;
    r.link.hooks.toDevice = (m) => {
      if (m.type === 'fw_begin' && begins++ === 0) return null;
      if (m.type === 'fw_end' && ends++ === 0) return null;
      return m;
    };
    const outcome = await run(r, r.updater(image, '2.0.0', { chunkSize: 128, beginTimeoutMs: 200, endTimeoutMs: 500 }));
    expect(outcome.result).toBe('activated');
    expect(begins).toBe(2);
    expect(ends).toBe(2);
    expect(r.receiver.flash.activations).toBe(1);
  });

  it('a lost FW_RESULT is sent again for the repeated FW_END without activating twice', async () => {
    const r = rig();
    let results = 0;
    r.link.hooks.toGateway = (m) => (m.type === 'fw_result' && results++ === 0 ? null : m);
    const outcome = await run(r, r.updater(randomBytes(prng(10), 500), '2.0.0', { endTimeoutMs: 300 }));
    expect(outcome.result).toBe('activated');
    expect(results).toBe(2);
    expect(r.receiver.flash.activations).toBe(1);
  });

  it('a silent device makes the gateway give up: aborted, and the device keeps its version', async () => {
    const r = rig({ idleTimeoutMs: 10_000 });
    const image = randomBytes(prng(11), 8000);
    r.link.hooks.toDevice = (m) => {
      if (m.type === 'fw_chunk' && m.offset >= 2048) r.link.cut = true; // the cable is pulled mid-transfer
      return m;
    };
    const outcome = await run(r, r.updater(image, '2.0.0', { chunkSize: 256, chunkTimeoutMs: 500, chunkRetries: 3, abortTimeoutMs: 300 }));
    expect(outcome).toMatchObject({ result: 'aborted', source: 'gateway', active_version: null });
    expect(outcome.detail).toMatch(/no acknowledgement past offset \d+ after 4 timeouts/);
    expect(outcome.acked_bytes).toBeLessThan(8000);
    expect(outcome.duration_ms).toBeGreaterThanOrEqual(4 * 500);
    // The device discards the half-written staging slot after its own idle timeout.
    expect(r.results).toHaveLength(1);
    expect(r.results[0]).toMatchObject({ result: 'aborted', active_version: '1.0.0' });
    expect(r.receiver.updating).toBe(false);
    expect(r.receiver.activeVersion).toBe('1.0.0');
    r.link.cut = false;
    r.link.hooks = {};
    expect(await r.identityVersion()).toBe('1.0.0');
  });

  it('no answer to FW_BEGIN at all: aborted after the retries', async () => {
    const r = rig();
    r.link.cut = true;
    const outcome = await run(r, r.updater(randomBytes(prng(12), 100), '2.0.0', { beginTimeoutMs: 100, beginRetries: 2, abortTimeoutMs: 100 }));
    expect(outcome).toMatchObject({ result: 'aborted', source: 'gateway' });
    expect(outcome.detail).toBe('no answer to FW_BEGIN after 3 attempts');
    expect(outcome.duration_ms).toBe(400);
  });

  it('the operator aborts mid-transfer: the device confirms and discards the staged image', async () => {
    const r = rig();
    const up = r.updater(randomBytes(prng(13), 20_000), '2.0.0', { chunkSize: 200 });
    up.on('progress', (p) => {
      if (p.acked_bytes >= 4000) up.abort('operator cancelled');
    });
    const outcome = await run(r, up);
    expect(outcome).toMatchObject({ result: 'aborted', source: 'device', active_version: '1.0.0', detail: 'operator cancelled' });
    expect(r.results.at(-1)).toMatchObject({ result: 'aborted', detail: 'operator cancelled' });
    expect(r.receiver.updating).toBe(false);
    expect(r.receiver.activeVersion).toBe('1.0.0');
  });

  it('the device rejects an image it cannot hold or a digest it does not implement', async () => {
    const r = rig({ digestAlgs: ['crc32'] });
    const tooBig = await run(r, r.updater(new Uint8Array(70_000), '2.0.0', { digestAlg: 'crc32', transferId: 1 }));
    expect(tooBig).toMatchObject({ result: 'rejected', source: 'device', active_version: '1.0.0' });
    expect(tooBig.detail).toMatch(/exceeds/);
    const sha = await run(r, r.updater(new Uint8Array(100), '2.0.0', { transferId: 2 }));
    expect(sha).toMatchObject({ result: 'rejected' });
    expect(sha.detail).toBe('digest sha256 not supported');
  });

  it('resumes an interrupted transfer with the same transfer id from where the device stopped', async () => {
    const r = rig({ idleTimeoutMs: 24 * 3_600_000 });
    const image = randomBytes(prng(14), 6000);
    const first = r.updater(image, '2.0.0', { chunkSize: 200, chunkTimeoutMs: 200, chunkRetries: 1, abortTimeoutMs: 100 });
    r.link.hooks.toDevice = (m) => {
      if (m.type === 'fw_chunk' && m.offset >= 3000) r.link.cut = true;
      return m;
    };
    expect((await run(r, first)).result).toBe('aborted');
    expect(r.receiver.updating).toBe(true); // FW_ABORT never arrived; the staging slot is intact
    r.link.cut = false;
    r.link.hooks = {};
    const second = r.updater(image, '2.0.0', { chunkSize: 200 });
    const outcome = await run(r, second);
    expect(outcome.result).toBe('activated');
    expect(outcome.chunks_sent).toBeLessThanOrEqual(15);
    expect(sameBytes(r.receiver.flash.active.image, image)).toBe(true);
  });

  it('a device that lost the transfer (reboot) makes the gateway start over', async () => {
    const r = rig();
    const image = randomBytes(prng(15), 3000);
    let rebooted = false;
    r.link.hooks.toDevice = (m) => {
      if (!rebooted && m.type === 'fw_chunk' && m.offset === 1000) {
        rebooted = true;
        // A reboot loses the transfer state silently: drop the FW_RESULT this abort produces.
        r.link.hooks.toGateway = (g) => (g.type === 'fw_result' && g.detail === 'reboot' ? null : g);
        r.receiver.handle({ type: 'fw_abort', seq: 0, transfer_id: m.transfer_id, detail: 'reboot' });
      }
      return m;
    };
    const outcome = await run(r, r.updater(image, '2.0.0', { chunkSize: 100 }));
    expect(outcome.result).toBe('activated');
    expect(r.link.sent.toDevice.filter((m) => m.type === 'fw_begin')).toHaveLength(2);
    expect(sameBytes(r.receiver.flash.active.image, image)).toBe(true);
  });

  it('survives random loss in both directions (seeded, 8 runs)', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      const r = rig();
      const rand = prng(seed);
      r.link.hooks.toDevice = (m) => (rand() < 0.1 ? null : m);
      r.link.hooks.toGateway = (m) => (rand() < 0.1 ? null : m);
      const image = randomBytes(rand, 12_000);
      const outcome = await run(r, r.updater(image, '2.0.0', { chunkSize: 240, chunkRetries: 10, endRetries: 6, endTimeoutMs: 2000, beginRetries: 6 }));
      expect(outcome.result).toBe('activated');
      expect(sameBytes(r.receiver.flash.active.image, image)).toBe(true);
    }
  });

  it('imageDigest produces the documented digests', () => {
    const abc = new TextEncoder().encode('abc');
    expect(Buffer.from(imageDigest(abc, 'sha256')).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(Buffer.from(imageDigest(new TextEncoder().encode('123456789'), 'crc32')).toString('hex')).toBe('2639f4cb');
  });

  it('refuses bad updater parameters', () => {
    const send = () => {};
    expect(() => new FirmwareUpdater({ send, image: new Uint8Array(0), version: '1.0.0' })).toThrow(RangeError);
    expect(() => new FirmwareUpdater({ send, image: new Uint8Array(1), version: '1.0' })).toThrow(RangeError);
    expect(() => new FirmwareUpdater({ send, image: new Uint8Array(1), version: '1.0.0', chunkSize: 499 })).toThrow(RangeError);
    expect(() => new FirmwareUpdater({ send, image: new Uint8Array(1), version: '1.0.0', window: 0 })).toThrow(RangeError);
  });
});

describe('FirmwareReceiver on its own', () => {
  function device() {
    const scheduler = new ManualScheduler();
    const sent: Message[] = [];
    const receiver = new FirmwareReceiver({ send: (m) => sent.push(m), flash: new FirmwareSlots(OLD), scheduler, window: 2 });
    const image = Uint8Array.from({ length: 250 }, (_, i) => i);
    receiver.handle({ type: 'fw_begin', seq: 1, transfer_id: 9, image_size: 250, chunk_size: 100, digest_alg: 'sha256', digest: imageDigest(image, 'sha256'), version: '1.5.0' });
    return { receiver, sent, image, scheduler };
  }
  const chunk = (offset: number, data: Uint8Array): Message => ({ type: 'fw_chunk', seq: 0, transfer_id: 9, offset, data });

  it('acks FW_BEGIN with next_offset 0 and its window', () => {
    const { sent } = device();
    expect(sent).toEqual([{ type: 'fw_chunk_ack', seq: 0, transfer_id: 9, status: 'ok', window: 2, next_offset: 0 }]);
  });

  it('reports a gap once, ignores duplicates, refuses misaligned or wrong-sized chunks', () => {
    const { receiver, sent, image } = device();
    sent.length = 0;
    receiver.handle(chunk(100, image.subarray(100, 200)));
    receiver.handle(chunk(200, image.subarray(200, 250)));
    expect(sent.map((m) => m.type === 'fw_chunk_ack' && [m.status, m.next_offset])).toEqual([['out_of_order', 0]]);
    receiver.handle(chunk(0, image.subarray(0, 100)));
    receiver.handle(chunk(0, image.subarray(0, 100)));
    receiver.handle(chunk(50, image.subarray(50, 150)));
    receiver.handle(chunk(100, image.subarray(100, 150)));
    receiver.handle({ type: 'fw_chunk', seq: 0, transfer_id: 8, offset: 100, data: image.subarray(100, 200) });
    expect(sent.slice(1).map((m) => m.type === 'fw_chunk_ack' && [m.status, m.next_offset])).toEqual([
      ['ok', 100],
      ['ok', 100],
      ['bad_chunk', 100],
      ['bad_chunk', 100],
      ['unknown_transfer', 0],
    ]);
  });

  it('answers FW_END for an incomplete image with rolled_back and keeps the running image', () => {
    const { receiver, sent, image } = device();
    receiver.handle(chunk(0, image.subarray(0, 100)));
    receiver.handle({ type: 'fw_end', seq: 0, transfer_id: 9 });
    expect(sent.at(-1)).toMatchObject({ type: 'fw_result', result: 'rolled_back', active_version: '1.0.0' });
    expect((sent.at(-1) as FwResult).detail).toMatch(/incomplete \(100 of 250/);
    // Repeating FW_END replays the same result; an unknown transfer gets "aborted".
    receiver.handle({ type: 'fw_end', seq: 0, transfer_id: 9 });
    expect(sent.at(-1)).toMatchObject({ type: 'fw_result', result: 'rolled_back' });
    receiver.handle({ type: 'fw_end', seq: 0, transfer_id: 77 });
    expect(sent.at(-1)).toMatchObject({ type: 'fw_result', transfer_id: 77, result: 'aborted', detail: 'unknown transfer' });
  });

  it('a new FW_BEGIN replaces a transfer in progress', () => {
    const { receiver, sent, image } = device();
    receiver.handle(chunk(0, image.subarray(0, 100)));
    receiver.handle({ type: 'fw_begin', seq: 1, transfer_id: 10, image_size: 10, chunk_size: 10, digest_alg: 'crc32', digest: imageDigest(new Uint8Array(10), 'crc32'), version: '1.6.0' });
    receiver.handle({ type: 'fw_chunk', seq: 0, transfer_id: 10, offset: 0, data: new Uint8Array(10) });
    receiver.handle({ type: 'fw_end', seq: 0, transfer_id: 10 });
    expect(sent.at(-1)).toMatchObject({ type: 'fw_result', transfer_id: 10, result: 'activated', active_version: '1.6.0' });
  });
});
