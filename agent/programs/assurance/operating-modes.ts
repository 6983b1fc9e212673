/**
 * Mode coverage shared by assure (docs/program-language.md §10) and heal (§12): when a program declares any modes it must
 * have at least one safe and one degraded mode. `operating_mode` declarations count by their kind;
 * robot `mode` blocks count as normal modes (§10), whatever their name.
 */
import type { Program } from '../language/ast.js';

export const NO_SAFE_MODE = 'No safe mode declared';
export const NO_DEGRADED_MODE = 'No degraded mode declared';

export function declaredModeKinds(program: Program): string[] {
  const kinds = program.operatingModes.map((mode) => (mode.kind ?? 'normal').toLowerCase());
  for (const robot of program.robots) for (let i = 0; i < robot.modes.length; i += 1) kinds.push('normal');
  return kinds;
}

export function modeIssues(program: Program): string[] {
  const kinds = declaredModeKinds(program);
  if (kinds.length === 0) return [];
  const issues: string[] = [];
  if (!kinds.includes('safe')) issues.push(NO_SAFE_MODE);
  if (!kinds.includes('degraded')) issues.push(NO_DEGRADED_MODE);
  return issues;
}
