/**
 * Program file listing (docs/programs.md § Program files): every `*.sd` under a root, sorted by path,
 * so a client (the panel's programs view) can offer the files the program operations' `file` may
 * name. Hidden folders, `node_modules` and the agent's state directory are not walked: the state
 * directory is never readable through program routes (docs/security.md §5, "Program files").
 */
import fs from 'node:fs';
import path from 'node:path';

export const DEFAULT_PROGRAM_LIMIT = 200;
export const MAX_PROGRAM_LIMIT = 1000;

export interface ProgramFileEntry {
  /** Relative to the root, `/`-separated: what `file` takes. */
  path: string;
  size_bytes: number;
  modified_ms: number;
  /** The server's `--program` (the file used when a request names none). */
  served: boolean;
}

export interface ProgramFileListing {
  root: string;
  files: ProgramFileEntry[];
  count: number;
}

export function listProgramFiles(root: string, options: { stateDir?: string | null; served?: string | null; limit?: number | null } = {}): ProgramFileListing {
  const absoluteRoot = path.resolve(root);
  const skip = new Set<string>();
  if (options.stateDir) skip.add(path.resolve(options.stateDir));
  const served = options.served ? path.resolve(options.served) : null;
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // an unreadable folder is skipped, not fatal
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        // Symlinked folders are not followed (no cycles, nothing outside the root).
        if (entry.name.startsWith('.') || entry.name === 'node_modules' || skip.has(full)) continue;
        walk(full);
      } else if (entry.name.endsWith('.sd') && entry.isFile()) {
        found.push(full);
      }
    }
  };
  walk(absoluteRoot);
  const files: ProgramFileEntry[] = [];
  for (const file of found) {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    files.push({
      path: path.relative(absoluteRoot, file).split(path.sep).join('/'),
      size_bytes: stat.size,
      modified_ms: Math.floor(stat.mtimeMs),
      served: file === served,
    });
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const raw = options.limit ?? DEFAULT_PROGRAM_LIMIT;
  const limit = Number.isFinite(raw) ? Math.min(MAX_PROGRAM_LIMIT, Math.max(1, Math.trunc(raw))) : DEFAULT_PROGRAM_LIMIT;
  const shown = files.slice(0, limit);
  return { root: absoluteRoot, files: shown, count: shown.length };
}
