import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterEach } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

/** One key per role that matters here: administrator, Deploy (developer), Operate only (operator), no action (auditor). */
export const KEYS = { admin: 'c1'.repeat(32), developer: 'c2'.repeat(32), operator: 'c3'.repeat(32), auditor: 'c4'.repeat(32) };
export const KEY_IDS = { admin: 'admin-key', developer: 'dev-key', operator: 'op-key', auditor: 'aud-key' };

export interface AlertAgent extends RunningAgent {
  get(p: string, token?: string | null): Promise<{ status: number; body: any; text: string }>;
  send(method: string, p: string, token: string | null, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; text: string }>;
}

/**
 * A real agent with the four keys; `env` adds settings; `stateDir` reuses a state directory (restart).
 * Retries are fast (20 ms, 80 ms) so retry tests take milliseconds, not seconds.
 */
export async function alertAgent(env: Record<string, string> = {}, stateDir = tempDir('svc-alerting-'), options: { grpc?: boolean } = {}): Promise<AlertAgent> {
  const keys = path.join(stateDir, 'test-keys.json');
  if (!fs.existsSync(keys)) {
    fs.writeFileSync(
      keys,
      JSON.stringify([
        { key_id: KEY_IDS.admin, token: KEYS.admin, role: 'administrator' },
        { key_id: KEY_IDS.developer, token: KEYS.developer, role: 'developer' },
        { key_id: KEY_IDS.operator, token: KEYS.operator, role: 'operator' },
        { key_id: KEY_IDS.auditor, token: KEYS.auditor, role: 'auditor' },
      ]),
    );
  }
  const a = await startAgent({ stateDir, env: { SVC_API_KEYS_FILE: keys, SVC_ALERT_DELIVERY_BACKOFF_MS: '20', ...env }, ...(options.grpc ? { grpcBind: '127.0.0.1:0' } : {}) });
  const call = async (method: string, p: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await a.fetch(p, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keeps the text */
    }
    return { status: res.status, body: parsed, text };
  };
  return Object.assign(a, {
    get: (p: string, token: string | null = KEYS.admin) => call('GET', p, token),
    send: call,
  });
}

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
}

/**
 * A local HTTP receiver (webhook, Teams, PagerDuty, Slack). `script` gives the status of each
 * request in turn (the last one repeats); `reply` the body.
 */
export class Receiver {
  readonly received: Received[] = [];
  private server: http.Server;
  script: number[] = [200];
  reply: (r: Received) => unknown = () => ({ ok: true });
  /** Milliseconds to wait before answering. */
  delayMs = 0;
  url = '';

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: any = null;
        try {
          json = JSON.parse(body);
        } catch {
          /* not JSON (a form) */
        }
        const r: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
        this.received.push(r);
        const status = this.script[Math.min(this.received.length - 1, this.script.length - 1)]!;
        setTimeout(() => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(this.reply(r)));
        }, this.delayMs);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server (the `smtp-server` package) that accepts every message and keeps it. */
export class SmtpSink {
  readonly mails: Mail[] = [];
  port = 0;
  /** Answer every RCPT TO with 550. */
  refuseRecipients = false;
  private server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo: (_address, _session, callback) => {
      if (this.refuseRecipients) callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      else callback();
    },
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        this.mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Polls until `check` returns a value (not undefined/false), or fails after `ms`. */
export async function eventually<T>(check: () => T | Promise<T>, ms = 5000): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The delivery log of an alert once no delivery is pending. */
export async function settledDeliveries(a: AlertAgent, alertId: string): Promise<any> {
  return eventually(async () => {
    const r = await a.get(`/v1/alerts/${alertId}/deliveries`);
    return r.status === 200 && r.body.pending === false ? r.body : undefined;
  });
}

/**
 * The agents and local servers one test file starts, each closed after its test: `agent(...)` starts
 * an alerting agent, `receiver()` a local HTTP receiver, `track(server)` any other server.
 */
export function perTest() {
  let running: AlertAgent[] = [];
  let servers: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(running.map((a) => a.close()));
    await Promise.all(servers.map((s) => s.close()));
    running = [];
    servers = [];
  });
  return {
    async agent(...args: Parameters<typeof alertAgent>): Promise<AlertAgent> {
      const a = await alertAgent(...args);
      // A test may close an agent itself (to restart on its state); closing again is then a no-op.
      const close = a.close.bind(a);
      let closing: Promise<void> | null = null;
      a.close = () => (closing ??= close());
      running.push(a);
      return a;
    },
    async receiver(): Promise<Receiver> {
      const r = await new Receiver().start();
      servers.push(r);
      return r;
    },
    track<T extends { close(): Promise<void> }>(server: T): T {
      servers.push(server);
      return server;
    },
  };
}
