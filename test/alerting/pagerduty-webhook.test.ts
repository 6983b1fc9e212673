import { describe, expect, it } from 'vitest';
import { KEY_IDS, KEYS, perTest, Receiver, type AlertAgent } from './fixture.js';

/**
 * The PagerDuty inbound webhook (docs/operations.md § Alerting; digest §9.6, F25): the shared secret
 * or Operate, 401 without either, 403 for a principal without Operate, acknowledge/resolve of the
 * matching incident, the echo to PagerDuty, audit with actor `anonymous` for secret-only calls.
 */

const { agent, track } = perTest();

const SECRET = 'pd-shared-secret-9f8e7d6c';
const HOOK = '/v1/integrations/pagerduty/webhook';

async function criticalIncident(a: AlertAgent): Promise<{ alertId: string; incident: any }> {
  const alert = a.agent.services.alerts.raise({ alert_type: 'robot_offline', severity: 'critical', source: 'fleet', message: 'rover-3 offline' })!;
  const incident = (await a.get('/v1/sre/incidents')).body.incidents.find((i: any) => i.source_alert_id === alert.id);
  expect(incident).toBeDefined();
  return { alertId: alert.id, incident };
}

async function audited(a: AlertAgent): Promise<any[]> {
  return (await a.get('/v1/audit/mutations')).body.audit.records.map((r: { payload: string }) => JSON.parse(r.payload));
}

