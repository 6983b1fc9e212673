import { createHash } from 'node:crypto';
import { JsonMetricsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { TraceRecord } from '../traces.js';

/**
 * OTLP/JSON documents rendered with the OpenTelemetry JS SDK (docs/observability.md § OTLP): each
 * trace record becomes a finished `ReadableSpan` with its recorded times and ids derived from its
 * correlation id, and the gauges are observable gauges of an SDK `MeterProvider` collected by a pull
 * reader. Both are encoded by the OTLP JSON serializers the SDK's OTLP/HTTP exporters use, so the
 * bytes are exactly what `@opentelemetry/exporter-*-otlp-http` would send. Reached only through a
 * dynamic import (`otlp-service.ts`), so the SDK is a separate bundle chunk loaded on the first OTLP call.
 */

export const SERVICE_NAME = 'svc-control-center';
export const SDK_NAME = 'svc-ops';
export const TRACE_SCOPE = 'svc.control-center.http';
export const METRICS_SCOPE = 'svc.control-center.metrics';

/** The six gauges, in the order of the document. */
export const GAUGE_NAMES = [
  'svc.control_center.devices.total',
  'svc.control_center.devices.healthy',
  'svc.control_center.alerts.total',
  'svc.control_center.alerts.critical',
  'svc.control_center.traces.recorded',
  'svc.control_center.availability.percent',
] as const;
export type GaugeValues = Record<(typeof GAUGE_NAMES)[number], number>;

/** traceId = hex of the first 16 bytes of SHA-256(correlation id); spanId = the next 8. */
export function spanIds(correlationId: string): { traceId: string; spanId: string } {
  const hex = createHash('sha256').update(correlationId).digest('hex');
  return { traceId: hex.slice(0, 32), spanId: hex.slice(32, 48) };
}

const hrTime = (ms: number): [number, number] => {
  const whole = Math.floor(ms);
  const frac = ms - whole;
  return [Math.floor(whole / 1000), (whole % 1000) * 1_000_000 + Math.round(frac * 1_000_000)];
};

/** Collects on demand: the document is rendered when asked for, not on a timer. */
class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const decode = (bytes: Uint8Array | undefined): Record<string, unknown> => JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array()));

/** An `ExportTraceServiceRequest` (OTLP/JSON) of the given trace records. */
export async function renderTraceDocument(records: readonly TraceRecord[]): Promise<Record<string, unknown>> {
  if (records.length === 0) {
    // The SDK encodes no spans as no resource at all; the documented empty shape keeps the resource.
    return {
      resourceSpans: [
        { resource: { attributes: [{ key: 'service.name', value: { stringValue: SERVICE_NAME } }] }, scopeSpans: [{ scope: { name: TRACE_SCOPE }, spans: [] }] },
      ],
    };
  }
  const resource = resourceFromAttributes({ 'service.name': SERVICE_NAME, 'telemetry.sdk.name': SDK_NAME });
  const spans: ReadableSpan[] = records.map((r) => {
    const { traceId, spanId } = spanIds(r.correlation_id);
    const start = hrTime(r.timestamp_ms);
    const end = hrTime(r.timestamp_ms + Math.max(0, r.duration_ms));
    return {
      name: `${r.method} ${r.path}`,
      kind: 1, // SpanKind.SERVER (OTLP kind 2)
      spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
      startTime: start,
      endTime: end,
      duration: hrTime(Math.max(0, r.duration_ms)),
      status: { code: r.status < 400 ? 1 : 2 },
      attributes: { 'svc.correlation_id': r.correlation_id, 'http.method': r.method, 'http.route': r.path, 'http.status_code': r.status },
      links: [],
      events: [],
      ended: true,
      resource,
      instrumentationScope: { name: TRACE_SCOPE },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  });
  return decode(JsonTraceSerializer.serializeRequest(spans));
}

/** An `ExportMetricsServiceRequest` (OTLP/JSON) of the six gauges. */
export async function renderMetricsDocument(values: GaugeValues): Promise<Record<string, unknown>> {
  const reader = new PullReader();
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': SERVICE_NAME, 'telemetry.sdk.name': SDK_NAME }), readers: [reader] });
  try {
    const meter = provider.getMeter(METRICS_SCOPE);
    for (const name of GAUGE_NAMES) meter.createObservableGauge(name).addCallback((r) => r.observe(values[name]));
    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw new Error(`metrics collection failed: ${String(errors[0])}`);
    return decode(JsonMetricsSerializer.serializeRequest(resourceMetrics));
  } finally {
    await provider.shutdown().catch(() => undefined);
  }
}
