import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { auth, DEPLOY_KEY, OPERATOR_KEY, post, reportsProject, startReportsAgent, type ReportsProject } from './fixture.js';

interface Delivery {
  at: number;
  body: any;
}

/** A local HTTP(S) receiver recording every POST; answers `status`. */
async function receiver(options: { status?: number; tls?: { cert: Buffer; key: Buffer } } = {}) {
  const deliveries: Delivery[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ at: Date.now(), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(options.status ?? 204).end();
    });
  };
  const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/reports`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 8000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const deadUrl = async (): Promise<string> => {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/gone`;
};

describe('report schedules', () => {
  let p: ReportsProject;
  let a: RunningAgent;
  const stateDir = tempDir('svc-report-sched-');
  beforeAll(async () => {
    p = reportsProject({ robots: 2 });
    a = await startReportsAgent(p, { stateDir });
  });
  afterAll(() => a.close());

  it('F28 and validation: blank URL, missing fields, bad JSON, bad interval', async () => {
    const blank = await a.json('/v1/reports/schedules', post({ profile: 'defense', destination_url: '' }, DEPLOY_KEY));
    expect(blank.status).toBe(400);
    expect(blank.body.error).toBe('destination_url required');
    const spaces = await a.json('/v1/reports/schedules', post({ profile: 'defense', destination_url: '   ' }, DEPLOY_KEY));
    expect(spaces.body.error).toBe('destination_url required');
    const missing = await a.json('/v1/reports/schedules', post({ destination_url: 'http://127.0.0.1:1/x' }, DEPLOY_KEY));
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/profile/);
    const noUrl = await a.json('/v1/reports/schedules', post({ profile: 'defense' }, DEPLOY_KEY));
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.error).toMatch(/destination_url/);
    const badJson = await a.json('/v1/reports/schedules', post('{"profile":', DEPLOY_KEY));
    expect(badJson.status).toBe(400);
    const zero = await a.json('/v1/reports/schedules', post({ profile: 'defense', destination_url: 'http://127.0.0.1:1/x', interval_hours: 0 }, DEPLOY_KEY));
    expect(zero.status).toBe(400);
    expect((await a.json('/v1/reports/schedules')).body.schedules).toEqual([]);
  });

  it('POST needs a credential (401) with Deploy (403); GET is a sensitive read', async () => {
    const body = { profile: 'defense', destination_url: 'http://127.0.0.1:1/x' };
    expect((await a.json('/v1/reports/schedules', post(body))).status).toBe(401);
    const op = await a.json('/v1/reports/schedules', post(body, OPERATOR_KEY));
    expect(op.status).toBe(403);
    expect(op.body.code).toBe('forbidden');
    expect((await a.json('/v1/reports/schedules', auth(OPERATOR_KEY))).status).toBe(200);
  });

  it('creates a schedule with defaults, ignores extra fields, persists it and lists it oldest first', async () => {
    const r = await a.json('/v1/reports/schedules', post({ profile: 'defense', destination_url: ' http://127.0.0.1:9/x ', enabled: false, colour: 'red' }, DEPLOY_KEY));
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    const s = r.body.schedule;
    expect(s).toMatchObject({ profile: 'defense', format: 'markdown', destination_url: 'http://127.0.0.1:9/x', interval_hours: 24, enabled: true, last_run_ms: null, last_status: null });
    expect(s.id).toMatch(/^report-schedule-\d+$/);
    expect(s).not.toHaveProperty('colour');
    const second = (await a.json('/v1/reports/schedules', post({ profile: 'medical', format: 'pdf', destination_url: 'http://127.0.0.1:9/y', interval_hours: 2 }, DEPLOY_KEY))).body.schedule;
    expect(second.id).not.toBe(s.id);
    const list = await a.json('/v1/reports/schedules');
    expect(list.body.schedules.map((x: any) => x.id)).toEqual([s.id, second.id]);
    const file = JSON.parse(fs.readFileSync(path.join(stateDir, 'control-center-report-schedules.json'), 'utf8'));
    expect(file.max_entries).toBe(100);
    expect(file.schedules.map((x: any) => x.id)).toEqual([s.id, second.id]);
  });

  it('keeps a ring of 100: the oldest is evicted', async () => {
    const before = (await a.json('/v1/reports/schedules')).body.schedules;
    const first = before[0].id;
    for (let i = before.length; i < 101; i++) {
      const r = await a.json('/v1/reports/schedules', post({ profile: 'defense', destination_url: `http://127.0.0.1:9/${i}` }, DEPLOY_KEY));
      expect(r.status).toBe(200);
    }
    const after = (await a.json('/v1/reports/schedules')).body.schedules;
    expect(after).toHaveLength(100);
    expect(after.map((x: any) => x.id)).not.toContain(first);
    expect(new Set(after.map((x: any) => x.id)).size).toBe(100);
    expect(after.at(-1).destination_url).toBe('http://127.0.0.1:9/100');
  });
});

