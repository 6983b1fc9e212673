import { defineOperation, type HttpMethod, type Operation, type RpcRequestKind } from './legacy-operation.js';
import { programQuerySchema, programRequestSchema, type ProgramQuery, type ProgramRequest } from '../programs/program-request.js';
import type { ProgramService } from '../programs/program-service.js';

/**
 * Program operations (spec "Program operations", program-language §8–§23). Each entry names the
 * ProgramService method it runs; the REST/gRPC/JSON-RPC handler and the `svc <command>` CLI both
 * call that same method (the CLI with a workspace built from its command line, agent/cli/program-command.ts).
 */
export interface ProgramOperationSpec {
  id: string;
  summary: string;
  description?: string;
  method: HttpMethod;
  path: string;
  rpc?: { name: string; request: RpcRequestKind };
  jsonRpc?: boolean;
  /** `svc` words; the CLI takes the file as the positional argument after them. */
  cli: string[];
  input: 'body' | 'query';
  /**
   * A sensitive read (needs a principal under SVC_API_REQUIRE_AUTH_READS): program source and trust
   * show the robot's own code. The analyses are open reads (docs/security.md §6).
   */
  sensitive?: true;
  /** The body field that makes this call a write (`OperationSpec.mutatesWhen`). */
  mutatesWhen?: { bodyField: string };
  run(programs: ProgramService, input: ProgramRequest & ProgramQuery): unknown;
}

const body = 'body' as const;
const query = 'query' as const;

