/**
 * Safety rules as readable text and the coverage heuristics built on that text
 * (docs/program-language.md §28: `max_speed = 1.2m/s`, `stop_if <tokens>`; coverage searches the
 * text for `stop_if`, `lidar`, `battery`, `gps`). Shared by assure, trust and explain so all three
 * agree.
 */
import type { Program, RobotDecl } from '../language/ast.js';
import { renderRobotSafetyRules } from '../analysis/safety-text.js';

/** Every robot's safety rules as text (the analysis renderer), robots in program order. */
export function safetyRuleTexts(program: Program): string[] {
  return renderRobotSafetyRules(program.robots);
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
