/**
 * Safety rules as readable text and the coverage heuristics built on that text (program-language
 * §28: `max_speed = 1.2m/s`, `stop_if <tokens>`; coverage searches the text for `stop_if`,
 * `lidar`, `battery`, `gps`). Shared by assure, trust and explain so all three agree.
 */
import type { Program, RobotDecl, SafetyRule } from '../language/ast.js';

/** One safety rule, rendered for people (consumers must not parse it). */
export function renderSafetyRule(rule: SafetyRule): string {
  switch (rule.kind) {
    case 'max_speed':
    case 'max_angular':
      return `${rule.kind} = ${rule.value.text}`;
    case 'stop_if':
      return `stop_if ${rule.text}`;
    case 'zone': {
      const text = rule.text.trim();
      if (text.startsWith('zone ')) return text;
      return text.startsWith(rule.name) ? `zone ${text}` : `zone ${rule.name} ${text}`.trimEnd();
    }
  }
}

/** Every robot's safety rules, robots in program order, rules in block order. */
export function safetyRuleTexts(program: Program): string[] {
  return program.robots.flatMap((robot) => robot.safety.map(renderSafetyRule));
}

export interface SafetyFinding {
  severity: 'critical' | 'high';
  message: string;
}

export interface SafetyCoverage {
  rules: string[];
  /** 0–100: 25 points per scenario keyword found in the rule text. */
  coverage: number;
  covered: string[];
  uncovered: string[];
  findings: SafetyFinding[];
  /** No critical and no high finding. */
  deployable: boolean;
}

/** The scenarios the heuristic looks for, with the sentence shown when one is missing. */
const SCENARIOS: ReadonlyArray<{ keyword: string; uncovered: string }> = [
  { keyword: 'stop_if', uncovered: 'No stop_if condition guards motion' },
  { keyword: 'lidar', uncovered: 'Obstacle proximity (lidar) is not covered by a safety rule' },
  { keyword: 'battery', uncovered: 'Low battery is not covered by a safety rule' },
  { keyword: 'gps', uncovered: 'GPS loss is not covered by a safety rule' },
];

function hasKillSwitch(program: Program, robot: RobotDecl): boolean {
  return robot.killSwitches.length > 0 || program.killSwitches.length > 0;
}

/**
 * Findings per robot that moves things: no safety block at all is critical; a drive without a
 * `max_speed` and actuators without any kill switch are high.
 */
function safetyFindings(program: Program): SafetyFinding[] {
  const findings: SafetyFinding[] = [];
  for (const robot of program.robots) {
    if (robot.actuators.length === 0) continue;
    if (robot.safety.length === 0) {
      findings.push({ severity: 'critical', message: `Robot '${robot.name}' has actuators but no safety rules` });
    } else if (robot.actuators.some((a) => a.type.includes('Drive')) && !robot.safety.some((r) => r.kind === 'max_speed')) {
      findings.push({ severity: 'high', message: `Robot '${robot.name}' drives without a max_speed limit` });
    }
    if (!hasKillSwitch(program, robot)) {
      findings.push({ severity: 'high', message: `Robot '${robot.name}' has actuators but no kill switch` });
    }
  }
  return findings;
}

export function analyseSafetyCoverage(program: Program): SafetyCoverage {
  const rules = safetyRuleTexts(program);
  const text = rules.join('\n').toLowerCase();
  const covered = SCENARIOS.filter((s) => text.includes(s.keyword)).map((s) => s.keyword);
  const uncovered = SCENARIOS.filter((s) => !text.includes(s.keyword)).map((s) => s.uncovered);
  const findings = safetyFindings(program);
  return {
    rules,
    coverage: covered.length * 25,
    covered,
    uncovered,
    findings,
    deployable: findings.length === 0,
  };
}
