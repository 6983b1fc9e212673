import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { eventually, KEYS, perTest, settledDeliveries, SmtpSink, type AlertAgent } from './fixture.js';

/**
 * Alerts delivered for real (docs/operations.md § Alerting; digest §9.1, §1.5): every channel kind
 * reaches a local receiver with its own body, e-mail reaches a real SMTP server, failures are retried
 * with backoff and logged per alert, and only channels that accepted the alert appear in delivered_via.
 */

const { agent, receiver, track } = perTest();

/** A loopback port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const ROUTING_KEY = 'pd-routing-key-0123456789';

async function testAlert(a: AlertAgent, message: string): Promise<any> {
  const r = await a.send('POST', '/v1/alerts/test', KEYS.operator, { message });
  expect(r.status).toBe(200);
  return r.body.alert;
}

describe('alert delivery', () => {
  it('one alert reaches a webhook, a Slack-style webhook, Teams, PagerDuty and a real SMTP server, each with its own body', async () => {
    const [hook, slack, teams, pd] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    const smtp = await new SmtpSink().start();
    track(smtp);
    const a = await agent({ SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(smtp.port), SVC_SMTP_FROM: 'svc@robots.example' });
    const slackUrl = `${slack.url}/hooks.slack.com/services/T1/B2/SECRETPART`;
    const put = await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, {
      channels: [
        'log',
        { webhook: { url: `${hook.url}/in` } },
        { webhook: { url: slackUrl } },
        { teams: { url: `${teams.url}/card` } },
        { pager_duty: { url: `${pd.url}/v2/enqueue`, routing_key: ROUTING_KEY } },
        { email: { to: 'oncall@robots.example' } },
      ],
    });
    expect(put.status).toBe(200);

    const alert = await testAlert(a, 'lidar offline on rover-7');
    expect(alert.delivered_via).toContain('log');
    const log = await settledDeliveries(a, alert.id);

    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]).toMatchObject({ method: 'POST', path: '/in' });
    expect(hook.received[0]!.headers['content-type']).toBe('application/json');
    expect(hook.received[0]!.json).toEqual({ id: alert.id, alert_type: 'custom', severity: 'info', message: 'lidar offline on rover-7', source: 'control-center', timestamp_ms: alert.timestamp_ms });

    expect(slack.received[0]!.json).toEqual({ text: '[Svc] Info Custom — lidar offline on rover-7 (control-center)' });

    expect(teams.received[0]!.json).toEqual({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: 'lidar offline on rover-7',
      themeColor: 'D13438',
      title: 'Svc Info alert',
      sections: [{ facts: [{ name: 'Type', value: 'Custom' }, { name: 'Source', value: 'control-center' }, { name: 'Message', value: 'lidar offline on rover-7' }] }],
    });

    expect(pd.received[0]!.path).toBe('/v2/enqueue');
    expect(pd.received[0]!.json).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: alert.id,
      payload: { summary: 'lidar offline on rover-7', severity: 'info', source: 'control-center', custom_details: { alert_id: alert.id, alert_type: 'Custom' } },
    });

    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.from).toBe('svc@robots.example');
    expect(mail.to).toEqual(['oncall@robots.example']);
    expect(mail.raw).toMatch(/^From: svc@robots\.example\r?$/m);
    expect(mail.raw).toMatch(/^To: oncall@robots\.example\r?$/m);
    expect(mail.raw).toMatch(/^Subject: \[Svc\] Info Custom alert from control-center\r?$/m);
    expect(mail.raw).toContain('lidar offline on rover-7');
    expect(mail.raw).toContain(`Alert id:  ${alert.id}`);

    const labels = ['log', `webhook:${hook.url}/in`, `webhook:${slack.url}/hooks.slack.com/services/T1/B2/SECRETPART`, `teams:${teams.url}/card`, `pagerduty:${pd.url}/v2/enqueue`, 'email:oncall@robots.example'];
    expect([...log.delivered_via].sort()).toEqual([...labels].sort());
    expect(log.deliveries.filter((d: any) => d.ok)).toHaveLength(6);
    expect(log.deliveries.find((d: any) => d.channel === 'email:oncall@robots.example')).toMatchObject({ ok: true, attempt: 1, status: expect.stringMatching(/^250/) });
    expect(log.deliveries.find((d: any) => d.channel === `teams:${teams.url}/card`)).toMatchObject({ ok: true, attempt: 1, status: 200 });

    // The stored alert carries them too, and the delivery log is a file of the state directory.
    const listed = (await a.get('/v1/alerts')).body.alerts.find((x: any) => x.id === alert.id);
    expect([...listed.delivered_via].sort()).toEqual([...labels].sort());
    const logText = await eventually(() => {
      const f = path.join(a.stateDir, 'alert-deliveries.json');
      const t = fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
      return t.includes('email:oncall@robots.example') ? t : undefined;
    });
    // No secret in the log, the alert ring or the API: the routing key stays in the channels file.
    expect(logText).not.toContain(ROUTING_KEY);
    expect((await a.get(`/v1/alerts/${alert.id}/deliveries`)).text).not.toContain(ROUTING_KEY);
  });

  it('a critical alert opens an incident and the PagerDuty event names it', async () => {
    const pd = await receiver();
    const a = await agent({ SVC_ALERT_PAGERDUTY_URL: `${pd.url}/v2/enqueue`, SVC_ALERT_PAGERDUTY_ROUTING_KEY: ROUTING_KEY });
    const alert = a.agent.services.alerts.raise({ alert_type: 'config_drift', severity: 'critical', source: 'drift-scan', message: 'trust level changed on cam-1' })!;
    await settledDeliveries(a, alert.id);
    const incident = (await a.get('/v1/sre/incidents')).body.incidents.find((i: any) => i.source_alert_id === alert.id);
    expect(incident).toMatchObject({ title: 'Alert: ConfigDrift', pagerduty_dedup_key: alert.id });
    expect(pd.received[0]!.json).toMatchObject({
      routing_key: ROUTING_KEY,
      dedup_key: alert.id,
      payload: { severity: 'critical', source: 'drift-scan', custom_details: { alert_id: alert.id, alert_type: 'ConfigDrift', incident_id: incident.id } },
    });
    // Environment channels: PagerDuty only, so no log channel in delivered_via.
    expect(a.agent.services.alerts.get(alert.id)!.delivered_via).toEqual([`pagerduty:${pd.url}/v2/enqueue`]);
  });

  it('a receiver that fails twice (503) is retried with backoff and the third attempt delivers', async () => {
    const hook = await receiver();
    hook.script = [503, 503, 200];
    const a = await agent({ SVC_ALERT_WEBHOOK_URL: `${hook.url}/flaky`, SVC_ALERT_DELIVERY_BACKOFF_MS: '50' });
    const alert = await testAlert(a, 'flaky receiver');
    const log = await settledDeliveries(a, alert.id);
    expect(hook.received).toHaveLength(3);
    expect(log.deliveries.map((d: any) => [d.attempt, d.ok, d.status])).toEqual([
      [1, false, 503],
      [2, false, 503],
      [3, true, 200],
    ]);
    // Backoff: ≥ 50 ms before the second attempt, ≥ 200 ms before the third.
    const at = log.deliveries.map((d: any) => d.at_ms);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(45);
    expect(at[2] - at[1]).toBeGreaterThanOrEqual(190);
    expect(log.delivered_via).toEqual([`webhook:${hook.url}/flaky`]);
  });

  it('a dead receiver: every attempt fails, is logged, and the channel is absent from delivered_via; a 4xx is not retried', async () => {
    const port = await deadPort();
    const refusing = await receiver();
    refusing.script = [400];
    const a = await agent();
    await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, {
      channels: ['log', { webhook: { url: `http://127.0.0.1:${port}/gone?token=s3cr3t` } }, { teams: { url: `${refusing.url}/bad` } }],
    });
    const alert = await testAlert(a, 'nobody listens');
    const log = await settledDeliveries(a, alert.id);
    const dead = log.deliveries.filter((d: any) => d.channel === `webhook:http://127.0.0.1:${port}/gone?token=***`);
    expect(dead.map((d: any) => [d.attempt, d.ok])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(dead[0].error).toMatch(/ECONNREFUSED/);
    const bad = log.deliveries.filter((d: any) => d.channel === `teams:${refusing.url}/bad`);
    expect(bad).toEqual([expect.objectContaining({ attempt: 1, ok: false, status: 400, error: 'HTTP 400' })]);
    expect(refusing.received).toHaveLength(1);
    expect(log.delivered_via).toEqual(['log']);
    expect((await a.get(`/v1/alerts/${alert.id}/deliveries`)).text).not.toContain('s3cr3t');
    expect((await a.get('/v1/alerts')).text).not.toContain('s3cr3t');
  });

  it('a slow receiver never holds up the request that raised the alert', async () => {
    const slow = await receiver();
    slow.delayMs = 1500;
    const a = await agent({ SVC_ALERT_WEBHOOK_URL: `${slow.url}/slow` });
    const started = Date.now();
    const alert = await testAlert(a, 'slow receiver');
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await a.get(`/v1/alerts/${alert.id}/deliveries`)).body).toMatchObject({ pending: true, delivered_via: [] });
    const log = await settledDeliveries(a, alert.id);
    expect(log.delivered_via).toEqual([`webhook:${slow.url}/slow`]);
  });

  it('delivered_via written after the answer is persisted: it is there after a restart', async () => {
    const hook = await receiver();
    const a = await agent({ SVC_ALERT_WEBHOOK_URL: `${hook.url}/x` });
    const alert = await testAlert(a, 'persist me');
    await settledDeliveries(a, alert.id);
    await a.close();
    const b = await agent({}, a.stateDir);
    const stored = (await b.get('/v1/alerts')).body.alerts.find((x: any) => x.id === alert.id);
    expect(stored.delivered_via).toEqual([`webhook:${hook.url}/x`]);
    expect((await b.get(`/v1/alerts/${alert.id}/deliveries`)).body.deliveries).toEqual([expect.objectContaining({ channel: `webhook:${hook.url}/x`, ok: true, attempt: 1 })]);
  });

  it('e-mail dry run (or no SMTP host): logged, nothing sent, not counted as delivered', async () => {
    const smtp = await new SmtpSink().start();
    track(smtp);
    const a = await agent({ SVC_ALERT_EMAIL_TO: 'oncall@robots.example', SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(smtp.port), SVC_ALERT_EMAIL_DRY_RUN: '1' });
    const alert = await testAlert(a, 'dry run');
    const log = await settledDeliveries(a, alert.id);
    expect(log.deliveries).toEqual([expect.objectContaining({ channel: 'email:oncall@robots.example', attempt: 1, ok: false, skipped: true, error: 'dry run (SVC_ALERT_EMAIL_DRY_RUN): logged, not sent' })]);
    expect(log.delivered_via).toEqual([]);
    expect(smtp.mails).toHaveLength(0);

    const noHost = await agent({ SVC_ALERT_EMAIL_TO: 'oncall@robots.example' });
    const other = await testAlert(noHost, 'no host');
    expect((await settledDeliveries(noHost, other.id)).deliveries[0]).toMatchObject({ ok: false, skipped: true, error: 'no SVC_SMTP_HOST: logged, not sent' });
  });

  it('an SMTP server that refuses the recipient: retried, never counted', async () => {
    const smtp = await new SmtpSink().start();
    track(smtp);
    smtp.refuseRecipients = true;
    const a = await agent({ SVC_ALERT_EMAIL_TO: 'oncall@robots.example', SVC_SMTP_HOST: '127.0.0.1', SVC_SMTP_PORT: String(smtp.port) });
    const alert = await testAlert(a, 'refused');
    const log = await settledDeliveries(a, alert.id);
    expect(log.deliveries.map((d: any) => d.ok)).toEqual([false, false, false]);
    expect(log.deliveries[0].error).toMatch(/550/);
    expect(log.delivered_via).toEqual([]);
  });

  it('https receivers: delivered over TLS when the certificate is trusted (SVC_OUTBOUND_CA_FILE), refused and logged when not', async () => {
    const dir = tempDir('svc-alert-tls-');
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const bodies: string[] = [];
    const server = https.createServer({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    track({ close: () => new Promise<void>((r) => server.close(() => r())) });
    const url = `https://127.0.0.1:${(server.address() as net.AddressInfo).port}/teams`;

    const trusting = await agent({ SVC_ALERT_TEAMS_URL: url, SVC_OUTBOUND_CA_FILE: certFile });
    const ok = await testAlert(trusting, 'over tls');
    expect((await settledDeliveries(trusting, ok.id)).delivered_via).toEqual([`teams:${url}`]);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ '@type': 'MessageCard', summary: 'over tls' });

    const untrusting = await agent({ SVC_ALERT_TEAMS_URL: url, SVC_ALERT_DELIVERY_ATTEMPTS: '1' });
    const refused = await testAlert(untrusting, 'untrusted');
    const log = await settledDeliveries(untrusting, refused.id);
    expect(log.delivered_via).toEqual([]);
    expect(log.deliveries).toEqual([expect.objectContaining({ ok: false, attempt: 1, error: expect.stringMatching(/self.signed|certificate/i) })]);
    expect(bodies).toHaveLength(1);
  });

  it('deliveries of an unknown alert: 404; the log is a sensitive read', async () => {
    const a = await agent({ SVC_API_REQUIRE_AUTH_READS: '1' });
    expect(await a.get('/v1/alerts/nope-1/deliveries')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await a.get('/v1/alerts/nope-1/deliveries', null)).status).toBe(401);
  });
});
