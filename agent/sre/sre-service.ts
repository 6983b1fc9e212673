import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { IncidentService } from '../incidents/incidents.js';
import type { Alert, AlertService } from '../observability/alerts.js';
import type { PersistentRing } from '../observability/persistent-ring.js';
import type { TraceRecord } from '../observability/traces.js';
import type { ProgramService } from '../programs/program-service.js';
import type { ProjectContext } from '../project/project-context.js';
import type { SreSettings } from '../settings/settings.js';
import type { HealthHistory, HealthSample, ReadinessSample } from './health-history.js';
import { readHistoryFile, readinessTrendReport, type ReadinessTrendReport } from './readiness-trends.js';

/** Alert types that count as faults for MTBF and the burn rate (besides any critical alert). */
export const FAULT_ALERT_TYPES: ReadonlySet<string> = new Set([
  'crash',
  'reboot',
  'recovery_failed',
  'health_critical',
  'robot_offline',
  'mission_failure',
  'config_drift',
]);

export const BURN_MONITOR_SOURCE = 'slo-burn-monitor';
const HOUR_MS = 3_600_000;
/** The reference's readiness forecast: 7 days ahead against a minimum of 80. */
const FORECAST_HORIZON_DAYS = 7;
const FORECAST_MINIMUM = 80;

export const isFaultAlert = (a: Pick<Alert, 'alert_type' | 'severity'>): boolean => a.severity === 'critical' || FAULT_ALERT_TYPES.has(a.alert_type);

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
const percentOf = (n: number, total: number) => (n / Math.max(total, 1)) * 100;

export interface BurnRate {
  window_hours: number;
  recent_fault_alerts: number;
  allowed_fault_alerts_in_window: number;
  rate: number;
  fast_burn_threshold: number;
  fast_burn: boolean;
  env_fast: 'SVC_SRE_BURN_RATE_FAST';
  env_window: 'SVC_SRE_BURN_WINDOW_HOURS';
  model: 'fault-alert-proxy';
}

export interface SreDeps {
  settings: SreSettings;
  stateDir: string;
  devices: DeviceRegistry;
  alerts: AlertService;
  incidents: IncidentService;
  traces: PersistentRing<TraceRecord>;
  project: ProjectContext;
  programs: ProgramService;
  history: HealthHistory;
  log: (line: string) => void;
}

/** Least-squares slope of `value` per hour; 0 with fewer than two points or no time between them. */
function slopePerHour(points: Array<{ at_ms: number; value: number }>): number {
  if (points.length < 2) return 0;
  const xs = points.map((p) => (p.at_ms - points[0]!.at_ms) / HOUR_MS);
  const mx = xs.reduce((a, x) => a + x, 0) / xs.length;
  const my = points.reduce((a, p) => a + p.value, 0) / points.length;
  let num = 0;
  let den = 0;
  points.forEach((p, i) => {
    num += (xs[i]! - mx) * (p.value - my);
    den += (xs[i]! - mx) ** 2;
  });
  return den === 0 ? 0 : num / den;
}

/**
 * Fleet health and SRE rollups (docs/observability.md § SRE summary). Figures that describe a period
 * (availability, health trends, readiness trends) come from the recorded health history, not from the
 * current instant; the point-in-time values stay beside them.
 */
export class SreService {
  constructor(private readonly deps: SreDeps) {}

  get history(): HealthHistory {
    return this.deps.history;
  }

  /** The program label trends are kept under: the loaded program's file name, or null. */
  programLabel(): string | null {
    const p = this.deps.project.programPath;
    return p ? path.basename(p) : null;
  }

  /** Devices available now: lifecycle active, healthy or assigned (docs/observability.md § Availability). */
  private pool() {
    const summary = this.deps.devices.summary();
    const up = summary.lifecycle.active + summary.lifecycle.healthy + summary.lifecycle.assigned;
    return { summary, up, ratio: summary.total === 0 ? 1 : up / summary.total };
  }

  healthSummary() {
    const summary = this.deps.devices.summary();
    const overall_status = summary.failed > 0 ? 'critical' : summary.degraded > 0 ? 'degraded' : 'healthy';
    return { version: API_VERSION, overall_status, device_pool: summary };
  }

