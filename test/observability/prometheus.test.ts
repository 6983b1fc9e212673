import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer as grpcBearer, callUnary, connectGrpc } from '../helpers/grpc-client.js';
import { openStream } from '../helpers/stream-client.js';
import { GUEST_KEY, OPERATOR_KEY, bearer, post, sreProject } from '../sre/fixture.js';
import { startReceiver } from './receiver.js';

/** One sample line of the text exposition format: name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A small parser of the Prometheus text format (0.0.4): HELP/TYPE comments and sample lines; throws on anything else. */
function parseExposition(text: string): { help: Map<string, string>; type: Map<string, string>; samples: Sample[] } {
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (m) {
      help.set(m[1]!, m[2]!);
      continue;
    }
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      type.set(m[1]!, m[2]!);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
      let l: RegExpExecArray | null;
      let consumed = 0;
      while ((l = re.exec(m[3])) !== null) {
        labels[l[1]!] = l[2]!;
        consumed += l[0].length;
      }
      if (consumed !== m[3].length) throw new Error(`bad labels: ${line}`);
    }
    samples.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return { help, type, samples };
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function scrape(a: RunningAgent, init?: RequestInit) {
  const res = await a.fetch('/metrics', init);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

describe('GET /metrics (Prometheus text format)', () => {
  it('parses line by line; every family has HELP and TYPE; request counters and histograms grow with requests', async () => {
    const p = sreProject();
    const a = await startAgent({ configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    cleanups.push(() => a.close());
    // Requests before the first scrape (prom-client is not loaded yet) are counted too.
    await a.fetch('/v1/health');
    await a.fetch('/v1/devices/gps-1');
    await a.fetch('/v1/definitely-not-a-route');
    const first = await scrape(a);
    const families = [
      ['svc_http_requests_total', 'counter'],
      ['svc_http_request_duration_seconds', 'histogram'],
      ['svc_grpc_calls_total', 'counter'],
      ['svc_grpc_call_duration_seconds', 'histogram'],
      ['svc_websocket_connections', 'gauge'],
      ['svc_websocket_connections_opened_total', 'counter'],
      ['svc_devices', 'gauge'],
      ['svc_devices_health', 'gauge'],
      ['svc_devices_total', 'gauge'],
      ['svc_telemetry_events_total', 'counter'],
      ['svc_audit_records', 'gauge'],
      ['svc_alerts', 'gauge'],
      ['svc_alerts_raised_total', 'counter'],
      ['svc_incidents', 'gauge'],
      ['svc_ota_rollouts_started_total', 'counter'],
      ['svc_ota_rollouts_completed_total', 'counter'],
      ['svc_traces_recorded', 'gauge'],
      ['svc_sre_availability_percent', 'gauge'],
      ['svc_sre_burn_rate', 'gauge'],
    ];
    for (const [name, type] of families) {
      expect(first.type.get(name!), name).toBe(type);
      expect(first.help.get(name!)?.length, name).toBeGreaterThan(10);
    }
    const health = { method: 'GET', route: '/v1/health', status: '200' };
    expect(value(first.samples, 'svc_http_requests_total', health)).toBe(1);
    // Route labels are templates, not concrete ids; unknown paths share one label.
    expect(value(first.samples, 'svc_http_requests_total', { route: '/v1/devices/{id}', status: '200' })).toBe(1);
    expect(value(first.samples, 'svc_http_requests_total', { route: 'other', status: '404' })).toBe(1);
    expect(value(first.samples, 'svc_http_request_duration_seconds_count', health)).toBe(1);
    expect(value(first.samples, 'svc_http_request_duration_seconds_bucket', { ...health, le: '+Inf' })).toBe(1);
    expect(value(first.samples, 'svc_devices_total')).toBe(3);
    expect(value(first.samples, 'svc_devices', { lifecycle: 'failed' })).toBe(1);
    expect(value(first.samples, 'svc_devices', { lifecycle: 'active' })).toBe(2);
    expect(value(first.samples, 'svc_devices_health', { health: 'unknown' })).toBe(3);
    expect(value(first.samples, 'svc_sre_availability_percent')).toBeCloseTo(66.667, 2);

    for (let i = 0; i < 3; i++) await a.fetch('/v1/health');
    const second = await scrape(a);
    expect(value(second.samples, 'svc_http_requests_total', health)).toBe(4);
    expect(value(second.samples, 'svc_http_request_duration_seconds_count', health)).toBe(4);
    // The first scrape itself was a request.
    expect(value(second.samples, 'svc_http_requests_total', { route: '/metrics', status: '200' })).toBe(1);
    const sum = value(second.samples, 'svc_http_request_duration_seconds_sum', health)!;
    expect(sum).toBeGreaterThan(0);
  });

  it('counts alerts, incidents, audit records, telemetry events, WebSocket connections, gRPC calls and rollout events', async () => {
    const p = sreProject();
    const a = await startAgent({ configPath: p.config, grpcBind: '127.0.0.1:0', env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    cleanups.push(() => a.close());
    const before = await scrape(a);
    const auditBefore = value(before.samples, 'svc_audit_records')!;

    // A mutation: audited, and an info alert.
    expect((await a.json('/v1/alerts/test', post(OPERATOR_KEY, { message: 'metrics test' }))).status).toBe(200);
    // A critical alert opens an incident.
    a.agent.services.alerts.raise({ alert_type: 'crash', severity: 'critical', source: 'test', message: 'boom' });
    // Telemetry: a platform event is stored as telemetry of kind "platform".
    const stream = await openStream(a.wsUrl);
    cleanups.push(() => stream.close());
    const g = connectGrpc(a.agent.grpcAddress!);
    cleanups.push(() => g.close());
    expect((await callUnary(g.client, 'GetHealthSummary', {})).ok).toBe(true);
    expect((await callUnary(g.client, 'ExportOtlpTraces', { query: '' }, grpcBearer(GUEST_KEY))).ok).toBe(false);
    // Rollout events, by name, as the OTA domain publishes them.
    const bus = a.agent.services.bus;
    const event = (type: string, payload: Record<string, unknown>) => ({ type, source: 'svc-ota', timestamp_ms: Date.now(), payload }) as never;
    bus.publish(event('OtaRolloutStarted', { rollout_id: 'r1' }));
    bus.publish(event('OtaRolloutCompleted', { rollout_id: 'r1', success: true }));

    const after = await scrape(a);
    expect(value(after.samples, 'svc_alerts_raised_total', { alert_type: 'custom', severity: 'info' })).toBe(1);
    expect(value(after.samples, 'svc_alerts_raised_total', { alert_type: 'crash', severity: 'critical' })).toBe(1);
    expect(value(after.samples, 'svc_alerts', { severity: 'critical' })).toBe(1);
    expect(value(after.samples, 'svc_incidents', { status: 'open' })).toBe(1);
    expect(value(after.samples, 'svc_audit_records')!).toBeGreaterThan(auditBefore);
    expect(value(after.samples, 'svc_websocket_connections')).toBe(1);
    expect(value(after.samples, 'svc_websocket_connections_opened_total')).toBe(1);
    expect(value(after.samples, 'svc_grpc_calls_total', { method: '/svc.v1.ControlCenter/GetHealthSummary', status: '200' })).toBe(1);
    expect(value(after.samples, 'svc_grpc_calls_total', { method: '/svc.v1.ControlCenter/ExportOtlpTraces', status: '403' })).toBe(1);
    expect(value(after.samples, 'svc_grpc_call_duration_seconds_count', { method: '/svc.v1.ControlCenter/GetHealthSummary' })).toBe(1);
    expect(value(after.samples, 'svc_ota_rollouts_started_total')).toBe(1);
    expect(value(after.samples, 'svc_ota_rollouts_completed_total', { outcome: 'succeeded' })).toBe(1);
    const telemetry = after.samples.filter((s) => s.name === 'svc_telemetry_events_total').reduce((n, s) => n + s.value, 0);
    expect(telemetry).toBeGreaterThan(0);

    stream.close();
    const deadline = Date.now() + 3000;
    let open = 1;
    while (open !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      open = value((await scrape(a)).samples, 'svc_websocket_connections')!;
    }
    expect(open).toBe(0);
  });

  it('gRPC: GetSreSummary and ExportOtlpTraces with a QueryRequest reach the same handlers', async () => {
    const rx = await startReceiver();
    cleanups.push(() => rx.close());
    const p = sreProject();
    const a = await startAgent({ configPath: p.config, grpcBind: '127.0.0.1:0', env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    cleanups.push(() => a.close());
    const g = connectGrpc(a.agent.grpcAddress!);
    cleanups.push(() => g.close());
    const sre = await callUnary(g.client, 'GetSreSummary', {});
    expect(sre.json.devices_total).toBe(3);
    const backend = await callUnary(g.client, 'GetObservabilityBackend', {});
    expect('version' in backend.json).toBe(false);
    const pushed = await callUnary(g.client, 'ExportOtlpTraces', { query: `endpoint=${encodeURIComponent(`${rx.url}/v1/traces`)}` }, grpcBearer(OPERATOR_KEY));
    expect(pushed.ok).toBe(true);
    expect(pushed.json).toMatchObject({ ok: true, endpoint: `${rx.url}/v1/traces` });
    expect(rx.received[0]!.path).toBe('/v1/traces');
  });

  it('needs a principal when a read-auth flag is on (401 anonymous, 200 with any key)', async () => {
    const p = sreProject();
    const a = await startAgent({ configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys, SVC_API_REQUIRE_AUTH_READS: 'true', SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    cleanups.push(() => a.close());
    const anonymous = await a.json('/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('unauthorized');
    const bad = await a.json('/metrics', bearer('not-a-key'));
    expect(bad.status).toBe(401);
    const ok = await scrape(a, bearer(GUEST_KEY));
    expect(value(ok.samples, 'svc_devices_total')).toBe(3);
    // Other methods on /metrics are not routes.
    expect((await a.fetch('/metrics', { method: 'POST' })).status).toBe(404);
  });
});
