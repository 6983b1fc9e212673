import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SvcClient, type StreamHandle } from '../../clients/typescript/src/index.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { eventually } from '../helpers/stream-client.js';

/**
 * `?tail=N` on the stream.s upgrade (docs/streaming.md § Delivery): each backlog's replay starts at most
 * N items before its head, so a client of a long-running agent (the panel's live plot) gets the latest
 * items, not the whole ring. The TypeScript client's `stream({tail})` sets it.
 */
const KEY = 'e7'.repeat(32);
const WS = WebSocket as unknown as NonNullable<ConstructorParameters<typeof SvcClient>[0]['WebSocket']>;
let agents: RunningAgent[] = [];
let streams: StreamHandle[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

describe('the telemetry stream from near its head (?tail=N)', () => {
  it('replays only the last N alerts with tail=N, none with tail=0, and everything without tail', async () => {
    const a = await startAgent({ env: { SVC_API_KEY: KEY } });
    agents.push(a);
    const client = new SvcClient({ baseUrl: a.baseUrl, apiKey: KEY, WebSocket: WS });
    for (let i = 0; i < 5; i++) await client.testAlert({ message: `tail probe ${i}` });
    const probes = (await a.json('/v1/alerts')).body.alerts.filter((x: any) => String(x.message).startsWith('tail probe'));
    expect(probes).toHaveLength(5);

    const collect = (tail?: number) => {
      const got: { offset: number; message: string }[] = [];
      const s = client.stream({ ...(tail !== undefined ? { tail } : {}), onAlert: (alert, offset) => got.push({ offset, message: String(alert['message']) }) });
      streams.push(s);
      return { s, got };
    };
    const all = collect();
    const two = collect(2);
    const none = collect(0);
    await Promise.all([all.s.ready, two.s.ready, none.s.ready]);
    await eventually(() => all.got, (g) => g.filter((x) => x.message.startsWith('tail probe')).length === 5);
    await eventually(() => two.got, (g) => g.length >= 2);
    // A little longer for anything else that would have come.
    await new Promise((r) => setTimeout(r, 300));
    const head = Math.max(...all.got.map((x) => x.offset));
    expect(two.got.map((x) => x.offset)).toEqual([head - 1, head]);
    expect(two.got.map((x) => x.message)).toEqual(['tail probe 3', 'tail probe 4']);
    expect(none.got).toEqual([]);

    // tail=0 still receives what arrives after it connected.
    await client.testAlert({ message: 'after tail' });
    await eventually(() => none.got, (g) => g.some((x) => x.message === 'after tail'));
    expect(none.got.map((x) => x.offset)).toEqual([head + 1]);
  }, 30_000);
});
