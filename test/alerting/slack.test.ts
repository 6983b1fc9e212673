import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEYS, perTest, settledDeliveries } from './fixture.js';

/**
 * The Slack setup wizard (docs/operations.md § Alerting, Slack; digest §9.5, F23, F24): write-only
 * secret and webhook, a random single-use OAuth state, the code exchanged with a local server playing
 * Slack (SVC_SLACK_API_URL), and the stored webhook used as a delivery target.
 */

const { agent, receiver } = perTest();

const CLIENT_SECRET = 'slack-client-secret-0123456789';

describe('Slack wizard', () => {
  it('F23: an authorize URL needs a client id; every Slack route is administrator-only', async () => {
    const a = await agent();
    expect(await a.send('POST', '/v1/admin/slack/oauth-url', KEYS.admin, {})).toMatchObject({ status: 400, body: { error: 'oauth_client_id not configured' } });
    for (const [method, p] of [
      ['GET', '/v1/admin/slack'],
      ['POST', '/v1/admin/slack'],
      ['POST', '/v1/admin/slack/oauth-url'],
      ['POST', '/v1/admin/slack/oauth/callback'],
    ] as const) {
      expect((await a.send(method, p, KEYS.developer, method === 'POST' ? {} : undefined)).status, p).toBe(403);
      expect((await a.send(method, p, null, method === 'POST' ? {} : undefined)).status, p).toBe(401);
    }
    expect((await a.get('/v1/admin/slack')).body).toEqual({
      version: 'v1',
      configured: false,
      team_name: null,
      webhook_url_set: false,
      oauth_client_id: null,
      oauth_client_secret_set: false,
      oauth_redirect_uri: null,
      persist_path: path.join(a.stateDir, 'admin-slack.json'),
    });
  });

  it('POST /v1/admin/slack stores settings; secret and webhook URL are never returned; the stored webhook receives alerts', async () => {
    const slack = await receiver();
    const hookUrl = `${slack.url}/services/T9/B9/WEBHOOKSECRET`;
    const a = await agent();
    const r = await a.send('POST', '/v1/admin/slack', KEYS.admin, { webhook_url: hookUrl, oauth_client_id: 'cid.123', oauth_client_secret: CLIENT_SECRET, team_name: '', oauth_redirect_uri: '' });
    expect(r).toMatchObject({ status: 200, body: { version: 'v1', ok: true, configured: true, webhook_url_set: true, oauth_client_id: 'cid.123', oauth_client_secret_set: true } });
    expect((await a.send('POST', '/v1/admin/slack', KEYS.admin, { webhook_url: 'javascript:alert(1)' })).body.error).toBe('webhook_url must be an absolute http:// or https:// URL');
    const read = await a.get('/v1/admin/slack');
    expect(read.body).toMatchObject({ configured: true, webhook_url_set: true, oauth_client_id: 'cid.123', oauth_client_secret_set: true, team_name: null });
    const integrations = await a.get('/v1/admin/integrations');
    expect(integrations.body.alert_channels).toEqual(['log', 'slack:webhook']);
    for (const text of [read.text, r.text, integrations.text, (await a.get('/v1/admin/alert-channels')).text]) {
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain('WEBHOOKSECRET');
    }

    const alert = (await a.send('POST', '/v1/alerts/test', KEYS.operator, { message: 'to slack' })).body.alert;
    const log = await settledDeliveries(a, alert.id);
    expect(slack.received.map((x) => x.json)).toEqual([{ text: '[Svc] Info Custom — to slack (control-center)' }]);
    expect(slack.received[0]!.path).toBe('/services/T9/B9/WEBHOOKSECRET');
    // The stored webhook is write-only whatever its host: delivered_via and the delivery log mask its path.
    expect(log.delivered_via).toContain(`webhook:${slack.url}/services/***`);
    expect((await a.get('/v1/alerts')).text).not.toContain('WEBHOOKSECRET');
    expect((await a.get(`/v1/alerts/${alert.id}/deliveries`)).text).not.toContain('WEBHOOKSECRET');
  });

  it('OAuth: random single-use state, code exchanged with (fake) Slack, team and webhook stored; a replayed callback is refused', async () => {
    const fakeSlack = await receiver();
    const hooks = await receiver();
    const incoming = `${hooks.url}/services/TX/BX/FROMOAUTH`;
    fakeSlack.reply = (req) =>
      new URLSearchParams(req.body).get('code') === 'good-code'
        ? { ok: true, team: { name: 'Robotics Ops' }, incoming_webhook: { url: incoming, channel: '#alerts' } }
        : { ok: false, error: 'invalid_code' };
    const a = await agent({ SVC_SLACK_API_URL: fakeSlack.url, SVC_SLACK_OAUTH_REDIRECT_URI: 'https://cc.example/admin/oauth/slack/callback' });
    await a.send('POST', '/v1/admin/slack', KEYS.admin, { oauth_client_id: 'cid.1', oauth_client_secret: CLIENT_SECRET });

    const first = await a.send('POST', '/v1/admin/slack/oauth-url', KEYS.admin, {});
    expect(first.status).toBe(200);
    expect(first.body.state).toMatch(/^svc-[0-9a-f]{32}$/);
    expect(first.body.redirect_uri).toBe('https://cc.example/admin/oauth/slack/callback');
    expect(first.body.authorize_url).toBe(
      `https://slack.com/oauth/v2/authorize?client_id=cid.1&scope=incoming-webhook%2Cchat%3Awrite&redirect_uri=${encodeURIComponent('https://cc.example/admin/oauth/slack/callback')}&state=${first.body.state}`,
    );
    const second = await a.send('POST', '/v1/admin/slack/oauth-url', KEYS.admin, { redirect_uri: 'http://127.0.0.1:8080/admin/oauth/slack/callback' });
    expect(second.body.state).not.toBe(first.body.state);
    expect(second.body.redirect_uri).toBe('http://127.0.0.1:8080/admin/oauth/slack/callback');
    expect((await a.get('/v1/admin/slack')).body.oauth_redirect_uri).toBe('http://127.0.0.1:8080/admin/oauth/slack/callback');

    // F24, and the older state is no longer valid either.
    expect(await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: 'good-code', state: 'svc-wrong' })).toMatchObject({ status: 400, body: { error: 'oauth state mismatch' } });
    expect((await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: 'good-code', state: first.body.state })).body.error).toBe('oauth state mismatch');
    expect((await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: '  ', state: second.body.state })).body.error).toBe('code required');
    expect((await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { state: second.body.state })).body.error).toBe('missing code');
    expect(fakeSlack.received).toHaveLength(0);

    const done = await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: 'good-code', state: second.body.state });
    expect(done).toMatchObject({ status: 200, body: { version: 'v1', ok: true, configured: true, team_name: 'Robotics Ops', webhook_url_set: true } });
    expect(fakeSlack.received).toHaveLength(1);
    expect(fakeSlack.received[0]!.path).toBe('/oauth.v2.access');
    expect(fakeSlack.received[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(fakeSlack.received[0]!.body))).toEqual({
      code: 'good-code',
      client_id: 'cid.1',
      client_secret: CLIENT_SECRET,
      redirect_uri: 'http://127.0.0.1:8080/admin/oauth/slack/callback',
    });
    const stored = JSON.parse(fs.readFileSync(path.join(a.stateDir, 'admin-slack.json'), 'utf8'));
    expect(stored).toMatchObject({ team_name: 'Robotics Ops', webhook_url: incoming, webhook_url_set: true, configured: true });
    expect(stored.oauth_state).toBeUndefined();

    // Replay: the state was spent.
    const replay = await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: 'good-code', state: second.body.state });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toMatch(/^oauth state mismatch/);
    expect(fakeSlack.received).toHaveLength(1);

    expect((await a.get('/v1/admin/integrations')).body.alert_channels).toEqual(['log', 'slack:Robotics Ops']);
    const read = await a.get('/v1/admin/slack');
    expect(read.text).not.toContain('FROMOAUTH');
    expect(read.text).not.toContain(CLIENT_SECRET);
    // The webhook from the OAuth exchange receives alerts.
    const alert = (await a.send('POST', '/v1/alerts/test', KEYS.operator, { message: 'hello slack' })).body.alert;
    await settledDeliveries(a, alert.id);
    expect(hooks.received.map((x) => x.json)).toEqual([{ text: '[Svc] Info Custom — hello slack (control-center)' }]);
    expect((await a.get('/v1/alerts')).text).not.toContain('FROMOAUTH');
  });

  it('Slack refusing the code, Slack unreachable, a missing client secret', async () => {
    const fakeSlack = await receiver();
    fakeSlack.reply = () => ({ ok: false, error: 'invalid_code' });
    const a = await agent({ SVC_SLACK_API_URL: fakeSlack.url });
    await a.send('POST', '/v1/admin/slack', KEYS.admin, { oauth_client_id: 'cid.1' });
    let state = (await a.send('POST', '/v1/admin/slack/oauth-url', KEYS.admin, {})).body.state;
    expect((await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: 'c', state })).body.error).toBe('oauth_client_secret not configured');
    await a.send('POST', '/v1/admin/slack', KEYS.admin, { oauth_client_secret: CLIENT_SECRET });
    expect(await a.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: 'c', state })).toMatchObject({ status: 400, body: { error: 'invalid_code' } });
    expect((await a.get('/v1/admin/slack')).body.configured).toBe(true);

    const b = await agent({ SVC_SLACK_API_URL: 'http://127.0.0.1:9' });
    await b.send('POST', '/v1/admin/slack', KEYS.admin, { oauth_client_id: 'cid.1', oauth_client_secret: CLIENT_SECRET });
    state = (await b.send('POST', '/v1/admin/slack/oauth-url', KEYS.admin, {})).body.state;
    const failed = await b.send('POST', '/v1/admin/slack/oauth/callback', KEYS.admin, { code: 'c', state });
    expect(failed.status).toBe(400);
    expect(failed.body.error).toMatch(/^slack oauth failed: /);
    expect(failed.text).not.toContain(CLIENT_SECRET);
  });

  it('GET /admin/oauth/slack/callback: a static page that hands code and state to its opener, or shows them, or the error', async () => {
    const a = await agent();
    const page = await a.fetch('/admin/oauth/slack/callback?code=abc%3Cb%3E&state=svc-0011');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'sha256-/);
    const html = await page.text();
    expect(html).toContain("type: 'svc-slack-oauth'");
    expect(html).toContain('window.location.origin');
    expect(html).toContain('abc&lt;b&gt;');
    expect(html).not.toContain('abc<b>');
    expect(html).toContain('svc-0011');
    expect(await (await a.fetch('/admin/oauth/slack/callback?error=access_denied')).text()).toContain('Slack refused the authorization: <code>access_denied</code>');
    expect(await (await a.fetch('/admin/oauth/slack/callback')).text()).toContain('No authorization code was received from Slack.');
  });
});
