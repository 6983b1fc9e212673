/**
 * The safety monitor (docs/program-language.md §24.3): clamps every drive command to the robot's `max_speed` (tightened
 * inside safety zones) and `max_angular`, and evaluates the `stop_if` rules before every motion
 * call. A true rule latches the emergency stop; the motion call is then blocked.
 */
import type { Pose } from './sim-robot.js';

export type SafetyZone =
  | { name: string; shape: 'circle'; x: number; y: number; radius: number; speedLimit: number | null }
  /** A rectangle centred on (x, y) with the given width (along x) and height (along y). */
  | { name: string; shape: 'rect'; x: number; y: number; width: number; height: number; speedLimit: number | null };

export interface StopCondition {
  /** Token-joined rule text, used in logs. */
  text: string;
  test: () => boolean;
}

export interface SafetyLimits {
  maxSpeed: number | null;
  maxAngular: number | null;
  zones: SafetyZone[];
}

/**
 * Zones in the language carry no speed of their own; inside a zone we cap the speed at half the
 * robot's `max_speed` (a slow zone), unless the zone was given an explicit limit.
 */
export const ZONE_SPEED_FACTOR = 0.5;

export function zoneContains(zone: SafetyZone, pose: Pose): boolean {
  if (zone.shape === 'circle') return Math.hypot(pose.x - zone.x, pose.y - zone.y) <= zone.radius;
  return Math.abs(pose.x - zone.x) <= zone.width / 2 && Math.abs(pose.y - zone.y) <= zone.height / 2;
}

function clampMagnitude(value: number, limit: number | null): number {
  if (limit === null) return value;
  return Math.max(-limit, Math.min(limit, value));
}

export class SafetyMonitor {
  constructor(
    readonly limits: SafetyLimits,
    readonly stopConditions: StopCondition[] = [],
  ) {}

  /** Zones containing the pose, in declaration order. */
  zonesAt(pose: Pose): SafetyZone[] {
    return this.limits.zones.filter((zone) => zoneContains(zone, pose));
  }

  /** The linear speed cap at a pose: max_speed, tightened by every zone the pose is in. */
  speedCapAt(pose: Pose): number | null {
    let cap = this.limits.maxSpeed;
    for (const zone of this.zonesAt(pose)) {
      const zoneCap = zone.speedLimit ?? (this.limits.maxSpeed === null ? null : this.limits.maxSpeed * ZONE_SPEED_FACTOR);
      if (zoneCap !== null) cap = cap === null ? zoneCap : Math.min(cap, zoneCap);
    }
    return cap;
  }

  clampDrive(linear: number, angular: number, pose: Pose): { linear: number; angular: number } {
    return {
      linear: clampMagnitude(linear, this.speedCapAt(pose)),
      angular: clampMagnitude(angular, this.limits.maxAngular),
    };
  }

  /** A cruise speed (follow) clamped to the cap at the pose; always non-negative. */
  clampSpeed(speed: number, pose: Pose): number {
    return Math.abs(clampMagnitude(speed, this.speedCapAt(pose)));
  }

  /** The first `stop_if` rule that holds now, or null. */
  triggeredStop(): StopCondition | null {
    for (const condition of this.stopConditions) {
      if (condition.test()) return condition;
    }
    return null;
  }
}
