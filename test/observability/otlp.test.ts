import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { metricsEndpoint, tracesEndpoint } from '../../agent/observability/otlp/otlp-endpoints.js';
import { loadSettings } from '../../agent/settings/settings.js';
import { GUEST_KEY, OPERATOR_KEY, post, sreProject } from '../sre/fixture.js';
import { startReceiver, waitFor } from './receiver.js';

const GAUGES = [
  'svc.control_center.devices.total',
  'svc.control_center.devices.healthy',
  'svc.control_center.alerts.total',
  'svc.control_center.alerts.critical',
  'svc.control_center.traces.recorded',
  'svc.control_center.availability.percent',
];

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});
async function agent(env: Record<string, string> = {}, withProject = true): Promise<RunningAgent> {
  const p = sreProject();
  const a = await startAgent(withProject ? { configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0', ...env } } : { env });
  cleanups.push(() => a.close());
  return a;
}
async function receiver(status = 200) {
  const r = await startReceiver(status);
  cleanups.push(() => r.close());
  return r;
}
const attr = (span: any, key: string) => span.attributes.find((x: any) => x.key === key)?.value;

describe('OTLP endpoint resolution (§ Endpoints)', () => {
  const resolve = (env: Record<string, string>) => {
    const s = loadSettings(env, '/tmp').otlp;
    return { traces: tracesEndpoint(s), metrics: metricsEndpoint(s) };
  };
  it('follows the documented order for traces and metrics', () => {
    expect(resolve({})).toEqual({ traces: null, metrics: null });
    expect(resolve({ SVC_OTEL_COLLECTOR_URL: 'http://c:4318/' })).toEqual({ traces: 'http://c:4318/v1/traces', metrics: 'http://c:4318/v1/metrics' });
    expect(resolve({ SVC_OTEL_COLLECTOR_URL: 'http://c:4318/v1/traces' }).traces).toBe('http://c:4318/v1/traces');
    expect(resolve({ SVC_OTLP_ENDPOINT: 'http://o:4318/v1/metrics' })).toEqual({ traces: 'http://o:4318/v1/traces', metrics: 'http://o:4318/v1/metrics' });
    expect(resolve({ SVC_JAEGER_OTLP_ENDPOINT: 'http://j/v1/traces', SVC_OTEL_COLLECTOR_URL: 'http://c' }).traces).toBe('http://j/v1/traces');
    expect(resolve({ SVC_OTLP_TRACES_ENDPOINT: 'http://t/x', SVC_JAEGER_OTLP_ENDPOINT: 'http://j', SVC_OTLP_METRICS_ENDPOINT: 'http://m/y', SVC_OTEL_COLLECTOR_URL: 'http://c' })).toEqual({
      traces: 'http://t/x',
      metrics: 'http://m/y',
    });
    expect(resolve({ SVC_OTLP_TRACES_ENDPOINT: '   ', SVC_OTEL_COLLECTOR_URL: 'http://c' }).traces).toBe('http://c/v1/traces');
  });
});

describe('trace routes', () => {
  it('F20: the backend document has no version key', async () => {
    const a = await agent({}, false);
    const r = await a.json('/v1/observability/backend');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ package: 'svc-otel-collector', traces_endpoint: null, metrics_endpoint: null, auto_push: false, collector_url_env: 'SVC_OTEL_COLLECTOR_URL' });
    expect('version' in r.body).toBe(false);
    const b = await agent({ SVC_OTEL_COLLECTOR_URL: 'http://collector:4318', SVC_OTLP_TRACE_AUTO_PUSH: 'true' });
    expect((await b.json('/v1/observability/backend')).body).toMatchObject({ traces_endpoint: 'http://collector:4318/v1/traces', metrics_endpoint: 'http://collector:4318/v1/metrics', auto_push: true });
  });

  it('F19: /v1/observability/otlp/traces after one request: span named "<METHOD> <path>", trace id from SHA-256 of the correlation id', async () => {
    const a = await agent({}, false);
    const health = await a.fetch('/v1/health', { headers: { 'x-correlation-id': 'corr-f19-0001' } });
    expect(health.status).toBe(200);
    await a.fetch('/v1/nope');
    const r = await a.json('/v1/observability/otlp/traces');
    expect(r.status).toBe(200);
    expect(r.body.version).toBe('v1');
    expect(r.body.span_count).toBeGreaterThanOrEqual(2);
    const rs = r.body.otlp.resourceSpans[0];
    expect(rs.resource.attributes).toEqual(
      expect.arrayContaining([
        { key: 'service.name', value: { stringValue: 'svc-control-center' } },
        { key: 'telemetry.sdk.name', value: { stringValue: 'svc-ops' } },
      ]),
    );
    expect(rs.scopeSpans[0].scope.name).toBe('svc.control-center.http');
    const spans = rs.scopeSpans[0].spans;
    expect(spans.length).toBe(r.body.span_count);
    const first = spans[0];
    expect(first.name).toBe('GET /v1/health');
    expect(first.traceId).toMatch(/^[0-9a-f]{32}$/);
    const digest = createHash('sha256').update('corr-f19-0001').digest('hex');
    expect(first.traceId).toBe(digest.slice(0, 32));
    expect(first.spanId).toBe(digest.slice(32, 48));
    expect(first.kind).toBe(2);
    expect(typeof first.startTimeUnixNano).toBe('string');
    expect(BigInt(first.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(first.startTimeUnixNano));
    expect(first.status.code).toBe(1);
    expect(attr(first, 'svc.correlation_id')).toEqual({ stringValue: 'corr-f19-0001' });
    expect(attr(first, 'http.method')).toEqual({ stringValue: 'GET' });
    expect(attr(first, 'http.route')).toEqual({ stringValue: '/v1/health' });
    expect(Number(attr(first, 'http.status_code').intValue)).toBe(200);
    const notFound = spans.find((s: any) => s.name === 'GET /v1/nope');
    expect(notFound.status.code).toBe(2);

    const plain = await a.json('/v1/observability/traces');
    expect(plain.body.traces[0]).toMatchObject({ correlation_id: 'corr-f19-0001', method: 'GET', path: '/v1/health', status: 200 });
    const ts = plain.body.traces.map((t: any) => t.timestamp_ms);
    expect(ts).toEqual([...ts].sort((x: number, y: number) => x - y));
  });

  it('metrics document: six gauges in order with the SRE values', async () => {
    const a = await agent();
    const r = await a.json('/v1/observability/otlp/metrics');
    expect(r.status).toBe(200);
    expect(r.body.metric_count).toBe(6);
    const sm = r.body.otlp.resourceMetrics[0].scopeMetrics[0];
    expect(sm.scope.name).toBe('svc.control-center.metrics');
    expect(sm.metrics.map((m: any) => m.name)).toEqual(GAUGES);
    const value = (name: string) => sm.metrics.find((m: any) => m.name === name).gauge.dataPoints[0];
    expect(value('svc.control_center.devices.total').asDouble).toBe(3);
    expect(value('svc.control_center.availability.percent').asDouble).toBeCloseTo(66.667, 2);
    expect(value('svc.control_center.devices.total').timeUnixNano).toMatch(/^\d{19}$/);
  });
});

describe('POST /v1/observability/otlp/export and /export-metrics', () => {
  it('F18: no endpoint configured → 400 with the exact text; Operate needed (401 anonymous, 403 guest)', async () => {
    const a = await agent();
    expect((await a.json('/v1/observability/otlp/export', post())).status).toBe(401);
    const guest = await a.json('/v1/observability/otlp/export', post(GUEST_KEY));
    expect(guest.status).toBe(403);
    const r = await a.json('/v1/observability/otlp/export', post(OPERATOR_KEY));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'missing traces endpoint; set SVC_OTLP_TRACES_ENDPOINT or pass ?endpoint=', code: 'bad_request' });
    const m = await a.json('/v1/observability/otlp/export-metrics', post(OPERATOR_KEY));
    expect(m.status).toBe(400);
    expect(m.body.error).toBe('missing metrics endpoint; set SVC_OTLP_METRICS_ENDPOINT or pass ?endpoint=');
  });

  it('pushes the trace ring to a local receiver with the bearer token', async () => {
    const rx = await receiver();
    const a = await agent({ SVC_OTLP_TOKEN: 'otlp-secret-1', SVC_OTEL_COLLECTOR_URL: rx.url });
    await a.fetch('/v1/health');
    await a.fetch('/v1/health/summary');
    const r = await a.json('/v1/observability/otlp/export', post(OPERATOR_KEY));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', ok: true, endpoint: `${rx.url}/v1/traces` });
    expect(r.body.span_count).toBeGreaterThanOrEqual(2);
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/v1/traces');
    expect(got.headers['authorization']).toBe('Bearer otlp-secret-1');
    expect(got.headers['content-type']).toMatch(/^application\/json/);
    const spans = got.body.resourceSpans[0].scopeSpans[0].spans;
    expect(spans.map((s: any) => s.name)).toEqual(expect.arrayContaining(['GET /v1/health', 'GET /v1/health/summary']));
    for (const s of spans) expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spans).toHaveLength(r.body.span_count);
  });

  it('?endpoint= wins; metrics go to /v1/metrics with the six gauges', async () => {
    const rx = await receiver();
    const a = await agent({ SVC_OTLP_TOKEN: 'tok-2', SVC_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:9/never' });
    const endpoint = `${rx.url}/v1/metrics`;
    const r = await a.json(`/v1/observability/otlp/export-metrics?endpoint=${encodeURIComponent(endpoint)}`, post(OPERATOR_KEY));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: 'v1', ok: true, endpoint, metric_count: 6 });
    const got = rx.received[0]!;
    expect(got.path).toBe('/v1/metrics');
    expect(got.headers['authorization']).toBe('Bearer tok-2');
    expect(got.body.resourceMetrics[0].scopeMetrics[0].metrics.map((m: any) => m.name)).toEqual(GAUGES);
  });

  it('a non-2xx answer is 400 naming the status and endpoint; no answer is 400 with the transport text', async () => {
    const rx = await receiver(500);
    const a = await agent({ SVC_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces` });
    const r = await a.json('/v1/observability/otlp/export', post(OPERATOR_KEY));
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: `OTLP trace push failed: HTTP 500 from ${rx.url}/v1/traces`, code: 'bad_request' });
    rx.setStatus(503);
    const m = await a.json(`/v1/observability/otlp/export-metrics?endpoint=${encodeURIComponent(`${rx.url}/v1/metrics`)}`, post(OPERATOR_KEY));
    expect(m.status).toBe(400);
    expect(m.body.error).toBe(`OTLP metrics push failed: HTTP 503 from ${rx.url}/v1/metrics`);
    const refused = await a.json(`/v1/observability/otlp/export?endpoint=${encodeURIComponent('http://127.0.0.1:9/v1/traces')}`, post(OPERATOR_KEY));
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('bad_request');
    expect(refused.body.error).toMatch(/127\.0\.0\.1:9/);
  });

  it('refuses endpoints that are not http(s) (the endpoint is caller-controlled)', async () => {
    const a = await agent();
    for (const bad of ['ftp://127.0.0.1/v1/traces', 'file:///etc/passwd', 'not a url']) {
      const r = await a.json(`/v1/observability/otlp/export?endpoint=${encodeURIComponent(bad)}`, post(OPERATOR_KEY));
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('bad_request');
      expect(r.body.error).toMatch(/^invalid OTLP endpoint: /);
    }
    const m = await a.json(`/v1/observability/otlp/export-metrics?endpoint=${encodeURIComponent('ftp://x/v1/metrics')}`, post(OPERATOR_KEY));
    expect(m.status).toBe(400);
    expect(m.body.error).toMatch(/unsupported URL scheme 'ftp:'/);
  });

  it('a successful export is audit-logged as a mutation', async () => {
    const rx = await receiver();
    const a = await agent({ SVC_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces` });
    const before = a.agent.services.audit.chain.count;
    expect((await a.json('/v1/observability/otlp/export', post(OPERATOR_KEY))).status).toBe(200);
    expect(a.agent.services.audit.chain.count).toBe(before + 1);
  });
});

