import { describe, expect, it } from 'vitest';
import {
  CommandId,
  CommandReplayCache,
  CommandTracker,
  ManualScheduler,
  SeqCounter,
  type CommandResult,
  type Message,
} from '../../firmware-bridge/index.js';
import { SerialLink } from './helpers.js';

describe('SeqCounter', () => {
  it('counts per sender and wraps after 0xFFFF', () => {
    const c = new SeqCounter(0xfffe);
    expect([c.next(), c.next(), c.next()]).toEqual([0xfffe, 0xffff, 0]);
    expect(c.peek()).toBe(1);
    const r = new SeqCounter();
    expect(r.peek()).toBeGreaterThanOrEqual(0);
    expect(r.peek()).toBeLessThanOrEqual(0xffff);
  });
});

describe('ManualScheduler', () => {
  it('runs timers in due order, same-instant timers in the order they were set', () => {
    const s = new ManualScheduler(100);
    const log: string[] = [];
    s.setTimeout(() => log.push('b'), 20);
    s.setTimeout(() => log.push('a'), 10);
    s.setTimeout(() => log.push('c'), 20);
    const cancelled = s.setTimeout(() => log.push('x'), 5);
    s.clearTimeout(cancelled);
    s.advance(15);
    expect(log).toEqual(['a']);
    expect(s.now()).toBe(115);
    s.setTimeout(() => log.push('d'), 0);
    expect(s.runUntilIdle()).toBe(5);
    expect(log).toEqual(['a', 'd', 'b', 'c']);
    expect(s.pending).toBe(0);
  });
});

/** A device that executes commands once, answering duplicates from its replay cache. */
function commandRig(options: { dropAcks?: number; dropCommands?: number; latencyMs?: number } = {}) {
  const scheduler = new ManualScheduler();
  const link = new SerialLink(scheduler, options.latencyMs ?? 5);
  const cache = new CommandReplayCache(4);
  const executed: Message[] = [];
  let deviceSeq = 0;
  let dropAcks = options.dropAcks ?? 0;
  let dropCommands = options.dropCommands ?? 0;
  link.hooks.toGateway = (m) => (m.type === 'command_ack' && dropAcks-- > 0 ? null : m);
  link.hooks.toDevice = (m) => (m.type === 'command' && dropCommands-- > 0 ? null : m);
  link.onDevice = (msg) => {
    if (msg.type === 'hello') return cache.clear();
    if (msg.type !== 'command') return;
    let ack = cache.get(msg.seq);
    if (!ack) {
      executed.push(msg);
      ack = msg.command_id === CommandId.reboot ? { status: 'ok', detail: '' } : { status: 'unknown_command', detail: `0x${msg.command_id.toString(16)}` };
      cache.remember(msg.seq, ack);
    }
    link.toGateway({ type: 'command_ack', seq: deviceSeq++, ref_seq: msg.seq, ...ack });
  };
  const tracker = new CommandTracker({ send: link.toDevice, scheduler, nextSeq: (() => { let s = 10; return () => s++; })(), timeoutMs: 100, retries: 3 });
  link.onGateway = (msg) => void tracker.handle(msg);
  return { scheduler, link, tracker, executed };
}

async function settle(rig: ReturnType<typeof commandRig>, p: Promise<CommandResult>): Promise<CommandResult> {
  rig.scheduler.runUntilIdle();
  return p;
}

describe('CommandTracker + CommandReplayCache', () => {
  it('resolves with the device status and the round-trip time', async () => {
    const rig = commandRig();
    const ok = await settle(rig, rig.tracker.execute(CommandId.reboot));
    expect(ok).toEqual({ status: 'ok', detail: '', seq: 10, attempts: 1, rtt_ms: 10 });
    const unknown = await settle(rig, rig.tracker.execute(0x8123, [{ type: 'u32', value: 1 }]));
    expect(unknown).toMatchObject({ status: 'unknown_command', detail: '0x8123', seq: 11 });
    expect(rig.tracker.inFlight).toBe(0);
  });

  it('retransmits a lost command with the same seq', async () => {
    const rig = commandRig({ dropCommands: 2 });
    const r = await settle(rig, rig.tracker.execute(CommandId.reboot));
    expect(r).toMatchObject({ status: 'ok', attempts: 3, seq: 10 });
    expect(rig.link.sent.toDevice.map((m) => m.seq)).toEqual([10, 10, 10]);
    expect(rig.executed).toHaveLength(1);
  });

  it('a lost ack makes the gateway retransmit, and the device answers from its cache without executing twice', async () => {
    const rig = commandRig({ dropAcks: 2 });
    const r = await settle(rig, rig.tracker.execute(CommandId.reboot));
    expect(r).toMatchObject({ status: 'ok', attempts: 3 });
    expect(rig.executed).toHaveLength(1);
    expect(rig.link.sent.toGateway).toHaveLength(3);
  });

  it('gives up with timeout after the retries', async () => {
    const rig = commandRig({ dropCommands: 100 });
    const r = await settle(rig, rig.tracker.execute(CommandId.reboot));
    expect(r).toEqual({ status: 'timeout', detail: 'no COMMAND_ACK after 4 attempts', seq: 10, attempts: 4, rtt_ms: null });
    expect(rig.scheduler.now()).toBe(400);
  });

  it('ignores acks for unknown seqs and cancels pending commands on demand', async () => {
    const rig = commandRig({ dropCommands: 100 });
    const p = rig.tracker.execute(CommandId.reboot);
    expect(rig.tracker.handle({ type: 'command_ack', seq: 0, ref_seq: 999, status: 'ok', detail: '' })).toBe(false);
    expect(rig.tracker.handle({ type: 'heartbeat', seq: 0, uptime_ms: 0, status: 'ok', faults: 0 })).toBe(false);
    rig.tracker.cancelAll('link closed');
    expect(await p).toMatchObject({ status: 'cancelled', detail: 'link closed' });
    expect(rig.scheduler.pending).toBe(0);
  });

  it('several commands in flight are matched by seq', async () => {
    const rig = commandRig();
    const all = Promise.all([rig.tracker.execute(CommandId.reboot), rig.tracker.execute(0x8001), rig.tracker.execute(CommandId.reboot)]);
    rig.scheduler.runUntilIdle();
    expect((await all).map((r) => [r.seq, r.status])).toEqual([[10, 'ok'], [11, 'unknown_command'], [12, 'ok']]);
  });

  it('the replay cache is a ring of the last N commands and is cleared by HELLO', () => {
    const cache = new CommandReplayCache(2);
    cache.remember(1, { status: 'ok', detail: 'a' });
    cache.remember(2, { status: 'error', detail: 'b' });
    expect(cache.get(1)).toEqual({ status: 'ok', detail: 'a' });
    cache.remember(3, { status: 'busy', detail: '' });
    expect(cache.get(1)).toBeUndefined();
    expect(cache.get(3)?.status).toBe('busy');
    cache.clear();
    expect(cache.get(3)).toBeUndefined();
    expect(() => new CommandReplayCache(0)).toThrow(RangeError);
  });
});
