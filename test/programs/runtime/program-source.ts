import { parseProgram } from '../../../agent/programs/language/index.js';
import { ProgramRuntimeError, runProgram } from '../../../agent/programs/runtime/interpreter.js';
import { typeCheckProgram } from '../../../agent/programs/runtime/type-check.js';

/** Helpers for runtime tests written as program text (program-builder.ts builds ASTs instead). */

/** Parses `source` and runs it for `maxLoopIterations` loop iterations. */
export const runSource = (source: string, maxLoopIterations: number) => runProgram(parseProgram(source, 'r.sd'), { maxLoopIterations });

/** The type checker's message for `source`; fails the test when the program type-checks. */
export function typeError(source: string): string {
  try {
    typeCheckProgram(parseProgram(source, 'r.sd'));
  } catch (error) {
    if (error instanceof ProgramRuntimeError && error.kind === 'type') return error.message;
    throw error;
  }
  throw new Error('expected a type error');
}
