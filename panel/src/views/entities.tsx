import { useEffect, useMemo, useState } from 'preact/hooks';
import { describeError, type Session, type SvcClient } from '../api.js';
import { useLoad } from '../use-load.js';

/** A node of `GET /v1/entities/graph` (the full record); its kind comes from `GET /v1/entities`. */
interface EntityRecord {
  id: string;
  entity_type: string | { custom: string };
  display_name?: string | null;
  name?: string | null;
  health_status?: string;
  readiness_status?: string;
  trust_status?: string;
  lifecycle_state?: string;
  parent_id?: string | null;
  [key: string]: unknown;
}

interface Relationship {
  from_id: string;
  to_id: string;
  kind: string;
  label?: string | null;
}

interface Summary {
  id: string;
  kind: string;
}

/**
 * Layers of the drawing, left to right, by kind (docs/entities.md: the kinds and what contains
 * what): organisation and places, then robots and people, their compute, the devices, what the
 * devices run on. A kind not named here (including custom kinds) is drawn with the devices.
 */
const LAYER_OF: Record<string, number> = {
  organization: 0, organisation: 0, fleet: 0, swarm: 0, team: 0, facility: 0, building: 0, site: 0,
  zone: 1, robot: 1, drone: 1, vehicle: 1, human: 1, operator: 1, mission: 1,
  compute: 2, hazard: 2, task: 2, workflow: 2,
  provider: 4, capability: 4, service: 4,
  package: 5, software: 5, firmware: 5, model: 5,
};
const DEVICE_LAYER = 3;

const COL_W = 165;
const ROW_H = 30;
const PAD = 24;
const PALETTE = [
  '#2f7bd9', '#d9822f', '#3fa34d', '#b23fbf', '#c23b3b', '#1b9e9e', '#8c6d31', '#6b6ecf',
  '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#ad494a', '#637939', '#843c39',
];
/** Up to this many relationships, every edge is labelled; beyond, the selected entity's edges are (the others on hover). */
const LABEL_ALL_UP_TO = 25;

/** A colour per kind: the kind's place among the registry's kinds (sorted), so it is the same on every load and filter. */
function kindColor(kinds: readonly string[], kind: string): string {
  return PALETTE[Math.max(0, kinds.indexOf(kind)) % PALETTE.length]!;
}

function kindOf(record: EntityRecord, kinds: Map<string, string>): string {
  const known = kinds.get(record.id);
  if (known) return known;
  return typeof record.entity_type === 'string' ? record.entity_type : record.entity_type?.custom ?? 'entity';
}

interface Placed {
  id: string;
  kind: string;
  record: EntityRecord;
  x: number;
  y: number;
  context: boolean;
}

/**
 * A deterministic layered layout: one column per layer; inside a column nodes are ordered by kind,
 * then by the mean row of their neighbours already placed to the left (fewer crossings), then by id.
 */
export function layout(nodes: { id: string; kind: string; record: EntityRecord; context: boolean }[], edges: Relationship[]) {
  const layerOf = (kind: string) => LAYER_OF[kind] ?? DEVICE_LAYER;
  const used = [...new Set(nodes.map((n) => layerOf(n.kind)))].sort((a, b) => a - b);
  const column = new Map(used.map((l, i) => [l, i]));
  const neighbours = new Map<string, string[]>();
  for (const e of edges) {
    neighbours.set(e.from_id, [...(neighbours.get(e.from_id) ?? []), e.to_id]);
    neighbours.set(e.to_id, [...(neighbours.get(e.to_id) ?? []), e.from_id]);
  }
  const row = new Map<string, number>();
  const placed: Placed[] = [];
  let rows = 0;
  for (const l of used) {
    const members = nodes.filter((n) => layerOf(n.kind) === l);
    const bary = (id: string) => {
      const rs = (neighbours.get(id) ?? []).map((o) => row.get(o)).filter((r): r is number => r !== undefined);
      return rs.length ? rs.reduce((a, b) => a + b, 0) / rs.length : Number.POSITIVE_INFINITY;
    };
    const scored = members.map((n) => ({ n, b: bary(n.id) }));
    scored.sort((a, b) => a.n.kind.localeCompare(b.n.kind) || a.b - b.b || a.n.id.localeCompare(b.n.id));
    scored.forEach(({ n }, i) => {
      row.set(n.id, i);
      placed.push({ ...n, x: PAD + column.get(l)! * COL_W, y: PAD + i * ROW_H });
    });
    rows = Math.max(rows, members.length);
  }
  return { placed, width: PAD * 2 + Math.max(1, used.length) * COL_W, height: PAD * 2 + Math.max(1, rows) * ROW_H };
}

