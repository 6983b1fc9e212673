import fs from 'node:fs';
import path from 'node:path';
import { badRequest } from '../core/errors.js';

/**
 * Resolves a path a caller sent (program file, trace file, ...) inside the project root (docs/security.md §5, "Program files"):
 * relative paths join the root; `..`, an absolute path elsewhere, or a symlink leading out of the
 * root are refused with 400. The file need not exist (callers answer 404 themselves); when it does,
 * its real path is checked so a link inside the project cannot point outside it.
 */
export function resolveInsideProject(projectRoot: string, requested: string): string {
  if (typeof requested !== 'string' || requested.length === 0) throw badRequest('file must be a non-empty path');
  if (requested.includes('\0')) throw badRequest('file must not contain NUL bytes');
  const root = realpathOrSelf(path.resolve(projectRoot));
  const candidate = path.resolve(root, requested);
  if (!isWithin(root, candidate)) throw badRequest(`path escapes the project root: ${requested}`);
  // Follow symlinks on the part of the path that exists.
  // lstat, not exists: a dangling symlink "does not exist" yet a write through it lands wherever it points.
  let existing = candidate;
  while (!lexists(existing) && existing !== root) existing = path.dirname(existing);
  const real = existing === root ? root : realpathOrNull(existing);
  if (real === null || !isWithin(root, real)) throw badRequest(`path escapes the project root: ${requested}`);
  return candidate;
}

function realpathOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

function lexists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Real path, or null for a dangling or looping symlink (whose target cannot be checked). */
function realpathOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

function isWithin(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  // `..name` is a file inside the root; only `..` itself or `../…` leaves it.
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
