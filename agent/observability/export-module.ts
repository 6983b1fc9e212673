import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { alertOf } from './alerts.js';
import { observabilityExportHandlers } from './export-handlers.js';
import { MetricsService } from './metrics/metrics-service.js';
import type { GaugeValues } from './otlp/otlp-render.js';

/**
 * Observability export (docs/observability.md): OTLP/JSON documents and pushes of the trace ring and
 * the fleet gauges, and the Prometheus endpoint's metrics. Opens after the SRE module, whose figures
 * the gauges report. Nothing heavy loads here: the OTLP service and the OpenTelemetry SDK load on the
 * first OTLP call, prom-client on the first scrape.
 */
export const observabilityExportModule = defineModule({
  name: 'observability-export',
  async open({ use, boot }) {
    const settings = use('settings');
    const traces = use('traces');
    const sre = use('sre');
    const devices = use('devices');
    const alerts = use('alerts');
    const incidents = use('incidents');
    const audit = use('audit');
    const telemetry = use('telemetry');
    const bus = use('bus');

    const gauges = (): GaugeValues => {
      const summary = sre.sreSummary();
      return {
        'svc.control_center.devices.total': summary.devices_total,
        'svc.control_center.devices.healthy': summary.devices_healthy,
        'svc.control_center.alerts.total': summary.alerts_total,
        'svc.control_center.alerts.critical': summary.alerts_critical,
        'svc.control_center.traces.recorded': summary.traces_recorded,
        'svc.control_center.availability.percent': summary.availability_percent,
      };
    };
    const outbound = use('outbound');
    // Loaded on the first OTLP request, or at once when every trace is to be pushed as it is recorded.
    const otlp = lazy(() => import('./otlp/otlp-service.js').then(({ OtlpService }) => new OtlpService(settings.otlp, traces, outbound, gauges, boot.log)));
    if (settings.otlp.traceAutoPush) await otlp.get();

    const metrics = new MetricsService(
      traces,
      {
        devices: () => {
          const s = devices.summary();
          return { total: s.total, byLifecycle: s.lifecycle, byHealth: { healthy: s.healthy, degraded: s.degraded, offline: s.offline, unknown: s.unknown } };
        },
        auditRecords: () => audit.chain.count,
        alertsInRing: () => alerts.list(),
        incidents: () => incidents.list(),
        tracesInRing: () => traces.size,
        availabilityPercent: () => sre.sreSummary().availability_percent,
        burnRate: () => sre.burnRate().rate,
      },
      use('startedAtMs'),
    );
    // One label object per event kind, so counting a reading allocates nothing.
    const kindLabels = new Map<string, Record<string, string>>();
    const labelsOf = (kind: string) => kindLabels.get(kind) ?? kindLabels.set(kind, { kind }).get(kind)!;
    const offTelemetry = telemetry.ring.onAppend((e) => metrics.count('svc_telemetry_events_total', labelsOf(e.kind)));
    const offBus = bus.subscribe((e) => {
      const alert = alertOf(e);
      if (alert) metrics.count('svc_alerts_raised_total', { alert_type: alert.alert_type, severity: alert.severity });
      // Rollout events by name (agent/events/platform-events.ts); the OTA domain publishes them.
      const type = e.type as string;
      if (type === 'OtaRolloutStarted') metrics.count('svc_ota_rollouts_started_total');
      else if (type === 'OtaRolloutCompleted') {
        const p = e.payload as Record<string, unknown>;
        const outcome = typeof p['status'] === 'string' ? p['status'] : typeof p['success'] === 'boolean' ? (p['success'] ? 'succeeded' : 'failed') : 'unknown';
        metrics.count('svc_ota_rollouts_completed_total', { outcome });
      }
    });

    return {
      provides: { otlp, metrics },
      handlers: observabilityExportHandlers,
      close() {
        offTelemetry();
        offBus();
        metrics.close();
        otlp.loaded()?.close();
      },
    };
  },
});
