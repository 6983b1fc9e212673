import fs from 'node:fs';
import path from 'node:path';
import type { ProgramService } from '../programs/program-service.js';
import type { ProjectContext } from '../project/project-context.js';

/**
 * Which program this agent serves after a received rollout (docs/operations.md § Rollouts, "This agent
 * as a target"). Kept apart from the target service so the start-up read loads nothing else.
 */
export function targetStateFile(stateDir: string): string {
  return path.join(stateDir, 'ota', 'target-state.json');
}

/**
 * The served program a previous rollout installed, read at start so a restarted agent keeps serving it
 * (a plain read: this runs on every start, before the OTA code is loaded).
 */
export function installedProgram(stateDir: string): string | null {
  try {
    const s = JSON.parse(fs.readFileSync(targetStateFile(stateDir), 'utf8')) as { current?: { program_file?: string | null } | null };
    const file = s.current?.program_file ?? null;
    return file && fs.existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

export function switchServedProgram(project: ProjectContext, programs: ProgramService, file: string | null): void {
  programs.workspace.programPath = file;
  (project as { programPath: string | null }).programPath = file;
}

