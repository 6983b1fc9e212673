import type { ProgramRequest } from '../../api/domains/programs.js';

/**
 * The program operation request and query are the contract's (api/domains/programs.ts,
 * docs/programs.md); this file adds only what the local CLI may pass on.
 */
export type { ProgramQuery, ProgramRequest } from '../../api/domains/programs.js';

/**
 * What only the local CLI may add to a request (never parsed from a remote body): where
 * `svc sim --trace-out` writes the trace, the iteration budget of `svc run`, and
 * `svc sim --inject-failure NAME`.
 */
export type LocalProgramRequest = ProgramRequest & {
  trace_out?: string;
  max_loop_iterations?: number;
  inject_failure?: string;
  /** `svc readiness --policy FILE`: minimum score and weights over the configured ones. */
  readiness_policy?: { minimum_score?: number; weights?: Partial<Record<string, number>> };
  /** `svc readiness|explain --baseline DIR`: the saved project whose configuration is the baseline. */
  baseline?: string;
  /**
   * `svc readiness|verify --simulate FAULTS`: `simulate_compatibility` faults applied on top of the
   * program's own before hardware checking (docs/program-language.md §9.2).
   */
  simulate_faults?: readonly string[];
  /** `svc sim|run --wall-clock`: the run sleeps each loop interval for real (docs/program-language.md §24.1). */
  wall_clock?: boolean;
};
