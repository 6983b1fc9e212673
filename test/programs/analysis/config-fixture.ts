/** Writes a small project (svc.toml + fragments) into a temp directory and resolves it. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveProjectConfig, type ResolvedConfig } from '../../../agent/project/resolve-config.js';

export function writeProject(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-analysis-'));
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  return dir;
}

/** A project whose merged tree is exactly `fragment` (loaded as the devices fragment). */
export function configFrom(fragment: string): ResolvedConfig {
  const dir = writeProject({
    'svc.toml': '[project]\nname = "t"\n[config]\ndevices = "svc.devices.toml"\n',
    'svc.devices.toml': fragment,
  });
  return resolveProjectConfig(path.join(dir, 'svc.toml'));
}