describe('POST /v1/integrations/pagerduty/webhook', () => {
  it('F25: acknowledge with the shared secret and no bearer; outbound skipped without SVC_ALERT_PAGERDUTY_URL; audited as anonymous', async () => {
    const a = await agent({ SVC_PAGERDUTY_WEBHOOK_SECRET: SECRET });
    const { incident } = await criticalIncident(a);
    const r = await a.send('POST', HOOK, null, { event: 'incident.acknowledge', incident_id: incident.id, assignee: 'amy' }, { 'x-svc-webhook-secret': SECRET });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      version: 'v1',
      ok: true,
      event: 'incident.acknowledge',
      incident: { id: incident.id, status: 'acknowledged', assignee: 'amy' },
      pagerduty_outbound: { skipped: true, reason: 'SVC_ALERT_PAGERDUTY_URL unset' },
    });
    expect(r.body.incident.acknowledged_at_ms).toBeGreaterThan(0);
    expect(r.body.synced_at_ms).toBeGreaterThan(0);
    expect((await a.get('/v1/sre/incidents')).body.incidents.find((i: any) => i.id === incident.id)).toMatchObject({ status: 'acknowledged', assignee: 'amy' });
    expect((await audited(a)).at(-1)).toMatchObject({ method: 'POST', path: HOOK, actor_key_id: 'anonymous', actor_role: 'guest' });
    // The header name is case-insensitive.
    const again = await a.send('POST', HOOK, null, { event: 'acknowledge', incident_id: incident.id }, { 'X-SVC-WEBHOOK-SECRET': SECRET });
    expect(again.status).toBe(200);
    // A new acknowledgement without assignee clears it (PagerDuty says who holds it now).
    expect(again.body.incident.assignee).toBeUndefined();
  });

  it('401 without secret or credential, 401 with a wrong secret, 403 for a principal without Operate, 200 for Operate', async () => {
    const a = await agent({ SVC_PAGERDUTY_WEBHOOK_SECRET: SECRET });
    const { incident } = await criticalIncident(a);
    const body = { event: 'incident.acknowledge', incident_id: incident.id };
    expect(await a.send('POST', HOOK, null, body)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect((await a.send('POST', HOOK, null, body, { 'x-svc-webhook-secret': `${SECRET}x` })).status).toBe(401);
    expect((await a.send('POST', HOOK, null, body, { 'x-svc-webhook-secret': '' })).status).toBe(401);
    expect(await a.send('POST', HOOK, KEYS.auditor, body)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect((await a.send('POST', HOOK, KEYS.auditor, body, { 'x-svc-webhook-secret': 'nope' })).status).toBe(403);
    // A viewer key with the right secret: the secret authorises the call.
    expect((await a.send('POST', HOOK, KEYS.auditor, body, { 'x-svc-webhook-secret': SECRET })).status).toBe(200);
    const op = await a.send('POST', HOOK, KEYS.operator, body);
    expect(op.status).toBe(200);
    expect((await audited(a)).at(-1)).toMatchObject({ path: HOOK, actor_key_id: KEY_IDS.operator });
    // Refused calls changed nothing and were not audited.
    expect((await audited(a)).filter((x) => x.path === HOOK)).toHaveLength(2);
  });

  it('without SVC_PAGERDUTY_WEBHOOK_SECRET no header value opens the route (a blank secret is no secret)', async () => {
    const a = await agent({ SVC_PAGERDUTY_WEBHOOK_SECRET: '   ' });
    const { incident } = await criticalIncident(a);
    expect((await a.send('POST', HOOK, null, { event: 'acknowledge', incident_id: incident.id }, { 'x-svc-webhook-secret': '' })).status).toBe(401);
    expect((await a.send('POST', HOOK, null, { event: 'acknowledge', incident_id: incident.id }, { 'x-svc-webhook-secret': '   ' })).status).toBe(401);
  });

  it('resolve by dedup key; PagerDuty v2 messages[]; errors: missing event/ref, unsupported event, unknown incident (400 not_found), acknowledging a resolved one (409)', async () => {
    const a = await agent({ SVC_PAGERDUTY_WEBHOOK_SECRET: SECRET });
    const send = (body: unknown) => a.send('POST', HOOK, null, body, { 'x-svc-webhook-secret': SECRET });
    const { alertId, incident } = await criticalIncident(a);

    expect(await send({})).toMatchObject({ status: 400, body: { error: 'missing event' } });
    expect(await send({ event: 'incident.acknowledge' })).toMatchObject({ status: 400, body: { error: 'missing incident_id or dedup_key' } });
    expect(await send({ event: 'incident.escalate', incident_id: incident.id })).toMatchObject({ status: 400, body: { error: 'unsupported event; use acknowledge or resolve' } });
    expect(await send({ event: 'incident.resolve', incident_id: 'incident-0' })).toMatchObject({ status: 400, body: { error: 'incident not found or already resolved', code: 'not_found' } });
    expect((await send('{"event":')).body.error).toMatch(/^invalid JSON body: /);

    // v2 envelope: the event and the incident key come from messages[0].
    const ack = await send({ messages: [{ event: 'incident.acknowledge', incident: { incident_key: alertId } }] });
    expect(ack).toMatchObject({ status: 200, body: { event: 'incident.acknowledge', incident: { id: incident.id, status: 'acknowledged' } } });

    const resolved = await send({ event: 'incident.resolve', dedup_key: alertId });
    expect(resolved).toMatchObject({ status: 200, body: { incident: { id: incident.id, status: 'resolved' } } });
    const firstResolvedAt = resolved.body.incident.resolved_at_ms;
    await new Promise((r) => setTimeout(r, 5));
    // Re-resolving is allowed (PagerDuty re-sends) and refreshes the time; acknowledging is a conflict.
    const again = await send({ event: 'resolve', incident_id: incident.id });
    expect(again.status).toBe(200);
    expect(again.body.incident.resolved_at_ms).toBeGreaterThan(firstResolvedAt);
    expect(await send({ event: 'incident.acknowledge', incident_id: incident.id })).toMatchObject({ status: 409, body: { error: 'incident not found or already resolved', code: 'conflict' } });
  });

  it('echoes the change to SVC_ALERT_PAGERDUTY_URL with the routing key; a failing PagerDuty is reported, not fatal', async () => {
    const pd = await new Receiver().start();
    track(pd);
    const a = await agent({ SVC_PAGERDUTY_WEBHOOK_SECRET: SECRET, SVC_ALERT_PAGERDUTY_URL: `${pd.url}/v2/enqueue`, SVC_ALERT_PAGERDUTY_ROUTING_KEY: 'rk-echo-1' });
    const { alertId, incident } = await criticalIncident(a);
    // Wait for the trigger event the alert itself sent.
    for (let i = 0; i < 100 && pd.received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const before = pd.received.length;
    const send = (body: unknown) => a.send('POST', HOOK, null, body, { 'x-svc-webhook-secret': SECRET });
    const r = await send({ event: 'incident.resolve', incident_id: incident.id });
    expect(r.body.pagerduty_outbound).toEqual({ ok: true, event_action: 'resolve', url: `${pd.url}/v2/enqueue` });
    expect(pd.received.slice(before).map((x) => x.json)).toEqual([
      {
        routing_key: 'rk-echo-1',
        event_action: 'resolve',
        dedup_key: alertId,
        payload: { summary: 'Alert: RobotOffline', severity: 'critical', source: 'svc-control-center', custom_details: { incident_id: incident.id } },
      },
    ]);
    expect(r.text).not.toContain('rk-echo-1');

    pd.script = [503];
    const failed = await send({ event: 'incident.resolve', incident_id: incident.id });
    expect(failed.status).toBe(200);
    expect(failed.body.pagerduty_outbound).toEqual({ ok: false, event_action: 'resolve', error: `HTTP 503 from ${pd.url}/v2/enqueue` });

    // An incident opened by hand carries no dedup key: nothing to echo.
    const manual = (await a.send('POST', '/v1/sre/incidents', KEYS.operator, { title: 'manual' })).body.incident;
    expect((await send({ event: 'incident.acknowledge', incident_id: manual.id })).body.pagerduty_outbound).toEqual({ skipped: true, reason: 'no pagerduty dedup key on incident' });
  });

  it('the OpenAPI document shows the shared-secret alternative', async () => {
    const a = await agent();
    const doc = (await a.get('/v1/openapi.json', null)).body;
    const entry = doc.paths[HOOK].post;
    expect(entry['x-svc-access']).toBe('action:Operate');
    expect(entry['x-svc-shared-secret-header']).toBe('X-Svc-Webhook-Secret');
    expect(entry.security).toEqual([{ bearerAuth: [] }, { 'pagerduty-webhook-secret': [] }]);
    expect(doc.components.securitySchemes['pagerduty-webhook-secret']).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Svc-Webhook-Secret' });
  });
});
