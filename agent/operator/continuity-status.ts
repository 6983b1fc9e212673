import path from 'node:path';
import { API_VERSION } from '../../api/versions.js';
import type { DeviceRecord } from '../devices/device-registry.js';
import type { MissionState } from '../entities/mission-state.js';
import { missionId } from '../entities/sources.js';
import { evaluateContinuity, type ContinuityVerdict, type MatchedPolicy } from '../programs/analysis/continuity.js';
import { loadProgram } from '../programs/program-files.js';
import type { StoredFleetAgent } from './fleet-agents.js';

/**
 * Fleet continuity (docs/operator.md § Fleet continuity): which robots of the program are down, and
 * for each, which robot takes over its missions under which continuity rule. The declarations are
 * the program's (`continuity_policy`, robots' capabilities and missions, evaluated by the same
 * analysis as `POST /v1/programs/continuity`, docs/program-language.md §30); the live part is each
 * robot's fleet agent (`GET <agent>/v1/status`), else its devices in the pool, and each mission's
 * state in the entity registry. This module loads the program parser, so it is imported lazily.
 */

export type RobotLiveState = 'up' | 'down' | 'unknown';

export interface RobotLive {
  robot: string;
  state: RobotLiveState;
  /** Where the state comes from. */
  source: 'fleet_agent' | 'device_pool' | 'none';
  reason: string;
  agent_url: string | null;
  missions: MissionLive[];
}

export interface MissionLive {
  entity_id: string;
  name: string;
  mission_state: MissionState;
}

/** What a down robot's missions become. */
export type HandoffStatus = 'taken_over' | 'handoff_unconfirmed' | 'no_takeover_robot' | 'uncovered' | 'complete';

export interface Handoff {
  failed_robot: string;
  trigger: string;
  progress_pct: number;
  missions: MissionLive[];
  verdict: ContinuityVerdict;
  status: HandoffStatus;
  covered: boolean;
  policies: MatchedPolicy[];
  takeover_robot: string | null;
  takeover_state: RobotLiveState | null;
  explanation: string[];
}

export interface ContinuityInputs {
  programPath: string | null;
  agents: StoredFleetAgent[];
  devices: DeviceRecord[];
  missions: Array<{ id: string; name: string; mission_state: MissionState }>;
  /** `GET <url>/v1/status` through the outbound client; throws when the agent cannot be reached. */
  probe: (agent: StoredFleetAgent) => Promise<unknown>;
  /** Evaluate every down robot under this trigger instead of the one its live state suggests. */
  trigger?: string | undefined;
  nowMs?: number;
}

/** Missions that need no hand-over: done, or stopped by an operator. */
const SETTLED: ReadonlySet<MissionState> = new Set(['completed', 'cancelled']);

/** The trigger a live failure stands for, matched against `continuity_policy` rules like any trigger. */
const TRIGGER_OF: Record<string, string> = { unreachable: 'robot.unreachable', unhealthy: 'robot.unhealthy', offline: 'robot.offline' };

async function liveStateOf(robot: string, inputs: ContinuityInputs): Promise<{ state: RobotLiveState; source: RobotLive['source']; reason: string; kind: string | null; agent_url: string | null }> {
  const agent = inputs.agents.find((a) => a.robot_name === robot);
  if (agent) {
    try {
      const status = await inputs.probe(agent);
      const healthy = status && typeof status === 'object' ? (status as { healthy?: unknown }).healthy : undefined;
      if (healthy === false) return { state: 'down', source: 'fleet_agent', reason: 'its fleet agent reports healthy: false', kind: 'unhealthy', agent_url: agent.url };
      return { state: 'up', source: 'fleet_agent', reason: 'its fleet agent answers GET /v1/status', kind: null, agent_url: agent.url };
    } catch (err) {
      return { state: 'down', source: 'fleet_agent', reason: `its fleet agent is unreachable: ${(err as Error).message}`, kind: 'unreachable', agent_url: agent.url };
    }
  }
  const devices = inputs.devices.filter((d) => (d.assigned_robot ?? d.robot_id) === robot);
  if (devices.length === 0) return { state: 'unknown', source: 'none', reason: 'no fleet agent registered and no device of the robot in the pool', kind: null, agent_url: null };
  const down = devices.filter((d) => d.health_status === 'offline' || d.lifecycle_state === 'failed' || d.lifecycle_state === 'retired');
  if (down.length === devices.length) {
    return { state: 'down', source: 'device_pool', reason: `every device of the robot is offline or failed (${down.map((d) => d.id).join(', ')})`, kind: 'offline', agent_url: null };
  }
  return { state: 'up', source: 'device_pool', reason: `${devices.length - down.length} of its ${devices.length} device(s) are in service`, kind: null, agent_url: null };
}

