import { afterEach, describe, expect, it } from 'vitest';
import type { HealthSample } from '../../agent/sre/health-history.js';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { tempDir } from '../helpers/agent-harness.js';
import { demoProject, startAnalyticsAgent } from './fixture.js';

const DAY = 86_400_000;
let agents: RunningAgent[] = [];
afterEach(async () => {
  for (const a of agents) await a.close();
  agents = [];
});
const start = async (...args: Parameters<typeof startAnalyticsAgent>) => {
  const a = await startAnalyticsAgent(...args);
  agents.push(a);
  return a;
};

function sample(at: number, program: string, total: number): HealthSample {
  return {
    at_ms: at,
    devices: { total: 0, healthy: 0, degraded: 0, offline: 0, unknown: 0, failed: 0, up: 0 },
    up_ratio: 1,
    incidents_open: 0,
    fault_alerts: 0,
    readiness: {
      program,
      mission_ready: total >= 80,
      total_score: total,
      maximum_score: 100,
      factors: [
        { factor: 'Hardware', score: total, weight: 12, weighted: (total * 12) / 100 },
        { factor: 'Safety', score: 100, weight: 12, weighted: 12 },
      ],
    },
  };
}

describe('readiness trends and forecasts from the recorded readiness samples', () => {
  it('trend, forecast and forecast horizons follow the samples the agent recorded, and survive a restart', async () => {
    const p = demoProject();
    const stateDir = tempDir('svc-analytics-state-');
    const a = await start({ config: p.config, program: p.program, stateDir });
    const t0 = Date.now() - 2 * DAY;
    // Three samples a day apart, falling 5 points a day; a sample of another program is not counted.
    const history = a.agent.services.sre.history;
    expect(history.record(sample(t0, 'patrol.sd', 95))).toBe(true);
    expect(history.record(sample(t0 + DAY / 2, 'dock.sd', 10))).toBe(true);
    expect(history.record(sample(t0 + DAY, 'patrol.sd', 90))).toBe(true);
    expect(history.record(sample(t0 + 2 * DAY, 'patrol.sd', 85))).toBe(true);

    const plain = (await a.json('/v1/analytics/readiness')).body;
    expect(plain.program).toBe('patrol.sd');
    expect(plain.analytics).toMatchObject({ program: 'patrol.sd', sample_count: 3, forecast: null, sources: { recorded_samples: 3, history_file: 0 } });
    expect(plain.analytics.overall_trend).toEqual({ factor: 'overall', slope_per_day: -5, volatility: 4.0825, latest_score: 85 });
    expect(plain.analytics.factor_trends.map((f: any) => [f.factor, f.slope_per_day, f.latest_score])).toEqual([['Hardware', -5, 85], ['Safety', 0, 100]]);
    expect(plain.analytics.warnings).toEqual([]);

    const withForecast = (await a.json('/v1/analytics/readiness?forecast_days=3')).body.analytics;
    expect(withForecast.forecast).toEqual({ horizon_days: 3, predicted_score: 70, risk_warning: true, message: 'forecast 3d score 70 below policy minimum 80' });
    expect(withForecast.warnings).toEqual(['forecast 3d score 70 below policy minimum 80']);
    expect((await a.json('/v1/analytics/readiness?forecast_days=1')).body.analytics.forecast).toMatchObject({ predicted_score: 80, risk_warning: false, message: 'forecast 1d score 80 remains above minimum 80' });

    const forecast = (await a.json('/v1/analytics/readiness-forecast?all=1')).body.readiness_forecast;
    expect(forecast.history_samples).toBe(3);
    // The recorded slope (−5/day) is worse than the program's own decay, so it drives the prediction.
    expect(forecast.degradation_per_day).toBe(-5);
    expect(forecast.predictions.map((x: any) => [x.horizon_days, x.predicted_score, x.risk_warning])).toEqual([[7, 50, true], [14, 15, true], [30, 0, true]]);
    expect(forecast.predictions[0].projected_risks).toEqual(expect.arrayContaining(['forecast 7d score 50 below policy minimum 80', 'predicted score 50 below minimum 80 at 7d']));
    expect(forecast.warnings.some((w: string) => w.includes('heuristic degradation'))).toBe(false);

    const twin = (await a.json('/v1/analytics/mission-twin')).body.mission_twin;
    expect(twin.forecast.predictions.map((x: any) => x.predicted_score)).toEqual([50, 15]);

    // The ring is on disk: a restarted agent trends the same samples.
    await a.close();
    agents = [];
    const b = await start({ config: p.config, program: p.program, stateDir });
    expect((await b.json('/v1/analytics/readiness?forecast_days=3')).body.analytics).toEqual(withForecast);
  });

  it('one sample: no slope yet, a warning asking for two', async () => {
    const p = demoProject();
    const a = await start({ config: p.config, program: p.program });
    a.agent.services.sre.history.record(sample(Date.now() - 1000, 'patrol.sd', 88));
    const r = (await a.json('/v1/analytics/readiness?forecast_days=7')).body.analytics;
    expect(r.sample_count).toBe(1);
    expect(r.overall_trend).toEqual({ factor: 'overall', slope_per_day: 0, volatility: 0, latest_score: 88 });
    expect(r.warnings[0]).toBe('need at least two recorded readiness evaluations to compute trends');
    expect(r.forecast).toMatchObject({ horizon_days: 7, predicted_score: 88 });
  });

  it('the agent samples readiness itself every SVC_SRE_SAMPLE_INTERVAL_SECS and analytics trend those samples', async () => {
    const p = demoProject();
    const a = await start({ config: p.config, program: p.program, env: { SVC_SRE_SAMPLE_INTERVAL_SECS: '1' } });
    let r: any = null;
    for (let i = 0; i < 40; i++) {
      await new Promise((res) => setTimeout(res, 250));
      r = (await a.json('/v1/analytics/readiness?forecast_days=7')).body.analytics;
      if (r.sample_count >= 2) break;
    }
    expect(r.sample_count).toBeGreaterThanOrEqual(2);
    expect(r.sources.recorded_samples).toBe(r.sample_count);
    const recorded = a.agent.services.sre.history.readiness('patrol.sd');
    expect(r.overall_trend.latest_score).toBe(recorded.at(-1)!.total_score);
    expect(r.forecast.horizon_days).toBe(7);
    const f = (await a.json('/v1/analytics/readiness-forecast')).body.readiness_forecast;
    expect(f.history_samples).toBeGreaterThanOrEqual(2);
  }, 20_000);
});

