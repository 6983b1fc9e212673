import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonl } from '../../agent/state/jsonl-log.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { spawnServe, waitForExit } from '../helpers/spawn-agent.js';

const KEY = 'f'.repeat(64);
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

describe('state across restarts', () => {
  it('alerts, traces and telemetry survive a restart with their offsets', async () => {
    const stateDir = tempDir();
    const first = await startAgent({ stateDir, env: { SVC_API_KEY: KEY } });
    const raised = await first.json('/v1/alerts/test', { method: 'POST', headers: { Authorization: `Bearer ${KEY}` }, body: '{"message":"persist me"}' });
    expect(raised.status).toBe(200);
    await first.fetch('/v1/version', { headers: { 'X-Correlation-ID': 'before-restart' } });
    first.agent.services.telemetry.append({ kind: 'device', device_id: 'imu-1', metric: 'temp_c', value: 21.5, timestamp_ms: 1 });
    const telemetryHead = first.agent.services.telemetry.ring.headOffset;
    const traceHead = first.agent.services.traces.headOffset;
    await first.close();

    const second = await startAgent({ stateDir });
    running.push(second);
    const alerts = (await second.json('/v1/alerts')).body.alerts;
    expect(alerts.map((a: { id: string; message: string }) => [a.id, a.message])).toEqual([[raised.body.alert.id, 'persist me']]);
    const s = second.agent.services;
    expect(s.traces.all().some((t) => t.correlation_id === 'before-restart')).toBe(true);
    // The restart's own requests continue the offsets rather than restarting them at 0.
    expect(s.traces.headOffset).toBeGreaterThanOrEqual(traceHead);
    expect(s.telemetry.ring.headOffset).toBe(telemetryHead);
    expect(s.telemetry.ring.latest(1)[0]).toMatchObject({ kind: 'device', device_id: 'imu-1', value: 21.5 });
  });

  it('writes a store only when it changed', async () => {
    const stateDir = tempDir();
    const a = await startAgent({ stateDir });
    running.push(a);
    await a.fetch('/v1/health');
    await a.agent.services.alerts.ring.flush();
    expect(fs.existsSync(path.join(stateDir, 'control-center-alerts.json'))).toBe(false);
    a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'info', message: 'x', source: 't' });
    await a.agent.services.alerts.ring.flush();
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, 'control-center-alerts.json'), 'utf8')).items).toHaveLength(1);
  });

  it('keeps an unreadable state file aside and starts empty instead of failing', async () => {
    const stateDir = tempDir();
    fs.writeFileSync(path.join(stateDir, 'control-center-alerts.json'), '{"items": [ {"id": ');
    const a = await startAgent({ stateDir });
    running.push(a);
    expect((await a.json('/v1/alerts')).body.alerts).toEqual([]);
    expect(fs.readdirSync(stateDir).some((f) => f.startsWith('control-center-alerts.json.corrupt-'))).toBe(true);
  });

  it('a kill -9 in the middle of a write storm leaves every store readable', async () => {
    const stateDir = tempDir();
    // A ring large enough that no round evicts: the count must grow with every round.
    const env = { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_API_KEY: KEY, SVC_ALERT_RING_SIZE: '100000' };
    let lastAlerts = 0;
    for (let round = 0; round < 3; round++) {
      const { child, baseUrl } = await spawnServe([], env);
      const stop = Date.now() + 700 + round * 150;
      const storm = async () => {
        while (Date.now() < stop) {
          await fetch(`${baseUrl}/v1/alerts/test`, { method: 'POST', headers: { Authorization: `Bearer ${KEY}` }, body: '{}' }).catch(() => undefined);
          await fetch(`${baseUrl}/v1/dashboard`).catch(() => undefined);
        }
      };
      const workers = Promise.all([storm(), storm(), storm(), storm()]);
      await new Promise((r) => setTimeout(r, 500 + round * 100));
      child.kill('SIGKILL');
      await waitForExit(child);
      await workers;

      for (const file of fs.readdirSync(stateDir)) {
        const full = path.join(stateDir, file);
        if (file.endsWith('.json')) {
          expect(() => JSON.parse(fs.readFileSync(full, 'utf8')), file).not.toThrow();
        } else if (file.endsWith('.jsonl')) {
          const { skipped } = readJsonl(full);
          expect(skipped.length, file).toBeLessThanOrEqual(1);
        }
      }
      const alerts = JSON.parse(fs.readFileSync(path.join(stateDir, 'control-center-alerts.json'), 'utf8')).items;
      expect(alerts.length).toBeGreaterThan(lastAlerts);
      lastAlerts = alerts.length;
      expect(fs.readdirSync(stateDir).some((f) => f.includes('.corrupt-'))).toBe(false);
    }
    // And the agent starts cleanly from what is left.
    const after = await startAgent({ stateDir, env });
    running.push(after);
    expect((await after.json('/v1/alerts')).body.alerts.length).toBe(lastAlerts);
  }, 60_000);
});
