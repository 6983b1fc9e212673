import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bearer, callUnary, connectGrpc } from '../helpers/grpc-client.js';
import { KEY_IDS, KEYS, perTest } from './fixture.js';

/** Admin alert channels and the integrations summary (docs/operations.md § Alerting; digest §9.1–§9.4, F21, F22). */

const { agent } = perTest();

const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdef';
const SLACK_HOOK = 'https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX';

describe('GET/PUT /v1/admin/alert-channels', () => {
  it('without a file: the environment list (webhook, PagerDuty, Teams, e-mail), routing key never shown', async () => {
    const a = await agent({
      SVC_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
      SVC_ALERT_PAGERDUTY_URL: 'http://127.0.0.1:9/pd',
      SVC_ALERT_PAGERDUTY_ROUTING_KEY: ROUTING_KEY,
      SVC_ALERT_TEAMS_URL: 'http://127.0.0.1:9/teams',
      SVC_ALERT_EMAIL_TO: 'ops@example.com',
    });
    const r = await a.get('/v1/admin/alert-channels', KEYS.developer);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      version: 'v1',
      channels: [
        { webhook: { url: 'http://127.0.0.1:9/hook' } },
        { pager_duty: { url: 'http://127.0.0.1:9/pd', routing_key_set: true } },
        { teams: { url: 'http://127.0.0.1:9/teams' } },
        { email: { to: 'ops@example.com' } },
      ],
      use_env_fallback: true,
      persist_path: path.join(a.stateDir, 'alert-channels.json'),
    });
    expect(r.text).not.toContain(ROUTING_KEY);
    const integrations = await a.get('/v1/admin/integrations', KEYS.developer);
    expect(integrations.status).toBe(200);
    expect(integrations.body).toMatchObject({
      version: 'v1',
      alert_channels: ['webhook:http://127.0.0.1:9/hook', 'pagerduty:http://127.0.0.1:9/pd', 'teams:http://127.0.0.1:9/teams', 'email:ops@example.com'],
      tenant_id: 'default',
      api_keys_loaded: 4,
      observability: { collector_url_env: 'SVC_OTEL_COLLECTOR_URL' },
    });
    expect(integrations.text).not.toContain(ROUTING_KEY);
    // Access: Deploy reads; Operate alone does not; no credential is 401.
    expect((await a.get('/v1/admin/alert-channels', KEYS.operator)).status).toBe(403);
    expect((await a.get('/v1/admin/integrations', KEYS.auditor)).status).toBe(403);
    expect((await a.get('/v1/admin/alert-channels', null)).status).toBe(401);
  });

  it('no channel in the environment: [log]', async () => {
    const a = await agent({ SVC_GRAFANA_URL: 'http://grafana.local:3000', SVC_OTEL_COLLECTOR_URL: 'http://collector.local:4318/' });
    expect((await a.get('/v1/admin/alert-channels')).body).toMatchObject({ channels: ['log'], use_env_fallback: true });
    const integrations = (await a.get('/v1/admin/integrations')).body;
    expect(integrations.alert_channels).toEqual(['log']);
    // The observability backend document, the same as GET /v1/observability/backend, plus Grafana.
    const backend = (await a.get('/v1/observability/backend')).body;
    expect(backend.traces_endpoint).toBe('http://collector.local:4318/v1/traces');
    expect(integrations.observability).toEqual({ ...backend, grafana_url: 'http://grafana.local:3000' });
  });

  it('F21: an empty list is 400 for the administrator and 403 for an operator; other refusals leave the channels as they were', async () => {
    const a = await agent();
    const empty = await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, { channels: [] });
    expect(empty).toMatchObject({ status: 400, body: { error: 'at least one channel required (use log for local-only)', code: 'bad_request' } });
    expect((await a.send('PUT', '/v1/admin/alert-channels', KEYS.operator, { channels: [] })).status).toBe(403);
    expect((await a.send('PUT', '/v1/admin/alert-channels', KEYS.developer, { channels: ['log'] })).status).toBe(403);
    expect((await a.send('PUT', '/v1/admin/alert-channels', null, { channels: ['log'] })).status).toBe(401);
    const cases: Array<[unknown, string]> = [
      [{}, 'missing channels'],
      [{ channels: ['slack'] }, 'unknown variant `slack`, expected one of `webhook`, `email`, `pager_duty`, `teams`, `log`'],
      [{ channels: [{ slack: { url: 'http://x' } }] }, 'unknown variant `slack`, expected one of `webhook`, `email`, `pager_duty`, `teams`, `log`'],
      [{ channels: [{ webhook: {} }] }, 'channels[0]: missing field `url`'],
      [{ channels: ['log', { webhook: { url: 'ftp://127.0.0.1/x' } }] }, 'channels[1]: url must be an absolute http:// or https:// URL'],
      [{ channels: [{ teams: { url: 'not a url' } }] }, 'channels[0]: url must be an absolute http:// or https:// URL'],
      [{ channels: [{ email: { to: 'nobody' } }] }, 'channels[0]: to must be an e-mail address'],
    ];
    for (const [body, error] of cases) {
      expect(await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, body), JSON.stringify(body)).toMatchObject({ status: 400, body: { error } });
    }
    // D3: not JSON.
    expect((await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, '{"channels":')).body.error).toMatch(/^invalid JSON body: /);
    expect(fs.existsSync(path.join(a.stateDir, 'alert-channels.json'))).toBe(false);
    expect((await a.get('/v1/admin/alert-channels')).body.channels).toEqual(['log']);
  });

  it('F22: PUT takes effect at once, is on disk when answered, audited, and survives a restart', async () => {
    const a = await agent({ SVC_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/env' });
    const put = await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, { channels: ['log', { webhook: { url: 'http://127.0.0.1:9/x' } }] });
    expect(put).toMatchObject({ status: 200, body: { version: 'v1', ok: true, channel_count: 2 } });
    const file = JSON.parse(fs.readFileSync(path.join(a.stateDir, 'alert-channels.json'), 'utf8'));
    expect(file).toEqual({ channels: ['log', { webhook: { url: 'http://127.0.0.1:9/x' } }], use_env_fallback: false });
    const live = (await a.get('/v1/admin/alert-channels')).body;
    expect(live).toMatchObject({ channels: ['log', { webhook: { url: 'http://127.0.0.1:9/x' } }], use_env_fallback: false });
    const audit = (await a.get('/v1/audit/mutations')).body.audit.records.map((r: { payload: string }) => JSON.parse(r.payload));
    expect(audit.at(-1)).toMatchObject({ method: 'PUT', path: '/v1/admin/alert-channels', actor_key_id: KEY_IDS.admin });

    await a.close();
    const b = await agent({ SVC_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/env' }, a.stateDir);
    expect((await b.get('/v1/admin/alert-channels')).body).toMatchObject({ channels: ['log', { webhook: { url: 'http://127.0.0.1:9/x' } }], use_env_fallback: false });
  });

  it('a PagerDuty routing key is write-only: GET shows routing_key_set, a PUT of what GET showed keeps the key', async () => {
    const a = await agent();
    const pd = { pager_duty: { url: 'http://127.0.0.1:9/pd', routing_key: ROUTING_KEY } };
    expect((await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, { channels: [pd, { webhook: { url: SLACK_HOOK } }] })).status).toBe(200);
    const read = await a.get('/v1/admin/alert-channels');
    expect(read.body.channels).toEqual([{ pager_duty: { url: 'http://127.0.0.1:9/pd', routing_key_set: true } }, { webhook: { url: 'https://hooks.slack.com/services/***' } }]);
    for (const p of ['/v1/admin/alert-channels', '/v1/admin/integrations']) {
      const text = (await a.get(p)).text;
      expect(text).not.toContain(ROUTING_KEY);
      expect(text).not.toContain('XXXXSECRETXXXX');
    }
    // Sending back the PagerDuty entry as read keeps the stored key.
    expect((await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, { channels: [read.body.channels[0]] })).status).toBe(200);
    const file = JSON.parse(fs.readFileSync(path.join(a.stateDir, 'alert-channels.json'), 'utf8'));
    expect(file.channels).toEqual([{ pager_duty: { url: 'http://127.0.0.1:9/pd', routing_key: ROUTING_KEY } }]);
    // A URL with credentials or a query shows neither.
    expect((await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, { channels: [{ webhook: { url: 'https://user:pw@hooks.example.com/in?token=abc123' } }] })).status).toBe(200);
    const shown = await a.get('/v1/admin/alert-channels');
    expect(shown.body.channels).toEqual([{ webhook: { url: 'https://hooks.example.com/in?token=***' } }]);
    expect(shown.text).not.toContain('abc123');
    expect(shown.text).not.toContain(':pw@');
  });

  it('JSON-RPC GetAlertChannels / UpdateAlertChannels (params.body_json) / GetAdminIntegrations apply the same rules', async () => {
    const a = await agent();
    const rpc = (method: string, params: unknown, token: string | null = KEYS.admin) =>
      a.send('POST', '/v1/rpc', token, { jsonrpc: '2.0', id: 1, method: `svc.v1.ControlCenter/${method}`, params });
    const update = await rpc('UpdateAlertChannels', { body_json: JSON.stringify({ channels: ['log', { email: { to: 'oncall@example.com' } }] }) });
    expect(update.status).toBe(200);
    expect(JSON.stringify(update.body)).toContain('"channel_count":2');
    const read = await rpc('GetAlertChannels', {});
    expect(JSON.stringify(read.body)).toContain('oncall@example.com');
    const integrations = await rpc('GetAdminIntegrations', {});
    expect(JSON.stringify(integrations.body)).toContain('email:oncall@example.com');
    const refused = await rpc('UpdateAlertChannels', { body_json: '{"channels":[]}' });
    expect(refused).toMatchObject({ status: 400, body: { error: 'at least one channel required (use log for local-only)', code: 'bad_request' } });
    expect((await rpc('UpdateAlertChannels', { body_json: '{"channels":["log"]}' }, KEYS.operator)).status).toBe(403);
    expect((await rpc('GetAlertChannels', {}, null)).status).toBe(401);
  });

  it('gRPC GetAlertChannels / UpdateAlertChannels / GetAdminIntegrations: same rules, and the update is audited', async () => {
    const a = await agent({}, undefined, { grpc: true });
    const g = connectGrpc(a.agent.grpcAddress!);
    try {
      const update = await callUnary(g.client, 'UpdateAlertChannels', { body_json: JSON.stringify({ channels: [{ pager_duty: { url: 'http://127.0.0.1:9/pd', routing_key: ROUTING_KEY } }] }) }, bearer(KEYS.admin));
      expect(update.ok, update.message).toBe(true);
      expect(update.json).toMatchObject({ ok: true, channel_count: 1 });
      const read = await callUnary(g.client, 'GetAlertChannels', {}, bearer(KEYS.developer));
      expect(read.json.channels).toEqual([{ pager_duty: { url: 'http://127.0.0.1:9/pd', routing_key_set: true } }]);
      const integrations = await callUnary(g.client, 'GetAdminIntegrations', {}, bearer(KEYS.developer));
      expect(integrations.json.alert_channels).toEqual(['pagerduty:http://127.0.0.1:9/pd']);
      expect(JSON.stringify([read.json, integrations.json])).not.toContain(ROUTING_KEY);
      const refused = await callUnary(g.client, 'UpdateAlertChannels', { body_json: '{"channels":[]}' }, bearer(KEYS.operator));
      expect(refused).toMatchObject({ ok: false, statusName: 'PERMISSION_DENIED' });
      const empty = await callUnary(g.client, 'UpdateAlertChannels', { body_json: '{"channels":[]}' }, bearer(KEYS.admin));
      expect(empty).toMatchObject({ ok: false, statusName: 'INVALID_ARGUMENT', errorEnvelope: { error: 'at least one channel required (use log for local-only)' } });
      const records = (await a.get('/v1/audit/mutations')).body.audit.records;
      const grpcRecords = records.filter((r: { event_type: string }) => r.event_type === 'control_center.grpc.mutation').map((r: { payload: string }) => JSON.parse(r.payload));
      expect(grpcRecords).toEqual([expect.objectContaining({ rpc: 'svc.v1.ControlCenter/UpdateAlertChannels', actor_key_id: KEY_IDS.admin })]);
    } finally {
      g.close();
    }
  });

  it('use_env_fallback: a stored non-empty list wins at start; an empty stored list with the flag falls back to the environment', async () => {
    const a = await agent({ SVC_ALERT_TEAMS_URL: 'http://127.0.0.1:9/t' });
    expect((await a.send('PUT', '/v1/admin/alert-channels', KEYS.admin, { channels: ['log'], use_env_fallback: true })).status).toBe(200);
    expect((await a.get('/v1/admin/alert-channels')).body).toMatchObject({ channels: ['log'], use_env_fallback: true });
    await a.close();
    const b = await agent({ SVC_ALERT_TEAMS_URL: 'http://127.0.0.1:9/t' }, a.stateDir);
    expect((await b.get('/v1/admin/alert-channels')).body).toMatchObject({ channels: ['log'], use_env_fallback: true });
    await b.close();
    fs.writeFileSync(path.join(a.stateDir, 'alert-channels.json'), JSON.stringify({ channels: [], use_env_fallback: true }));
    const c = await agent({ SVC_ALERT_TEAMS_URL: 'http://127.0.0.1:9/t' }, a.stateDir);
    expect((await c.get('/v1/admin/alert-channels')).body).toMatchObject({ channels: [{ teams: { url: 'http://127.0.0.1:9/t' } }], use_env_fallback: true });
  });

  it('a damaged channels file is kept aside and the environment list is used', async () => {
    const a = await agent();
    await a.close();
    fs.writeFileSync(path.join(a.stateDir, 'alert-channels.json'), '{"channels":[{"carrier_pigeon":{}}]}');
    const b = await agent({ SVC_ALERT_TEAMS_URL: 'http://127.0.0.1:9/t' }, a.stateDir);
    expect((await b.get('/v1/admin/alert-channels')).body).toMatchObject({ channels: [{ teams: { url: 'http://127.0.0.1:9/t' } }], use_env_fallback: true });
    expect(fs.readdirSync(a.stateDir).some((f) => f.startsWith('alert-channels.json.corrupt-'))).toBe(true);
  });
});