function handoffStatus(verdict: ContinuityVerdict, takeoverState: RobotLiveState | null): HandoffStatus {
  switch (verdict) {
    case 'handoff':
      return takeoverState === 'up' ? 'taken_over' : 'handoff_unconfirmed';
    case 'policy_only':
      return 'no_takeover_robot';
    case 'complete':
      return 'complete';
    default:
      return 'uncovered';
  }
}

export async function continuityStatus(inputs: ContinuityInputs) {
  const checkedAt = new Date(inputs.nowMs ?? Date.now()).toISOString();
  if (!inputs.programPath) {
    return {
      version: API_VERSION,
      program: null,
      checked_at: checkedAt,
      status: 'no_program' as const,
      note: 'no program loaded (svc serve --program FILE): continuity declarations come from the program',
      robots: [] as RobotLive[],
      handoffs: [] as Handoff[],
      summary: { robots: 0, up: 0, down: 0, unknown: 0, handoffs: 0, taken_over: 0, uncovered: 0 },
    };
  }
  const program = loadProgram(inputs.programPath);
  const missionState = new Map(inputs.missions.map((m) => [m.id, m]));

  const robots: Array<RobotLive & { kind: string | null }> = await Promise.all(
    program.robots.map(async (r) => {
      const live = await liveStateOf(r.name, inputs);
      const missions = r.missions.map((m) => {
        const id = missionId(r.name, m.name);
        const known = missionState.get(id);
        return { entity_id: id, name: m.name ?? 'mission', mission_state: known?.mission_state ?? ('Pending' as MissionState) };
      });
      return { robot: r.name, ...live, missions };
    }),
  );
  const down = new Set(robots.filter((r) => r.state === 'down').map((r) => r.robot));
  const stateOf = new Map(robots.map((r) => [r.robot, r.state]));

  const handoffs: Handoff[] = robots
    .filter((r) => r.state === 'down')
    .map((r) => {
      const trigger = inputs.trigger ?? TRIGGER_OF[r.kind ?? ''] ?? 'robot.failed';
      const settled = r.missions.filter((m) => SETTLED.has(m.mission_state)).length;
      const progress = r.missions.length === 0 ? 0 : Math.round((settled / r.missions.length) * 10000) / 100;
      // A robot that is down itself cannot take over: evaluate among the failed one and the rest.
      const alive = { ...program, robots: program.robots.filter((x) => x.name === r.robot || !down.has(x.name)) };
      const report = evaluateContinuity(alive, { failed: r.robot, progress, trigger });
      const takeover = report.takeover?.robot ?? null;
      const takeoverState = takeover ? (stateOf.get(takeover) ?? 'unknown') : null;
      const explanation = [`${r.robot} is down: ${r.reason}`, ...report.explanation];
      if (takeover && takeoverState !== 'up') explanation.push(`${takeover}'s own state is ${takeoverState}: the hand-over is not confirmed`);
      return {
        failed_robot: r.robot,
        trigger,
        progress_pct: progress,
        missions: r.missions.filter((m) => !SETTLED.has(m.mission_state)),
        verdict: report.verdict,
        status: handoffStatus(report.verdict, takeoverState),
        covered: report.covered,
        policies: report.policies,
        takeover_robot: takeover,
        takeover_state: takeoverState,
        explanation,
      };
    });

  const count = (s: RobotLiveState) => robots.filter((r) => r.state === s).length;
  const settledHandoffs = handoffs.filter((h) => h.status === 'taken_over' || h.status === 'complete').length;
  return {
    version: API_VERSION,
    program: path.basename(inputs.programPath),
    checked_at: checkedAt,
    // nominal: nobody is down; covered: every down robot's missions are taken over (or finished); degraded otherwise.
    status: handoffs.length === 0 ? ('nominal' as const) : settledHandoffs === handoffs.length ? ('covered' as const) : ('degraded' as const),
    continuity_policies: program.continuityPolicies.map((p) => p.name),
    robots: robots.map(({ kind: _kind, ...r }) => r),
    handoffs,
    summary: {
      robots: robots.length,
      up: count('up'),
      down: count('down'),
      unknown: count('unknown'),
      handoffs: handoffs.length,
      taken_over: handoffs.filter((h) => h.status === 'taken_over').length,
      uncovered: handoffs.filter((h) => h.status === 'uncovered').length,
    },
  };
}
