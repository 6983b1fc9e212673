import * as z from 'zod';

/**
 * The program operation request (docs/programs.md; program-language §8).
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
}));
export type ProgramRequest = z.infer<typeof programRequestSchema>;

/**
 * What only the local CLI may add to a request (never parsed from a remote body): where
 * `svc sim --trace-out` writes the trace, the iteration budget of `svc run`, and
 * `svc sim --inject-failure NAME`.
 */
export type LocalProgramRequest = ProgramRequest & {
  trace_out?: string;
  max_loop_iterations?: number;
  inject_failure?: string;
};

/** GET query of source, trust and traces. */
export const programQuerySchema = z.lazy(() => z.object({
  file: z.string().optional(),
  limit: z.coerce.number().int().optional(),
}));
export type ProgramQuery = z.infer<typeof programQuerySchema>;
