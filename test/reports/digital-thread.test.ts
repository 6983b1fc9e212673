import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { reportsProject, startReportsAgent } from './fixture.js';

const PHASES = ['requirement', 'design', 'deploy', 'operate', 'retire'];

describe('GET /v1/digital-thread/query', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    a = await startReportsAgent(reportsProject({ robots: 3 }));
  });
  afterAll(() => a.close());

  const thread = async (query = '') => {
    const r = await a.json(`/v1/digital-thread/query${query}`);
    expect(r.status).toBe(200);
    expect(r.body.version).toBe('v1');
    return r.body.digital_thread;
  };
  const phaseOf = (t: any) => new Map<string, string>(t.lifecycle_rows.map((r: any) => [r.node_id, r.phase]));

  it('without a program answers 400', async () => {
    const bare = await startAgent();
    try {
      const r = await bare.json('/v1/digital-thread/query');
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('no program loaded; use control-center serve --program <file.sd>');
    } finally {
      await bare.close();
    }
  });

  it('builds the whole graph, device links and lifecycle without filters', async () => {
    const t = await thread();
    expect(t.source).toBe('fleet.sd');
    expect(t.query).toEqual({ capability: null, device_id: null, node_id: null, lifecycle_phase: null, phase_path: null });
    const ids = t.graph.nodes.map((n: any) => n.id);
    for (const id of ['robot:scout1', 'mission:patrol1', 'capability:gps_navigation', 'hardware:fieldrover', 'sensor:lidar1', 'actuator:drive1', 'safety:kill_switch', 'package:positioning.gps', 'provider:positioning', 'provider:gps_nmea']) {
      expect(ids).toContain(id);
    }
    // Graph nodes are sorted by id; the injected registry devices follow them.
    const graphIds = ids.filter((id: string) => !id.startsWith('device:'));
    expect(graphIds).toEqual([...graphIds].sort());
    expect(ids.filter((id: string) => id.startsWith('device:')).sort()).toEqual(['device:old-cam', 'device:scout-gps', 'device:scout-lidar']);
    expect(t.graph.edges).toContainEqual({ from: 'robot:scout1', to: 'mission:patrol1', relation: 'runs' });
    expect(t.graph.edges).toContainEqual({ from: 'mission:patrol1', to: 'capability:gps_navigation', relation: 'requires' });
    expect(t.graph.edges).toContainEqual({ from: 'package:positioning.gps', to: 'provider:positioning', relation: 'provided_by' });
    expect(t.graph.edges).toContainEqual({ from: 'robot:scout2', to: 'hardware:fieldrover', relation: 'deploy_to' });
    expect(t.graph.edges).toContainEqual({ from: 'robot:scout3', to: 'safety:kill_switch', relation: 'kill_switch' });
    expect(t.graph.edges).toContainEqual({ from: 'robot:scout1', to: 'device:scout-gps', relation: 'device_overlay' });
    expect(t.graph.edges.some((e: any) => e.from === e.to)).toBe(false);
    // Device links: the GPS relates to the capabilities of Scout1 (its robot) and of GPS hardware rows.
    const gps = t.device_links.find((l: any) => l.device_id === 'scout-gps');
    expect(gps).toMatchObject({ device_type: 'gps', assigned_robot: 'Scout1', lifecycle_state: 'active' });
    expect(gps.related_capabilities).toContain('gps_navigation');
    // Lifecycle: phases by kind; the retired camera retires Scout3's nodes only (ours), not Scout1/Scout2.
    const phase = phaseOf(t);
    expect(phase.get('mission:patrol1')).toBe('requirement');
    expect(phase.get('capability:gps_navigation')).toBe('design');
    expect(phase.get('robot:scout1')).toBe('deploy');
    expect(phase.get('package:positioning.gps')).toBe('operate');
    expect(phase.get('device:scout-gps')).toBe('operate');
    expect(phase.get('device:old-cam')).toBe('retire');
    expect(phase.get('robot:scout3')).toBe('retire');
    expect(phase.get('safety:scout3')).toBe('retire');
    expect(phase.get('mission:patrol3')).toBe('requirement');
    expect(phase.get('safety:scout1')).toBe('design');
    expect(phase.get('robot:scout2')).toBe('deploy');
    expect(phase.get('hardware:fieldrover')).toBe('deploy');
    expect(t.lifecycle_rows.find((r: any) => r.node_id === 'device:old-cam').kind).toBe('device');
    // Lifecycle edges run from the lower to the higher phase and are sorted by phase_from.
    for (const e of t.lifecycle_edges) expect(PHASES.indexOf(e.phase_from)).toBeLessThan(PHASES.indexOf(e.phase_to));
    const order = t.lifecycle_edges.map((e: any) => PHASES.indexOf(e.phase_from));
    expect(order).toEqual([...order].sort((x: number, y: number) => x - y));
    expect(t.lifecycle_edges.some((e: any) => e.relation === 'lifecycle_chain')).toBe(true);
    expect(t.lifecycle_edges).toContainEqual(expect.objectContaining({ from: 'robot:scout1', to: 'device:scout-gps', relation: 'device_overlay' }));
    const total = Object.values(t.lifecycle_summary).reduce((s: number, n: any) => s + n, 0);
    expect(total).toBe(t.lifecycle_rows.length);
    expect(t.matched_node_count).toBe(t.graph.nodes.length);
    expect(t.matched_edge_count).toBe(t.graph.edges.length);
    expect(t.phase_path_nodes).toBeUndefined();
    expect(t.chain_summary[0]).toBe(`Digital thread query: ${JSON.stringify(t.query)}`);
    expect(t.chain_summary[1]).toBe(`Matched ${t.matched_node_count} nodes, ${t.matched_edge_count} edges, ${t.lifecycle_edges.length} lifecycle edges`);
  });

  it('F29: lifecycle_phase=design keeps design nodes only', async () => {
    const t = await thread('?lifecycle_phase=design');
    expect(t.graph.nodes.length).toBeGreaterThan(0);
    const rows = new Map<string, any[]>();
    for (const r of t.lifecycle_rows) rows.set(r.node_id, [...(rows.get(r.node_id) ?? []), r]);
    for (const n of t.graph.nodes) expect(rows.get(n.id)?.some((r) => r.phase === 'design')).toBe(true);
    expect(t.lifecycle_rows.every((r: any) => r.phase === 'design')).toBe(true);
    expect(t.chain_summary[2]).toBe('Lifecycle phase filter: design');
    expect(t.lifecycle_summary).toEqual({ design: t.lifecycle_rows.length });
    expect(t.graph.nodes.some((n: any) => n.id.startsWith('device:'))).toBe(false);
    // Aliases parse too.
    const ops = await thread('?lifecycle_phase=Operations');
    expect(ops.lifecycle_rows.length).toBeGreaterThan(0);
    expect(ops.lifecycle_rows.every((r: any) => r.phase === 'operate')).toBe(true);
  });

  it('an unrecognised phase switches to filtered mode and matches nothing (kept quirk)', async () => {
    const t = await thread('?lifecycle_phase=someday');
    expect(t.graph.nodes).toEqual([]);
    expect(t.graph.edges).toEqual([]);
    expect(t.lifecycle_rows).toEqual([]);
    expect(t.matched_node_count).toBe(0);
    expect(t.chain_summary[1]).toBe('Matched 0 nodes, 0 edges, 0 lifecycle edges');
    expect(t.chain_summary[2]).toBe('Lifecycle phase filter: someday');
    // An empty node_id is filtered mode too: no program node matches (registry devices are still listed).
    const empty = await thread('?node_id=');
    expect(empty.graph.nodes.filter((n: any) => !n.id.startsWith('device:'))).toEqual([]);
  });

  it('device_id seeds the device, its robot and related capabilities', async () => {
    const t = await thread('?device_id=scout-gps');
    const ids = t.graph.nodes.map((n: any) => n.id);
    expect(ids).toContain('device:scout-gps');
    expect(ids).toContain('robot:scout1');
    expect(ids).toContain('capability:gps_navigation');
    expect(ids).not.toContain('device:old-cam');
    const device = t.graph.nodes.find((n: any) => n.id === 'device:scout-gps');
    expect(device).toEqual({ id: 'device:scout-gps', label: 'scout-gps', kind: 'hardware', metadata: { device_type: 'gps', lifecycle_state: 'active' } });
    expect(t.graph.edges).toContainEqual({ from: 'robot:scout1', to: 'device:scout-gps', relation: 'device_overlay' });
    expect(t.chain_summary.at(-1)).toMatch(/^Device scout-gps \(gps\) → capabilities: .*gps_navigation/);
    for (const e of t.graph.edges) {
      expect(ids).toContain(e.from);
      expect(ids).toContain(e.to);
    }
  });

  it('node_id seeds one node and its undirected closure', async () => {
    const t = await thread('?node_id=actuator:drive2');
    const ids = t.graph.nodes.map((n: any) => n.id);
    expect(ids).toContain('actuator:drive2');
    expect(ids).toContain('robot:scout2');
    expect(t.query.node_id).toBe('actuator:drive2');
    expect(t.lifecycle_rows.every((r: any) => ids.includes(r.node_id))).toBe(true);
  });

  it('capability filters rows and seeds the capability node', async () => {
    const t = await thread('?capability=gps_navigation');
    expect(t.graph.nodes.map((n: any) => n.id)).toContain('capability:gps_navigation');
    expect(t.capability_rows.length).toBeGreaterThan(0);
    expect(t.capability_rows.every((r: any) => r.capability === 'gps_navigation')).toBe(true);
  });

  it('phase_path design->operate keeps design, deploy and operate only', async () => {
    for (const path of ['design->operate', encodeURIComponent('design→operate'), 'design,deploy,operate']) {
      const t = await thread(`?phase_path=${path}`);
      const phase = phaseOf(t);
      const seen = new Set(t.graph.nodes.map((n: any) => phase.get(n.id)));
      expect([...seen].sort()).toEqual(['deploy', 'design', 'operate']);
      expect(t.lifecycle_rows.every((r: any) => ['design', 'deploy', 'operate'].includes(r.phase))).toBe(true);
      for (const e of t.lifecycle_edges) {
        expect(['design', 'deploy', 'operate']).toContain(e.phase_from);
        expect(['design', 'deploy', 'operate']).toContain(e.phase_to);
      }
      expect(t.chain_summary).toContain('Phase path: design → deploy → operate');
      expect(t.phase_path_nodes.length).toBe(t.lifecycle_rows.length);
      expect(t.graph.nodes.some((n: any) => n.id === 'mission:patrol1')).toBe(false);
      expect(t.graph.nodes.some((n: any) => n.id === 'device:old-cam')).toBe(false);
    }
    const bad = await thread('?phase_path=design->later');
    expect(bad.phase_path_nodes).toBeUndefined();
    expect(bad.matched_node_count).toBe((await thread()).matched_node_count);
  });

  it('lists every query parameter in the OpenAPI document', async () => {
    const doc = (await a.json('/v1/openapi.json')).body;
    const op = doc.paths['/v1/digital-thread/query'].get;
    expect(op.operationId).toBe('queryDigitalThread');
    expect(op.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name).sort()).toEqual(['capability', 'device_id', 'lifecycle_phase', 'node_id', 'phase_path']);
  });
});
