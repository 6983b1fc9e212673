/**
 * The one error type the runtime throws for a program fault (docs/program-language.md §16: "runtime, type or contract
 * error → 400 with the error text"). `kind` tells the three apart; the message is the text shown.
 */
import type { Loc } from '../language/ast.js';

export type RuntimeErrorKind = 'runtime' | 'type' | 'contract';

export class ProgramRuntimeError extends Error {
  constructor(
    readonly kind: RuntimeErrorKind,
    message: string,
    readonly loc: Loc | null = null,
  ) {
    super(loc ? `${message} (line ${loc.line}, column ${loc.column})` : message);
    this.name = 'ProgramRuntimeError';
  }
}
