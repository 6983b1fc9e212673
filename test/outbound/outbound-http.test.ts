import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundError, OutboundHttp } from '../../agent/outbound/outbound-http.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-outbound-'));
const certFile = path.join(dir, 'cert.pem');
const keyFile = path.join(dir, 'key.pem');
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const seen: Seen[] = [];
function handler(req: http.IncomingMessage, res: http.ServerResponse) {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    if (req.url === '/hang') return; // never answers
    if (req.url === '/fail') {
      res.writeHead(503).end('down');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, got: body }));
  });
}
const plain = http.createServer(handler);
const secure = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, handler);
let plainUrl = '';
let secureUrl = '';

beforeAll(async () => {
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  secureUrl = `https://127.0.0.1:${(secure.address() as AddressInfo).port}`;
});
afterAll(() => {
  plain.closeAllConnections();
  secure.closeAllConnections();
  plain.close();
  secure.close();
});

describe('outbound HTTP client', () => {
  it('posts JSON with a bearer token and reads the answer', async () => {
    const client = new OutboundHttp();
    const res = await client.postJson(`${plainUrl}/hook`, { a: 1 }, { bearer: 'tok' });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(JSON.parse(res.text)).toEqual({ ok: true, got: '{"a":1}' });
    const last = seen.at(-1)!;
    expect(last.method).toBe('POST');
    expect(last.headers['authorization']).toBe('Bearer tok');
    expect(last.headers['content-type']).toBe('application/json');
    client.close();
  });

  it('reports a non-2xx answer as not ok, and getJson rejects it', async () => {
    const client = new OutboundHttp();
    const res = await client.postJson(`${plainUrl}/fail`, {});
    expect(res).toMatchObject({ status: 503, ok: false, text: 'down' });
    await expect(client.getJson(`${plainUrl}/fail`)).rejects.toThrow(/HTTP 503/);
    client.close();
  });

  it('speaks TLS to a server whose CA is trusted, and refuses one that is not', async () => {
    const trusting = new OutboundHttp({ extraCaFile: certFile });
    expect((await trusting.postJson(`${secureUrl}/tls`, { b: 2 })).status).toBe(200);
    trusting.close();
    const strict = new OutboundHttp();
    await expect(strict.postJson(`${secureUrl}/tls`, {})).rejects.toBeInstanceOf(OutboundError);
    strict.close();
  });

  it('refuses non-http schemes and malformed URLs before any connection', async () => {
    const client = new OutboundHttp();
    await expect(client.postJson('file:///etc/passwd', {})).rejects.toThrow(/unsupported URL scheme 'file:'/);
    await expect(client.request('not a url')).rejects.toThrow(/invalid URL/);
    client.close();
  });

  it('gives up on a server that never answers within the total timeout', async () => {
    const client = new OutboundHttp();
    const started = Date.now();
    await expect(client.postJson(`${plainUrl}/hang`, {}, { totalTimeoutMs: 300 })).rejects.toThrow(/timed out after 300 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
    client.close();
  });

  it('fails fast on a refused connection', async () => {
    const client = new OutboundHttp();
    await expect(client.postJson('http://127.0.0.1:9/x', {})).rejects.toThrow(/ECONNREFUSED/);
    client.close();
  });

  it('a missing extra CA file is a configuration error', () => {
    expect(() => new OutboundHttp({ extraCaFile: path.join(dir, 'missing.pem') })).toThrow(/SVC_OUTBOUND_CA_FILE/);
  });
});
