import type { OtlpSettings } from '../../settings/settings.js';

const firstNonBlank = (...values: Array<string | null>) => values.find((v) => v !== null && v.trim() !== '')?.trim() ?? null;

function collectorPath(url: string, suffix: '/v1/traces' | '/v1/metrics'): string {
  const base = url.replace(/\/+$/, '');
  return base.endsWith(suffix) ? base : `${base}${suffix}`;
}

/**
 * Where traces go (docs/observability.md § Endpoints): `SVC_OTLP_TRACES_ENDPOINT`, else
 * `SVC_JAEGER_OTLP_ENDPOINT`, else `SVC_OTEL_COLLECTOR_URL` + `/v1/traces`, else `SVC_OTLP_ENDPOINT`
 * with `/v1/metrics` replaced by `/v1/traces`; null when none is set.
 */
export function tracesEndpoint(s: OtlpSettings): string | null {
  const direct = firstNonBlank(s.tracesEndpoint, s.jaegerEndpoint);
  if (direct) return direct;
  if (s.collectorUrl) return collectorPath(s.collectorUrl, '/v1/traces');
  return s.endpoint ? s.endpoint.replace('/v1/metrics', '/v1/traces') : null;
}

/** Where metrics go: `SVC_OTLP_METRICS_ENDPOINT`, else `SVC_OTEL_COLLECTOR_URL` + `/v1/metrics`, else `SVC_OTLP_ENDPOINT`. */
export function metricsEndpoint(s: OtlpSettings): string | null {
  if (s.metricsEndpoint) return s.metricsEndpoint;
  if (s.collectorUrl) return collectorPath(s.collectorUrl, '/v1/metrics');
  return s.endpoint;
}

/**
 * `GET /v1/observability/backend` (docs/observability.md § Endpoints), also the `observability` part of
 * `GET /v1/admin/integrations`: where traces and metrics would be pushed, from the settings alone.
 */
export function observabilityBackend(s: OtlpSettings) {
  return {
    package: 'svc-otel-collector',
    traces_endpoint: tracesEndpoint(s),
    metrics_endpoint: metricsEndpoint(s),
    auto_push: s.traceAutoPush,
    collector_url_env: 'SVC_OTEL_COLLECTOR_URL',
  };
}
