/**
 * The deterministic stand-in AI provider, `provider: "mock"` (docs/program-language.md §24.4). Any
 * method called on an `ai_model` (`planner.propose("…")`, `classifier.predict(frame)`) answers with a
 * motion proposal computed from two inputs only — the prompt's words and the nearest scan distance —
 * so AI-driven programs move in simulation and a replay reproduces them exactly. A proposal is a
 * record marked `proposal: true, validated: false`: `execute` refuses it until `safety.validate()`
 * has clamped it to the safety limits (see `validateProposal`).
 */
import { LIDAR_RANGE, type SimRobot } from './sim-robot.js';
import type { SafetyMonitor } from './safety-monitor.js';
import { type ArgValue, type RecordValue, type Value, isRecord } from './values.js';

/** A prompt asking to stop, halt or wait (word starts: `stopping`, `halted`, `waiting` count too). */
export const STOP_WORDS = /\b(stop|halt|wait)/i;
/** A prompt about turning, avoiding or obstacles. */
export const TURN_WORDS = /\b(turn|avoid|obstacle)/i;
/** Below this nearest distance (m) the provider proposes avoidance whatever the prompt says. */
export const AVOID_BELOW_M = 0.8;
/** Below this nearest distance (m) avoidance turns on the spot. */
export const SPIN_BELOW_M = 0.4;

export type MockAction = 'stop' | 'avoid' | 'forward';

export interface MockProposal {
  action: MockAction;
  linear: number;
  angular: number;
}

/**
 * The proposal for a prompt and a nearest scan distance (metres; null when no scan is available,
 * which counts as open space out to the lidar range). Rules, first match wins:
 * 1. stop words → (0, 0);
 * 2. turn words, or distance < 0.8 → avoid: below 0.4 m turn on the spot at 0.6 rad/s, else
 *    0.25 rad/s with linear min(0.4, 0.3 × distance);
 * 3. otherwise forward: linear min(0.8, 0.45 × distance), no turn.
 */
export function mockProposal(prompt: string, distance: number | null): MockProposal {
  if (STOP_WORDS.test(prompt)) return { action: 'stop', linear: 0, angular: 0 };
  const d = distance ?? LIDAR_RANGE;
  if (TURN_WORDS.test(prompt) || d < AVOID_BELOW_M) {
    return d < SPIN_BELOW_M
      ? { action: 'avoid', linear: 0, angular: 0.6 }
      : { action: 'avoid', linear: Math.min(0.4, 0.3 * d), angular: 0.25 };
  }
  return { action: 'forward', linear: Math.min(0.8, 0.45 * d), angular: 0 };
}

/** The prompt: a named `prompt:` argument, else every string argument joined by spaces. */
export function promptOf(args: ArgValue[]): string {
  const named = args.find((a) => a.name === 'prompt');
  if (named && typeof named.value === 'string') return named.value;
  return args
    .map((a) => a.value)
    .filter((v): v is string => typeof v === 'string')
    .join(' ');
}

/** A usable distance: a finite, non-negative number. */
function metres(value: Value | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * The nearest scan distance available to the call: a `distance:` / `nearest_distance:` number or a
 * scan record (`{nearest_distance}`, e.g. `lidar.read()`) passed as an argument; else the smallest
 * `nearest_distance` the robot's own sensors read right now (a failed sensor reads void and is
 * skipped); else null.
 */
export function scanDistance(args: ArgValue[], sensorTypes: readonly string[], backend: SimRobot): number | null {
  for (const arg of args) {
    if (arg.name === 'distance' || arg.name === 'nearest_distance') {
      const d = metres(arg.value);
      if (d !== null) return d;
    }
  }
  for (const arg of args) {
    if (isRecord(arg.value)) {
      const d = metres(arg.value['nearest_distance']);
      if (d !== null) return d;
    }
  }
  let nearest: number | null = null;
  for (const type of sensorTypes) {
    const d = metres(backend.readSensor(type)?.['nearest_distance'] as Value | undefined);
    if (d !== null && (nearest === null || d < nearest)) nearest = d;
  }
  return nearest;
}

/** The record a model call returns. */
export function proposalRecord(model: string, proposal: MockProposal, distance: number | null): RecordValue {
  return {
    model,
    provider: 'mock',
    action: proposal.action,
    linear: proposal.linear,
    angular: proposal.angular,
    distance,
    confidence: 0.9,
    proposal: true,
    validated: false,
  };
}

/** A proposal that asks for motion: it carries numeric `linear` and `angular`. */
export function isMotionProposal(value: Value): value is RecordValue {
  return isRecord(value) && typeof value['linear'] === 'number' && typeof value['angular'] === 'number';
}

/**
 * `safety.validate(p)`: marks the proposal validated; a motion proposal is first clamped by the
 * running robot's safety monitor (max_speed with zone caps at the current pose, max_angular), and
 * `clamped` says whether that changed it. Without a running robot nothing is clamped.
 */
export function validateProposal(proposal: Value, monitor: SafetyMonitor | null, backend: SimRobot): RecordValue {
  if (!isRecord(proposal)) return { action: proposal, validated: true };
  if (!isMotionProposal(proposal) || !monitor) return { ...proposal, validated: true };
  const linear = proposal['linear'] as number;
  const angular = proposal['angular'] as number;
  const safe = monitor.clampDrive(linear, angular, backend.pose);
  return { ...proposal, linear: safe.linear, angular: safe.angular, clamped: safe.linear !== linear || safe.angular !== angular, validated: true };
}
