import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import type { HealthSample } from '../../agent/sre/health-history.js';
import { GUEST_KEY, bearer, sreProject } from './fixture.js';

const HOUR = 3_600_000;
let running: RunningAgent[] = [];
afterEach(async () => {
  for (const a of running) await a.close();
  running = [];
});
async function agent(options: Parameters<typeof startAgent>[0] = {}): Promise<RunningAgent> {
  const a = await startAgent(options);
  running.push(a);
  return a;
}

function sample(at_ms: number, up: number, total: number, extra: Partial<HealthSample['devices']> = {}): HealthSample {
  return {
    at_ms,
    devices: { total, healthy: up, degraded: 0, offline: 0, unknown: total - up, failed: 0, up, ...extra },
    up_ratio: total === 0 ? 1 : up / total,
    incidents_open: 0,
    fault_alerts: 0,
    readiness: null,
  };
}

describe('GET /v1/health/summary', () => {
  it('is critical with a failed device, degraded with a degraded one, healthy otherwise (also for an empty pool)', async () => {
    const failed = sreProject();
    const a = await agent({ configPath: failed.config, env: { SVC_API_KEYS_FILE: failed.keys } });
    const r = await a.json('/v1/health/summary');
    expect(r.status).toBe(200);
    expect(r.body.version).toBe('v1');
    expect(r.body.overall_status).toBe('critical');
    expect(r.body.device_pool.total).toBe(3);
    expect(r.body.device_pool.failed).toBe(1);
    expect(r.body.device_pool.lifecycle.failed).toBe(1);

    const ok = sreProject({ failed: false });
    const b = await agent({ configPath: ok.config, env: { SVC_API_KEYS_FILE: ok.keys } });
    expect((await b.json('/v1/health/summary')).body.overall_status).toBe('healthy');
    b.agent.services.devices.setHealth('imu-1', 'degraded');
    const degraded = await b.json('/v1/health/summary');
    expect(degraded.body.overall_status).toBe('degraded');
    expect(degraded.body.device_pool.degraded).toBe(1);

    const empty = await agent();
    const e = await empty.json('/v1/health/summary');
    expect(e.body).toMatchObject({ overall_status: 'healthy', device_pool: { total: 0 } });
  });

  it('stays public when sensitive reads need a principal', async () => {
    const a = await agent({ env: { SVC_API_REQUIRE_AUTH_READS: '1' } });
    expect((await a.json('/v1/health/summary')).status).toBe(200);
  });
});

