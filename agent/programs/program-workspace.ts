import type { ResolvedConfig } from '../project/resolve-config.js';
import type { DecisionSettings } from '../settings/settings.js';

/**
 * What a program operation may see of its surroundings. The server builds one from its start
 * options (`--config`, `--program`, the state directory); the CLI builds one from the files on its
 * command line (walking up to `svc.toml`). Both then run the same ProgramService code.
 */
export interface ProgramWorkspace {
  /** Relative `file` values resolve against this directory (docs/security.md §5, "Program files"). */
  projectRoot: string;
  config: ResolvedConfig | null;
  /** The server's `--program`, used when a request names no file. */
  programPath: string | null;
  /** Agent state directory: recovery knowledge store, trust baselines. */
  stateDir: string;
  /**
   * Refuse paths that leave the project root (remote callers). The CLI runs with the local user's
   * own rights and resolves against the working directory instead.
   */
  confineToRoot: boolean;
  /** Base directory for relative paths when not confined (the CLI's working directory). */
  cwd: string;
  /** Decision tracing and signing from the settings (SVC_DECISION_TRACE, SVC_DECISION_POLICY_SIGNING_KEY). */
  decisions: DecisionSettings;
  /** Device registry entries the server knows of (heal enriches failover plans with them). */
  devices?: () => readonly { id: string; logical_name?: string | null; type?: string | null }[];
}