const short = (s: string, n = 21) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The entity graph (`GET /v1/entities/graph`) drawn as SVG, a kind filter, and a detail pane (docs/entities.md). */
export function Entities({ session }: { session: Session }) {
  const c = session.client;
  const graph = useLoad(async () => {
    const [g, list] = await Promise.all([c.getEntityGraph(), c.listEntities()]);
    const kinds = new Map(((list as { entities: Summary[] }).entities ?? []).map((e) => [e.id, e.kind]));
    const body = g as { graph: { nodes: EntityRecord[]; edges: Relationship[] } };
    return { nodes: body.graph.nodes, edges: body.graph.edges, kinds };
  }, 15_000);
  const [kind, setKind] = useState('');
  const [selected, setSelected] = useState<string | null>(null);

  const view = useMemo(() => {
    if (!graph.data) return null;
    const { nodes, edges, kinds } = graph.data;
    const ids = new Set(nodes.map((n) => n.id));
    const drawn = edges.filter((e) => ids.has(e.from_id) && ids.has(e.to_id));
    const all = nodes.map((record) => ({ id: record.id, kind: kindOf(record, kinds), record, context: false }));
    const allKinds = [...new Set(all.map((n) => n.kind))].sort();
    let shown = all;
    let shownEdges = drawn;
    if (kind) {
      // The kind's entities, plus their direct neighbours drawn faded, so the relations stay readable.
      const main = new Set(all.filter((n) => n.kind === kind).map((n) => n.id));
      shownEdges = drawn.filter((e) => main.has(e.from_id) || main.has(e.to_id));
      const near = new Set(shownEdges.flatMap((e) => [e.from_id, e.to_id]));
      shown = all.filter((n) => main.has(n.id) || near.has(n.id)).map((n) => ({ ...n, context: !main.has(n.id) }));
    }
    return { ...layout(shown, shownEdges), edges: shownEdges, allKinds, total: all.length };
  }, [graph.data, kind]);

  const pos = new Map(view?.placed.map((p) => [p.id, p]) ?? []);
  return (
    <section class="view" data-view="entities">
      <h2>Entities</h2>
      {graph.error && <p class="error">{graph.error}</p>}
      <div class="split entities-split">
        <div class="card">
          {view && (
            <div class="filters">
              <label>
                Kind{' '}
                <select name="entity-kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
                  <option value="">All kinds ({view.total})</option>
                  {view.allKinds.map((k) => (
                    <option key={k} value={k}>
                      {k}
                    </option>
                  ))}
                </select>
              </label>
              <span class="muted" data-testid="entity-count">
                {view.placed.filter((p) => !p.context).length} entities · {view.edges.length} relationships
              </span>
            </div>
          )}
          {view && view.placed.length === 0 && <p class="muted">No entities.</p>}
          {view && view.placed.length > 0 && (
            <div class="graph-scroll">
              <svg data-testid="entity-graph" class="entity-graph" width="100%" style={{ maxWidth: `${view.width}px` }} viewBox={`0 0 ${view.width} ${view.height}`} role="img" aria-label="Entity graph">
                <g class="edges">
                  {view.edges.map((e, i) => {
                    const a = pos.get(e.from_id);
                    const b = pos.get(e.to_id);
                    if (!a || !b) return null;
                    const hot = selected !== null && (e.from_id === selected || e.to_id === selected);
                    // Same column: bow out to the right so the edge does not run over the nodes between.
                    const bow = a.x === b.x ? 60 + Math.abs(a.y - b.y) / 4 : 0;
                    const mx = (a.x + b.x) / 2 + bow * 0.75;
                    const my = (a.y + b.y) / 2;
                    const d = a.x === b.x ? `M${a.x},${a.y} C${a.x + bow},${a.y} ${b.x + bow},${b.y} ${b.x},${b.y}` : `M${a.x},${a.y} C${mx},${a.y} ${mx},${b.y} ${b.x},${b.y}`;
                    return (
                      <g key={i} class={hot ? 'edge hot' : 'edge'} data-edge={`${e.from_id}|${e.kind}|${e.to_id}`}>
                        <title>{`${e.from_id} ${e.kind} ${e.to_id}${e.label ? ` (${e.label})` : ''}`}</title>
                        <path d={d} />
                        {(hot || view.edges.length <= LABEL_ALL_UP_TO) && (
                          <text x={mx} y={my - 2} text-anchor="middle">
                            {e.kind}
                          </text>
                        )}
                      </g>
                    );
                  })}
                </g>
                <g class="nodes">
                  {view.placed.map((p) => (
                    <g
                      key={p.id}
                      class={`node health-${p.record.health_status ?? 'unknown'}${p.id === selected ? ' selected' : ''}${p.context ? ' context' : ''}`}
                      data-entity={p.id}
                      data-kind={p.kind}
                      data-context={p.context ? '1' : undefined}
                      transform={`translate(${p.x},${p.y})`}
                      onClick={() => setSelected(p.id)}
                    >
                      <title>{`${p.id} (${p.kind}) · health ${p.record.health_status ?? 'unknown'} · readiness ${p.record.readiness_status ?? 'unknown'}`}</title>
                      <circle r={8} fill={kindColor(view.allKinds, p.kind)} />
                      <text x={13} y={4}>
                        {short(p.id)}
                      </text>
                    </g>
                  ))}
                </g>
              </svg>
            </div>
          )}
          {view && (
            <p class="legend muted">
              {view.allKinds.map((k) => (
                <span key={k}>
                  <i style={{ background: kindColor(view.allKinds, k) }} /> {k}
                </span>
              ))}
              <span>· ring: health (green healthy, amber degraded/unknown, red critical/offline) · edge labels: select an entity{view.edges.length <= LABEL_ALL_UP_TO ? '' : ', or hover an edge'}</span>
            </p>
          )}
        </div>
        {selected && <EntityDetail key={selected} client={c} id={selected} onSelect={setSelected} />}
      </div>
    </section>
  );
}

