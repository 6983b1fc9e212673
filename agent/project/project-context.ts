import fs from 'node:fs';
import path from 'node:path';
import { resolveProjectConfig, type ResolvedConfig } from './resolve-config.js';

/**
 * What the server was started with: the configuration (resolved once at start), the program path,
 * and the project root that relative program paths resolve against (docs/security.md §5, "Program files").
 */
export interface ProjectContext {
  configPath: string | null;
  programPath: string | null;
  /** Directory of the configuration file, else the working directory. */
  projectRoot: string;
  config: ResolvedConfig | null;
}

export class ProjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectError';
  }
}

export function loadProjectContext(options: { configPath?: string | null; programPath?: string | null; cwd?: string }): ProjectContext {
  const cwd = options.cwd ?? process.cwd();
  const configPath = options.configPath ? path.resolve(cwd, options.configPath) : null;
  const programPath = options.programPath ? path.resolve(cwd, options.programPath) : null;
  if (configPath && !fs.existsSync(configPath)) throw new ProjectError(`configuration not found: ${configPath}`);
  if (programPath && !fs.existsSync(programPath)) throw new ProjectError(`program not found: ${programPath}`);
  const config = configPath ? resolveProjectConfig(configPath) : null;
  return {
    configPath,
    programPath,
    projectRoot: config?.projectRoot ?? (configPath ? path.dirname(configPath) : cwd),
    config,
  };
}

/**
 * A path as shown to API callers: relative to the project root when inside it, else its file name
 * only (docs/security.md §5: answers never reveal where the project or the state directory sit).
 */
export function projectRelative(project: Pick<ProjectContext, 'projectRoot'>, file: string | null): string | null {
  if (file === null) return null;
  const rel = path.relative(project.projectRoot, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.basename(file);
}
