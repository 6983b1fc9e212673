/**
 * Hardware target resolution (docs/program-language.md §1), shared by readiness, verify hardware, verify
 * mission, contract verify, explain and the hardware parts of assure and heal.
 */
import type { ResolvedConfig } from '../../project/resolve-config.js';
import type { Program } from '../language/ast.js';
import { profileCatalog } from './hardware-profiles.js';

export type TargetSource = 'explicit' | 'deploy' | 'config';

export type TargetResolution =
  /** One target T: every robot is verified against T. */
  | { kind: 'single'; target: string; source: TargetSource }
  /** `all_targets`: every known profile, names sorted (docs/program-language.md §1 grouping order). */
  | { kind: 'all'; targets: string[] }
  /** Nothing to check against: hardware compatibility is not required. */
  | { kind: 'none' };

export const NO_TARGET_MESSAGE = 'No deployment targets declared — hardware compatibility not required';

export interface TargetRequest {
  target?: string | null;
  allTargets?: boolean;
}

/**
 * Order: `all_targets` (an explicit request to check everything), then (1) the explicit target,
 * (2) the program's first `deploy … to T`, (3) the configured default — `hardware_profile` of the
 * first `[[fleet.robots]]` entry — and (4) none.
 */
export function resolveTargets(program: Program, config: ResolvedConfig | null, request: TargetRequest = {}): TargetResolution {
  if (request.allTargets === true) {
    return { kind: 'all', targets: [...profileCatalog(program).keys()].sort(compareCodePoints) };
  }
  const explicit = nonEmpty(request.target);
  if (explicit !== null) return { kind: 'single', target: explicit, source: 'explicit' };
  for (const deploy of program.deploys) {
    const first = deploy.targets.find((t) => t.trim() !== '');
    if (first !== undefined) return { kind: 'single', target: first, source: 'deploy' };
  }
  const configured = nonEmpty(config?.robots[0]?.hardware_profile ?? null);
  if (configured !== null) return { kind: 'single', target: configured, source: 'config' };
  return { kind: 'none' };
}

/** The target a report names: the single target, else null (none or all targets). */
export function reportedTarget(resolution: TargetResolution): string | null {
  return resolution.kind === 'single' ? resolution.target : null;
}

/** Names checked, in check order. */
export function checkedTargets(resolution: TargetResolution): string[] {
  if (resolution.kind === 'single') return [resolution.target];
  if (resolution.kind === 'all') return resolution.targets;
  return [];
}

function nonEmpty(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** Code-point order (docs/program-language.md §1), independent of locale. */
export function compareCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