interface Detail {
  entity: EntityRecord | null;
  health: { health_status: string; report?: { diagnostics?: { severity?: string; message?: string; code?: string }[]; metrics?: Record<string, number> } } | null;
  readiness: { readiness_status: string; mission_ready?: boolean; report?: { score?: number; issues?: unknown[] } } | null;
  relationships: { relationships: Relationship[]; impact?: string[] } | null;
  errors: string[];
}

/** One entity: its record, health, readiness and relationships (each read on its own; a failed one says so). */
function EntityDetail({ client, id, onSelect }: { client: SvcClient; id: string; onSelect: (id: string) => void }) {
  const [detail, setDetail] = useState<Detail | null>(null);
  useEffect(() => {
    let live = true;
    void Promise.allSettled([client.getEntity(id), client.getEntityHealth(id), client.getEntityReadiness(id), client.getEntityRelationships(id)]).then(
      ([entity, health, readiness, relationships]) => {
        if (!live) return;
        const value = <T,>(r: PromiseSettledResult<unknown>): T | null => (r.status === 'fulfilled' ? (r.value as T) : null);
        setDetail({
          entity: value<{ entity: EntityRecord }>(entity)?.entity ?? null,
          health: value(health),
          readiness: value(readiness),
          relationships: value(relationships),
          errors: [entity, health, readiness, relationships].flatMap((r) => (r.status === 'rejected' ? [describeError(r.reason)] : [])),
        });
      },
    );
    return () => {
      live = false;
    };
  }, [client, id]);

  const e = detail?.entity;
  const rels = detail?.relationships?.relationships ?? [];
  return (
    <div class="card detail" data-testid="entity-detail" data-entity={id}>
      <h3>{id}</h3>
      {!detail && <p class="muted">Loading…</p>}
      {detail?.errors.map((m) => (
        <p key={m} class="error">
          {m}
        </p>
      ))}
      {e && (
        <dl>
          <dt>Type</dt>
          <dd>{typeof e.entity_type === 'string' ? e.entity_type : e.entity_type.custom}</dd>
          {e.display_name && (
            <>
              <dt>Name</dt>
              <dd>{e.display_name}</dd>
            </>
          )}
          <dt>Lifecycle</dt>
          <dd>{e.lifecycle_state ?? '—'}</dd>
          <dt>Health</dt>
          <dd>
            <span data-testid="entity-health" class={`status status-${detail?.health?.health_status ?? e.health_status}`}>
              {detail?.health?.health_status ?? e.health_status ?? '—'}
            </span>
          </dd>
          <dt>Readiness</dt>
          <dd>
            <span data-testid="entity-readiness">{detail?.readiness?.readiness_status ?? e.readiness_status ?? '—'}</span>
            {detail?.readiness?.mission_ready !== undefined && ` · mission ready: ${detail.readiness.mission_ready ? 'yes' : 'no'}`}
            {typeof detail?.readiness?.report?.score === 'number' && ` · score ${detail.readiness.report.score}`}
          </dd>
          <dt>Trust</dt>
          <dd>{e.trust_status ?? '—'}</dd>
          {e.parent_id && (
            <>
              <dt>Parent</dt>
              <dd>
                <button class="link" onClick={() => onSelect(e.parent_id!)}>
                  {e.parent_id}
                </button>
              </dd>
            </>
          )}
        </dl>
      )}
      {detail?.health?.report?.diagnostics && detail.health.report.diagnostics.length > 0 && (
        <>
          <h4>Diagnostics</h4>
          <ul class="plain">
            {detail.health.report.diagnostics.map((d, i) => (
              <li key={i}>
                <span class={`sev sev-${d.severity ?? 'info'}`}>{d.severity ?? 'info'}</span> {d.message ?? d.code ?? JSON.stringify(d)}
              </li>
            ))}
          </ul>
        </>
      )}
      {detail?.readiness?.report?.issues && detail.readiness.report.issues.length > 0 && (
        <>
          <h4>Readiness issues</h4>
          <ul class="plain">
            {detail.readiness.report.issues.map((issue, i) => (
              <li key={i}>{typeof issue === 'string' ? issue : JSON.stringify(issue)}</li>
            ))}
          </ul>
        </>
      )}
      {detail && (
        <>
          <h4>Relationships ({rels.length})</h4>
          {rels.length === 0 && <p class="muted">None.</p>}
          <ul class="plain" data-testid="entity-relationships">
            {rels.map((r, i) => {
              const other = r.from_id === id ? r.to_id : r.from_id;
              return (
                <li key={i} data-relationship={`${r.from_id}|${r.kind}|${r.to_id}`}>
                  {r.from_id === id ? (
                    <>
                      <span class="muted">{r.kind} →</span>{' '}
                    </>
                  ) : null}
                  <button class="link" onClick={() => onSelect(other)}>
                    {other}
                  </button>
                  {r.from_id !== id ? <span class="muted"> {r.kind} → this</span> : null}
                  {r.label ? <span class="muted"> ({r.label})</span> : null}
                </li>
              );
            })}
          </ul>
          {detail.relationships?.impact && detail.relationships.impact.length > 0 && (
            <p class="muted">Its failure impacts {detail.relationships.impact.length} entities.</p>
          )}
        </>
      )}
    </div>
  );
}