describe('GET /v1/sre/summary', () => {
  it('F17: fresh state, no config, no program', async () => {
    const a = await agent();
    const r = await a.json('/v1/sre/summary');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      version: 'v1',
      availability_percent: 100,
      availability_now_percent: 100,
      devices_total: 0,
      devices_healthy: 0,
      alerts_total: 0,
      alerts_critical: 0,
      incidents_total: 0,
      incidents_open: 0,
      incidents_acknowledged: 0,
      mttr_hint_ms: null,
      mtbf_hint_ms: null,
      readiness_trends: null,
      slo: { target_percent: 99, met: true, budget_remaining_percent: 1, env: 'SVC_SRE_SLO_PERCENT' },
      health_trends: { devices_total: 0, degraded_percent: 0, failed_percent: 0, offline_percent: 0 },
      burn_rate: {
        window_hours: 1,
        recent_fault_alerts: 0,
        allowed_fault_alerts_in_window: 0.1,
        rate: 0,
        fast_burn_threshold: 2,
        fast_burn: false,
        env_fast: 'SVC_SRE_BURN_RATE_FAST',
        env_window: 'SVC_SRE_BURN_WINDOW_HOURS',
        model: 'fault-alert-proxy',
      },
    });
    expect(typeof r.body.traces_recorded).toBe('number');
  });

  it('availability is the mean of the recorded samples inside the SLO window, kept across a restart; the current value stays beside it', async () => {
    const p = sreProject();
    const stateDir = tempDir('svc-sre-state-');
    const env = { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0', SVC_SRE_SLO_WINDOW_HOURS: '24' };
    const a = await agent({ configPath: p.config, stateDir, env });
    const history = a.agent.services.sre.history;
    const now = Date.now();
    // Outside the 24 h window: ignored.
    expect(history.record(sample(now - 30 * HOUR, 0, 3))).toBe(true);
    expect(history.record(sample(now - 3 * HOUR, 3, 3))).toBe(true);
    expect(history.record(sample(now - 2 * HOUR, 3, 3, { degraded: 0 }))).toBe(true);
    expect(history.record(sample(now - 1 * HOUR, 2, 3, { degraded: 1 }))).toBe(true);
    // Older than the newest: refused, the ring stays in time order.
    expect(history.record(sample(now - 5 * HOUR, 0, 3))).toBe(false);

    const r = await a.json('/v1/sre/summary');
    expect(r.status).toBe(200);
    // (1 + 1 + 2/3) / 3 × 100
    expect(r.body.availability_percent).toBeCloseTo(88.889, 2);
    // Now: gps-1 and imu-1 active, lidar-1 failed → 2 of 3.
    expect(r.body.availability_now_percent).toBeCloseTo(66.667, 2);
    expect(r.body.availability_basis).toMatchObject({ kind: 'recorded_samples', window_hours: 24, sample_count: 3 });
    expect(r.body.slo.met).toBe(false);
    expect(r.body.slo.budget_remaining_percent).toBeCloseTo(88.889 - 99, 2);
    expect(r.body.devices_total).toBe(3);
    expect(r.body.health_trends.failed_percent).toBeCloseTo(33.333, 2);
    expect(r.body.health_trends.sample_count).toBe(3);
    // Degraded went 0 → 0 → 33.3 % over two hours: a positive least-squares slope (16.67 %/h).
    expect(r.body.health_trends.degraded_percent_slope_per_hour).toBeCloseTo(16.667, 2);

    await a.close();
    running = running.filter((x) => x !== a);
    // One line per sample, appended as it was recorded.
    const file = path.join(stateDir, 'control-center-health-samples.jsonl');
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[3]!).up_ratio).toBeCloseTo(2 / 3, 6);
    // A line torn by a crash is skipped.
    fs.appendFileSync(file, '{"at_ms": 17');
    const b = await agent({ configPath: p.config, stateDir, env });
    const again = await b.json('/v1/sre/summary');
    expect(again.body.availability_percent).toBeCloseTo(88.889, 2);
    expect(b.agent.services.sre.history.size).toBe(4);
    // Recording goes on after the torn line.
    expect(b.agent.services.sre.history.record(sample(Date.now(), 3, 3))).toBe(true);
    await b.close();
    running = running.filter((x) => x !== b);
    const c = await agent({ configPath: p.config, stateDir, env });
    expect(c.agent.services.sre.history.size).toBe(5);
  });

  it('the sample file is compacted to the ring once it holds twice the ring', async () => {
    const stateDir = tempDir('svc-sre-state-');
    const env = { SVC_SRE_SAMPLE_INTERVAL_SECS: '0', SVC_SRE_SAMPLE_RING_SIZE: '3' };
    const a = await agent({ stateDir, env });
    const history = a.agent.services.sre.history;
    const t0 = Date.now() - 10 * HOUR;
    for (let i = 0; i < 7; i++) history.record(sample(t0 + i * 60_000, i % 2 === 0 ? 1 : 0, 1));
    expect(history.size).toBe(3);
    const file = path.join(stateDir, 'control-center-health-samples.jsonl');
    // 6 lines → compacted to 3, then one more appended.
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.at_ms)).toEqual([t0 + 3 * 60_000, t0 + 4 * 60_000, t0 + 5 * 60_000, t0 + 6 * 60_000]);
    await a.close();
    running = running.filter((x) => x !== a);
    const b = await agent({ stateDir, env });
    expect(b.agent.services.sre.history.all().map((s) => s.at_ms)).toEqual([t0 + 4 * 60_000, t0 + 5 * 60_000, t0 + 6 * 60_000]);
  });

  it('the recorder takes samples on its interval, with the readiness of the loaded program, and readiness trends follow them', async () => {
    const p = sreProject();
    const a = await agent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '1' } });
    const deadline = Date.now() + 10_000;
    let body: any;
    do {
      await new Promise((r) => setTimeout(r, 250));
      body = (await a.json('/v1/sre/summary')).body;
    } while ((body.readiness_trends?.sample_count ?? 0) < 2 && Date.now() < deadline);
    expect(body.availability_basis.kind).toBe('recorded_samples');
    expect(body.availability_basis.sample_count).toBeGreaterThanOrEqual(2);
    // Every sample carries the readiness of the loaded program (none is taken at start).
    expect(body.readiness_trends.sample_count).toBe(body.availability_basis.sample_count);
    expect(body.availability_percent).toBeCloseTo(66.667, 2);
    const trends = body.readiness_trends;
    expect(trends.program).toBe('rover.sd');
    expect(trends.sample_count).toBeGreaterThanOrEqual(2);
    expect(trends.sources.recorded_samples).toBe(trends.sample_count);
    expect(trends.overall_trend).toMatchObject({ factor: 'overall', slope_per_day: 0, volatility: 0 });
    expect(typeof trends.overall_trend.latest_score).toBe('number');
    expect(trends.factor_trends.length).toBeGreaterThan(0);
    expect(trends.forecast).toMatchObject({ horizon_days: 7, minimum_score: 80 });
    const samples = a.agent.services.sre.history.all();
    const withReadiness = samples.filter((s) => s.readiness !== null);
    expect(withReadiness[0]!.readiness!.program).toBe('rover.sd');
    expect(withReadiness[0]!.readiness!.total_score).toBe(trends.overall_trend.latest_score);
  });

  it('readiness trends also read the CLI history file, matching the program by file name', async () => {
    const p = sreProject();
    const stateDir = tempDir('svc-sre-state-');
    const day = 86_400_000;
    const t0 = Date.now() - 4 * day;
    const entry = (at: number, program: string, total: number) => ({
      recorded_at: new Date(at).toISOString(),
      program,
      mission_ready: total >= 80,
      total_score: total,
      maximum_score: 100,
      factors: [{ factor: 'Hardware', score: total, weight: 30, weighted: (total * 30) / 100 }],
    });
    fs.writeFileSync(
      path.join(stateDir, 'readiness-history.json'),
      JSON.stringify({
        version: 1,
        entries: [entry(t0, 'programs/rover.sd', 90), entry(t0 + 2 * day, './programs/rover.sd', 86), entry(t0 + 1 * day, 'other.sd', 10)],
      }),
    );
    const a = await agent({ configPath: p.config, programPath: p.program, stateDir, env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    const t = (await a.json('/v1/sre/summary')).body.readiness_trends;
    expect(t.program).toBe('rover.sd');
    expect(t.sample_count).toBe(2);
    expect(t.sources).toEqual({ recorded_samples: 0, history_file: 2 });
    expect(t.overall_trend).toEqual({ factor: 'overall', slope_per_day: -2, volatility: 2, latest_score: 86 });
    expect(t.factor_trends).toEqual([{ factor: 'Hardware', slope_per_day: -2, volatility: 2, latest_score: 86 }]);
    // 86 − 2 × 7 = 72 < 80
    expect(t.forecast).toEqual({ horizon_days: 7, minimum_score: 80, predicted_score: 72, risk_warning: true, message: 'forecast 7d score 72 below policy minimum 80' });
    expect(t.warnings).toContain('forecast 7d score 72 below policy minimum 80');
  });

  it('with a program but no history: sample_count 0 and a warning', async () => {
    const p = sreProject();
    const a = await agent({ configPath: p.config, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys, SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    const t = (await a.json('/v1/sre/summary')).body.readiness_trends;
    expect(t).toMatchObject({ program: 'rover.sd', sample_count: 0, overall_trend: null, factor_trends: [], forecast: null });
    expect(t.warnings[0]).toMatch(/^no readiness history recorded for rover\.sd/);
  });

  it('MTTR from resolved incidents and MTBF from fault alerts', async () => {
    const a = await agent({ env: { SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    const { alerts } = a.agent.services;
    const t = Date.now() - 10_000;
    alerts.raise({ alert_type: 'crash', severity: 'warning', source: 't', message: 'c1' }, t);
    alerts.raise({ alert_type: 'custom', severity: 'info', source: 't', message: 'not a fault' }, t + 1000);
    alerts.raise({ alert_type: 'reboot', severity: 'warning', source: 't', message: 'r1' }, t + 4000);
    alerts.raise({ alert_type: 'custom', severity: 'critical', source: 't', message: 'critical counts' }, t + 6000);
    const body = (await a.json('/v1/sre/summary')).body;
    expect(body.mtbf_hint_ms).toBe(3000);
    expect(body.alerts_total).toBe(4);
    expect(body.alerts_critical).toBe(1);
    // The critical alert opened an incident; resolve it.
    expect(body.incidents_open).toBe(1);
    const incident = a.agent.services.incidents.list()[0]!;
    a.agent.services.incidents.resolve(incident.id);
    const after = (await a.json('/v1/sre/summary')).body;
    expect(after.incidents_open).toBe(0);
    expect(after.mttr_hint_ms).toBeGreaterThanOrEqual(0);
    expect(after.burn_rate.recent_fault_alerts).toBe(3);
    expect(after.burn_rate.fast_burn).toBe(true);
  });

  it('is a sensitive read: 401 without a principal under SVC_API_REQUIRE_AUTH_READS; any principal may read it; JSON-RPC legacy name answers the same', async () => {
    const p = sreProject();
    const a = await agent({ configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys, SVC_API_REQUIRE_AUTH_READS: '1', SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    expect((await a.json('/v1/sre/summary')).status).toBe(401);
    const ok = await a.json('/v1/sre/summary', bearer(GUEST_KEY));
    expect(ok.status).toBe(200);
    const rpc = (key?: string) =>
      a.json('/v1/rpc', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ method: 'svc.v1.SvcService/GetSreSummary', params: {} }),
      });
    expect((await rpc()).status).toBe(401);
    const viaRpc = await rpc(GUEST_KEY);
    expect(viaRpc.status).toBe(200);
    expect(viaRpc.body.method).toBe('svc.v1.SvcService/GetSreSummary');
    expect(viaRpc.body.result.devices_total).toBe(3);
    expect(viaRpc.body.result.burn_rate.model).toBe('fault-alert-proxy');
  });

  it('reads SLO and burn settings from the environment (invalid values fall back)', async () => {
    const a = await agent({ env: { SVC_SRE_SLO_PERCENT: '95.5', SVC_SRE_BURN_RATE_FAST: '14.4', SVC_SRE_BURN_WINDOW_HOURS: '6' } });
    const body = (await a.json('/v1/sre/summary')).body;
    expect(body.slo.target_percent).toBe(95.5);
    expect(body.burn_rate.fast_burn_threshold).toBe(14.4);
    expect(body.burn_rate.window_hours).toBe(6);
    // max(100 − 95.5, 0.01) / 100 × 6 × 10
    expect(body.burn_rate.allowed_fault_alerts_in_window).toBeCloseTo(2.7, 6);
    const b = await agent({ env: { SVC_SRE_SLO_PERCENT: '150', SVC_SRE_BURN_RATE_FAST: '-1', SVC_SRE_BURN_WINDOW_HOURS: 'x' } });
    const fallback = (await b.json('/v1/sre/summary')).body;
    expect(fallback.slo.target_percent).toBe(99);
    expect(fallback.burn_rate.fast_burn_threshold).toBe(2);
    expect(fallback.burn_rate.window_hours).toBe(1);
  });
});
