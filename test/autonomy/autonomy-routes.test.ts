import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { platformEvent } from '../../agent/events/platform-events.js';
import { openStream } from '../helpers/stream-client.js';
import { autonomyProject, AUDITOR_KEY, op, OPERATOR_KEY } from './fixtures.js';

const read = (a: RunningAgent, p: string) => a.json(p, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } });

describe('autonomy routes without devices (project, program, keys)', () => {
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
  });

  async function start(autonomyToml = '', stateDir?: string, extraEnv: Record<string, string> = {}, programExtra = '') {
    const p = autonomyProject(autonomyToml, programExtra);
    const a = await startAgent({ configPath: p.manifest, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys, ...extraEnv }, ...(stateDir ? { stateDir } : {}) });
    agents.push(a);
    return { a, p };
  }

  it('check 11: no reflex fired → traces [], source none, three labelled catalogue examples (never in traces)', async () => {
    const { a } = await start();
    const r = await read(a, '/v1/autonomy/reflex/traces');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', traces: [], source: 'none' });
    expect(r.body.catalog_examples.map((x: any) => x.reflex_id)).toEqual(['reflex.emergency_stop', 'reflex.obstacle', 'reflex.thermal']);
    expect(r.body.catalog_examples.every((x: any) => x.example === true)).toBe(true);
    // The examples name the first registry entity (id order), not an invented one.
    const ids = (await read(a, '/v1/entities')).body.entities.map((e: any) => e.id).sort();
    expect(r.body.catalog_examples[0].entity_id).toBe(ids[0]);
  });

  it('F7: the reflex list is the six built-ins plus the kill switch and the reflex-layer tree of the loaded program (not the local tree)', async () => {
    const { a } = await start();
    const r = await read(a, '/v1/autonomy/reflex');
    expect(r.status).toBe(200);
    const ids = r.body.reflexes.map((x: any) => x.id);
    expect(ids.slice(0, 6)).toEqual(['reflex.emergency_stop', 'reflex.obstacle', 'reflex.overcurrent', 'reflex.thermal', 'reflex.untrusted_cmd', 'reflex.unsafe_actuator']);
    expect(r.body.reflexes).toContainEqual(expect.objectContaining({ id: 'reflex.program.BumperStop', trigger: 'BumperStop', priority: 150, source: 'program' }));
    expect(r.body.reflexes).toContainEqual(expect.objectContaining({ id: 'reflex.program.ShopperReflex', trigger: expect.stringContaining('nearest_distance <'), action: 'stop_drive', priority: 150 }));
    expect(ids).not.toContain('reflex.program.TrolleyLineLocal');
  });

  it('check 10: a spoofed entity is quarantined with action isolate and two reasons; tamper and unsigned plugins by their rules', async () => {
    const { a } = await start();
    const r = await read(a, '/v1/autonomy/immunity');
    expect(r.status).toBe(200);
    const by = Object.fromEntries(r.body.quarantined.map((q: any) => [q.entity_id, q]));
    expect(by['cam-spoof']).toMatchObject({ quarantine: true, action: 'isolate', reasons: ['Entity trust status is untrusted', 'Sensor spoofing signal rejected'] });
    expect(by['arm-tampered']).toMatchObject({ action: 'remove_from_mission', reasons: ['Entity trust is compromised'] });
    expect(by['plugin-host']).toMatchObject({ action: 'block', reasons: ['Unsigned plugin detected'] });
    expect(by['robot-1']).toBeUndefined();
  });

  it('check 12: maintenance windows: anonymous 401 (AuthFailed), auditor 403, operator 200 persisted across a restart, missing end 400, start after end 400', async () => {
    const stateDir = tempDir('svc-auto-');
    const { a } = await start('', stateDir);
    const stream = await openStream(a.wsUrl, { authorization: `Bearer ${OPERATOR_KEY}` });
    const body = { id: 'mw-1', start: '2026-12-01T02:00:00Z', end: '2026-12-01T04:00:00Z', activities: ['firmware update', 'lidar calibration'] };
    const anon = await a.json('/v1/autonomy/maintenance/windows', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(anon.status).toBe(401);
    const failed = await stream.waitFor((f: any) => f.type === 'telemetry' && f.event.kind === 'platform' && f.event.event_type === 'auth_failed', 5000);
    expect(failed.event.payload.reason).toBe('missing_or_invalid_token');
    stream.close();
    expect((await a.json('/v1/autonomy/maintenance/windows', op(body, AUDITOR_KEY))).status).toBe(403);
    const ok = await a.json('/v1/autonomy/maintenance/windows', op(body));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ version: 'v1', window: body });
    const { end: _end, ...noEnd } = body;
    const missing = await a.json('/v1/autonomy/maintenance/windows', op({ ...noEnd, id: 'mw-2' }));
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('end');
    expect((await a.json('/v1/autonomy/maintenance/windows', op({ ...body, id: 'mw-3', start: body.end, end: body.start }))).status).toBe(400);
    expect((await a.json('/v1/autonomy/maintenance/windows', op({ ...body, id: 'mw-4', start: 'tomorrow' }))).status).toBe(400);
    // Upsert by id keeps the store order.
    await a.json('/v1/autonomy/maintenance/windows', op({ id: 'mw-0', start: '2026-11-30T00:00:00Z', end: '2026-11-30T01:00:00Z', activities: [] }));
    await a.json('/v1/autonomy/maintenance/windows', op({ ...body, activities: ['firmware update'] }));
    await a.close();
    agents = [];
    const again = (await start('', stateDir)).a;
    const list = await read(again, '/v1/autonomy/maintenance/windows');
    expect(list.body.windows.map((w: any) => [w.id, w.activities])).toEqual([
      ['mw-1', ['firmware update']],
      ['mw-0', []],
    ]);
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, 'maintenance-windows.json'), 'utf8'))).toHaveLength(2);
  });

  it('F9: homeostasis reports this process and host from live figures, entity metadata as a fallback, and no invented metric', async () => {
    const { a } = await start('[autonomy.homeostasis]\nbattery_pct = { min = 20, max = 100 }\n');
    const r = await read(a, '/v1/autonomy/homeostasis');
    expect(r.status).toBe(200);
    expect(r.body.policy_source).toBe('config');
    const m = Object.fromEntries(r.body.platform.metrics.map((x: any) => [x.name, x]));
    // The agent runs in this process: its RSS share is this process's.
    const rssPct = (process.memoryUsage().rss / (await import('node:os')).totalmem()) * 100;
    expect(m['memory_pct'].value).toBeGreaterThan(rssPct * 0.5);
    expect(m['memory_pct'].value).toBeLessThan(rssPct * 1.5);
    expect(m['cpu_pct'].source).toBe('process');
    expect(m['load_per_cpu'].source).toBe('host');
    const robot = r.body.reports.find((x: any) => x.entity_id === 'robot-1');
    expect(robot.metrics).toEqual([{ name: 'battery_pct', value: 9, unit: 'pct', source: 'metadata' }]);
    expect(robot.drift_signals).toContainEqual(expect.objectContaining({ metric: 'battery_pct', direction: 'below_min', severity: 'medium' }));
    expect(robot.corrections).toContainEqual({ metric: 'battery_pct', action: 'replan_mission', rationale: 'battery_pct = 9 below min 20' });
    expect(robot.stable).toBe(false);
    // An entity with nothing measured reports no metrics at all (the reference synthesised cpu/memory from enums).
    const cam = r.body.reports.find((x: any) => x.entity_id === 'cam-spoof');
    expect(cam.metrics).toEqual([]);
    // Reports cover every entity in id order.
    const ids = r.body.reports.map((x: any) => x.entity_id);
    expect(ids).toEqual([...ids].sort());
  });

  it('F11: attention ranks entities named by open alerts and incidents above healthy ones, applies routine suppression, keeps the platform item', async () => {
    const { a } = await start('[[autonomy.attention.suppress]]\npattern = "alert:custom"\nmax_repeats = 1\nwindow_secs = 60\n');
    const created = await a.json('/v1/sre/incidents', op({ title: 'camera feed frozen', description: 'cam-spoof stopped sending frames', severity: 'warning' }));
    expect(created.status).toBe(200);
    const r = await read(a, '/v1/autonomy/attention');
    expect(r.status).toBe(200);
    const items = r.body.attention.items;
    expect(items).toContainEqual(expect.objectContaining({ event_id: 'platform', label: 'routine_telemetry', score: 0, priority: 'routine' }));
    const cam = items.find((i: any) => i.entity_id === 'cam-spoof');
    const plugin = items.find((i: any) => i.entity_id === 'plugin-host');
    expect(cam.reasons.some((x: string) => x.includes(created.body.incident.id))).toBe(true);
    expect(cam.score).toBeGreaterThan(plugin.score);
    expect(items.indexOf(cam)).toBeLessThan(items.indexOf(plugin));
    // Scores are ranked descending.
    const scores = items.map((i: any) => i.score);
    expect(scores).toEqual([...scores].sort((x: number, y: number) => y - x));
    expect(r.body.policy_source).toBe('config');
  });

  it('F12: memory indexes incidents when opened and traces when recorded, attributed to their robot; persisted; the GET writes nothing', async () => {
    const stateDir = tempDir('svc-auto-');
    const { a, p } = await start('', stateDir);
    const inc = await a.json('/v1/sre/incidents', op({ title: 'arm stalled', description: 'arm-tampered reported a stall' }));
    const sim = await a.json('/v1/programs/simulation', op({ execute: true, record_trace: true }));
    expect(sim.status).toBe(200);
    expect(sim.body.simulation.has_trace).toBe(true);
    const episodicFile = path.join(stateDir, 'autonomy-episodic-memory.json');
    await new Promise((res) => setTimeout(res, 200)); // the index's own writes (at record time) settle first
    const before = fs.existsSync(episodicFile) ? fs.statSync(episodicFile).mtimeMs : 0;
    const r = await read(a, '/v1/autonomy/memory');
    expect(r.status).toBe(200);
    const by = Object.fromEntries(r.body.memory.map((m: any) => [m.entity_id, m]));
    expect(by['arm-tampered'].refs.episodic).toEqual([`incident:${inc.body.incident.id}`]);
    expect(by['Bumper'].refs.episodic).toEqual(['replay:programs/bumper.trace']);
    expect(by['Bumper'].model.episodic.trace_ids).toEqual(['trace:bumper']);
    // Procedures are the program's trees and kill switch, and configured playbooks by entity kind.
    expect(by['Bumper'].refs.procedural).toEqual(['decision_tree:ShopperReflex', 'decision_tree:TrolleyLineLocal', 'kill_switch:BumperStop']);
    expect(by['cam-spoof'].refs.procedural).toEqual(['playbook:camera_swap']);
    expect(by['Bumper'].refs.reflex).toContain('reflex.program.BumperStop');
    expect(by['robot-1'].refs.working).toEqual(['mission:patrol']);
    expect(r.body.episodic_store).toHaveLength(2);
    // A second GET indexes nothing new.
    const r2 = await read(a, '/v1/autonomy/memory');
    expect(r2.body.episodic_store).toEqual(r.body.episodic_store);
    await new Promise((res) => setTimeout(res, 50));
    if (before) expect(fs.statSync(episodicFile).mtimeMs).toBe(before);
    await a.close();
    agents = [];
    // Restart: the index is persisted, and the start-up scan adds a trace copied into the project meanwhile (once).
    fs.copyFileSync(path.join(p.root, 'programs', 'bumper.trace'), path.join(p.root, 'robot-1.trace'));
    fs.writeFileSync(path.join(p.root, 'robot-1.trace'), JSON.stringify({ version: 2, source: 'nowhere.sd', deterministic: true, frames: [] }));
    const b = await startAgent({ configPath: p.manifest, programPath: p.program, env: { SVC_API_KEYS_FILE: p.keys }, stateDir });
    agents.push(b);
    const after = await (async () => {
      for (let i = 0; i < 50; i++) {
        const m = await read(b, '/v1/autonomy/memory');
        if (m.body.episodic_store.length >= 3) return m;
        await new Promise((res) => setTimeout(res, 50));
      }
      return read(b, '/v1/autonomy/memory');
    })();
    const by2 = Object.fromEntries(after.body.memory.map((m: any) => [m.entity_id, m]));
    expect(by2['robot-1'].refs.episodic).toEqual(['replay:robot-1.trace']);
    expect(by2['Bumper'].refs.episodic).toEqual(['replay:programs/bumper.trace']);
    expect(after.body.episodic_store).toHaveLength(3);
  });

  it('F8: a simulation of this agent that records its trace records its reflex-layer decisions as reflex traces (source simulation), never as examples', async () => {
    const stateDir = tempDir('svc-auto-');
    const { a } = await start('', stateDir);
    const sim = await a.json('/v1/programs/simulation', op({ execute: true, record_trace: true, decision_trace: true }));
    expect(sim.status).toBe(200);
    const r = await read(a, '/v1/autonomy/reflex/traces');
    expect(r.body.source).toBe('runtime');
    expect(r.body.catalog_examples).toEqual([]);
    expect(r.body.traces).toHaveLength(1);
    expect(r.body.traces[0]).toMatchObject({ reflex_id: 'reflex.program.ShopperReflex', entity_id: 'Bumper', action_taken: 'stop_drive', priority: 150, source: 'simulation', trace_path: 'programs/bumper.trace', sim_time_ms: expect.any(Number) });
    expect(r.body.traces[0].trigger).toContain('nearest_distance');
    // The local-layer tree matched too, but it is not a reflex.
    expect(r.body.traces.some((t: any) => t.reflex_id.includes('TrolleyLineLocal'))).toBe(false);
    await a.close();
    agents = [];
    const b = (await start('', stateDir)).a;
    expect((await read(b, '/v1/autonomy/reflex/traces')).body.traces).toEqual(r.body.traces);
  });

  it('immunity also hears TamperDetected / SpoofingDetected events and the device pool trust level', async () => {
    const { a } = await start();
    const bus = a.agent.services.bus;
    bus.publish(platformEvent('SpoofingDetected', 'test', { entity_id: 'robot-1' }, 'robot-1'));
    bus.publish(platformEvent('TamperDetected', 'test', { entity_id: 'plugin-host' }, 'plugin-host'));
    const by = Object.fromEntries((await read(a, '/v1/autonomy/immunity')).body.quarantined.map((q: any) => [q.entity_id, q]));
    expect(by['robot-1']).toMatchObject({ action: 'isolate', reasons: ['Entity trust status is untrusted', 'SpoofingDetected event received'] });
    expect(by['plugin-host']).toMatchObject({ action: 'remove_from_mission', reasons: ['Entity trust is compromised', 'TamperDetected event received', 'Unsigned plugin detected'] });
  });

  it('attention: repeats of one label beyond max_repeats within the window are suppressed, the strongest kept', async () => {
    const { a } = await start('[[autonomy.attention.suppress]]\npattern = "incident:disk"\nmax_repeats = 1\nwindow_secs = 60\n');
    for (let i = 0; i < 3; i++) expect((await a.json('/v1/sre/incidents', op({ title: 'disk full', severity: 'warning' }))).status).toBe(200);
    const items = (await read(a, '/v1/autonomy/attention')).body.attention.items.filter((i: any) => i.label === 'incident:disk full');
    expect(items).toHaveLength(3);
    expect(items.map((i: any) => i.suppressed)).toEqual([false, true, true]);
    expect(items.every((i: any) => i.priority === 'urgent')).toBe(true);
  });

  it('memory: recovery events are indexed as episodes of their entity when published', async () => {
    const { a } = await start();
    a.agent.services.bus.publish(platformEvent('RecoveryCompleted', 'svc-recovery', { entity_id: 'robot-1', plan_id: 'plan-robot-1-gps_loss', strategy: 'switch_sensor' }, 'robot-1'));
    const m = (await read(a, '/v1/autonomy/memory')).body;
    const robot = m.memory.find((x: any) => x.entity_id === 'robot-1');
    expect(robot.refs.episodic).toEqual(['recovery:plan-robot-1-gps_loss']);
    expect(m.episodic_store).toContainEqual(expect.objectContaining({ artifact_kind: 'recovery', entity_id: 'robot-1', summary: 'RecoveryCompleted (switch_sensor)' }));
  });

  it('check 27 (autonomy part): the OpenAPI document lists GET and POST /v1/autonomy/maintenance/windows and every autonomy route', async () => {
    const { a } = await start();
    const doc = (await read(a, '/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/v1/autonomy/maintenance/windows']).sort()).toEqual(['get', 'post']);
    for (const p of ['reflex', 'reflex/traces', 'homeostasis', 'immunity', 'attention', 'fusion', 'memory']) expect(doc.paths[`/v1/autonomy/${p}`]?.get, p).toBeDefined();
  });

  it('program policies: declared homeostasis metrics are the ones judged (policy_source program); attention rules from the program', async () => {
    const extra = '\n@policy(kind: "homeostasis") Vitals { metric battery_pct; metric wheel_slip; }\n@policy(kind: "attention") Focus { rule suppress_low_priority; rule alert_flood; }\n';
    const { a } = await start('[autonomy.homeostasis]\nbattery_pct = { min = 20, max = 100 }\n', undefined, {}, extra);
    const h = (await read(a, '/v1/autonomy/homeostasis')).body;
    expect(h.policy_source).toBe('program');
    expect(Object.keys(h.set_points).sort()).toEqual(['battery_pct', 'wheel_slip']);
    expect(h.set_points.battery_pct).toMatchObject({ min: 20, max: 100 });
    expect(h.set_points.wheel_slip).toMatchObject({ min: 0, max: 100, warn: 0.8 });
    // Platform figures are still reported, but nothing the program did not name is judged.
    expect(h.platform.metrics.length).toBeGreaterThan(0);
    expect(h.platform.drift_signals).toEqual([]);
    expect(h.reports.find((r: any) => r.entity_id === 'robot-1').drift_signals).toContainEqual(expect.objectContaining({ metric: 'battery_pct', direction: 'below_min' }));
    const at = (await read(a, '/v1/autonomy/attention')).body;
    expect(at.policy_source).toBe('program');
    expect(at.critical_first).toBe(false);
    expect(at.suppression_rules).toEqual([
      { pattern: 'routine', max_repeats: 3, window_secs: 60 },
      { pattern: 'alert_flood', max_repeats: 5, window_secs: 120 },
    ]);
  });

  it('sensitive reads: with SVC_API_REQUIRE_AUTH_READS an anonymous autonomy GET is refused', async () => {
    const { a } = await start('', undefined, { SVC_API_REQUIRE_AUTH_READS: '1' });
    expect((await a.json('/v1/autonomy/homeostasis')).status).toBe(401);
    expect((await read(a, '/v1/autonomy/homeostasis')).status).toBe(200);
  });
});
