/**
 * Tamper check for program files (used by composite trust, docs/program-language.md §19). The first evaluation of a
 * program records a sha256 baseline of the file and of each integrity artifact (deploy,
 * hardware, policies, kill switches, health, tamper policies, missions) in
 * `<stateDir>/program_integrity_baselines.json`; that first sight counts as Trusted. Later
 * evaluations compare: same file hash → Trusted, different → Modified. The baseline is never
 * replaced automatically: accepting a change is an operator decision, not a side effect of looking.
 * Without a state directory (or when the baseline cannot be written) the status is Unknown.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Program } from '../language/ast.js';
import { writeFileDurablySync } from '../../state/durable-file.js';

export type IntegrityStatus = 'Trusted' | 'Modified' | 'Unknown';

export type ArtifactKind = 'deploy' | 'hardware' | 'policy' | 'kill_switch' | 'health' | 'tamper_policy' | 'mission';

export interface IntegrityArtifact {
  id: string;
  kind: ArtifactKind;
  sha256: string;
  status: IntegrityStatus;
}

export interface TamperCheck {
  status: IntegrityStatus;
  /** False only when the file changed since its baseline. */
  passed: boolean;
  file_sha256: string;
  baseline_sha256: string | null;
  /** True when this evaluation recorded the baseline. */
  baseline_recorded: boolean;
  artifacts: IntegrityArtifact[];
}

export const BASELINE_FILE = 'program_integrity_baselines.json';

interface BaselineEntry {
  file_sha256: string;
  artifacts: Record<string, string>;
  recorded_at: string;
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** Hash of a declaration without its source positions: moving a block does not change it. */
function hashDecl(decl: unknown): string {
  return sha256(JSON.stringify(decl, (key, value: unknown) => (key === 'loc' ? undefined : value)));
}

/** The declarations whose integrity trust scores, each with a stable id. */
export function integrityArtifacts(program: Program): Array<{ id: string; kind: ArtifactKind; sha256: string }> {
  const out: Array<{ id: string; kind: ArtifactKind; sha256: string }> = [];
  const add = (kind: ArtifactKind, name: string, decl: unknown): void => {
    out.push({ id: `${kind}:${name}`, kind, sha256: hashDecl(decl) });
  };
  program.deploys.forEach((d) => add('deploy', `${d.robot}->${d.targets.join(',')}`, d));
  program.hardware.forEach((h) => add('hardware', h.name, h));
  program.recoveryPolicies.forEach((p) => add('policy', `recovery_policy/${p.name}`, p));
  program.continuityPolicies.forEach((p) => add('policy', `continuity_policy/${p.name}`, p));
  program.mitigations.forEach((p) => add('policy', `mitigation/${p.name}`, p));
  program.decisionTrees.forEach((p) => add('policy', `decision_tree/${p.name}`, p));
  program.offlinePolicies.forEach((p) => add('policy', `offline_policy/${p.name}`, p));
  program.connectivityPolicies.forEach((p) => add('policy', `connectivity_policy/${p.name ?? p.keyword}`, p));
  program.policies.forEach((p) => add('policy', `policy/${p.name ?? p.keyword}`, p));
  program.killSwitches.forEach((k) => add('kill_switch', k.name, k));
  program.healthChecks.forEach((h) => add('health', `health_check/${h.name}`, h));
  program.healthPolicies.forEach((h) => add('health', `health_policy/${h.name}`, h));
  program.tamperPolicies.forEach((t) => add('tamper_policy', t.name ?? t.keyword, t));
  program.missionPlans.forEach((m) => add('mission', `mission_plan/${m.name}`, m));
  for (const robot of program.robots) {
    robot.killSwitches.forEach((k) => add('kill_switch', `${robot.name}.${k.name}`, k));
    robot.healthChecks.forEach((h) => add('health', `${robot.name}.health_check/${h.name}`, h));
    robot.missions.forEach((m, i) => add('mission', `${robot.name}.mission/${m.name ?? i}`, m));
  }
  return out;
}

function readBaselines(file: string): Record<string, BaselineEntry> {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, BaselineEntry>) : {};
  } catch {
    return {};
  }
}

function writeBaselines(file: string, baselines: Record<string, BaselineEntry>): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileDurablySync(file, `${JSON.stringify(baselines, null, 2)}\n`);
}

/** The key a program's baseline is stored under: its path relative to the project root when inside it. */
function baselineKey(file: string, projectRoot: string | null): string {
  const absolute = path.resolve(file);
  if (projectRoot) {
    const relative = path.relative(path.resolve(projectRoot), absolute);
    if (relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)) return relative.split(path.sep).join('/');
  }
  return absolute;
}

export interface TamperCheckOptions {
  file: string;
  projectRoot?: string | null;
  stateDir?: string | null;
  /** Record a baseline on first sight (default true). Explain passes false: looking must not write. */
  record?: boolean;
}

function fileHashOf(file: string): string | null {
  try {
    return sha256(fs.readFileSync(file));
  } catch {
    return null;
  }
}

export function checkProgramIntegrity(program: Program, options: TamperCheckOptions): TamperCheck {
  const artifacts = integrityArtifacts(program);
  // A program that is not (or no longer) on disk cannot be compared with anything: Unknown.
  const hashed = fileHashOf(options.file);
  const fileHash = hashed ?? '';
  const unknown = (): TamperCheck => ({
    status: 'Unknown',
    passed: true,
    file_sha256: fileHash,
    baseline_sha256: null,
    baseline_recorded: false,
    artifacts: artifacts.map((a) => ({ ...a, status: 'Unknown' })),
  });
  if (!options.stateDir || hashed === null) return unknown();

  const store = path.join(options.stateDir, BASELINE_FILE);
  const key = baselineKey(options.file, options.projectRoot ?? null);
  const baselines = readBaselines(store);
  const entry = baselines[key];
  if (!entry) {
    if (options.record === false) return unknown();
    try {
      baselines[key] = {
        file_sha256: fileHash,
        artifacts: Object.fromEntries(artifacts.map((a) => [a.id, a.sha256])),
        recorded_at: new Date().toISOString(),
      };
      writeBaselines(store, baselines);
    } catch {
      return unknown();
    }
    return {
      status: 'Trusted',
      passed: true,
      file_sha256: fileHash,
      baseline_sha256: fileHash,
      baseline_recorded: true,
      artifacts: artifacts.map((a) => ({ ...a, status: 'Trusted' })),
    };
  }

  const status: IntegrityStatus = entry.file_sha256 === fileHash ? 'Trusted' : 'Modified';
  const known = entry.artifacts ?? {};
  return {
    status,
    passed: status !== 'Modified',
    file_sha256: fileHash,
    baseline_sha256: entry.file_sha256,
    baseline_recorded: false,
    artifacts: artifacts.map((a) => {
      const recorded = known[a.id];
      const artifactStatus: IntegrityStatus = recorded === undefined ? 'Unknown' : recorded === a.sha256 ? 'Trusted' : 'Modified';
      return { ...a, status: artifactStatus };
    }),
  };
}
