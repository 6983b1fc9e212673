// SocketCAN: clear errors on this host (no CAN in the kernel), the pacing/retry/reconnect logic with an
// injected addon, and the real thing on a kernel vcan0 inside a qemu VM (scripts/vcan-vm/).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  SocketCanLink,
  canInterfaceStatus,
  socketCanAvailability,
  type SocketCanAddon,
  type SocketCanMessage,
  type SocketCanRawChannel,
} from '../../hal/can/socketcan-link.js';
import type { CanFrame } from '../../hal/can/can-frame.js';
import { waitFor } from './helpers/socat-pair.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const std = (id: number, data: number[]): CanFrame => ({ id, extended: false, rtr: false, error: false, data: Uint8Array.from(data) });

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe('SocketCAN on a host without CAN support: clear errors', () => {
  it('reports whether the addon is usable', () => {
    const a = socketCanAvailability();
    if (a.available) expect(a).toEqual({ available: true });
    else expect(a.reason).toMatch(/socketcan|Linux/);
  });

  it('names a missing interface, and a non-CAN one', () => {
    const missing = canInterfaceStatus('svcnope0');
    expect(missing.ok).toBe(false);
    if (!missing.ok) {
      expect(missing.exists).toBe(false);
      expect(missing.reason).toMatch(/^CAN interface svcnope0 does not exist/);
      if (!existsSync('/proc/net/can')) expect(missing.reason).toMatch(/no CAN support loaded/);
    }
    const lo = canInterfaceStatus('lo');
    expect(lo).toMatchObject({ ok: false, exists: true, reason: 'lo is not a CAN interface (link type 772)' });
    expect(canInterfaceStatus('../etc')).toMatchObject({ ok: false, reason: 'invalid interface name "../etc"' });
  });

  it('open() rejects with the reason while the link keeps retrying', async () => {
    const link = new SocketCanLink({ interface: 'lo', backoff: { baseMs: 20, maxMs: 50 } });
    cleanups.push(() => link.close());
    const errors: string[] = [];
    link.on('error', (e) => errors.push(e.message));
    await expect(link.open({ timeoutMs: 200 })).rejects.toThrow('SocketCAN interface lo did not open within 200 ms: lo is not a CAN interface (link type 772)');
    expect(link.state).toBe('backoff');
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(() => link.send(std(0x800, []))).toThrow(/exceeds 0x7FF/);
    expect(() => link.send({ ...std(1, []), error: true })).toThrow(/error frames cannot be sent/);
    await link.close();
    expect(() => link.send(std(1, []))).toThrow(/closed/);
  });
});

/** A stand-in for the native addon plus a fake sysfs, to drive the link's own logic deterministically. */
class FakeBus {
  readonly sysfs = mkdtempSync(path.join(tmpdir(), 'svc-fake-sysfs-'));
  channels: FakeChannel[] = [];
  sent: SocketCanMessage[] = [];
  /** Sends that return -1 (tx queue full) before succeeding. */
  refuseNext = 0;
  /** Sends per event-loop turn, for the pacing check. */
  turns: number[] = [0];
  private ticking = false;

  constructor(readonly iface: string) {
    this.setInterface({ up: true });
  }
  setInterface(state: { up: boolean } | null): void {
    const dir = path.join(this.sysfs, this.iface);
    if (state === null) return rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'type'), '280\n');
    writeFileSync(path.join(dir, 'flags'), state.up ? '0x1\n' : '0x0\n');
  }
  addon(): SocketCanAddon {
    return {
      createRawChannel: () => {
        throw new Error('use createRawChannelWithOptions');
      },
      createRawChannelWithOptions: (iface, options) => {
        expect(options.non_block_send).toBe(true);
        if (!existsSync(path.join(this.sysfs, iface))) throw new Error('Error while creating channel');
        const ch = new FakeChannel(this);
        this.channels.push(ch);
        return ch;
      },
    };
  }
  countSend(): void {
    this.turns[this.turns.length - 1]!++;
    if (!this.ticking) {
      this.ticking = true;
      setImmediate(() => {
        this.ticking = false;
        this.turns.push(0);
      });
    }
  }
  dispose(): void {
    rmSync(this.sysfs, { recursive: true, force: true });
  }
}

