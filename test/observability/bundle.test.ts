import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { spawnServe, waitForExit } from '../helpers/spawn-agent.js';
import type { ChildProcess } from 'node:child_process';
import { startReceiver } from './receiver.js';

/**
 * The built agent (`npm run build`: esbuild bundle with lazily loaded chunks) loads prom-client and the
 * OpenTelemetry SDK through dynamic imports; CommonJS interop in a bundle differs from the source run
 * by vitest, so the lazily loaded paths are exercised on the bundle too.
 */
let child: ChildProcess | null = null;
afterEach(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await waitForExit(child);
  }
  child = null;
});

describe('the bundled agent', () => {
  it('serves /metrics, the OTLP documents and an OTLP push', async () => {
    const rx = await startReceiver();
    try {
      const stateDir = tempDir('svc-bundle-obs-');
      const served = await spawnServe([], { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_OTLP_TRACE_AUTO_PUSH: '1', SVC_OTEL_COLLECTOR_URL: rx.url }, stateDir);
      child = served.child;
      expect((await fetch(`${served.baseUrl}/v1/health`)).status).toBe(200);
      const metrics = await fetch(`${served.baseUrl}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toMatch(/^# TYPE svc_http_requests_total counter$/m);
      expect(text).toMatch(/^svc_http_requests_total\{method="GET",route="\/v1\/health",status="200"\} 1$/m);
      const traces = await fetch(`${served.baseUrl}/v1/observability/otlp/traces`);
      expect(traces.status).toBe(200);
      const body = (await traces.json()) as any;
      expect(body.otlp.resourceSpans[0].scopeSpans[0].spans[0].name).toBe('GET /v1/health');
      const gauges = (await (await fetch(`${served.baseUrl}/v1/observability/otlp/metrics`)).json()) as any;
      expect(gauges.metric_count).toBe(6);
      const deadline = Date.now() + 5000;
      while (!rx.received.some((r) => r.path === '/v1/traces') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(rx.received.find((r) => r.path === '/v1/traces')?.body.resourceSpans[0].scopeSpans[0].spans).toHaveLength(1);
    } finally {
      await rx.close();
    }
  });
});
