import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Request traces and their OpenTelemetry export (docs/observability.md): the trace ring as recorded,
 * as OTLP/JSON documents, and pushed to an OTLP/HTTP collector. Reads are public (they fall under no
 * sensitive read prefix); pushes need Operate.
 */

const exportQuery = z.lazy(() => z.object({ endpoint: z.string().max(2048).optional() }));

export const getObservabilityBackend = defineSpec({
  id: 'getObservabilityBackend',
  group: 'observability',
  summary: 'Resolved OTLP endpoints and auto-push setting (no version key, as the reference)',
  method: 'GET',
  path: '/v1/observability/backend',
  access: { kind: 'public' },
  rpc: { name: 'GetObservabilityBackend', request: 'Empty' },
  cli: ['observability', 'backend'],
});

export const getObservabilityTraces = defineSpec({
  id: 'getObservabilityTraces',
  group: 'observability',
  summary: 'The request trace ring, oldest first',
  method: 'GET',
  path: '/v1/observability/traces',
  access: { kind: 'public' },
  rpc: { name: 'GetObservabilityTraces', request: 'Empty' },
  cli: ['observability', 'traces'],
});

export const getOtlpTraces = defineSpec({
  id: 'getOtlpTraces',
  group: 'observability',
  summary: 'The trace ring as an OTLP/JSON ExportTraceServiceRequest',
  method: 'GET',
  path: '/v1/observability/otlp/traces',
  access: { kind: 'public' },
  rpc: { name: 'GetOtlpTraces', request: 'Empty' },
  cli: ['observability', 'otlp-traces'],
});

export const getOtlpMetrics = defineSpec({
  id: 'getOtlpMetrics',
  group: 'observability',
  summary: 'Fleet gauges as an OTLP/JSON ExportMetricsServiceRequest',
  method: 'GET',
  path: '/v1/observability/otlp/metrics',
  access: { kind: 'public' },
  rpc: { name: 'GetOtlpMetrics', request: 'Empty' },
  cli: ['observability', 'otlp-metrics'],
});

export const exportOtlpTraces = defineSpec<Record<string, never>, z.infer<typeof exportQuery>>({
  id: 'exportOtlpTraces',
  group: 'observability',
  summary: 'Push the trace ring to an OTLP/HTTP traces endpoint (?endpoint= or the configured one)',
  description: 'The body is ignored. Only http:// and https:// endpoints are accepted. A non-2xx answer is 400 `OTLP trace push failed: HTTP <s> from <endpoint>`.',
  method: 'POST',
  path: '/v1/observability/otlp/export',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'ExportOtlpTraces', request: 'QueryRequest' },
  cli: ['observability', 'export-traces'],
  query: exportQuery,
});

export const exportOtlpMetrics = defineSpec<Record<string, never>, z.infer<typeof exportQuery>>({
  id: 'exportOtlpMetrics',
  group: 'observability',
  summary: 'Push the fleet gauges to an OTLP/HTTP metrics endpoint (?endpoint= or the configured one)',
  description: 'The body is ignored. Only http:// and https:// endpoints are accepted. A non-2xx answer is 400 `OTLP metrics push failed: HTTP <s> from <endpoint>`.',
  method: 'POST',
  path: '/v1/observability/otlp/export-metrics',
  access: { kind: 'action', action: 'Operate' },
  rpc: { name: 'ExportOtlpMetrics', request: 'QueryRequest' },
  cli: ['observability', 'export-metrics'],
  query: exportQuery,
});

export const observabilitySpecs = [
  getObservabilityBackend,
  getObservabilityTraces,
  getOtlpTraces,
  getOtlpMetrics,
  exportOtlpTraces,
  exportOtlpMetrics,
];