  /** Readiness of the loaded program now, through the program analyses; null without a program or when it fails. */
  async evaluateReadiness(): Promise<ReadinessSample | null> {
    const label = this.programLabel();
    if (!label) return null;
    try {
      const { report } = await this.deps.programs.run('readiness', {});
      return {
        program: label,
        mission_ready: report.mission_ready,
        total_score: report.score.total,
        maximum_score: report.score.maximum,
        factors: report.score.factors.map((f) => ({ factor: f.factor, score: f.score, weight: f.weight, weighted: f.weighted })),
      };
    } catch (err) {
      this.deps.log(`sre: readiness sample of ${label} failed: ${(err as Error).message}`);
      return null;
    }
  }

  /** The sample of this instant (not recorded). */
  async takeSample(now = Date.now(), options: { readiness?: boolean } = {}): Promise<HealthSample> {
    const { summary, up, ratio } = this.pool();
    const readiness = options.readiness === false ? null : await this.evaluateReadiness();
    return {
      at_ms: now,
      devices: { total: summary.total, healthy: summary.healthy, degraded: summary.degraded, offline: summary.offline, unknown: summary.unknown, failed: summary.failed, up },
      up_ratio: ratio,
      incidents_open: this.deps.incidents.list().filter((i) => i.status !== 'resolved').length,
      fault_alerts: this.deps.alerts.list().filter(isFaultAlert).length,
      readiness,
    };
  }

  /** Takes and records a sample (the recorder's tick). */
  async recordSample(now = Date.now(), options: { readiness?: boolean } = {}): Promise<HealthSample> {
    const sample = await this.takeSample(now, options);
    this.deps.history.record(sample);
    return sample;
  }

  burnRate(now = Date.now()): BurnRate {
    const s = this.deps.settings;
    const windowHours = s.burnWindowHours;
    const since = now - windowHours * HOUR_MS;
    const recent = this.deps.alerts.list().filter((a) => isFaultAlert(a) && a.timestamp_ms >= since).length;
    // The reference's scale, kept so thresholds mean the same: 10 fault alerts per hour exhaust a 100 % budget.
    const allowed = (Math.max(100 - s.sloPercent, 0.01) / 100) * windowHours * 10;
    const rate = recent / Math.max(allowed, 0.1);
    return {
      window_hours: windowHours,
      recent_fault_alerts: recent,
      allowed_fault_alerts_in_window: round(allowed, 6),
      rate: round(rate, 6),
      fast_burn_threshold: s.burnRateFast,
      fast_burn: rate >= s.burnRateFast,
      env_fast: 'SVC_SRE_BURN_RATE_FAST',
      env_window: 'SVC_SRE_BURN_WINDOW_HOURS',
      model: 'fault-alert-proxy',
    };
  }

  /**
   * Readiness trend report of the loaded program over every recorded entry; null without a program.
   * The SRE summary uses the reference's 7-day horizon against a minimum of 80; callers may ask for others.
   */
  /** Readiness trends of the loaded program, or of `label` (a program file name, e.g. a twin's program). */
  readinessTrends(options: { horizonDays?: number; minimumScore?: number; label?: string } = {}): ReadinessTrendReport | null {
    const label = options.label ?? this.programLabel();
    if (!label) return null;
    const recorded = this.deps.history.readiness(label).map((r) => ({ at_ms: r.at_ms, program: label, total_score: r.total_score, factors: r.factors }));
    const file = readHistoryFile(this.deps.stateDir, label);
    return readinessTrendReport(label, { recorded, file }, {
      horizonDays: options.horizonDays ?? FORECAST_HORIZON_DAYS,
      minimumScore: options.minimumScore ?? FORECAST_MINIMUM,
      sampleIntervalSecs: this.deps.settings.sampleIntervalSecs,
    });
  }

