import type { ResolvedConfig, ValidationResult } from '../../project/resolve-config.js';
import type { ReadinessIssue } from './readiness.js';
import type { ReadinessPolicy } from './readiness-policy.js';

/**
 * Inputs shared by every program analysis (docs/program-language.md §1, §8). Only `config`, `target` and
 * `allTargets` come from a request; the rest are set by the CLI.
 */
export interface AnalysisOptions {
  /** Resolved project configuration (docs/program-language.md §7), or null when the program is analysed on its own. */
  config: ResolvedConfig | null;
  /** Explicit hardware target (`target` / `--target`); wins over deploys and the configured default. */
  target?: string | null;
  /** Check every known profile (built-ins plus program-declared) instead of one target. */
  allTargets?: boolean;
  /**
   * Configuration validation, when the loader requested it (docs/program-language.md §7.3: the CLI does, a config reload
   * does not). Its findings become hardware items (§13) and readiness issues (§9.5 rule 3).
   */
  validation?: ValidationResult | null;
  /** Extra `simulate_compatibility` faults to apply on top of the program's own (`--simulate`). */
  simulateFaults?: readonly string[];
  /**
   * Health outcome of a simulation run for readiness (CLI `--runtime`, docs/program-language.md §8 last paragraph, §29).
   * Absent: readiness is static (§9.9), as it always is over REST.
   */
  runtimeHealth?: RuntimeHealth | null;
  /** Readiness policy to apply instead of the configuration's (CLI `svc readiness --policy FILE`). */
  readinessPolicy?: ReadinessPolicy;
  /** Readiness issues of configuration drift since a baseline (CLI `--baseline DIR`), emitted with §9.5 rule 3. */
  driftIssues?: readonly ReadinessIssue[];
}

/** What a runtime run tells readiness about health. */
export interface RuntimeHealth {
  /** False when the run stopped on a runtime, type or contract error. */
  executed: boolean;
  /** Worst status of the injected faults; Healthy when none; Failed when the run errored. */
  status: 'Healthy' | 'Degraded' | 'Critical' | 'Failed';
  injected: { robot: string; fault: string; status: string }[];
  emergency_stop: boolean;
  error: string | null;
}
