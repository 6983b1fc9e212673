import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TraceRecord } from '../traces.js';
import type { CounterName, GaugeSources } from './metrics-service.js';

/**
 * The prom-client side of `GET /metrics`. This module is only reached through a dynamic import on the
 * first scrape (`metrics-service.ts`), so prom-client is a separate bundle chunk, off the start path.
 */
export interface PromMetrics {
  contentType: string;
  inc(name: CounterName, labels: Record<string, string>, n: number): void;
  observe(trace: TraceRecord, route: string): void;
  text(): Promise<string>;
}

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The registry of docs/observability.md § Prometheus: counters fed by the agent, gauges read at scrape time. */
export function createPromMetrics(deps: { gauges: GaugeSources; openWebSockets: () => number }): PromMetrics {
  const registry = new Registry();
  const g = deps.gauges;
  const registers = [registry];

  const counters: Record<CounterName, Counter<string>> = {
    svc_http_requests_total: new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests served (REST, JSON-RPC, health, 404s), by method, route template and status', labelNames: ['method', 'route', 'status'], registers }),
    svc_grpc_calls_total: new Counter({ name: 'svc_grpc_calls_total', help: 'gRPC calls, by method and HTTP-equivalent status', labelNames: ['method', 'status'], registers }),
    svc_websocket_connections_opened_total: new Counter({ name: 'svc_websocket_connections_opened_total', help: 'Telemetry stream WebSocket connections opened', registers }),
    svc_telemetry_events_total: new Counter({ name: 'svc_telemetry_events_total', help: 'Telemetry events ingested into the telemetry store, by kind (device readings are kind="device")', labelNames: ['kind'], registers }),
    svc_alerts_raised_total: new Counter({ name: 'svc_alerts_raised_total', help: 'Alerts raised through the alert pipeline, by type and severity', labelNames: ['alert_type', 'severity'], registers }),
    svc_ota_rollouts_started_total: new Counter({ name: 'svc_ota_rollouts_started_total', help: 'OTA rollouts started (OtaRolloutStarted events)', registers }),
    svc_ota_rollouts_completed_total: new Counter({ name: 'svc_ota_rollouts_completed_total', help: 'OTA rollouts completed (OtaRolloutCompleted events), by outcome', labelNames: ['outcome'], registers }),
  };
  const httpDuration = new Histogram({ name: 'svc_http_request_duration_seconds', help: 'HTTP request duration, by method, route template and status', labelNames: ['method', 'route', 'status'], buckets: DURATION_BUCKETS, registers });
  const grpcDuration = new Histogram({ name: 'svc_grpc_call_duration_seconds', help: 'gRPC call duration, by method and status', labelNames: ['method', 'status'], buckets: DURATION_BUCKETS, registers });

  new Gauge({ name: 'svc_websocket_connections', help: 'Open telemetry stream WebSocket connections', registers, collect() { this.set(deps.openWebSockets()); } });
  new Gauge({
    name: 'svc_devices',
    help: 'Devices in the pool by lifecycle state',
    labelNames: ['lifecycle'],
    registers,
    collect() {
      for (const [k, v] of Object.entries(g.devices().byLifecycle)) this.set({ lifecycle: k }, v);
    },
  });
  new Gauge({
    name: 'svc_devices_health',
    help: 'Devices in the pool by health status',
    labelNames: ['health'],
    registers,
    collect() {
      for (const [k, v] of Object.entries(g.devices().byHealth)) this.set({ health: k }, v);
    },
  });
  new Gauge({ name: 'svc_devices_total', help: 'Devices in the pool', registers, collect() { this.set(g.devices().total); } });
  new Gauge({ name: 'svc_audit_records', help: 'Records in the audit chain', registers, collect() { this.set(g.auditRecords()); } });
  new Gauge({
    name: 'svc_alerts',
    help: 'Alerts held in the alert ring, by severity',
    labelNames: ['severity'],
    registers,
    collect() {
      const by: Record<string, number> = { info: 0, warning: 0, critical: 0 };
      for (const a of g.alertsInRing()) by[a.severity] = (by[a.severity] ?? 0) + 1;
      for (const [k, v] of Object.entries(by)) this.set({ severity: k }, v);
    },
  });
  new Gauge({
    name: 'svc_incidents',
    help: 'Incidents, by status',
    labelNames: ['status'],
    registers,
    collect() {
      const by: Record<string, number> = { open: 0, acknowledged: 0, resolved: 0 };
      for (const i of g.incidents()) by[i.status] = (by[i.status] ?? 0) + 1;
      for (const [k, v] of Object.entries(by)) this.set({ status: k }, v);
    },
  });
  new Gauge({ name: 'svc_traces_recorded', help: 'Request traces held in the trace ring', registers, collect() { this.set(g.tracesInRing()); } });
  new Gauge({ name: 'svc_sre_availability_percent', help: 'Availability over the SLO window from recorded health samples (GET /v1/sre/summary)', registers, collect() { this.set(g.availabilityPercent()); } });
  new Gauge({ name: 'svc_sre_burn_rate', help: 'Error-budget burn rate, fault-alert proxy model (GET /v1/sre/summary burn_rate.rate)', registers, collect() { this.set(g.burnRate()); } });

  return {
    contentType: registry.contentType,
    inc(name, labels, n) {
      counters[name].inc(labels, n);
    },
    observe(trace, route) {
      const seconds = trace.duration_ms / 1000;
      if (trace.method === 'GRPC') grpcDuration.observe({ method: route, status: String(trace.status) }, seconds);
      else httpDuration.observe({ method: trace.method, route, status: String(trace.status) }, seconds);
    },
    text: () => registry.metrics(),
  };
}
