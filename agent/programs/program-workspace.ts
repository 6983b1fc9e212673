import type { ResolvedConfig } from '../project/resolve-config.js';
import type { DecisionSettings } from '../settings/settings.js';
import type { EscalationPort } from './runtime/escalations.js';

/** The escalation store as the program operations use it: the run's port, and a commit barrier. */
export interface WorkspaceEscalations extends EscalationPort {
  /** Resolves once every pending escalation registered so far is on disk. */
  commit(): Promise<void>;
}

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
  /**
   * The escalation store simulations read grants from and register pending escalations in
   * (docs/decisions.md § Escalations). The agent sets it when the decisions module opens (null until
   * then); absent (the CLI), ProgramService uses the store file of the settings.
   */
  escalations?: WorkspaceEscalations | null;
}
