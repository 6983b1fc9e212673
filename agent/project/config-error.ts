/**
 * Error raised by the project configuration resolver (docs/configuration.md § The project manifest).
 */
export type ConfigErrorCode =
  | 'config_not_found'
  | 'config_parse_error'
  | 'config_layer_cycle'
  | 'config_fragment_missing'
  | 'config_invalid';

export interface ConfigErrorOptions {
  line?: number | null;
  column?: number | null;
  cause?: unknown;
}

export class ConfigError extends Error {
  readonly code: ConfigErrorCode;
  /** Absolute path of the offending file when known. */
  readonly file: string | null;
  /** 1-based line of a syntax error, when known. */
  readonly line: number | null;
  /** 1-based column of a syntax error, when known. */
  readonly column: number | null;

  constructor(code: ConfigErrorCode, message: string, file: string | null = null, options: ConfigErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConfigError';
    this.code = code;
    this.file = file;
    this.line = options.line ?? null;
    this.column = options.column ?? null;
  }
}
