import type { TextForm } from './text-form.js';

interface EntityLine {
  id: string;
  kind: string;
  health_status?: string;
  readiness_status?: string;
}

/** A graph node names its kind as `entity_type`: a word, or `{custom: word}` for a custom kind. */
interface GraphNode {
  id: string;
  entity_type: string | { custom: string };
  health_status?: string;
}

const kindOf = (n: GraphNode) => (typeof n.entity_type === 'string' ? n.entity_type : n.entity_type.custom);

interface Edge {
  from_id: string;
  to_id: string;
  kind: string;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => r[c]!.length))) ?? [];
  return rows.map((r) => `  ${r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')}`.trimEnd());
}

/** `svc entity list`: a count, then one line per entity with its kind, health and readiness. */
export const entityList: TextForm<{ entities: EntityLine[]; count: number }> = {
  text: (body) => {
    const lines = [`Entities (${body.count}):`];
    if (body.entities.length > 0) {
      lines.push(...table(body.entities.map((e) => [e.id, e.kind, `health ${e.health_status ?? 'unknown'}`, `readiness ${e.readiness_status ?? 'unknown'}`])));
    }
    return lines.join('\n');
  },
};

/** `svc entity graph`: each node with its outgoing edges, then edges whose other end is missing. */
export const entityGraph: TextForm<{ graph: { nodes: GraphNode[]; edges: Edge[] }; node_count: number; edge_count: number; dangling_edges?: Edge[] }> = {
  text: (body) => {
    const lines = [`Entity graph: ${body.node_count} node(s), ${body.edge_count} edge(s)`];
    const out = new Map<string, Edge[]>();
    for (const e of body.graph.edges) out.set(e.from_id, [...(out.get(e.from_id) ?? []), e]);
    for (const n of body.graph.nodes) {
      lines.push(`  ${n.id} (${kindOf(n)}, ${n.health_status ?? 'unknown'})`);
      for (const e of out.get(n.id) ?? []) lines.push(`    ${e.kind} → ${e.to_id}`);
    }
    const dangling = body.dangling_edges ?? [];
    if (dangling.length > 0) {
      lines.push(`Dangling edges (${dangling.length}):`);
      for (const e of dangling) lines.push(`  ${e.from_id} ${e.kind} → ${e.to_id}`);
    }
    return lines.join('\n');
  },
};