describe('report delivery scheduler', () => {
  it('delivers on time to a local receiver, again after the interval, and the status survives a restart', async () => {
    const rx = await receiver();
    const p = reportsProject({ robots: 2 });
    const stateDir = tempDir('svc-report-deliver-');
    const a = await startReportsAgent(p, { stateDir, env: { SVC_REPORT_SCHEDULE_INTERVAL_SECS: '1' } });
    let id: string;
    try {
      const created = Date.now();
      const r = await a.json('/v1/reports/schedules', post({ profile: 'industrial', format: 'json', destination_url: rx.url, interval_seconds: 2 }, DEPLOY_KEY));
      expect(r.status).toBe(200);
      expect(r.body.schedule.interval_seconds).toBe(2);
      id = r.body.schedule.id;
      // Never run → due at the next tick (1 s).
      const first = await until(() => rx.deliveries[0]);
      expect(first.at - created).toBeLessThan(2500);
      expect(first.body.type).toBe('svc.report.delivery');
      expect(typeof first.body.body).toBe('string');
      const exported = JSON.parse(first.body.body);
      expect(exported).toMatchObject({ version: 'v1', program: 'fleet.sd', profile: 'industrial' });
      expect(exported.accreditation.accreditation_status).toBe('template_only');
      expect(exported.scorecard.categories).toHaveLength(7);
      expect(exported).not.toHaveProperty('format');
      // Due again once 2 s have passed since the last run: not before, and within a tick after.
      const second = await until(() => rx.deliveries[1]);
      const gap = second.at - first.at;
      expect(gap).toBeGreaterThanOrEqual(1900);
      expect(gap).toBeLessThan(4500);
      const listed = await until(async () => {
        const s = (await a.json('/v1/reports/schedules')).body.schedules.find((x: any) => x.id === id);
        return s?.last_status === 'delivered' ? s : undefined;
      });
      expect(listed.last_run_ms).toBeGreaterThanOrEqual(first.at - 1500);
    } finally {
      await a.close();
      await rx.close();
    }
    const count = rx.deliveries.length;
    // Restarted without the scheduler: the record kept its last run and status.
    const b = await startReportsAgent(p, { stateDir });
    try {
      const s = (await b.json('/v1/reports/schedules')).body.schedules.find((x: any) => x.id === id!);
      expect(s.last_status).toBe('delivered');
      expect(typeof s.last_run_ms).toBe('number');
      await new Promise((r) => setTimeout(r, 1200));
      expect(rx.deliveries.length).toBe(count);
    } finally {
      await b.close();
    }
  });

  it('records delivery_failed for a dead destination or an HTTP error, export_failed:<status> for a bad profile', async () => {
    const failing = await receiver({ status: 500 });
    const p = reportsProject({ robots: 1 });
    const stateDir = tempDir('svc-report-fail-');
    const a = await startReportsAgent(p, { stateDir, env: { SVC_REPORT_SCHEDULE_INTERVAL_SECS: '1' } });
    try {
      const mk = async (body: object) => (await a.json('/v1/reports/schedules', post({ profile: 'defense', interval_seconds: 3600, ...body }, DEPLOY_KEY))).body.schedule.id;
      const dead = await mk({ destination_url: await deadUrl() });
      const http500 = await mk({ destination_url: failing.url, format: 'csv' });
      const badProfile = await mk({ destination_url: failing.url, profile: 'nope' });
      const statuses = await until(async () => {
        const list = (await a.json('/v1/reports/schedules')).body.schedules;
        const by = Object.fromEntries(list.map((s: any) => [s.id, s.last_status]));
        return [dead, http500, badProfile].every((x) => by[x] !== null) ? by : undefined;
      });
      expect(statuses[dead]).toBe('delivery_failed');
      expect(statuses[http500]).toBe('delivery_failed');
      expect(statuses[badProfile]).toBe('export_failed:400');
      // The receiver got the CSV export once; the bad profile never reached it.
      expect(failing.deliveries).toHaveLength(1);
      expect(JSON.parse(failing.deliveries[0]!.body.body).format).toBe('csv');
    } finally {
      await a.close();
      await failing.close();
    }
    const file = JSON.parse(fs.readFileSync(path.join(stateDir, 'control-center-report-schedules.json'), 'utf8'));
    expect(file.schedules.map((s: any) => s.last_status).sort()).toEqual(['delivery_failed', 'delivery_failed', 'export_failed:400']);
  });

  it('delivers over TLS to an HTTPS destination', async () => {
    const dir = tempDir('svc-report-tls-');
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const rx = await receiver({ tls: { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) } });
    const a = await startReportsAgent(reportsProject({ robots: 1 }), { env: { SVC_REPORT_SCHEDULE_INTERVAL_SECS: '1', SVC_OUTBOUND_CA_FILE: certFile } });
    try {
      await a.json('/v1/reports/schedules', post({ profile: 'defense', format: 'pdf', destination_url: rx.url }, DEPLOY_KEY));
      const d = await until(() => rx.deliveries[0]);
      const exported = JSON.parse(d.body.body);
      expect(exported.mime).toBe('application/pdf');
      expect(Buffer.from(exported.body_base64, 'base64').subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');
    } finally {
      await a.close();
      await rx.close();
    }
  });
});
