import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { REPO_ROOT, SVC_BIN } from '../helpers/spawn-agent.js';

/**
 * Commands with a text form (agent/cli/text-forms) print a person's view, `--json` the REST body,
 * and exit like the program commands (docs/program-language.md §29).
 */
function svc(args: string[], cwd = REPO_ROOT) {
  const r = spawnSync(process.execPath, [SVC_BIN, ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', SVC_CONTROL_CENTER_STATE_DIR: tempDir() },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const PROJECT = ['--config', 'demo/svc.toml', '--program', 'demo/programs/patrol.sd'];

describe('text forms of operation commands', () => {
  it('svc entity list: a count, then one line per entity with kind, health and readiness; --json is the REST body', () => {
    const json = svc(['entity', 'list', '--json', ...PROJECT]);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as { count: number; entities: Array<{ id: string; kind: string; health_status: string; readiness_status: string }> };
    expect(body.count).toBeGreaterThan(3);

    const text = svc(['entity', 'list', ...PROJECT]);
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Entities (${body.count}):`);
    expect(lines).toHaveLength(body.count + 1);
    for (const [i, e] of body.entities.entries()) {
      expect(lines[i + 1]).toMatch(new RegExp(`^  ${e.id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+${e.kind}\\s+health ${e.health_status}\\s+readiness ${e.readiness_status}$`));
    }
    // The plural words of the operation table still work.
    expect(svc(['entities', 'list', ...PROJECT]).stdout).toBe(text.stdout);
  });

  it('svc entity graph: node and edge counts, each node with its outgoing edges', () => {
    const body = JSON.parse(svc(['entity', 'graph', '--json', ...PROJECT]).stdout) as { node_count: number; edge_count: number; graph: { edges: Array<{ from_id: string; to_id: string; kind: string }> } };
    const text = svc(['entity', 'graph', ...PROJECT]);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(`Entity graph: ${body.node_count} node(s), ${body.edge_count} edge(s)`);
    const edge = body.graph.edges[0]!;
    expect(text.stdout).toContain(`    ${edge.kind} → ${edge.to_id}`);
    const node = (body as unknown as { graph: { nodes: Array<{ id: string; entity_type: string; health_status: string }> } }).graph.nodes[0]!;
    expect(text.stdout).toContain(`  ${node.id} (${node.entity_type}, ${node.health_status})`);
  });

  it('a bad request is one readable line and exit 2', () => {
    const r = svc(['entity', 'list', 'extra-argument', ...PROJECT]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^svc: expected no arguments after 'entities list'/);
  });
});

/** The demo project with extra configuration in its site layer (the root manifest's own data tables are not merged). */
function demoWith(extraToml: string): string {
  const root = tempDir('svc-cli-demo-');
  fs.cpSync(path.join(REPO_ROOT, 'demo'), root, { recursive: true });
  fs.appendFileSync(path.join(root, 'layers', 'site.toml'), `\n${extraToml}\n`);
  return root;
}

describe('CLI twins of issue 13', () => {
  it('svc recovery plan FILE --failure KIND --entity ID: plans and decisions as text, --json the REST body, exit by report.passed', () => {
    const args = ['recovery', 'plan', 'demo/programs/patrol.sd', '--failure', 'gps_loss', '--entity', 'Dockhand', '--config', 'demo/svc.toml'];
    const json = svc([...args, '--json']);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body.report.plans.map((p: { plan_id: string }) => p.plan_id)).toEqual(['plan-Dockhand-gps_loss']);
    const text = svc(args);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n').slice(0, 3)).toEqual([
      'Recovery plan: 1 plan(s), passed: yes',
      '  plan-Dockhand-gps_loss: SensorFailure, level3_recover_device, risk Low',
      '    strategies: switch_sensor',
    ]);
    // The FILE is the local user's path; a missing one is one readable line and exit 2.
    const missing = svc(['recovery', 'plan', 'demo/programs/nope.sd', '--failure', 'gps_loss', '--config', 'demo/svc.toml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^svc: program not found: /);
  });

  it('svc recovery explain: the decision with its reasons', () => {
    const r = svc(['recovery', 'explain', 'demo/programs/patrol.sd', '--failure', 'gps_loss', '--entity', 'Dockhand', '--config', 'demo/svc.toml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Recovery decision for Dockhand on 'gps_loss': switch_sensor \(level3_recover_device\)\n/);
    expect(r.stdout).toContain("  * Failure 'gps_loss' warrants recovery action");
  });

  it('svc decision list FILE: trees by layer with their branches, local authorities, offline policies', () => {
    const r = svc(['decision', 'list', 'examples/ward-courier/programs/med_courier.sd']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Decision trees (3):\n  CorridorReflex [reflex] v1.0.0\n    if lidar . nearest_distance < 0.92m → slow_to 0.2m/s, sound_chime');
    expect(r.stdout).toContain('  CourierOffline: at most 15 min; allowed finish_delivery, return_to_pharmacy, hold_position; forbidden accept_new_order, ride_lift');
  });

  it('svc reflex list: every reflex, one per line, with the count', () => {
    const json = JSON.parse(svc(['reflex', 'list', '--json', ...PROJECT]).stdout) as { reflexes: Array<{ id: string; priority: number }> };
    const r = svc(['reflex', 'list', ...PROJECT]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Reflexes (${json.reflexes.length}):`);
    expect(lines[1]).toMatch(new RegExp(`^  ${json.reflexes[0]!.id.replace('.', '\\.')}\\s+priority ${json.reflexes[0]!.priority}\\s`));
  });

  it('svc homeostasis check: exit 0 when every figure is inside its set points, 1 with the deviation shown when not', () => {
    const loose = demoWith(['[autonomy.homeostasis]', 'cpu_pct = { min = 0, max = 100000 }', 'load_per_cpu = { min = 0, max = 100000 }', 'event_loop_lag_ms = { min = 0, max = 100000 }', 'memory_pct = { min = 0, max = 100 }', 'host_memory_pct = { min = 0, max = 100 }'].join('\n'));
    const ok = svc(['homeostasis', 'check', '--config', 'svc.toml', '--program', 'programs/patrol.sd'], loose);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^Homeostasis: 0 of \d+ out of their set points \(set points: config\)\n  platform: stable\n/);

    // This process always holds more than a millionth of the host's memory.
    const tight = demoWith('[autonomy.homeostasis]\nmemory_pct = { min = 0, max = 0.000001 }');
    const bad = svc(['homeostasis', 'check', '--config', 'svc.toml', '--program', 'programs/patrol.sd'], tight);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('  platform: UNSTABLE\n    memory_pct = ');
    expect(bad.stdout).toContain('above max');
  });
});
