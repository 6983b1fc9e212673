// SerialLink on real kernel pseudo-terminals: socat pairs, the peer dying and coming back.
import { afterEach, describe, expect, it } from 'vitest';
import { SerialLink, SerialLinkClosedError } from '../../hal/serial/serial-link.js';
import type { LinkState } from '../../hal/core/link.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, waitFor, type SocatPair } from './helpers/socat-pair.js';

if (!socatAvailable) console.warn(`[test/hal/serial-link] ${SOCAT_SKIP_REASON}`);

const fast = { baseMs: 40, maxMs: 200 };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

async function pair(): Promise<SocatPair> {
  const p = await startSocatPair();
  cleanups.push(() => p.dispose());
  return p;
}

function link(path: string, extra: Partial<ConstructorParameters<typeof SerialLink>[0]> = {}): SerialLink {
  const l = new SerialLink({ path, baudRate: 115200, backoff: fast, ...extra });
  cleanups.push(() => l.close());
  return l;
}

function collect(l: SerialLink): { text: () => string; chunks: Buffer[] } {
  const chunks: Buffer[] = [];
  l.on('data', (d) => chunks.push(Buffer.from(d)));
  return { chunks, text: () => Buffer.concat(chunks).toString('latin1') };
}

describe.skipIf(!socatAvailable)(`SerialLink over socat pty pairs${socatAvailable ? '' : ` (skipped: ${SOCAT_SKIP_REASON})`}`, () => {
  it('opens, reports state transitions, and carries data both ways', async () => {
    const p = await pair();
    const a = link(p.a);
    const b = link(p.b);
    const states: Array<[LinkState, LinkState]> = [];
    a.on('state', (to, from) => states.push([to, from]));
    const inA = collect(a);
    const inB = collect(b);
    await Promise.all([a.open({ timeoutMs: 3000 }), b.open({ timeoutMs: 3000 })]);
    expect(states).toEqual([
      ['connecting', 'idle'],
      ['open', 'connecting'],
    ]);

    a.write('hello from a\n');
    b.write(Uint8Array.from([0x00, 0xff, 0x10, 0x0d, 0x0a]));
    await waitFor(() => inB.text() === 'hello from a\n', 3000, 'a → b');
    await waitFor(() => Buffer.concat(inA.chunks).equals(Buffer.from([0x00, 0xff, 0x10, 0x0d, 0x0a])), 3000, 'b → a (binary)');

    // A larger transfer arrives complete and in order (raw mode: no line discipline mangling).
    const big = Buffer.alloc(64 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
    inB.chunks.length = 0;
    a.write(big);
    await a.drain();
    await waitFor(() => Buffer.concat(inB.chunks).length >= big.length, 5000, '64 KiB a → b');
    expect(Buffer.concat(inB.chunks).equals(big)).toBe(true);

    const s = a.stats();
    expect(s.state).toBe('open');
    expect(s.bytes_out).toBe(13 + big.length);
    expect(s.bytes_in).toBe(5);
    expect(s.dropped_out).toBe(0);
    expect(s.reconnects).toBe(0);
  });

  it('bounds the outbound queue: writes while not open drop the oldest chunks and count them', async () => {
    const p = await pair();
    const a = link(p.a, { queueCapacity: 4 });
    const b = link(p.b);
    const inB = collect(b);
    await b.open({ timeoutMs: 3000 });
    const accepted: boolean[] = [];
    for (let i = 0; i < 10; i++) accepted.push(a.write(`m${i};`));
    expect(accepted).toEqual([true, true, true, true, false, false, false, false, false, false]);
    expect(a.stats().dropped_out).toBe(6);
    expect(a.pending).toBe(4);
    await a.open({ timeoutMs: 3000 });
    await waitFor(() => inB.text() === 'm6;m7;m8;m9;', 3000, 'the four newest chunks');
    await a.drain();
    expect(a.stats()).toMatchObject({ dropped_out: 6, bytes_out: 12, frames_out: 4 });
  });

  it('serializes writes: a burst larger than the queue while open drops only what did not fit', async () => {
    const p = await pair();
    const a = link(p.a, { queueCapacity: 8, maxWriteBytes: 1 });
    const b = link(p.b);
    const inB = collect(b);
    await Promise.all([a.open({ timeoutMs: 3000 }), b.open({ timeoutMs: 3000 })]);
    // One write is in flight at a time; 100 synchronous writes overflow the 8-slot queue.
    for (let i = 0; i < 100; i++) a.write(String.fromCharCode(33 + (i % 90)));
    await a.drain();
    const s = a.stats();
    expect(s.dropped_out).toBeGreaterThan(0);
    expect(s.frames_out + s.dropped_out).toBe(100);
    await waitFor(() => inB.text().length === s.frames_out, 3000, 'all written bytes');
  });

  it('discards bytes that lingered in the pty before the open', async () => {
    const p = await pair();
    const b = link(p.b);
    await b.open({ timeoutMs: 3000 });
    b.write('stale bytes');
    await b.drain();
    await new Promise((r) => setTimeout(r, 100));

    const a = link(p.a);
    const inA = collect(a);
    await a.open({ timeoutMs: 3000 });
    await new Promise((r) => setTimeout(r, 200));
    expect(inA.text()).toBe('');
    b.write('fresh');
    await waitFor(() => inA.text() === 'fresh', 3000, 'fresh bytes');
  });

  it('does not fail the open when DTR/RTS cannot be set on a pty (reported as a non-fatal error)', async () => {
    const p = await pair();
    const a = link(p.a, { signals: { dtr: true, rts: true } });
    const errors: string[] = [];
    a.on('error', (e) => errors.push(e.message));
    await a.open({ timeoutMs: 3000 });
    expect(a.state).toBe('open');
    expect(errors.some((m) => /cannot set modem lines/.test(m))).toBe(true);
  });

  it('closes and reopens on demand; writes after close are refused', async () => {
    const p = await pair();
    const a = link(p.a);
    const b = link(p.b);
    const inA = collect(a);
    const inB = collect(b);
    await Promise.all([a.open({ timeoutMs: 3000 }), b.open({ timeoutMs: 3000 })]);
    a.write('one');
    await waitFor(() => inB.text() === 'one', 3000, 'first message');
    await a.close();
    expect(a.state).toBe('closed');
    expect(() => a.write('nope')).toThrow(SerialLinkClosedError);
    await expect(a.waitOpen()).rejects.toThrow(/closed/);

    b.write('sent while a was closed');
    await b.drain();
    await a.open({ timeoutMs: 3000 });
    expect(a.state).toBe('open');
    a.write('two');
    b.write('back');
    await waitFor(() => inB.text() === 'onetwo', 3000, 'after reopen a → b');
    await waitFor(() => inA.text() === 'back', 3000, 'after reopen b → a (stale bytes flushed)');
  });

  it('goes to backoff when the peer disappears and reopens by itself when it comes back', async () => {
    const p = await pair();
    const a = link(p.a);
    const b = link(p.b);
    const inA = collect(a);
    const inB = collect(b);
    const statesA: LinkState[] = [];
    a.on('state', (to) => statesA.push(to));
    const errorsA: string[] = [];
    a.on('error', (e) => errorsA.push(e.message));
    await Promise.all([a.open({ timeoutMs: 3000 }), b.open({ timeoutMs: 3000 })]);
    a.write('before');
    await waitFor(() => inB.text() === 'before', 3000, 'data before the outage');

    await p.kill(); // the other side of both ptys is gone
    await waitFor(() => a.state === 'backoff' && b.state === 'backoff', 3000, 'both links in backoff');
    expect(errorsA.some((m) => m.includes('went away'))).toBe(true);

    // While the peer is gone, reopen attempts fail (the link path is missing) and writes wait.
    await new Promise((r) => setTimeout(r, 300));
    expect(a.state).not.toBe('open');
    expect(errorsA.some((m) => /cannot open serial port .*ENOENT|No such file/.test(m))).toBe(true);
    a.write('queued during outage');

    await p.restart();
    await Promise.all([a.waitOpen(5000), b.waitOpen(5000)]);
    expect(statesA.slice(0, 3)).toEqual(['connecting', 'open', 'backoff']);
    expect(a.stats().reconnects).toBe(1);
    expect(b.stats().reconnects).toBe(1);

    // The write queued during the outage went out after the reopen (whether the peer had its end open
    // by then is a race: a pty discards input that arrived before it was opened).
    await a.drain();
    expect(a.stats()).toMatchObject({ frames_out: 2, bytes_out: 'before'.length + 'queued during outage'.length });

    b.write('after');
    a.write('again');
    await waitFor(() => inA.text() === 'after', 3000, 'b → a after the restart');
    await waitFor(() => inB.text().endsWith('again'), 3000, 'a → b after the restart');
  });

  it('keeps retrying a path that does not exist yet and opens once it appears', async () => {
    const p = await pair();
    await p.kill();
    const a = link(p.a);
    const errors: string[] = [];
    a.on('error', (e) => errors.push(e.message));
    await expect(a.open({ timeoutMs: 300 })).rejects.toThrow(/did not open within 300 ms: cannot open serial port/);
    expect(['backoff', 'connecting']).toContain(a.state);
    await p.restart();
    await a.waitOpen(5000);
    expect(a.state).toBe('open');
    expect(errors.length).toBeGreaterThan(0);
  });

  it('without reconnect, a vanished peer closes the link', async () => {
    const p = await pair();
    const a = link(p.a, { reconnect: false });
    await a.open({ timeoutMs: 3000 });
    await p.kill();
    await waitFor(() => a.state === 'closed', 3000, 'closed');
    await expect(a.waitOpen()).rejects.toThrow(SerialLinkClosedError);
  });
});
