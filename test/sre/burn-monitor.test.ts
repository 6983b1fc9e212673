import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

let a: RunningAgent | null = null;
afterEach(async () => {
  await a?.close();
  a = null;
});

const BURN_MESSAGE = /^SLO error budget fast burn detected \(rate=\d+\.\d{2}, recent_fault_alerts=\d+\)$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SLO fast-burn monitor (SVC_SRE_BURN_SCAN_INTERVAL_SECS)', () => {
  it('raises one critical health_critical alert from slo-burn-monitor, which opens an incident, and not again inside the window', async () => {
    a = await startAgent({ env: { SVC_SRE_BURN_SCAN_INTERVAL_SECS: '1', SVC_SRE_SAMPLE_INTERVAL_SECS: '0' } });
    const { alerts } = a.agent.services;
    // No fault yet: the monitor stays quiet.
    await sleep(1300);
    expect(alerts.list().filter((x) => x.source === 'slo-burn-monitor')).toHaveLength(0);

    // One crash inside the 1 h window at a 99 % SLO: rate = 1 / 0.1 = 10 ≥ 2.
    alerts.raise({ alert_type: 'crash', severity: 'warning', source: 'device-hub', message: 'gps-1 crashed' });
    const deadline = Date.now() + 5000;
    while (alerts.list().every((x) => x.source !== 'slo-burn-monitor') && Date.now() < deadline) await sleep(100);
    const burn = alerts.list().filter((x) => x.source === 'slo-burn-monitor');
    expect(burn).toHaveLength(1);
    expect(burn[0]).toMatchObject({ alert_type: 'health_critical', severity: 'critical' });
    expect(burn[0]!.id).toMatch(/^slo-burn-\d+$/);
    expect(burn[0]!.message).toMatch(BURN_MESSAGE);
    expect(burn[0]!.message).toBe('SLO error budget fast burn detected (rate=10.00, recent_fault_alerts=1)');

    const incidents = (await a.json('/v1/sre/incidents', { headers: {} })).body.incidents as Array<Record<string, unknown>>;
    const opened = incidents.filter((i) => i['source_alert_id'] === burn[0]!.id);
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ title: 'Alert: HealthCritical', severity: 'critical', status: 'open', description: burn[0]!.message });

    // Further ticks inside the window add nothing.
    await sleep(2300);
    expect(alerts.list().filter((x) => x.source === 'slo-burn-monitor')).toHaveLength(1);
    expect(a.agent.services.incidents.list().filter((i) => i.title === 'Alert: HealthCritical')).toHaveLength(1);

    const summary = (await a.json('/v1/sre/summary')).body;
    expect(summary.burn_rate.fast_burn).toBe(true);
    // The burn alert is itself a fault alert (critical).
    expect(summary.burn_rate.recent_fault_alerts).toBe(2);
    expect(summary.incidents_open).toBe(1);
  });

  it('scanBurn: no alert without a fast burn; a new one once the previous left the window', async () => {
    a = await startAgent({ env: { SVC_SRE_SAMPLE_INTERVAL_SECS: '0', SVC_SRE_BURN_WINDOW_HOURS: '1' } });
    const { sre, alerts } = a.agent.services;
    const hour = 3_600_000;
    const t0 = Date.now() - 3 * hour;
    expect(sre.scanBurn(t0)).toBeNull();
    alerts.raise({ alert_type: 'robot_offline', severity: 'warning', source: 'health', message: 'rover-1 offline' }, t0);
    const first = sre.scanBurn(t0 + 1000);
    expect(first?.id).toBe(`slo-burn-${t0 + 1000}`);
    expect(sre.scanBurn(t0 + 2000)).toBeNull();
    // Two hours later the fault and the burn alert are out of the window: no burn at all.
    expect(sre.scanBurn(t0 + 2 * hour)).toBeNull();
    alerts.raise({ alert_type: 'mission_failure', severity: 'warning', source: 'ops', message: 'patrol failed' }, t0 + 2 * hour);
    const second = sre.scanBurn(t0 + 2 * hour + 1000);
    expect(second?.message).toBe('SLO error budget fast burn detected (rate=10.00, recent_fault_alerts=1)');
  });
});
