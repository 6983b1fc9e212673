import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../agent/events/event-bus.js';
import {
  PLATFORM_EVENT_NAMES,
  PLATFORM_EVENTS,
  STREAMED_EVENT_NAMES,
  platformEvent,
  streamEventName,
  type PlatformEvent,
  type PlatformEventName,
} from '../../agent/events/platform-events.js';
import { IncidentService } from '../../agent/incidents/incidents.js';
import { AlertService } from '../../agent/observability/alerts.js';
import { parseEventTypes } from '../../agent/transports/grpc/streams.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { openStream, type StreamClient } from '../helpers/stream-client.js';

/**
 * The event catalogue (agent/events/platform-events.ts, docs/events.md § Platform events): one entry
 * per platform event says whether the audit chain records it and whether stream clients see it; the
 * audit chain, the telemetry stream, gRPC StreamEvents and the incident service all listen on the bus.
 */

const KEY = 'c'.repeat(64);
const DEDUP = { critical: 0, warning: 120, info: 300 };

let agents: RunningAgent[] = [];
let grpcClients: GrpcTestClient[] = [];
let streams: StreamClient[] = [];
afterEach(async () => {
  for (const s of streams) s.ws.terminate();
  streams = [];
  for (const c of grpcClients) c.close();
  grpcClients = [];
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
});

async function agent(grpc = false): Promise<RunningAgent> {
  const a = await startAgent({ env: { SVC_API_KEY: KEY }, ...(grpc ? { grpcBind: '127.0.0.1:0' } : {}) });
  agents.push(a);
  return a;
}

/** A probe event of any name; an `AlertRaised` probe carries no alert, so no listener acts on it. */
function probe(name: PlatformEventName): PlatformEvent {
  return platformEvent(name, 'catalogue-test', { probe: name }, `probe/${name}`);
}

