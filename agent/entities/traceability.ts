import type { EntityGraph } from './graph.js';
import type { Entity } from './model.js';
import { packageId, providerId } from './sources.js';
import { isDevice, type StatusEvaluator } from './status.js';

const MOBILE_KINDS: ReadonlySet<string> = new Set(['robot', 'drone', 'vehicle', 'swarm', 'ai_agent']);

export interface TraceRow {
  mission_id: string | null;
  robot_id: string;
  capability: string;
  provided_by: string[];
  providers: string[];
  packages: string[];
  satisfied: boolean;
}

/**
 * Unified traceability: mission → robot → capability → the devices and sensors that provide it →
 * their providers → the packages those need. A capability the robot claims that nothing under it
 * provides is a row with `satisfied: false`.
 */
export function traceability(graph: EntityGraph, status: StatusEvaluator, filter: { entityId?: string | undefined }) {
  const rows: TraceRow[] = [];
  const robots = graph.list().filter((e) => MOBILE_KINDS.has(e.kind));
  for (const robot of robots) {
    const parts = collectParts(status, robot);
    const capabilities = [...new Set([...robot.capabilities, ...parts.flatMap((p) => p.capabilities)])].sort();
    const missions = graph.targetsOf(robot.id, 'participates_in');
    for (const mission of missions.length ? missions : [null]) {
      for (const capability of capabilities) {
        const providing = parts.filter((p) => p.capabilities.includes(capability));
        const providers = [...new Set(providing.map((p) => p.provider).filter((x): x is string => Boolean(x)))].sort();
        const packages = [...new Set(providing.map((p) => p.package ?? packageOfProvider(graph, p.provider)).filter((x): x is string => Boolean(x)))].sort();
        rows.push({ mission_id: mission, robot_id: robot.id, capability, provided_by: providing.map((p) => p.id).sort(), providers, packages, satisfied: providing.length > 0 });
      }
    }
  }
  const wanted = filter.entityId;
  const selected = wanted
    ? rows.filter((r) => r.robot_id === wanted || r.mission_id === wanted || r.provided_by.includes(wanted) || r.providers.some((p) => providerId(p) === wanted) || r.packages.some((p) => packageId(p) === wanted))
    : rows;
  const devices = graph.list().filter(isDevice);
  const missions = graph.list().filter((e) => e.kind === 'mission');
  return {
    rows: selected,
    count: selected.length,
    summary: {
      robots: robots.length,
      missions: missions.length,
      capabilities: new Set(selected.map((r) => r.capability)).size,
      satisfied: selected.filter((r) => r.satisfied).length,
      unsatisfied: selected.filter((r) => !r.satisfied).length,
    },
    unassigned_devices: devices.filter((d) => graph.targetsOf(d.id, 'assigned_to').length === 0).map((d) => d.id),
    missions_without_robots: missions.filter((m) => graph.sourcesOf(m.id, 'participates_in').length === 0).map((m) => m.id),
  };
}

function collectParts(status: StatusEvaluator, robot: Entity): Entity[] {
  const out = new Map<string, Entity>();
  const walk = (id: string) => {
    for (const m of status.members(id)) {
      if (out.has(m.id) || m.id === robot.id) continue;
      out.set(m.id, m);
      walk(m.id);
    }
  };
  walk(robot.id);
  return [...out.values()];
}

function packageOfProvider(graph: EntityGraph, provider: string | undefined): string | undefined {
  return provider ? graph.get(providerId(provider))?.package : undefined;
}
