/**
 * Actuator method calls (docs/program-language.md §24.3). Motion calls first pass the safety monitor's `stop_if` rules (a
 * latched emergency stop blocks them); drive commands and cruise speeds are clamped; everything
 * then reaches the simulated robot, which logs it.
 */
import type { ActuatorDecl, Loc } from '../language/ast.js';
import { argument, numberArgument } from './builtins.js';
import { ProgramRuntimeError } from './errors.js';
import { isMotionProposal } from './mock-provider.js';
import type { SafetyMonitor } from './safety-monitor.js';
import type { SimRobot } from './sim-robot.js';
import { type ArgValue, type Value, describeValue, isRecord } from './values.js';

/** Motion calls: the safety monitor evaluates `stop_if` before each, and an e-stop blocks them. */
export const MOTION_METHODS: ReadonlySet<string> = new Set(['drive', 'follow', 'move_to', 'set_thrust', 'hover', 'execute', 'set_velocity', 'forward', 'turn']);

export interface ActuationTarget {
  backend: SimRobot;
  monitor: SafetyMonitor;
  latchEmergencyStop(reason: string): void;
}

export function actuate(target: ActuationTarget, actuator: ActuatorDecl, method: string, args: ArgValue[], loc: Loc): Value {
  const { monitor, backend } = target;
const what = `${actuator.name}.${method}`;
  if (MOTION_METHODS.has(method)) {
    if (backend.emergencyStop) return null;
    const triggered = monitor.triggeredStop();
    if (triggered) {
      target.latchEmergencyStop(`stop_if ${triggered.text}`);
      return null;
    }
  }
  switch (method) {
    case 'drive':
    case 'set_velocity': {
      const wanted = {
        linear: numberArgument(args, 'linear', 0, 0, loc, what),
        angular: numberArgument(args, 'angular', 1, 0, loc, what),
      };
      const clamped = monitor.clampDrive(wanted.linear, wanted.angular, backend.pose);
      backend.drive(clamped.linear, clamped.angular);
      return null;
    }
    case 'stop':
    case 'halt':
      backend.stop();
      return null;
    case 'follow': {
      const path = argument(args, 'path', 0);
      const points = (Array.isArray(path) ? path : []).map((p) => ({
        x: isRecord(p) && typeof p['x'] === 'number' ? p['x'] : 0,
        y: isRecord(p) && typeof p['y'] === 'number' ? p['y'] : 0,
      }));
      const speed = monitor.clampSpeed(numberArgument(args, 'speed', 1, 0.5, loc, what), backend.pose);
      backend.follow(points, speed);
      return null;
    }
    case 'move_to': {
      const first = argument(args, 'target', 0);
      const source: ArgValue[] = isRecord(first)
        ? Object.entries(first).map(([name, value]) => ({ name, value }))
        : args;
      backend.moveTo(
        numberArgument(source, 'x', 0, backend.pose.x, loc, what),
        numberArgument(source, 'y', 1, backend.pose.y, loc, what),
        numberArgument(source, 'z', 2, backend.pose.z, loc, what),
      );
      return null;
    }
    case 'grip':
    case 'close':
      backend.grip();
      return null;
    case 'release':
      backend.release();
      return null;
    case 'open':
      backend.open();
      return null;
    case 'set_thrust':
      backend.setThrust(numberArgument(args, 'thrust', 0, 0, loc, what));
      return null;
    case 'hover':
      backend.hover();
      return null;
    case 'execute': {
      const action = argument(args, 'action', 0) ?? null;
      if (isRecord(action) && action['proposal'] === true && action['validated'] !== true) {
        throw new ProgramRuntimeError('runtime', `${what}: an AI proposal must pass safety.validate() before execute`, loc);
      }
      // A validated motion proposal (docs/program-language.md §24.4) moves the body: the monitor clamps
      // it again at the current pose (a zone cap may apply by now), like any drive command.
      if (isMotionProposal(action)) {
        if (action['action'] === 'stop' && action['linear'] === 0 && action['angular'] === 0) {
          backend.stop();
          return null;
        }
        const clamped = monitor.clampDrive(action['linear'] as number, action['angular'] as number, backend.pose);
        backend.drive(clamped.linear, clamped.angular);
        return null;
      }
      backend.execute(isRecord(action) ? describeValue(action['action'] ?? null) : describeValue(action));
      return null;
    }
    default:
      backend.log(`${method}(${args.map((a) => describeValue(a.value)).join(', ')})`);
      return null;
  }
}