  sreSummary(now = Date.now()) {
    const s = this.deps.settings;
    const { summary, ratio } = this.pool();
    const availabilityNow = ratio * 100;
    const windowStart = now - s.sloWindowHours * HOUR_MS;
    const samples = this.deps.history.between(windowStart, now);
    // Time-based: the mean availability of the recorded samples (taken at a fixed interval) in the SLO window.
    const availability = samples.length > 0 ? (samples.reduce((a, x) => a + x.up_ratio, 0) / samples.length) * 100 : availabilityNow;

    const alerts = this.deps.alerts.list();
    const incidents = this.deps.incidents.list();
    const resolved = incidents.filter((i) => typeof i.resolved_at_ms === 'number');
    const mttr = resolved.length > 0 ? resolved.reduce((a, i) => a + (i.resolved_at_ms! - i.created_at_ms), 0) / resolved.length : null;
    const faultTimes = alerts.filter(isFaultAlert).map((a) => a.timestamp_ms).sort((a, b) => a - b);
    const mtbf = faultTimes.length >= 2 ? (faultTimes[faultTimes.length - 1]! - faultTimes[0]!) / (faultTimes.length - 1) : null;

    const target = s.sloPercent;
    const total = summary.total;
    const pct = (name: 'degraded' | 'failed' | 'offline', sample: HealthSample) => percentOf(sample.devices[name], sample.devices.total);
    const slope = (name: 'degraded' | 'failed' | 'offline') => round(slopePerHour(samples.map((x) => ({ at_ms: x.at_ms, value: pct(name, x) }))), 6);

    return {
      version: API_VERSION,
      availability_percent: round(availability),
      availability_now_percent: round(availabilityNow),
      availability_basis: {
        kind: samples.length > 0 ? 'recorded_samples' : 'current',
        window_hours: s.sloWindowHours,
        sample_count: samples.length,
        first_sample_ms: samples[0]?.at_ms ?? null,
        sample_interval_secs: s.sampleIntervalSecs,
      },
      devices_total: total,
      devices_healthy: summary.healthy,
      alerts_total: alerts.length,
      alerts_critical: alerts.filter((a) => a.severity === 'critical').length,
      traces_recorded: this.deps.traces.size,
      incidents_total: incidents.length,
      incidents_open: incidents.filter((i) => i.status === 'open').length,
      incidents_acknowledged: incidents.filter((i) => i.status === 'acknowledged').length,
      mttr_hint_ms: mttr === null ? null : Math.round(mttr),
      mtbf_hint_ms: mtbf === null ? null : Math.round(mtbf),
      health_trends: {
        devices_total: total,
        degraded_percent: round(percentOf(summary.degraded, total)),
        failed_percent: round(percentOf(summary.failed, total)),
        offline_percent: round(percentOf(summary.offline, total)),
        window_hours: s.sloWindowHours,
        sample_count: samples.length,
        degraded_percent_slope_per_hour: slope('degraded'),
        failed_percent_slope_per_hour: slope('failed'),
        offline_percent_slope_per_hour: slope('offline'),
      },
      readiness_trends: this.readinessTrends(),
      slo: {
        target_percent: target,
        met: availability >= target,
        budget_remaining_percent: round(availability - target),
        env: 'SVC_SRE_SLO_PERCENT',
      },
      burn_rate: this.burnRate(now),
    };
  }

  /**
   * One run of the SLO fast-burn monitor (docs/observability.md § Fast-burn monitor): on a fast burn,
   * a critical `health_critical` alert from `slo-burn-monitor` through the alert pipeline (which
   * opens an incident), at most once per burn window. Returns the alert raised, or null.
   */
  scanBurn(now = Date.now()): Alert | null {
    const burn = this.burnRate(now);
    if (!burn.fast_burn) return null;
    const since = now - burn.window_hours * HOUR_MS;
    const already = this.deps.alerts
      .list()
      .some((a) => a.alert_type === 'health_critical' && a.source === BURN_MONITOR_SOURCE && a.message.includes('fast burn') && a.timestamp_ms >= since);
    if (already) return null;
    return this.deps.alerts.raise(
      {
        id: `slo-burn-${now}`,
        alert_type: 'health_critical',
        severity: 'critical',
        source: BURN_MONITOR_SOURCE,
        message: `SLO error budget fast burn detected (rate=${burn.rate.toFixed(2)}, recent_fault_alerts=${burn.recent_fault_alerts})`,
      },
      now,
      { dedup: false },
    );
  }
}
