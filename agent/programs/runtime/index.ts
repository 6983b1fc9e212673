/** Public API of the program runtime: simulation, replay, trace files and listings (docs/program-language.md §16–§18, §24–§27). */

export { ProgramRuntimeError, type RuntimeErrorKind } from './errors.js';
export { runProgram, Interpreter, DEFAULT_MAX_LOOP_ITERATIONS, type InterpreterOptions, type RunOutcome } from './interpreter.js';
export { simulateProgram, defaultTracePath, type SimulateOptions, type SimulationBody, type ExecutedSimulation, type DryRunSimulation } from './simulate.js';
export {
  replayTrace,
  inspectTrace,
  playbackTrace,
  verifyDeterministic,
  compareFrames,
  resolveTraceSource,
  TraceSourceNotFoundError,
  type ReplayOptions,
  type ReplayMode,
  type ReplayResult,
  type ProgramLoader,
} from './replay.js';
export { listTraces, clampTraceLimit, type TraceListing, type TraceListingEntry } from './trace-listing.js';
export {
  readTrace,
  writeTrace,
  parseTraceValue,
  parseOffset,
  framesFrom,
  traceVersion,
  type TraceFile,
  type TraceFrame,
  type TraceState,
} from './trace-file.js';
export { SimRobot, type SimSnapshot, type Pose } from './sim-robot.js';
export { SafetyMonitor } from './safety-monitor.js';
export { DECISION_EVENT } from './decision-trees.js';
export {
  SAFETY_BOUNDARIES,
  escalationNeed,
  isSafetyBoundary,
  centralEscalationId,
  localEscalationId,
  type EscalationPort,
  type EscalationRecord,
  type EscalationNeed,
} from './escalations.js';
