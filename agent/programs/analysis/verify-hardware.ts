/**
 * Verify hardware (docs/program-language.md §9.2, §13): program-level items, then every robot against the
 * resolved target (§1) or, with all_targets, against every profile grouped by profile name; then
 * configuration findings and the certification warning.
 */
import type { Program, RobotDecl } from '../language/ast.js';
import type { AnalysisOptions } from './options.js';
import { applySimulatedFaults, profileCatalog } from './hardware-profiles.js';
import { item, programLevelItems, verifyRobotOnProfile, type HardwareItem } from './hardware-checks.js';
import { checkedTargets, NO_TARGET_MESSAGE, resolveTargets, type TargetResolution } from './target.js';

export type { HardwareItem, ItemSeverity } from './hardware-checks.js';

export interface HardwareMatrixCell {
  robot: string;
  target: string;
  compatible: boolean;
}

/** docs/program-language.md §13 report (JSON shape). */
export interface HardwareReport {
  compatible: boolean;
  target: string | null;
  items: HardwareItem[];
  matrix: { cells: HardwareMatrixCell[] } | null;
}

export interface RobotTargetResult {
  robot: RobotDecl;
  target: string;
  /** False when the target names no known profile. */
  known: boolean;
  items: HardwareItem[];
  compatible: boolean;
}

/** The hardware verification before configuration and certification items are added. */
export interface HardwareVerification {
  resolution: TargetResolution;
  /** Program-level items, then per target (check order) its robots' items. */
  items: HardwareItem[];
  results: RobotTargetResult[];
  compatible: boolean;
}

export const CERTIFICATION_WARNING =
  'Deploy targets declared without certification metadata — add a certify block (e.g. certify ISO3691_4 { level PLd; })';

/**
 * Core verification shared by readiness, verify mission, contract verify and assurance. With no
 * target the single pass item of docs/program-language.md §1 is the whole result.
 */
export function runHardwareVerification(program: Program, opts: AnalysisOptions): HardwareVerification {
  const resolution = resolveTargets(program, opts.config, { target: opts.target ?? null, allTargets: opts.allTargets === true });
  if (resolution.kind === 'none') {
    return { resolution, items: [item('deployment', 'pass', NO_TARGET_MESSAGE, null)], results: [], compatible: true };
  }
  const catalog = profileCatalog(program);
  const faults = [...program.simulateFaults, ...(opts.simulateFaults ?? [])];
  const items = programLevelItems(program);
  const results: RobotTargetResult[] = [];
  for (const target of checkedTargets(resolution)) {
    const base = catalog.get(target);
    if (base === undefined) {
      const loc = program.deploys.find((d) => d.targets.includes(target))?.loc ?? null;
      items.push(item('target', 'error', `Hardware target '${target}' is not a known profile`, loc));
      for (const robot of program.robots) results.push({ robot, target, known: false, items: [], compatible: false });
      continue;
    }
    const profile = applySimulatedFaults(base, faults);
    for (const robot of program.robots) {
      const robotItems = verifyRobotOnProfile(program, robot, profile);
      items.push(...robotItems);
      results.push({ robot, target, known: true, items: robotItems, compatible: !robotItems.some((i) => i.severity === 'error') });
    }
  }
  return { resolution, items, results, compatible: !items.some((i) => i.severity === 'error') };
}

/** Items of one robot across the checked targets (with an unknown-target error when relevant). */
export function robotHardwareItems(verification: HardwareVerification, robot: string): HardwareItem[] {
  const out: HardwareItem[] = [];
  for (const r of resultsByRobot(verification).get(robot) ?? []) {
    if (!r.known) out.push(item('target', 'error', `Hardware target '${r.target}' is not a known profile`, null));
    out.push(...r.items);
  }
  return out;
}

const RESULTS_BY_ROBOT = new WeakMap<HardwareVerification, Map<string, RobotTargetResult[]>>();

/** Results grouped by robot name, built once per verification (missions look robots up one by one). */
function resultsByRobot(verification: HardwareVerification): Map<string, RobotTargetResult[]> {
  let index = RESULTS_BY_ROBOT.get(verification);
  if (index === undefined) {
    index = new Map();
    for (const r of verification.results) {
      const list = index.get(r.robot.name);
      if (list === undefined) index.set(r.robot.name, [r]);
      else list.push(r);
    }
    RESULTS_BY_ROBOT.set(verification, index);
  }
  return index;
}

/** docs/program-language.md §13 verify hardware. */
export function verifyHardware(program: Program, opts: AnalysisOptions): HardwareReport {
  const verification = runHardwareVerification(program, opts);
  const items = [...verification.items];
  for (const finding of opts.validation?.findings ?? []) {
    items.push(item('configuration', finding.severity, `${finding.message} (${finding.path})`, null));
  }
  const firstDeploy = program.deploys[0];
  if (firstDeploy !== undefined && program.certifications.length === 0) {
    items.push(item('certification', 'warning', CERTIFICATION_WARNING, firstDeploy.loc));
  }
  const resolution = verification.resolution;
  const matrix = resolution.kind === 'all' ? { cells: matrixCells(program, verification.results) } : null;
  return {
    compatible: !items.some((i) => i.severity === 'error'),
    target: checkedTargets(resolution)[0] ?? null,
    items,
    matrix,
  };
}

/** Robot by robot (program order), each robot's targets in check (sorted) order. */
function matrixCells(program: Program, results: readonly RobotTargetResult[]): HardwareMatrixCell[] {
  const byRobot = new Map<RobotDecl, HardwareMatrixCell[]>(program.robots.map((robot) => [robot, []]));
  for (const r of results) byRobot.get(r.robot)?.push({ robot: r.robot.name, target: r.target, compatible: r.compatible });
  return [...byRobot.values()].flat();
}
