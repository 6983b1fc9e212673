/** Safety rule text for the analyses' reports (docs/program-language.md §28). */
import type { Expr, RobotDecl, SafetyRule } from '../language/ast.js';
import { exprText, safetyRuleText } from '../language/expr-text.js';

/** Safety rule text of the language's printer (`language/expr-text.ts`). */
export const renderSafetyRule = (rule: SafetyRule): string => safetyRuleText(rule);

/** Every robot's rules, robot by robot, in program order. */
export function renderRobotSafetyRules(robots: readonly RobotDecl[]): string[] {
  const out: string[] = [];
  for (const robot of robots) for (const rule of robot.safety) out.push(renderSafetyRule(rule));
  return out;
}

/** A compact, readable rendering of an expression (string literals bare, not the token-join form). */
export const renderExpr = (expr: Expr): string => exprText(expr, { quoteStrings: false });