describe('what-if priors from recorded failures', () => {
  it('with five or more critical failures in 30 days the prior is their observed share', async () => {
    const p = demoProject();
    const a = await start({ config: p.config, program: p.program });
    const before = (await a.json('/v1/analytics/what-if?scenario=gps_failure')).body.what_if.scenarios[0];
    expect(before.prior_source).toBe('constant');
    const alerts = a.agent.services.alerts;
    const now = Date.now();
    for (const [i, message] of ['gps fix lost on Sentinel', 'GPS antenna fault', 'gnss degraded', 'battery critical', 'battery cell fault'].entries()) {
      alerts.raise({ alert_type: 'health_critical', severity: 'critical', source: 'test', message }, now - i * 1000, { dedup: false });
    }
    // An old failure (40 days) and a warning do not count.
    alerts.raise({ alert_type: 'health_critical', severity: 'critical', source: 'test', message: 'gps old' }, now - 40 * 86_400_000, { dedup: false });
    alerts.raise({ alert_type: 'health_critical', severity: 'warning', source: 'test', message: 'gps warning' }, now, { dedup: false });
    const after = (await a.json('/v1/analytics/what-if?scenario=gps_failure')).body.what_if.scenarios[0];
    expect(after.prior_source).toBe('observed (3 of 5 failure records in 30 days)');
    // Base moved from the constant 0.15 to 0.6; everything else is the same program state.
    expect(after.probability).toBeCloseTo(Math.min(0.95, before.probability + 0.45), 4);
    const camera = (await a.json('/v1/analytics/what-if?scenario=camera')).body.what_if.scenarios[0];
    expect(camera.prior_source).toBe('observed (0 of 5 failure records in 30 days)');
  });
});