describe('the event catalogue', () => {
  it('has one entry, with audited, streamed and a description, for every platform event name', () => {
    expect(PLATFORM_EVENT_NAMES.length).toBeGreaterThan(30);
    expect(new Set(PLATFORM_EVENT_NAMES).size).toBe(PLATFORM_EVENT_NAMES.length);
    expect(Object.keys(PLATFORM_EVENTS).sort()).toEqual([...PLATFORM_EVENT_NAMES].sort());
    for (const name of PLATFORM_EVENT_NAMES) {
      const e = PLATFORM_EVENTS[name];
      expect(typeof e.audited, name).toBe('boolean');
      expect(typeof e.streamed, name).toBe('boolean');
      expect(e.description.length, name).toBeGreaterThan(5);
    }
    expect(PLATFORM_EVENTS.AlertRaised).toMatchObject({ audited: false, streamed: false });
    // Today every event but AlertRaised streams (the stream sends alerts from the alert ring).
    expect(PLATFORM_EVENT_NAMES.filter((n) => !PLATFORM_EVENTS[n].streamed)).toEqual(['AlertRaised']);
  });

  it('docs/events.md § The catalogue states the same audited and streamed flags for every name', () => {
    const doc = fs.readFileSync(path.resolve(__dirname, '../../docs/events.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### The catalogue'), doc.indexOf('### Health and readiness transitions'));
    const documented = new Map<string, { audited: boolean; streamed: boolean }>();
    for (const row of section.split('\n').filter((l) => /^\| `/.test(l))) {
      const [names, audited, streamed] = row.split('|').slice(1, 4).map((c) => c.trim());
      for (const [, name] of names!.matchAll(/`(\w+)`/g)) documented.set(name!, { audited: audited === 'yes', streamed: streamed === 'yes' });
    }
    expect([...documented.keys()].sort()).toEqual([...PLATFORM_EVENT_NAMES].sort());
    for (const name of PLATFORM_EVENT_NAMES) {
      expect(documented.get(name), name).toEqual({ audited: PLATFORM_EVENTS[name].audited, streamed: PLATFORM_EVENTS[name].streamed });
    }
  });

  it('the audit chain records exactly the events marked audited, once each', async () => {
    const a = await agent();
    const chain = a.agent.services.audit.chain;
    for (const name of PLATFORM_EVENT_NAMES) {
      const before = chain.count;
      a.agent.services.bus.publish(probe(name));
      expect(chain.count - before, name).toBe(PLATFORM_EVENTS[name].audited ? 1 : 0);
    }
    const records = [...chain.records()];
    const probes = records.filter((r) => JSON.parse(r.payload).source === 'catalogue-test');
    expect(probes.map((r) => r.event_type)).toEqual(PLATFORM_EVENT_NAMES.filter((n) => PLATFORM_EVENTS[n].audited));
    expect(JSON.parse(probes[0]!.payload)).toMatchObject({ source: 'catalogue-test', entity_id: `probe/${probes[0]!.event_type}`, probe: probes[0]!.event_type });
  });

  it('the telemetry stream carries exactly the events marked streamed', async () => {
    const a = await agent();
    const ring = a.agent.services.telemetry.ring;
    for (const name of PLATFORM_EVENT_NAMES) {
      const head = ring.headOffset;
      a.agent.services.bus.publish(probe(name));
      expect(ring.headOffset - head, name).toBe(PLATFORM_EVENTS[name].streamed ? 1 : 0);
      if (PLATFORM_EVENTS[name].streamed) expect(ring.at(head), name).toMatchObject({ kind: 'platform', event_type: streamEventName(name) });
    }
  });

  it('a streamed event reaches a WebSocket client; a raised alert is one alert frame and no platform frame', async () => {
    const a = await agent();
    const c = await openStream(a.wsUrl, { authorization: `Bearer ${KEY}` });
    streams.push(c);
    a.agent.services.bus.publish(probe('ReadinessGateFailed'));
    const f = await c.waitFor((x) => x.type === 'telemetry' && x.event?.source === 'catalogue-test');
    expect(f.event).toMatchObject({ kind: 'platform', event_type: 'readiness_gate_failed', entity_id: 'probe/ReadinessGateFailed' });

    const alert = a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'warning', message: 'once', source: 'catalogue-test' });
    expect(alert).not.toBeNull();
    a.agent.services.bus.publish(probe('HealthChanged'));
    await c.waitFor((x) => x.type === 'telemetry' && x.event?.event_type === 'health_changed' && x.event?.source === 'catalogue-test');
    await c.waitFor((x) => x.type === 'alert' && x.alert?.id === alert!.id);
    expect(c.frames.filter((x) => x.type === 'alert' && x.alert?.id === alert!.id)).toHaveLength(1);
    expect(c.frames.filter((x) => x.type === 'telemetry' && x.event?.event_type === 'alert_raised')).toEqual([]);
  });

  it('gRPC StreamEvents delivers streamed events, never AlertRaised, and refuses it as a filter', async () => {
    expect(() => parseEventTypes(['alert_raised'])).toThrow(/unknown event type/);
    expect(() => parseEventTypes(['AlertRaised'])).toThrow(/unknown event type/);
    expect([...parseEventTypes(STREAMED_EVENT_NAMES.map(streamEventName))!]).toEqual([...STREAMED_EVENT_NAMES]);

    const a = await agent(true);
    const g = connectGrpc(a.agent.grpcAddress!);
    grpcClients.push(g);
    const frames: any[] = [];
    const call = g.client.StreamEvents({}, { metadata: bearer(KEY) });
    const reading = (async () => {
      try {
        for await (const f of call) frames.push(f);
      } catch {
        /* the agent closing ends the call */
      }
    })();
    const bus = a.agent.services.bus;
    // The subscription starts once the call reached the server: probe until the first frame arrives.
    while (frames.length === 0) {
      bus.publish(platformEvent('LogEmitted', 'warm-up', {}));
      await new Promise((r) => setTimeout(r, 20));
    }
    a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'critical', message: 'not on StreamEvents', source: 'catalogue-test' });
    bus.publish(probe('TamperDetected'));
    const until = Date.now() + 5000;
    while (!frames.some((f) => f.source === 'catalogue-test') && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    const mine = frames.filter((f) => f.type !== 'LogEmitted');
    expect(mine.map((f) => f.type)).toEqual(['TamperDetected']);
    expect(mine[0]).toMatchObject({ stream_name: 'tamper_detected', source: 'catalogue-test', entity_id: 'probe/TamperDetected' });
    await a.close();
    await reading;
  });
});

describe('alerts on the bus', () => {
  it('AlertService.raise publishes AlertRaised after de-duplication, carrying the stored alert', async () => {
    const bus = new EventBus();
    const seen: PlatformEvent[] = [];
    bus.subscribe((e) => seen.push(e));
    const alerts = await AlertService.open(tempDir(), 50, DEDUP, bus, () => undefined);
    try {
      const first = alerts.raise({ alert_type: 'custom', severity: 'warning', message: 'm', source: 's' }, 1_000);
      expect(alerts.raise({ alert_type: 'custom', severity: 'warning', message: 'm', source: 's' }, 2_000)).toBeNull();
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ type: 'AlertRaised', source: 'svc-alerts', payload: { alert: first } });
      expect(alerts.list()).toEqual([first]);
    } finally {
      await alerts.close();
    }
  });

  for (const order of ['incidents subscribe first', 'alerts open first'] as const) {
    it(`a critical alert opens one incident through the bus, a warning none (${order})`, async () => {
      const dir = tempDir();
      const bus = new EventBus((err) => {
        throw err;
      });
      let incidents: IncidentService;
      let alerts: AlertService;
      if (order === 'incidents subscribe first') {
        incidents = await IncidentService.open(dir, bus);
        alerts = await AlertService.open(dir, 50, DEDUP, bus, () => undefined);
      } else {
        alerts = await AlertService.open(dir, 50, DEDUP, bus, () => undefined);
        incidents = await IncidentService.open(dir, bus);
      }
      try {
        alerts.raise({ alert_type: 'low_battery', severity: 'warning', message: 'battery at 18%', source: 'robot-1' });
        expect(incidents.list()).toEqual([]);
        const alert = alerts.raise({ alert_type: 'health_critical', severity: 'critical', message: 'imu-1 offline', source: 'device-health' })!;
        expect(incidents.list()).toEqual([
          expect.objectContaining({ title: 'Alert: HealthCritical', description: 'imu-1 offline', severity: 'critical', status: 'open', source_alert_id: alert.id, pagerduty_dedup_key: alert.id }),
        ]);
        // The same alert heard again (a replayed event) does not open a second incident.
        bus.publish(platformEvent('AlertRaised', 'svc-alerts', { alert }));
        expect(incidents.list()).toHaveLength(1);
      } finally {
        await incidents.flush();
        await alerts.close();
      }
    });
  }

  it('in the running agent, a critical alert opens an incident and an info alert (POST /v1/alerts/test) none', async () => {
    const a = await agent();
    const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const r = await a.json('/v1/alerts/test', { method: 'POST', headers: auth, body: JSON.stringify({ message: 'catalogue probe' }) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await a.json('/v1/sre/incidents', { headers: auth })).body.incidents).toEqual([]);
    const alert = a.agent.services.alerts.raise({ alert_type: 'robot_offline', severity: 'critical', message: 'robot-1 silent', source: 'catalogue-test' })!;
    const incidents = (await a.json('/v1/sre/incidents', { headers: auth })).body.incidents as Array<Record<string, unknown>>;
    expect(incidents).toEqual([expect.objectContaining({ title: 'Alert: RobotOffline', severity: 'critical', status: 'open', source_alert_id: alert.id })]);
  });
});
