import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { REPO_ROOT, SVC_BIN } from '../helpers/spawn-agent.js';

/**
 * Commands with a text form (agent/cli/text-forms) print a person's view, `--json` the REST body,
 * and exit like the program commands (docs/program-language.md §29).
 */
function svc(args: string[]) {
  const r = spawnSync(process.execPath, [SVC_BIN, ...args], {
    cwd: REPO_ROOT,
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
