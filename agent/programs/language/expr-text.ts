/**
 * Readable text of the program model, for reports and messages (docs/program-language.md §28): expressions
 * as written (`lidar.read().nearest_distance < 0.35m`) and safety rules (`max_speed = 1.2m/s`,
 * `stop_if <tokens>`, `zone dock circle at (-4, 3) radius 2.5m`). Consumers display these; they must
 * not parse them. Coverage heuristics search the safety text for `stop_if`, `lidar`, `battery`, `gps`.
 */
import type { Expr, SafetyRule } from './ast.js';

export interface ExprTextOptions {
  /** Show string literals quoted (messages about code) or bare (report text). Default: quoted. */
  quoteStrings?: boolean;
}

export function exprText(expr: Expr, options: ExprTextOptions = {}): string {
  const text = (e: Expr): string => exprText(e, options);
  switch (expr.kind) {
    case 'number':
      return expr.text !== '' ? expr.text : String(expr.value);
    case 'string':
      return options.quoteStrings === false ? expr.value : JSON.stringify(expr.value);
    case 'bool':
      return String(expr.value);
    case 'ident':
      return expr.name;
    case 'regex':
      return `/${expr.pattern}/`;
    case 'list':
      return `[${expr.items.map(text).join(', ')}]`;
    case 'unary':
      return expr.op === '-' ? `-${text(expr.operand)}` : `${expr.op} ${text(expr.operand)}`;
    case 'binary':
      return `${text(expr.left)} ${expr.op} ${text(expr.right)}`;
    case 'member':
      return `${text(expr.object)}.${expr.property}`;
    case 'call':
      return `${text(expr.callee)}(${expr.args.map((a) => (a.name === null ? text(a.value) : `${a.name}: ${text(a.value)}`)).join(', ')})`;
    case 'struct': {
      const name = expr.typeArgs && expr.typeArgs.length > 0 ? `${expr.name}<${expr.typeArgs.join(', ')}>` : expr.name;
      return `${name} { ${expr.fields.map((f) => `${f.name}: ${text(f.value)}`).join(', ')} }`;
    }
    case 'keyword':
      return `${expr.keyword} ${text(expr.call)}`;
  }
}

const reportText = (e: Expr) => exprText(e, { quoteStrings: false });

export function safetyRuleText(rule: SafetyRule): string {
  switch (rule.kind) {
    case 'max_speed':
    case 'max_angular':
      return `${rule.kind} = ${rule.value.text}`;
    case 'stop_if': {
      const text = rule.text.trim() !== '' ? rule.text.trim() : reportText(rule.condition);
      return text.startsWith('stop_if') ? text : `stop_if ${text}`;
    }
    case 'zone':
      if (rule.shape === 'circle') {
        return `zone ${rule.name} circle at (${reportText(rule.center[0])}, ${reportText(rule.center[1])}) radius ${reportText(rule.radius)}`;
      }
      return `zone ${rule.name} rect at (${reportText(rule.center[0])}, ${reportText(rule.center[1])}) size (${reportText(rule.size[0])}, ${reportText(rule.size[1])})`;
  }
}
