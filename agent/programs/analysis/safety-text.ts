/**
 * Readable text of safety rules (program-language §28): `max_speed = 1.2m/s`, `stop_if <tokens>`,
 * `zone dock circle at (-4, 3) radius 2.5m`. Consumers display these; they must not parse them.
 * Coverage heuristics elsewhere search this text for `stop_if`, `lidar`, `battery`, `gps`.
 */
import type { Expr, RobotDecl, SafetyRule } from '../language/ast.js';

export function renderSafetyRule(rule: SafetyRule): string {
  switch (rule.kind) {
    case 'max_speed':
    case 'max_angular':
      return `${rule.kind} = ${rule.value.text}`;
    case 'stop_if': {
      const text = rule.text.trim() !== '' ? rule.text.trim() : renderExpr(rule.condition);
      return text.startsWith('stop_if') ? text : `stop_if ${text}`;
    }
    case 'zone':
      if (rule.shape === 'circle') {
        return `zone ${rule.name} circle at (${renderExpr(rule.center[0])}, ${renderExpr(rule.center[1])}) radius ${renderExpr(rule.radius)}`;
      }
      return `zone ${rule.name} rect at (${renderExpr(rule.center[0])}, ${renderExpr(rule.center[1])}) size (${renderExpr(rule.size[0])}, ${renderExpr(rule.size[1])})`;
  }
}

/** Every robot's rules, robot by robot, in program order. */
export function renderRobotSafetyRules(robots: readonly RobotDecl[]): string[] {
  const out: string[] = [];
  for (const robot of robots) for (const rule of robot.safety) out.push(renderSafetyRule(rule));
  return out;
}

/** A compact, readable rendering of an expression (not the token-join form). */
export function renderExpr(expr: Expr): string {
  switch (expr.kind) {
    case 'number':
      return expr.text !== '' ? expr.text : String(expr.value);
    case 'string':
      return expr.value;
    case 'bool':
      return String(expr.value);
    case 'ident':
      return expr.name;
    case 'regex':
      return `/${expr.pattern}/`;
    case 'list':
      return `[${expr.items.map(renderExpr).join(', ')}]`;
    case 'unary':
      return expr.op === '-' ? `-${renderExpr(expr.operand)}` : `${expr.op} ${renderExpr(expr.operand)}`;
    case 'binary':
      return `${renderExpr(expr.left)} ${expr.op} ${renderExpr(expr.right)}`;
    case 'member':
      return `${renderExpr(expr.object)}.${expr.property}`;
    case 'call':
      return `${renderExpr(expr.callee)}(${expr.args.map((a) => (a.name === null ? renderExpr(a.value) : `${a.name}: ${renderExpr(a.value)}`)).join(', ')})`;
    case 'struct':
      return `${expr.name} { ${expr.fields.map((f) => `${f.name}: ${renderExpr(f.value)}`).join(', ')} }`;
  }
}
