import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Program operations (docs/programs.md): analyses, simulation, replay, trust, source and traces of
 * a robot program. Every one is a read that takes the program request (a body) or the program
 * query; the agent's handler runs the matching ProgramService method, and the `svc <command>` CLI
 * runs that same method with a workspace built from its command line (agent/cli/program-command.ts).
 * Program source and trust are sensitive reads (they show the robot's own code); the analyses are
 * open reads (docs/security.md §6).
 */

/**
 * The program operation request (docs/programs.md).
 * Every flag defaults to false; `file` falls back to the server's `--program`.
 */
export const programRequestSchema = z.lazy(() => z.object({
  file: z.string().optional(),
  target: z.string().min(1).optional(),
  all_targets: z.boolean().optional(),
  include_runtime: z.boolean().optional(),
  inject_health_faults: z.boolean().optional(),
  traceability: z.boolean().optional(),
  capabilities: z.boolean().optional(),
  execute: z.boolean().optional(),
  deterministic: z.boolean().optional(),
  playback: z.boolean().optional(),
  decision_trace: z.boolean().optional(),
  record_trace: z.boolean().optional(),
  /** Replay: start at this offset (`1500`, `T+00:02`, `T+01:00:00`). */
  from: z.union([z.string(), z.number()]).optional(),
  /** Explain mode: program (default), readiness, verify, safety, trace, decision. */
  mode: z.string().optional(),
  /** Audit decisions: also return the text explanation. */
  explain: z.boolean().optional(),
  /** Continuity: the robot that failed, how far its mission had got (0–100 %), and what happened. */
  failed: z.string().min(1).max(200).optional(),
  progress: z.coerce.number().min(0).max(100).optional(),
  trigger: z.string().min(1).max(200).optional(),
}));
export type ProgramRequest = z.infer<typeof programRequestSchema>;

/** GET query of source, trust and traces. */
export const programQuerySchema = z.lazy(() => z.object({
  file: z.string().optional(),
  limit: z.coerce.number().int().optional(),
}));
export type ProgramQuery = z.infer<typeof programQuerySchema>;

export const evaluateProgramReadiness = defineSpec<ProgramRequest>({
  id: 'evaluateProgramReadiness',
  group: 'programs',
  summary: 'Mission readiness of a program: twelve weighted factors, issues, verdict (docs/program-language.md §9)',
  method: 'POST',
  path: '/v1/programs/readiness',
  access: { kind: 'read' },
  rpc: { name: 'EvaluateProgramReadiness', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['readiness'],
  body: programRequestSchema,
});

export const evaluateProgramAssure = defineSpec<ProgramRequest>({
  id: 'evaluateProgramAssure',
  group: 'programs',
  summary: 'Assurance of a program: evidence, anomalies, prognostics, resilience, mission, state, recovery (docs/program-language.md §10)',
  method: 'POST',
  path: '/v1/programs/assure',
  access: { kind: 'read' },
  rpc: { name: 'EvaluateProgramAssure', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['assure'],
  body: programRequestSchema,
});

export const evaluateProgramDiagnose = defineSpec<ProgramRequest>({
  id: 'evaluateProgramDiagnose',
  group: 'programs',
  summary: 'Diagnosis of a program (mitigations, causal graph) or of a recorded trace (root cause) (docs/program-language.md §11)',
  method: 'POST',
  path: '/v1/programs/diagnose',
  access: { kind: 'read' },
  rpc: { name: 'EvaluateProgramDiagnose', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['diagnose'],
  body: programRequestSchema,
});

export const evaluateProgramHeal = defineSpec<ProgramRequest>({
  id: 'evaluateProgramHeal',
  group: 'programs',
  summary: 'Recovery evaluation: plans, gated actions and outcome for each failure the program handles (docs/program-language.md §12)',
  method: 'POST',
  path: '/v1/programs/recovery/heal',
  access: { kind: 'read' },
  rpc: { name: 'EvaluateProgramHeal', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['heal'],
  body: programRequestSchema,
});

export const verifyProgramHardware = defineSpec<ProgramRequest>({
  id: 'verifyProgramHardware',
  group: 'programs',
  summary: 'Hardware compatibility of every robot with the resolved target, or all targets (docs/program-language.md §13)',
  method: 'POST',
  path: '/v1/programs/verify/hardware',
  access: { kind: 'read' },
  rpc: { name: 'VerifyProgramHardware', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['verify'],
  cliAliases: [['compatibility']],
  body: programRequestSchema,
});

export const verifyProgramCapabilities = defineSpec<ProgramRequest>({
  id: 'verifyProgramCapabilities',
  group: 'programs',
  summary: 'Declared and inferred capabilities per robot, static health and optional traceability (docs/program-language.md §14)',
  method: 'POST',
  path: '/v1/programs/verify/capabilities',
  access: { kind: 'read' },
  rpc: { name: 'VerifyProgramCapabilities', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['verify', 'capabilities'],
  body: programRequestSchema,
});

export const verifyProgramMission = defineSpec<ProgramRequest>({
  id: 'verifyProgramMission',
  group: 'programs',
  summary: 'Whether each robot mission is achievable on its hardware (docs/program-language.md §15)',
  method: 'POST',
  path: '/v1/programs/verify/mission',
  access: { kind: 'read' },
  rpc: { name: 'VerifyProgramMission', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['verify', 'mission'],
  body: programRequestSchema,
});

export const runProgramSimulation = defineSpec<ProgramRequest>({
  id: 'runProgramSimulation',
  group: 'programs',
  summary: 'Simulation: planned metadata by default; execute:true runs the program on the simulated robot (docs/program-language.md §16)',
  description: 'With record_trace:true the trace is written next to the program, which needs the Operate action.',
  method: 'POST',
  path: '/v1/programs/simulation',
  access: { kind: 'read' },
  rpc: { name: 'RunProgramSimulation', request: 'JsonBodyRequest' },
  jsonRpc: true,
  // Recording writes a trace file: that call needs Operate and is audited by the kernel (docs/wire-decisions.md D2).
  mutatesWhen: { bodyField: 'record_trace' },
  cli: ['sim'],
  body: programRequestSchema,
});

export const replayProgram = defineSpec<ProgramRequest>({
  id: 'replayProgram',
  group: 'programs',
  summary: 'Replay a trace: inspect, deterministic re-run and compare, or playback of states (docs/program-language.md §17)',
  method: 'POST',
  path: '/v1/programs/replay',
  access: { kind: 'read' },
  rpc: { name: 'ReplayProgram', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['replay'],
  body: programRequestSchema,
});

export const getTrustProgram = defineSpec<Record<string, never>, ProgramQuery>({
  id: 'getTrustProgram',
  group: 'programs',
  summary: 'Composite trust of a program: six weighted categories, tier and tamper status (docs/program-language.md §19)',
  method: 'GET',
  path: '/v1/trust/program',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetTrustProgram', request: 'QueryRequest' },
  jsonRpc: true,
  cli: ['trust'],
  query: programQuerySchema,
});

export const getProgramSource = defineSpec<Record<string, never>, ProgramQuery>({
  id: 'getProgramSource',
  group: 'programs',
  summary: 'Raw source text of a program (docs/program-language.md §20)',
  method: 'GET',
  path: '/v1/programs/source',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetProgramSource', request: 'QueryRequest' },
  cli: ['program', 'source'],
  query: programQuerySchema,
});

export const verifyProgramContract = defineSpec<ProgramRequest>({
  id: 'verifyProgramContract',
  group: 'programs',
  summary: 'Mission contracts of a program and their checks (docs/program-language.md §21)',
  method: 'POST',
  path: '/v1/programs/contract/verify',
  access: { kind: 'read' },
  cli: ['contract', 'verify'],
  body: programRequestSchema,
});

export const explainProgram = defineSpec<ProgramRequest>({
  id: 'explainProgram',
  group: 'programs',
  summary: 'Plain-language explanation of a program or trace, by mode (docs/program-language.md §22)',
  method: 'POST',
  path: '/v1/programs/explain',
  access: { kind: 'read' },
  cli: ['explain'],
  body: programRequestSchema,
});

export const auditProgramDecisions = defineSpec<ProgramRequest>({
  id: 'auditProgramDecisions',
  group: 'programs',
  summary: 'Decision records of a trace, with an optional explanation (docs/program-language.md §23)',
  method: 'POST',
  path: '/v1/programs/audit/decisions',
  access: { kind: 'read' },
  cli: ['audit', 'decisions'],
  body: programRequestSchema,
});

export const listProgramTraces = defineSpec<Record<string, never>, ProgramQuery>({
  id: 'listProgramTraces',
  group: 'programs',
  summary: 'Trace files under the project root, newest first (docs/program-language.md §18)',
  method: 'GET',
  path: '/v1/programs/traces',
  access: { kind: 'read' },
  rpc: { name: 'ListProgramTraces', request: 'QueryRequest' },
  cli: ['traces'],
  query: programQuerySchema,
});

export const listProgramFiles = defineSpec<Record<string, never>, ProgramQuery>({
  id: 'listProgramFiles',
  group: 'programs',
  summary: 'Program files (.sd) under the project root, by path, with the served program marked (docs/programs.md § Program files)',
  description: 'What the `file` of the other program operations may name: the panel\'s programs view picks from it. The state directory and hidden folders are not walked.',
  method: 'GET',
  path: '/v1/programs/files',
  access: { kind: 'read' },
  rpc: { name: 'ListProgramFiles', request: 'QueryRequest' },
  cli: ['programs', 'files'],
  query: programQuerySchema,
});

export const evaluateProgramContinuity = defineSpec<ProgramRequest>({
  id: 'evaluateProgramContinuity',
  group: 'programs',
  summary: 'Mission continuity when a robot fails part-way: matching continuity policies, takeover robot, what is left (docs/program-language.md §30)',
  method: 'POST',
  path: '/v1/programs/continuity',
  access: { kind: 'read' },
  rpc: { name: 'EvaluateProgramContinuity', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['continuity'],
  body: programRequestSchema,
});

export const programSpecs = [
  evaluateProgramReadiness,
  evaluateProgramAssure,
  evaluateProgramDiagnose,
  evaluateProgramHeal,
  verifyProgramHardware,
  verifyProgramCapabilities,
  verifyProgramMission,
  runProgramSimulation,
  replayProgram,
  getTrustProgram,
  getProgramSource,
  verifyProgramContract,
  explainProgram,
  auditProgramDecisions,
  listProgramTraces,
  listProgramFiles,
  evaluateProgramContinuity,
];
