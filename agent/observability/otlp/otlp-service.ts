import { API_VERSION } from '../../../api/versions.js';
import { badRequest } from '../../core/errors.js';
import { httpUrl, OutboundError, type OutboundHttp } from '../../outbound/outbound-http.js';
import type { OtlpSettings } from '../../settings/settings.js';
import type { PersistentRing } from '../persistent-ring.js';
import type { TraceRecord } from '../traces.js';
import { metricsEndpoint, observabilityBackend, tracesEndpoint } from './otlp-endpoints.js';
import type { GaugeValues } from './otlp-render.js';

type Render = typeof import('./otlp-render.js');
let renderModule: Promise<Render> | null = null;
const render = (): Promise<Render> => (renderModule ??= import('./otlp-render.js'));

/** At most this many auto-push requests in flight; beyond it a span is dropped (and logged), never queued without bound. */
const MAX_AUTO_PUSH_IN_FLIGHT = 8;

/**
 * Request traces and fleet gauges as OpenTelemetry (docs/observability.md § OTLP): the OTLP/JSON
 * documents (rendered by the OpenTelemetry SDK, `otlp-render.ts`) and their push to an OTLP/HTTP
 * collector through the agent's one outbound client (TLS with the system trust store, 10 s connect /
 * 30 s total, http(s) only), with `Authorization: Bearer SVC_OTLP_TOKEN` when set.
 */
export class OtlpService {
  private inFlight = 0;
  private readonly unsubscribe: (() => void) | null;

  constructor(
    private readonly settings: OtlpSettings,
    private readonly traces: PersistentRing<TraceRecord>,
    private readonly outbound: OutboundHttp,
    private readonly gauges: () => GaugeValues,
    private readonly log: (line: string) => void,
  ) {
    // SVC_OTLP_TRACE_AUTO_PUSH: every trace record, as it is recorded, goes out as a one-span document.
    this.unsubscribe = settings.traceAutoPush ? traces.onAppend((t) => this.autoPush(t)) : null;
  }

  backend() {
    return observabilityBackend(this.settings);
  }

  listTraces() {
    return { version: API_VERSION, traces: this.traces.all() };
  }

  async otlpTraces() {
    const records = this.traces.all();
    return { version: API_VERSION, span_count: records.length, otlp: await (await render()).renderTraceDocument(records) };
  }

  async otlpMetrics() {
    const { renderMetricsDocument, GAUGE_NAMES } = await render();
    const doc = await renderMetricsDocument(this.gauges());
    return { version: API_VERSION, metric_count: metricCount(doc, GAUGE_NAMES.length), otlp: doc };
  }

  async exportTraces(endpointParam: string | undefined) {
    const endpoint = this.target(endpointParam, tracesEndpoint(this.settings), 'missing traces endpoint; set SVC_OTLP_TRACES_ENDPOINT or pass ?endpoint=');
    const records = this.traces.all();
    const doc = await (await render()).renderTraceDocument(records);
    await this.push(endpoint, doc, 'trace');
    return { version: API_VERSION, ok: true, endpoint, span_count: records.length };
  }

  async exportMetrics(endpointParam: string | undefined) {
    const endpoint = this.target(endpointParam, metricsEndpoint(this.settings), 'missing metrics endpoint; set SVC_OTLP_METRICS_ENDPOINT or pass ?endpoint=');
    const { renderMetricsDocument, GAUGE_NAMES } = await render();
    const doc = await renderMetricsDocument(this.gauges());
    await this.push(endpoint, doc, 'metrics');
    return { version: API_VERSION, ok: true, endpoint, metric_count: metricCount(doc, GAUGE_NAMES.length) };
  }

  /** The caller's `?endpoint=` or the configured one; only http(s) URLs (the endpoint is caller-controlled). */
  private target(param: string | undefined, configured: string | null, missing: string): string {
    const endpoint = param !== undefined && param.trim() !== '' ? param.trim() : configured;
    if (!endpoint) throw badRequest(missing);
    try {
      httpUrl(endpoint);
    } catch (err) {
      throw badRequest(`invalid OTLP endpoint: ${(err as Error).message}`);
    }
    return endpoint;
  }

  private async push(endpoint: string, doc: unknown, what: 'trace' | 'metrics'): Promise<void> {
    let status: number;
    try {
      const res = await this.outbound.postJson(endpoint, doc, { bearer: this.settings.token });
      status = res.status;
      if (res.ok) return;
    } catch (err) {
      // No HTTP answer (refused, TLS, timeout): 400 with the transport's text (docs/observability.md § Pushing).
      throw badRequest(err instanceof OutboundError ? err.message : String(err));
    }
    throw badRequest(`OTLP ${what} push failed: HTTP ${status} from ${endpoint}`);
  }

  private autoPush(record: TraceRecord): void {
    const endpoint = tracesEndpoint(this.settings);
    if (!endpoint) return;
    if (this.inFlight >= MAX_AUTO_PUSH_IN_FLIGHT) {
      this.log(`otlp: auto-push of ${record.method} ${record.path} dropped (${this.inFlight} pushes in flight)`);
      return;
    }
    this.inFlight++;
    render()
      .then((r) => r.renderTraceDocument([record]))
      .then((doc) => this.push(endpoint, doc, 'trace'))
      .catch((err: Error) => this.log(`otlp: auto-push failed: ${err.message}`))
      .finally(() => this.inFlight--);
  }

  close(): void {
    this.unsubscribe?.();
  }
}

/** The number of metrics the document carries (the reference answered a constant 6). */
function metricCount(doc: Record<string, unknown>, fallback: number): number {
  const rm = (doc['resourceMetrics'] as Array<{ scopeMetrics?: Array<{ metrics?: unknown[] }> }> | undefined) ?? [];
  let n = 0;
  for (const r of rm) for (const s of r.scopeMetrics ?? []) n += s.metrics?.length ?? 0;
  return rm.length === 0 ? fallback : n;
}
