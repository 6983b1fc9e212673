import { SPECS } from '../../../api/index.js';
import type { PersistentRing } from '../persistent-ring.js';
import type { TraceRecord } from '../traces.js';
import type { PromMetrics } from './prometheus.js';

/** Paths outside the operation table that are still a bounded set (pipeline steps 4 and 7, docs/architecture.md). */
const FIXED_PATHS = new Set(['/health', '/healthz', '/metrics', '/v1/openapi.json', '/admin/oauth/oidc/callback', '/v1/stream/telemetry']);

/** Counter names and the labels they carry (docs/observability.md § Prometheus). */
export type CounterName =
  | 'svc_http_requests_total'
  | 'svc_grpc_calls_total'
  | 'svc_websocket_connections_opened_total'
  | 'svc_telemetry_events_total'
  | 'svc_alerts_raised_total'
  | 'svc_ota_rollouts_started_total'
  | 'svc_ota_rollouts_completed_total';

/** What the Prometheus registry reads at scrape time (gauges). */
export interface GaugeSources {
  devices(): { total: number; byHealth: Record<string, number>; byLifecycle: Record<string, number> };
  auditRecords(): number;
  alertsInRing(): Array<{ severity: string }>;
  incidents(): Array<{ status: string }>;
  tracesInRing(): number;
  availabilityPercent(): number;
  burnRate(): number;
}

/**
 * A route label with bounded cardinality: the operation's path template (`/v1/devices/{id}`), a fixed
 * path of the pipeline, the gRPC method, or `other` (unknown paths: 404s, probes).
 */
export function routeLabel(method: string, path: string): string {
  if (method === 'GRPC' || FIXED_PATHS.has(path)) return path;
  return matcher()(method, path) ?? 'other';
}

let compiled: ((method: string, path: string) => string | null) | null = null;
function matcher() {
  if (compiled) return compiled;
  const literal = new Map<string, string>();
  const templated: Array<{ method: string; re: RegExp; path: string }> = [];
  for (const op of SPECS) {
    if (!op.path.includes('{')) literal.set(`${op.method} ${op.path}`, op.path);
    else templated.push({ method: op.method, path: op.path, re: new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`) });
  }
  compiled = (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    const hit = literal.get(`${m} ${path}`);
    if (hit) return hit;
    for (const t of templated) if (t.method === m && t.re.test(path)) return t.path;
    return null;
  };
  return compiled;
}

/**
 * The Prometheus endpoint's data (`GET /metrics`, docs/observability.md § Prometheus). prom-client is
 * about 10 MiB of resident memory, so it is loaded on the first scrape, not at start: until then the
 * counters are plain tallies here, handed to the library when it loads; afterwards every count goes
 * straight to its prom-client metric. The request-duration histograms are seeded at that moment from
 * the trace ring (the requests of this process still held there) and observed live afterwards.
 */
const NO_LABELS: Record<string, string> = {};

interface RequestCounters {
  route: string;
  byStatus: Map<number, { name: CounterName; key: string; labels: Record<string, string> }>;
}

export class MetricsService {
  private readonly tallies = new Map<CounterName, Map<string, { labels: Record<string, string>; value: number }>>();
  private live: PromMetrics | null = null;
  private loading: Promise<PromMetrics> | null = null;
  private wsOpen = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly traces: PersistentRing<TraceRecord>,
    private readonly gauges: GaugeSources,
    private readonly startedAtMs: number,
  ) {
    this.unsubscribe = traces.onAppend((t) => this.onTrace(t));
  }

  /**
   * Every served request passes here, so the common case allocates nothing: the route label, the
   * counter key and its labels are built once per method, path and status (bounded: a flood of
   * unknown paths only clears that cache).
   */
  private onTrace(t: TraceRecord): void {
    const seen = this.request(t.method, t.path);
    let counter = seen.byStatus.get(t.status);
    if (counter === undefined) {
      const status = String(t.status);
      const route = seen.route;
      counter =
        t.method === 'GRPC'
          ? { name: 'svc_grpc_calls_total', key: `${route} ${status}`, labels: { method: route, status } }
          : { name: 'svc_http_requests_total', key: `${t.method} ${route} ${status}`, labels: { method: t.method, route, status } };
      seen.byStatus.set(t.status, counter);
    }
    this.countKeyed(counter.name, counter.key, counter.labels);
    this.live?.observe(t, seen.route);
  }

  /** Per method and path: its route label and, per status, the counter's key and labels (built once). */
  private readonly requests = new Map<string, Map<string, RequestCounters>>();
  private requestCount = 0;

  private request(method: string, path: string): RequestCounters {
    let byPath = this.requests.get(method);
    if (byPath === undefined) this.requests.set(method, (byPath = new Map()));
    let seen = byPath.get(path);
    if (seen === undefined) {
      // Bounded: a flood of unknown paths only empties this cache (their route label is `other`).
      if (++this.requestCount > 2048) {
        this.requests.clear();
        this.requestCount = 1;
        this.requests.set(method, (byPath = new Map()));
      }
      seen = { route: routeLabel(method, path), byStatus: new Map() };
      byPath.set(path, seen);
    }
    return seen;
  }

  private readonly labelKeys = new WeakMap<Record<string, string>, string>();

  /** Counts one event; callers that count often pass the same label object each time (its key is kept). */
  count(name: CounterName, labels: Record<string, string> = NO_LABELS, n = 1): void {
    let key = this.labelKeys.get(labels);
    if (key === undefined) this.labelKeys.set(labels, (key = JSON.stringify(labels)));
    this.countKeyed(name, key, labels, n);
  }

  private countKeyed(name: CounterName, key: string, labels: Record<string, string>, n = 1): void {
    if (this.live) {
      this.live.inc(name, labels, n);
      return;
    }
    let byLabels = this.tallies.get(name);
    if (!byLabels) this.tallies.set(name, (byLabels = new Map()));
    const entry = byLabels.get(key);
    if (entry) entry.value += n;
    else byLabels.set(key, { labels, value: n });
  }

  wsOpened(): void {
    this.wsOpen++;
    this.count('svc_websocket_connections_opened_total');
  }

  wsClosed(): void {
    this.wsOpen = Math.max(0, this.wsOpen - 1);
  }

  get openWebSockets(): number {
    return this.wsOpen;
  }

  /** The text exposition of every metric, loading prom-client on the first call. */
  async render(): Promise<{ contentType: string; body: string }> {
    const live = await this.load();
    return { contentType: live.contentType, body: await live.text() };
  }

  private load(): Promise<PromMetrics> {
    this.loading ??= import('./prometheus.js').then(({ createPromMetrics }) => {
      const live = createPromMetrics({ gauges: this.gauges, openWebSockets: () => this.wsOpen });
      for (const [name, byLabels] of this.tallies) for (const { labels, value } of byLabels.values()) live.inc(name, labels, value);
      this.tallies.clear();
      for (const t of this.traces.all()) if (t.timestamp_ms >= this.startedAtMs) live.observe(t, routeLabel(t.method, t.path));
      this.live = live;
      return live;
    });
    return this.loading;
  }

  close(): void {
    this.unsubscribe();
  }
}