describe('SVC_OTLP_TRACE_AUTO_PUSH', () => {
  it('pushes each request as a one-span document to the traces endpoint', async () => {
    const rx = await receiver();
    const a = await agent({ SVC_OTLP_TRACE_AUTO_PUSH: '1', SVC_OTEL_COLLECTOR_URL: rx.url, SVC_OTLP_TOKEN: 'auto-tok' });
    await a.fetch('/v1/health', { headers: { 'x-correlation-id': 'auto-push-1' } });
    const got = await waitFor(() => rx.received.find((x) => x.body?.resourceSpans?.[0]?.scopeSpans?.[0]?.spans?.[0]?.name === 'GET /v1/health'));
    expect(got.path).toBe('/v1/traces');
    expect(got.headers['authorization']).toBe('Bearer auto-tok');
    const spans = got.body.resourceSpans[0].scopeSpans[0].spans;
    expect(spans).toHaveLength(1);
    expect(spans[0].traceId).toBe(createHash('sha256').update('auto-push-1').digest('hex').slice(0, 32));
  });

  it('a failing collector only costs a log line: requests still answer', async () => {
    const rx = await receiver(500);
    const a = await agent({ SVC_OTLP_TRACE_AUTO_PUSH: 'true', SVC_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces` });
    expect((await a.fetch('/v1/health')).status).toBe(200);
    await waitFor(() => rx.received.length >= 1);
    expect((await a.fetch('/v1/health/summary')).status).toBe(200);
  });
});
