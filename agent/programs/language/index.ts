/** Public API of the program language: tokenizer, token-join rule, units, errors and the model. */

export { tokenize, type Token, type TokenType } from './lexer.js';
export { joinTokens, joinCondition, isDottedName } from './token-join.js';
export { ProgramSyntaxError, type SyntaxErrorKind } from './syntax-error.js';
export * from './units.js';
export type * from './ast.js';
export { parseProgram } from './parser.js';
export { emptyProgram, emptyRobot } from './empty.js';
