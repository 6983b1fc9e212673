/**
 * Hand-built programs for the assurance tests: every list present and empty, so a test states only
 * the declarations it is about.
 */
import { emptyProgram, emptyRobot } from '../../../agent/programs/language/empty.js';
import type { Loc, Program, RobotDecl } from '../../../agent/programs/language/ast.js';

export const at = (line = 1, column = 1): Loc => ({ line, column });

export function makeRobot(overrides: Partial<RobotDecl> = {}): RobotDecl {
  return { ...emptyRobot('Rover', at()), ...overrides };
}

export function makeProgram(overrides: Partial<Program> = {}): Program {
  return { ...emptyProgram('test.sd'), ...overrides };
}

/** A trace frame with a state-less payload. */
export function frame(sim_time_ms: number, event: string, payload: Record<string, unknown> = {}) {
  return { sim_time_ms, event, payload, state: null };
}
