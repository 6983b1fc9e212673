import {
  auditProgramDecisions,
  evaluateProgramAssure,
  evaluateProgramContinuity,
  evaluateProgramDiagnose,
  evaluateProgramHeal,
  evaluateProgramReadiness,
  explainProgram,
  getProgramSource,
  getTrustProgram,
  listProgramFiles,
  listProgramTraces,
  replayProgram,
  runProgramSimulation,
  verifyProgramCapabilities,
  verifyProgramContract,
  verifyProgramHardware,
  verifyProgramMission,
  type ProgramQuery,
  type ProgramRequest,
} from '../../api/domains/programs.js';
import { cliWords, type OperationSpec } from '../../api/spec.js';
import { handlersFor, type HandlerBinding } from '../core/handlers.js';
import type { ProgramService } from './program-service.js';

const on = handlersFor(['programs']);

/** The ProgramService call of a program operation, given the request (body) or query it was sent. */
export type ProgramRun = (programs: ProgramService, input: ProgramRequest & ProgramQuery) => unknown;

/**
 * A program operation as `svc <command> FILE` runs it (agent/cli/program-command.ts): the spec's
 * id and CLI words, and the same ProgramService call the REST/gRPC/JSON-RPC handler makes.
 */
export interface ProgramCommand {
  id: string;
  cli: string[];
  run: ProgramRun;
}

interface ProgramOperation {
  command: ProgramCommand;
  binding: HandlerBinding;
}

const command = (spec: Pick<OperationSpec, 'id' | 'cli'>, run: ProgramRun): ProgramCommand => ({ id: spec.id, cli: cliWords(spec) ?? [], run });

function onBody(spec: OperationSpec<ProgramRequest>, run: ProgramRun): ProgramOperation {
  return { command: command(spec, run), binding: on(spec, ({ body }, ctx) => run(ctx.services.programs, body)) };
}

function onQuery(spec: OperationSpec<Record<string, never>, ProgramQuery>, run: ProgramRun): ProgramOperation {
  return { command: command(spec, run), binding: on(spec, ({ query }, ctx) => run(ctx.services.programs, query)) };
}

/** Program operations (docs/programs.md): each spec of api/domains/programs.ts and the ProgramService method it runs. */
const PROGRAM_OPERATIONS: readonly ProgramOperation[] = [
  onBody(evaluateProgramReadiness, (p, r) => p.run('readiness', r)),
  onBody(evaluateProgramAssure, (p, r) => p.run('assure', r)),
  onBody(evaluateProgramDiagnose, (p, r) => p.run('diagnose', r)),
  onBody(evaluateProgramHeal, (p, r) => p.run('heal', r)),
  onBody(verifyProgramHardware, (p, r) => p.run('verifyHardware', r)),
  onBody(verifyProgramCapabilities, (p, r) => p.run('verifyCapabilities', r)),
  onBody(verifyProgramMission, (p, r) => p.run('verifyMission', r)),
  onBody(runProgramSimulation, (p, r) => p.run('simulate', r)),
  onBody(replayProgram, (p, r) => p.run('replay', r)),
  onQuery(getTrustProgram, (p, q) => p.run('trust', q)),
  onQuery(getProgramSource, (p, q) => p.run('source', q)),
  onBody(verifyProgramContract, (p, r) => p.run('contractVerify', r)),
  onBody(explainProgram, (p, r) => p.run('explain', r)),
  onBody(auditProgramDecisions, (p, r) => p.run('auditDecisions', r)),
  onQuery(listProgramTraces, (p, q) => p.run('traces', q)),
  onQuery(listProgramFiles, (p, q) => p.run('programFiles', q)),
  onBody(evaluateProgramContinuity, (p, r) => p.run('continuity', r)),
];

export const programHandlers = PROGRAM_OPERATIONS.map((o) => o.binding);

/** The CLI form of a program operation, or undefined for any other operation. */
export function programCommandFor(op: Pick<OperationSpec, 'id'>): ProgramCommand | undefined {
  return PROGRAM_OPERATIONS.find((o) => o.command.id === op.id)?.command;
}