class FakeChannel implements SocketCanRawChannel {
  onMessage: Array<(m: SocketCanMessage) => void> = [];
  onStopped: Array<() => void> = [];
  started = false;
  errorMask: number | null = null;
  constructor(private readonly bus: FakeBus) {}
  addListener(event: 'onMessage' | 'onStopped', cb: ((m: SocketCanMessage) => void) | (() => void)): this {
    if (event === 'onMessage') this.onMessage.push(cb as (m: SocketCanMessage) => void);
    else this.onStopped.push(cb as () => void);
    return this;
  }
  start(): this {
    this.started = true;
    return this;
  }
  stop(): this {
    if (!this.started) throw new Error('Channel not started');
    this.started = false;
    return this;
  }
  setErrorFilters(mask: number): this {
    this.errorMask = mask;
    return this;
  }
  send(msg: SocketCanMessage): number {
    if (this.bus.refuseNext > 0) {
      this.bus.refuseNext--;
      return -1;
    }
    this.bus.sent.push(msg);
    this.bus.countSend();
    return 16;
  }
  deliver(msg: SocketCanMessage): void {
    for (const cb of this.onMessage) cb(msg);
  }
  vanish(): void {
    this.started = false;
    for (const cb of this.onStopped) cb();
  }
}

describe('SocketCanLink logic with an injected addon', () => {
  function make(options: Partial<ConstructorParameters<typeof SocketCanLink>[0]> = {}): { bus: FakeBus; link: SocketCanLink } {
    const bus = new FakeBus('fcan0');
    const link = new SocketCanLink({ interface: 'fcan0', addon: bus.addon(), sysfs: bus.sysfs, watchMs: 20, backoff: { baseMs: 20, maxMs: 50 }, ...options });
    cleanups.push(() => bus.dispose());
    cleanups.push(() => link.close());
    return { bus, link };
  }

  it('paces a burst: at most `burst` frames per event-loop turn, all sent in order', async () => {
    const { bus, link } = make({ burst: 16 });
    await link.open({ timeoutMs: 1000 });
    expect(bus.channels[0]!.errorMask).toBe(0x1fffffff);
    for (let i = 0; i < 200; i++) link.send(std(0x100, [i]));
    expect(bus.sent.length).toBe(0); // nothing is sent synchronously
    await link.drain();
    expect(bus.sent.map((m) => m.data[0])).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(Math.max(...bus.turns)).toBeLessThanOrEqual(16);
    expect(bus.turns.filter((n) => n > 0).length).toBeGreaterThanOrEqual(200 / 16);
  });

  it('keeps and retries frames the kernel refuses (tx queue full) instead of dropping them', async () => {
    const { bus, link } = make();
    await link.open({ timeoutMs: 1000 });
    bus.refuseNext = 5;
    for (let i = 0; i < 10; i++) link.send(std(0x200, [i]));
    await link.drain();
    expect(bus.sent.map((m) => m.data[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(link.stats()).toMatchObject({ tx_retries: 5, frames_out: 10, dropped_out: 0, queued: 0 });
  });

  it('honours rateHz', async () => {
    const { bus, link } = make({ rateHz: 500, burst: 10 });
    await link.open({ timeoutMs: 1000 });
    const t0 = performance.now();
    for (let i = 0; i < 60; i++) link.send(std(0x300, [i]));
    await link.drain();
    // the first 10 go at once, the other 50 at 500/s: ≥ ~100 ms
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
    expect(bus.sent.length).toBe(60);
  });

  it('maps frames to and from the addon, surfacing error frames decoded', async () => {
    const { bus, link } = make();
    const frames: CanFrame[] = [];
    const decoded: string[][] = [];
    link.on('frame', (f) => frames.push(f));
    link.on('canError', (info) => decoded.push(info.messages));
    await link.open({ timeoutMs: 1000 });
    link.send({ id: 0x1abcdef, extended: true, rtr: false, error: false, data: Uint8Array.from([1, 2]) });
    link.send({ id: 0x12, extended: false, rtr: true, error: false, data: new Uint8Array(0), dlc: 3 });
    await link.drain();
    expect(bus.sent[0]).toMatchObject({ id: 0x1abcdef, ext: true, data: Buffer.from([1, 2]) });
    expect(bus.sent[1]).toMatchObject({ id: 0x12, rtr: true, data: Buffer.alloc(3) });

    const ch = bus.channels[0]!;
    ch.deliver({ id: 0x7ff, data: Buffer.from([9]), ts_sec: 1_700_000_000, ts_usec: 250_000 });
    ch.deliver({ id: 0x100, rtr: true, data: Buffer.alloc(4) });
    ch.deliver({ id: 0x40 | 0x4, err: true, data: Buffer.from([0, 0x20, 0, 0, 0, 0, 0, 0]) });
    expect(frames[0]).toEqual({ ...std(0x7ff, [9]), timestamp: 1_700_000_000_250 });
    expect(frames[1]).toEqual({ id: 0x100, extended: false, rtr: true, error: false, data: new Uint8Array(0), dlc: 4 });
    expect(frames[2]).toMatchObject({ id: 0x44, error: true });
    expect(decoded).toEqual([['controller problem: tx error passive', 'bus off']]);
    expect(link.stats()).toMatchObject({ frames_in: 3, error_frames: 1 });
  });

  it('goes to backoff while the interface is down and resumes with the queued frames', async () => {
    const { bus, link } = make();
    await link.open({ timeoutMs: 1000 });
    bus.setInterface({ up: false });
    await waitFor(() => link.state === 'backoff', 1000, 'backoff while down');
    expect(link.stats().last_error).toBe('CAN interface fcan0 is down (ip link set fcan0 up)');
    link.send(std(1, [1]));
    await new Promise((r) => setTimeout(r, 60));
    expect(bus.sent.length).toBe(0);
    bus.setInterface({ up: true });
    await link.waitOpen(1000);
    await link.drain();
    expect(bus.sent.length).toBe(1);
    expect(bus.channels.length).toBe(1); // the socket stayed bound
  });

  it('recreates the channel with backoff when the interface disappears and returns', async () => {
    const { bus, link } = make();
    await link.open({ timeoutMs: 1000 });
    bus.setInterface(null);
    bus.channels[0]!.vanish();
    await waitFor(() => link.state === 'backoff', 1000, 'backoff after removal');
    await new Promise((r) => setTimeout(r, 100));
    expect(link.stats().last_error).toMatch(/fcan0 does not exist/);
    bus.setInterface({ up: true });
    await link.waitOpen(1000);
    expect(bus.channels.length).toBe(2);
    expect(link.stats().reconnects).toBe(1);
  });
});

// ---- the real kernel: vcan0 inside a VM ---------------------------------------------------------------

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}
const vmSkipReason = ((): string | null => {
  if (process.env.SVC_VCAN_VM === '0') return 'SVC_VCAN_VM=0';
  if (process.platform !== 'linux' || process.arch !== 'x64') return `needs linux/x64 (this is ${process.platform}/${process.arch})`;
  if (!which('qemu-system-x86_64')) return 'qemu-system-x86_64 is not installed (apt-get install -y qemu-system-x86)';
  if (!which('busybox')) return 'busybox is not installed (apt-get install -y busybox-static)';
  if (!which('apt-cache') && !existsSync(path.join(process.env.HOME ?? '/root', '.cache/svc-vcan'))) return 'no apt to fetch the Debian kernel and no cached kernel';
  return null;
})();
if (vmSkipReason) console.warn(`[test/hal/can-socketcan] SocketCAN VM test skipped: ${vmSkipReason}`);

/** Rebuild dist/ when hal/ sources are newer than the compiled link the VM imports. */
function ensureBuilt(): void {
  const compiled = path.join(ROOT, 'dist/hal/can/socketcan-link.js');
  const newest = (dir: string): number =>
    Math.max(...readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => statSync(path.join(dir, f)).mtimeMs));
  const srcTime = Math.max(newest(path.join(ROOT, 'hal/can')), newest(path.join(ROOT, 'hal/core')));
  if (existsSync(compiled) && statSync(compiled).mtimeMs >= srcTime) return;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build for the VM failed:\n${r.stdout}${r.stderr}`);
}

interface VmResult {
  ok: boolean;
  checks: Record<string, boolean>;
  measurements: Record<string, unknown>;
  notes: string[];
}

const vmIt = it.skipIf(vmSkipReason !== null);

describe(`SocketCanLink on a real vcan0 in a qemu VM${vmSkipReason ? ` (skipped: ${vmSkipReason})` : ''}`, () => {
  let result: VmResult | null = null;
  let console_ = '';

  // One VM boot for the whole suite (~20 s boot + ~30 s of checks under TCG emulation).
  beforeAll(async () => {
    if (vmSkipReason) return;
    ensureBuilt();
    const t0 = Date.now();
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('bash', [path.join(ROOT, 'scripts/vcan-vm/run-vcan-test.sh'), 'scripts/vcan-vm/socketcan-check.mjs'], {
        cwd: ROOT,
        env: { ...process.env, SVC_VCAN_TIMEOUT: process.env.SVC_VCAN_TIMEOUT ?? '220' },
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', (c) => resolve({ code: c, output: out }));
    });
    console_ = output;
    const line = output.split('\n').find((l) => l.includes('SOCKETCAN_RESULT '));
    if (line) result = JSON.parse(line.slice(line.indexOf('SOCKETCAN_RESULT ') + 'SOCKETCAN_RESULT '.length)) as VmResult;
    const m = result?.measurements as Record<string, { delivered?: number; sent?: number; frames_per_s?: number }> | undefined;
    console.log(
      `[vcan VM] ${((Date.now() - t0) / 1000).toFixed(1)} s, exit ${code}; ` +
        (m
          ? `paced burst ${m.paced_burst?.delivered}/${m.paced_burst?.sent} (${m.paced_burst?.frames_per_s} frames/s), ` +
            `unpaced ${m.unpaced_burst?.delivered}/${m.unpaced_burst?.sent}; sweep ${JSON.stringify(result!.measurements.burst_sweep)}`
          : 'no result line'),
    );
  }, 240_000);

  const check = (name: string): void => {
    if (!result) throw new Error(`the VM produced no SOCKETCAN_RESULT line; console tail:\n${console_.split('\n').slice(-40).join('\n')}`);
    expect(result.checks[name], `${name} — notes: ${result.notes.join('; ')}`).toBe(true);
  };

  vmIt('opens two links on vcan0', () => check('open'));
  vmIt('exchanges standard, extended and remote frames with kernel timestamps', () => {
    check('frames_std_ext_rtr');
    check('timestamps');
  });
  vmIt('surfaces an error frame, decoded', () => {
    check('error_frames');
    expect(result!.measurements.error_frame).toEqual(['controller problem: rx error passive', 'bus off']);
  });
  vmIt('delivers a paced burst of 2000 frames completely and in order (an unpaced one overflows the reader)', () => {
    check('paced_burst_2000');
    const m = result!.measurements as Record<string, { delivered: number; in_order: boolean }>;
    expect(m.paced_burst).toMatchObject({ delivered: 2000, in_order: true });
    expect(m.unpaced_burst!.delivered).toBeLessThan(2000);
  });
  vmIt('limits the rate when asked', () => check('rate_limited_burst'));
  vmIt('holds frames while the interface is down and resumes when it is up', () => check('interface_down_up'));
  vmIt('recreates the socket when the interface is deleted and re-added', () => check('interface_removed_and_recreated'));
  vmIt('names a missing interface', () => check('missing_interface_error'));
  vmIt('passes overall', () => {
    expect(result?.ok).toBe(true);
  });
});
