/** Real projects on disk for the assurance tests (temp dirs, resolved with the real resolver). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveProjectConfig, type ResolvedConfig } from '../../../agent/project/resolve-config.js';

const made: string[] = [];

export function tempDir(prefix = 'svc-assurance-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  while (made.length > 0) fs.rmSync(made.pop()!, { recursive: true, force: true });
}

/**
 * Write `files` (relative path → text) into a fresh directory. `svc.toml` lists one fragment,
 * `svc.policy.toml`, under [config] governance so its data tables are merged (docs/program-language.md §7.1).
 */
export function writeProject(policy: string, extra: Record<string, string> = {}): { dir: string; config: ResolvedConfig } {
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'svc.toml'), '[project]\nname = "t"\n[config]\ngovernance = "svc.policy.toml"\n');
  fs.writeFileSync(path.join(dir, 'svc.policy.toml'), policy);
  for (const [name, text] of Object.entries(extra)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return { dir, config: resolveProjectConfig(path.join(dir, 'svc.toml')) };
}