export const PROGRAM_OPERATION_SPECS: readonly ProgramOperationSpec[] = [
  {
    id: 'evaluateProgramReadiness',
    summary: 'Mission readiness of a program: twelve weighted factors, issues, verdict (program-language §9)',
    method: 'POST',
    path: '/v1/programs/readiness',
    rpc: { name: 'EvaluateProgramReadiness', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['readiness'],
    input: body,
    run: (p, r) => p.run('readiness', r),
  },
  {
    id: 'evaluateProgramAssure',
    summary: 'Assurance of a program: evidence, anomalies, prognostics, resilience, mission, state, recovery (§10)',
    method: 'POST',
    path: '/v1/programs/assure',
    rpc: { name: 'EvaluateProgramAssure', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['assure'],
    input: body,
    run: (p, r) => p.run('assure', r),
  },
  {
    id: 'evaluateProgramDiagnose',
    summary: 'Diagnosis of a program (mitigations, causal graph) or of a recorded trace (root cause) (§11)',
    method: 'POST',
    path: '/v1/programs/diagnose',
    rpc: { name: 'EvaluateProgramDiagnose', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['diagnose'],
    input: body,
    run: (p, r) => p.run('diagnose', r),
  },
  {
    id: 'evaluateProgramHeal',
    summary: 'Recovery evaluation: plans, gated actions and outcome for each failure the program handles (§12)',
    method: 'POST',
    path: '/v1/programs/recovery/heal',
    rpc: { name: 'EvaluateProgramHeal', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['heal'],
    input: body,
    run: (p, r) => p.run('heal', r),
  },
  {
    id: 'verifyProgramHardware',
    summary: 'Hardware compatibility of every robot with the resolved target, or all targets (§13)',
    method: 'POST',
    path: '/v1/programs/verify/hardware',
    rpc: { name: 'VerifyProgramHardware', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['verify'],
    input: body,
    run: (p, r) => p.run('verifyHardware', r),
  },
  {
    id: 'verifyProgramCapabilities',
    summary: 'Declared and inferred capabilities per robot, static health and optional traceability (§14)',
    method: 'POST',
    path: '/v1/programs/verify/capabilities',
    rpc: { name: 'VerifyProgramCapabilities', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['verify', 'capabilities'],
    input: body,
    run: (p, r) => p.run('verifyCapabilities', r),
  },
  {
    id: 'verifyProgramMission',
    summary: 'Whether each robot mission is achievable on its hardware (§15)',
    method: 'POST',
    path: '/v1/programs/verify/mission',
    rpc: { name: 'VerifyProgramMission', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['verify', 'mission'],
    input: body,
    run: (p, r) => p.run('verifyMission', r),
  },
  {
    id: 'runProgramSimulation',
    summary: 'Simulation: planned metadata by default; execute:true runs the program on the simulated robot (§16)',
    description: 'With record_trace:true the trace is written next to the program, which needs the Operate action.',
    method: 'POST',
    path: '/v1/programs/simulation',
    rpc: { name: 'RunProgramSimulation', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['sim'],
    // Recording writes a trace file: that call needs Operate and is audited by the kernel (docs/wire-decisions.md D2).
    mutatesWhen: { bodyField: 'record_trace' },
    input: body,
    run: (p, r) => p.run('simulate', r),
  },
  {
    id: 'replayProgram',
    summary: 'Replay a trace: inspect, deterministic re-run and compare, or playback of states (§17)',
    method: 'POST',
    path: '/v1/programs/replay',
    rpc: { name: 'ReplayProgram', request: 'JsonBodyRequest' },
    jsonRpc: true,
    cli: ['replay'],
    input: body,
    run: (p, r) => p.run('replay', r),
  },
  {
    id: 'getTrustProgram',
    summary: 'Composite trust of a program: six weighted categories, tier and tamper status (§19)',
    method: 'GET',
    path: '/v1/trust/program',
    sensitive: true,
    rpc: { name: 'GetTrustProgram', request: 'QueryRequest' },
    jsonRpc: true,
    cli: ['trust'],
    input: query,
    run: (p, q) => p.run('trust', q),
  },
  {
    id: 'getProgramSource',
    summary: 'Raw source text of a program (§20)',
    method: 'GET',
    path: '/v1/programs/source',
    sensitive: true,
    rpc: { name: 'GetProgramSource', request: 'QueryRequest' },
    cli: ['program', 'source'],
    input: query,
    run: (p, q) => p.run('source', q),
  },
  {
    id: 'verifyProgramContract',
    summary: 'Mission contracts of a program and their checks (§21)',
    method: 'POST',
    path: '/v1/programs/contract/verify',
    cli: ['contract', 'verify'],
    input: body,
    run: (p, r) => p.run('contractVerify', r),
  },
  {
    id: 'explainProgram',
    summary: 'Plain-language explanation of a program or trace, by mode (§22)',
    method: 'POST',
    path: '/v1/programs/explain',
    cli: ['explain'],
    input: body,
    run: (p, r) => p.run('explain', r),
  },
  {
    id: 'auditProgramDecisions',
    summary: 'Decision records of a trace, with an optional explanation (§23)',
    method: 'POST',
    path: '/v1/programs/audit/decisions',
    cli: ['audit', 'decisions'],
    input: body,
    run: (p, r) => p.run('auditDecisions', r),
  },
  {
    id: 'listProgramTraces',
    summary: 'Trace files under the project root, newest first (§18)',
    method: 'GET',
    path: '/v1/programs/traces',
    rpc: { name: 'ListProgramTraces', request: 'QueryRequest' },
    cli: ['traces'],
    input: query,
    run: (p, q) => p.run('traces', q),
  },
];

export const programOperations: Operation[] = PROGRAM_OPERATION_SPECS.map((spec) =>
  defineOperation<ProgramRequest, ProgramQuery>({
    id: spec.id,
    group: 'programs',
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    method: spec.method,
    path: spec.path,
    access: spec.sensitive ? { kind: 'sensitive-read' } : { kind: 'read' },
    ...(spec.rpc ? { rpc: spec.rpc } : {}),
    ...(spec.jsonRpc ? { jsonRpc: true } : {}),
    ...(spec.mutatesWhen ? { mutatesWhen: spec.mutatesWhen } : {}),
    cli: spec.cli,
    ...(spec.input === 'body' ? { body: programRequestSchema } : { query: programQuerySchema }),
    handler({ body: b, query: q }, ctx) {
      const input = (spec.input === 'body' ? b : q) as ProgramRequest & ProgramQuery;
      return spec.run(ctx.services.programs, input);
    },
  }),
);

export function programSpecFor(op: Pick<Operation, 'id'>): ProgramOperationSpec | undefined {
  return PROGRAM_OPERATION_SPECS.find((s) => s.id === op.id);
}
