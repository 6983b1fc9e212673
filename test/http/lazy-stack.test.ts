import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * `Agent.listen()` binds the socket first and loads the HTTP stack (Hono, the node adapter, ws,
 * the operation routes) on the first request or upgrade. Whatever the first contact is, it must be
 * answered as if the stack had been there all along.
 */

let agents: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
});

async function agent(): Promise<RunningAgent> {
  const a = await startAgent();
  agents.push(a);
  return a;
}

function rawUpgrade(port: number, headers: string, pathname: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`);
    });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (data += d));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(5000, () => {
      socket.destroy();
      reject(new Error(`no answer within 5 s; got ${JSON.stringify(data)}`));
    });
  });
}

describe('lazy HTTP stack', () => {
  it('answers concurrent first requests, each exactly once', async () => {
    const a = await agent();
    const results = await Promise.all([
      a.json('/v1/health'),
      a.json('/v1/version'),
      a.json('/v1/nope'),
    ]);
    expect(results[0].status).toBe(200);
    expect(results[0].headers.get('x-correlation-id')).toBeTruthy();
    expect(results[1].status).toBe(200);
    expect(results[2].status).toBe(404);
    expect(results[2].body).toMatchObject({ ok: false, code: 'not_found' });
    expect((await a.json('/v1/health')).status).toBe(200);
  });

  it('accepts a WebSocket stream as the very first contact', async () => {
    const a = await agent();
    const ws = new WebSocket(`${a.wsUrl}/v1/stream/telemetry`);
    const hello = await new Promise<Record<string, unknown>>((resolve, reject) => {
      ws.once('message', (d) => resolve(JSON.parse(d.toString())));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res: http.IncomingMessage) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    expect(hello['type']).toBe('hello');
    ws.terminate();
    expect((await a.json('/v1/health')).status).toBe(200);
  });

  it('refuses a WebSocket upgrade of an unknown path as the very first contact like any later one', async () => {
    const a = await agent();
    const port = Number(new URL(a.baseUrl).port);
    const upgrade = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    const first = await rawUpgrade(port, upgrade, '/v1/nope');
    const again = await rawUpgrade(port, upgrade, '/v1/nope');
    expect(first.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(again.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
  });

  it('closes cleanly when nothing was ever requested', async () => {
    const a = await startAgent();
    await a.close();
    await a.close();
  });
});
