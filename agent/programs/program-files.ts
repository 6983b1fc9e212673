import fs from 'node:fs';
import path from 'node:path';
import { badRequest, notFound } from '../core/errors.js';
import { projectRelative, type ProjectContext } from '../project/project-context.js';
import { resolveInsideProject } from '../project/project-paths.js';
import { parseProgram, ProgramSyntaxError } from './language/index.js';
import type { Program } from './language/ast.js';
import { readTrace, type TraceFile } from './runtime/trace-file.js';
import type { ProgramWorkspace } from './program-workspace.js';

export type FileKind = 'program' | 'trace' | 'file';

/**
 * What each kind of request may read, for remote callers (docs/security.md §5, "Program files"):
 * program routes exist to read program sources and their traces, nothing else. `source`, `trust`,
 * readiness and the other analyses read `.sd`; replay and decision audits read `.trace`; diagnose
 * and explain take either.
 */
export const ALLOWED_EXTENSIONS: Record<FileKind, readonly string[]> = {
  program: ['.sd'],
  trace: ['.trace'],
  file: ['.sd', '.trace'],
};

/**
 * Refuses a path inside the agent's state directory (which holds the keys file, the secrets, the
 * OIDC client secret and the audit chain, and by default lies inside the project root), checked on
 * the path as given and on its real path so a symlink cannot lead there either.
 */
export function refuseStateDir(ws: Pick<ProgramWorkspace, 'stateDir'>, resolved: string, requested: string): void {
  const inside = (dir: string, p: string) => {
    const rel = path.relative(dir, p);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
  };
  const dirs = new Set([path.resolve(ws.stateDir), realpathOr(path.resolve(ws.stateDir))]);
  const files = new Set([resolved, realpathOr(resolved)]);
  for (const d of dirs) for (const f of files) if (inside(d, f)) throw badRequest(`path is inside the agent's state directory: ${requested}`);
}

function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * The file a request names (docs/program-language.md §8): `file` when given, else the server's `--program`.
 * Relative paths join the project root; a path leaving the root is a 400 (docs/security.md §5, "Program files"), a missing
 * file a 404 naming what was missing.
 */
export function resolveRequestFile(ws: ProgramWorkspace, requested: string | undefined | null, kind: FileKind = 'program'): string {
  let resolved: string;
  if (requested === undefined || requested === null || requested === '') {
    if (!ws.programPath) throw badRequest('no program file specified (set file in body or --program)');
    resolved = ws.programPath;
  } else if (ws.confineToRoot) {
    resolved = resolveInsideProject(ws.projectRoot, requested);
    refuseStateDir(ws, resolved, requested);
    const allowed = ALLOWED_EXTENSIONS[kind];
    if (!allowed.some((ext) => resolved.toLowerCase().endsWith(ext))) {
      throw badRequest(`not a ${allowed.join(' or ')} file: ${requested}`);
    }
  } else {
    resolved = path.resolve(ws.cwd, requested);
  }
  let stat: fs.Stats | null = null;
  try {
    stat = fs.statSync(resolved);
  } catch {
    stat = null;
  }
  if (!stat || !stat.isFile()) throw notFound(`${kind} not found: ${requested || resolved}`);
  return resolved;
}

export const isTracePath = (file: string): boolean => file.toLowerCase().endsWith('.trace');

interface CachedProgram {
  mtimeMs: number;
  size: number;
  program: Program;
}

/** Parsed programs keyed by path; re-parsed when the file changes (size or mtime). */
const parsed = new Map<string, CachedProgram>();
const MAX_CACHED = 64;

/** Reads and parses a `.sd` file; lexer and parser failures become the 400s of docs/program-language.md §8. */
export function loadProgram(file: string): Program {
  const stat = fs.statSync(file);
  const hit = parsed.get(file);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.program;
  const source = fs.readFileSync(file, 'utf8');
  const program = parseSource(source, file);
  if (parsed.size >= MAX_CACHED) parsed.delete(parsed.keys().next().value!);
  parsed.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, program });
  return program;
}

export function parseSource(source: string, file: string): Program {
  try {
    return parseProgram(source, file);
  } catch (err) {
    if (err instanceof ProgramSyntaxError) {
      throw badRequest(`${err.kind === 'tokenize' ? 'tokenize' : 'parse'} failed: ${err.message}`, {
        location: { file: err.file, line: err.line, column: err.column },
      });
    }
    throw err;
  }
}

/** Reads a `.trace` file; a malformed one is a 400 naming the problem. */
export function loadTrace(file: string): TraceFile {
  try {
    return readTrace(file);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}

/** The answer of every program-based route when the server was started without `--program`. */
export const NO_PROGRAM_MESSAGE = 'no program loaded; use control-center serve --program <file.sd>';

/** The server's program (`--program`), as the read-only program views load it. */
export interface ServedProgram {
  program: Program;
  /** Absolute path of the file. */
  file: string;
  /** File name: the label reports and histories use. */
  label: string;
}

/**
 * The served program parsed now (the parse of an unchanged file is cached): 400 without `--program`
 * (NO_PROGRAM_MESSAGE) and 400 `read <file> failed: …` when the file went away; parse errors are the
 * parser's 400s. Shared by the scorecard, reports, analytics and compliance exports.
 */
export function servedProgram(project: Pick<ProjectContext, 'programPath' | 'projectRoot'>): ServedProgram {
  const file = project.programPath;
  if (!file) throw badRequest(NO_PROGRAM_MESSAGE);
  try {
    fs.statSync(file);
  } catch (err) {
    throw badRequest(`read ${projectRelative(project, file)} failed: ${(err as Error).message}`);
  }
  return { program: loadProgram(file), file, label: path.basename(file) };
}
