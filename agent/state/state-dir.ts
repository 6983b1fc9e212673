import fs from 'node:fs';

/** Creates the state directory (owner-only: it holds key hashes and the audit chain). */
export function ensureStateDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
