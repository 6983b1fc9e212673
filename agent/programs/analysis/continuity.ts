import type { Program, RobotDecl, TriggerPolicyDecl } from '../language/ast.js';
import { conditionMatches } from '../assurance/recovery-knowledge.js';

/**
 * Mission continuity when a robot fails part-way (docs/program-language.md §30): which continuity
 * policies answer the trigger, which robot of the program can take the rest of the mission over,
 * and what is left to hand over.
 */
export interface ContinuityRequest {
  /** The robot that failed (a `robot` of the program). */
  failed: string;
  /** How much of its mission it had done, 0–100. */
  progress: number;
  /** What happened, matched against policy triggers like recovery triggers (`central.lost`, `lte`). */
  trigger: string;
}

export interface MatchedPolicy {
  policy: string;
  trigger: string;
  actions: string[];
}

export interface TakeoverCandidate {
  robot: string;
  /** Capabilities the rest of the mission needs (its `requires`, else the failed robot's own) that this robot has (`exposes`, sensor types). */
  shared_capabilities: string[];
  missing_capabilities: string[];
  /** Share of the failed robot's capabilities covered, 0–1 (1 when the failed robot declares none). */
  coverage: number;
}

export type ContinuityVerdict = 'handoff' | 'policy_only' | 'complete' | 'uncovered';

export interface ContinuityReport {
  robot: string;
  trigger: string;
  progress_pct: number;
  remaining_pct: number;
  missions: string[];
  policies: MatchedPolicy[];
  /** Recovery policies that answer the trigger, listed when no continuity policy does. */
  recovery_fallback: MatchedPolicy[];
  candidates: TakeoverCandidate[];
  takeover: TakeoverCandidate | null;
  verdict: ContinuityVerdict;
  /** A continuity policy answers the trigger. */
  covered: boolean;
  explanation: string[];
}

export class ContinuityInputError extends Error {}

function matching(policies: readonly TriggerPolicyDecl[], trigger: string): MatchedPolicy[] {
  const out: MatchedPolicy[] = [];
  for (const p of policies) {
    for (const t of p.triggers) {
      if (conditionMatches(t.condition, trigger)) out.push({ policy: p.name, trigger: t.condition, actions: [...t.actions] });
    }
  }
  return out;
}

/** What a robot can do, for matching a replacement: its declared capabilities and its sensors' types. */
function capabilitiesOf(robot: RobotDecl): string[] {
  return [...new Set([...robot.exposes, ...robot.sensors.map((s) => s.type)])].sort();
}

function candidate(failed: string[], robot: RobotDecl): TakeoverCandidate {
  const own = new Set(capabilitiesOf(robot));
  const shared = failed.filter((c) => own.has(c));
  return {
    robot: robot.name,
    shared_capabilities: shared,
    missing_capabilities: failed.filter((c) => !own.has(c)),
    coverage: failed.length === 0 ? 1 : Math.round((shared.length / failed.length) * 1000) / 1000,
  };
}

export function evaluateContinuity(program: Program, req: ContinuityRequest): ContinuityReport {
  const failed = program.robots.find((r) => r.name === req.failed);
  if (!failed) {
    const known = program.robots.map((r) => r.name);
    throw new ContinuityInputError(`unknown robot '${req.failed}'${known.length ? ` (the program declares ${known.join(', ')})` : ' (the program declares no robot)'}`);
  }
  if (!Number.isFinite(req.progress) || req.progress < 0 || req.progress > 100) {
    throw new ContinuityInputError(`progress must be a percentage between 0 and 100 (got ${req.progress})`);
  }
  if (req.trigger.trim() === '') throw new ContinuityInputError('trigger must name what happened (e.g. central.lost)');

  const remaining = Math.round((100 - req.progress) * 100) / 100;
  const policies = matching(program.continuityPolicies, req.trigger);
  const recovery = policies.length === 0 ? matching(program.recoveryPolicies, req.trigger) : [];
  // What the rest of the mission needs: the missions' required capabilities, else all the failed robot could do.
  const required = [...new Set(failed.missions.flatMap((m) => m.requiredCapabilities))].sort();
  const needed = required.length > 0 ? required : capabilitiesOf(failed);
  const candidates = program.robots
    .filter((r) => r.name !== failed.name)
    .map((r) => candidate(needed, r))
    .sort((a, b) => b.coverage - a.coverage || a.robot.localeCompare(b.robot));
  const takeover = remaining > 0 ? (candidates.find((c) => c.missing_capabilities.length === 0) ?? null) : null;

  let verdict: ContinuityVerdict;
  if (policies.length === 0) verdict = 'uncovered';
  else if (remaining === 0) verdict = 'complete';
  else verdict = takeover ? 'handoff' : 'policy_only';

  const explanation: string[] = [];
  explanation.push(
    policies.length > 0
      ? `${policies.length} continuity rule(s) answer '${req.trigger}': ${policies.map((p) => p.policy).join(', ')}`
      : `no continuity policy answers '${req.trigger}'${recovery.length ? `; recovery policies do: ${[...new Set(recovery.map((p) => p.policy))].join(', ')}` : ''}`,
  );
  if (remaining === 0) explanation.push(`${failed.name} had finished its mission: nothing to hand over`);
  else if (takeover) explanation.push(`${takeover.robot} can take over the remaining ${remaining}% (covers ${needed.length ? needed.join(', ') : 'every declared capability'})`);
  else if (candidates.length === 0) explanation.push(`no other robot in the program can take over the remaining ${remaining}%`);
  else {
    const best = candidates[0]!;
    explanation.push(`no robot covers every capability of ${failed.name}; closest is ${best.robot}, missing ${best.missing_capabilities.join(', ')}`);
  }

  return {
    robot: failed.name,
    trigger: req.trigger,
    progress_pct: req.progress,
    remaining_pct: remaining,
    missions: failed.missions.map((m) => m.name).filter((n): n is string => n !== null),
    policies,
    recovery_fallback: recovery,
    candidates,
    takeover,
    verdict,
    covered: policies.length > 0,
    explanation,
  };
}
