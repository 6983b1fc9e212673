/**
 * A robot's `safety { … }` block as a safety monitor: speed limits in SI units, zones with their
 * coordinates evaluated once at setup, and `stop_if` rules that evaluate live on every check.
 */
import type { Expr, RobotDecl, SafetyRule } from '../language/ast.js';
import { ProgramRuntimeError } from './errors.js';
import { SafetyMonitor, type SafetyZone, type StopCondition } from './safety-monitor.js';
import { toSI } from './si-units.js';
import { type Value, describeValue, truthy } from './values.js';

export function buildSafetyMonitor(robot: RobotDecl, evaluate: (expr: Expr) => Value): SafetyMonitor {
  let maxSpeed: number | null = null;
  let maxAngular: number | null = null;
  const zones: SafetyZone[] = [];
  const stops: StopCondition[] = [];
  const num = (expr: Expr): number => {
    const value = evaluate(expr);
    if (typeof value !== 'number') throw new ProgramRuntimeError('runtime', `safety zone needs numbers, got ${describeValue(value)}`, expr.loc);
    return value;
  };
  for (const rule of robot.safety) {
    if (rule.kind === 'stop_if') {
      const condition = rule.condition;
      stops.push({ text: rule.text, test: () => truthy(evaluate(condition)) });
    } else if (rule.kind !== 'zone') {
      if (rule.kind === 'max_speed') maxSpeed = toSI(rule.value.value, rule.value.unit);
      else maxAngular = toSI(rule.value.value, rule.value.unit);
    } else if (rule.shape === 'circle') {
      zones.push({ name: rule.name, shape: 'circle', x: num(rule.center[0]), y: num(rule.center[1]), radius: num(rule.radius), speedLimit: null });
    } else {
      zones.push({
        name: rule.name,
        shape: 'rect',
        x: num(rule.center[0]),
        y: num(rule.center[1]),
        width: num(rule.size[0]),
        height: num(rule.size[1]),
        speedLimit: null,
      });
    }
  }
  return new SafetyMonitor({ maxSpeed, maxAngular, zones }, stops);
}

export { safetyRuleText } from '../language/expr-text.js';
